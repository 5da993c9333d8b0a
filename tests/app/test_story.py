"""The guided story: every step opens on the user's sentence, the arrow keys' buttons step through
it, the prediction is revealed from the model's own attention, and the facts it states are the
model's."""

import numpy as np
import pytest

from app import story

ANIMAL = "The animal didn't cross the street because it was too tired."


@pytest.mark.slow
def test_the_story_is_the_start_page_and_steps_with_the_arrow_buttons(app):
    at = app("story", text=ANIMAL)
    assert not at.exception
    assert at.segmented_control(key="story").value == 0
    for expected in range(1, len(story.STEPS)):
        next(button for button in at.button if button.label == "Next ▶").click().run()
        assert not at.exception, [error.message for error in at.exception]
        assert at.segmented_control(key="story").value == expected
        assert at.header[0].value.startswith(f"{expected + 1} · {story.STEPS[expected].title}")
    assert next(button for button in at.button if button.label == "Next ▶").disabled
    next(button for button in at.button if button.label == "◀ Back").click().run()
    assert at.segmented_control(key="story").value == len(story.STEPS) - 2


@pytest.mark.slow
def test_the_prediction_is_revealed_from_the_models_attention(app, translator):
    at = app("story", text=ANIMAL, story="2")
    words = translator.translate(ANIMAL, "de", 4, 0.6, trace=True).word_attention.encoder
    query = story.question_word(words)
    assert words.query_labels[query] == "it"
    found = story.answer(words, query)
    at.radio(key="guess-it").set_value(found.key).run()
    assert not at.exception
    assert at.info[0].value.startswith("Right: its strongest head, encoder layer")
    assert f"{found.weight:.0%}" in at.info[0].value

    animal = words.key_labels.index("animal")
    at.radio(key="guess-it").set_value(animal).run()
    best_case = story.head_for(words, query, animal)
    revealed = at.info[0].value
    assert revealed.startswith("Not quite") or found.key == animal
    assert f"layer {best_case.layer + 1}, head {best_case.head + 1}, with" in revealed
    assert f"{best_case.weight:.0%}" in revealed


def test_the_votes_count_every_head_once_by_its_top_other_word(translator):
    words = translator.translate(ANIMAL, "de", 4, 0.6, trace=True).word_attention.encoder
    query = story.question_word(words)
    votes = story.head_votes(words, query)
    layers, heads = words.weights.shape[:2]
    assert sum(count for _, count in votes) == layers * heads
    assert [count for _, count in votes] == sorted((count for _, count in votes), reverse=True)
    others = words.weights[:, :, query, :].copy()
    others[:, :, query] = -1.0
    tops = [int(key) for key in others.argmax(axis=-1).ravel()]
    named = {story.position_name(words.key_labels, key): tops.count(key) for key in set(tops)}
    assert dict(votes) == named
    animal = words.key_labels.index("animal")
    assert story.head_for(words, query, animal).weight == pytest.approx(
        float(words.weights[:, :, query, animal].max())
    )


def test_a_word_that_occurs_twice_is_named_by_its_position():
    labels = ["<2de>", "the", "cat", "saw", "the", "dog"]
    assert story.position_name(labels, 2) == "cat"
    assert [story.position_name(labels, key) for key in (1, 4)] == ["the @1", "the @4"]


def test_the_facts_the_story_states_are_read_off_the_attention(translator):
    result = translator.translate(ANIMAL, "fr", 4, 0.6, trace=True)
    assert story.largest_masked_weight(result.attention.decoder) == 0.0
    cross = result.word_attention.cross
    pairs = story.alignment(cross)
    assert len(pairs) == len(cross.query_labels)
    last = cross.weights[-1].mean(axis=0)
    for row, (label, source, weight) in enumerate(pairs):
        assert label == cross.query_labels[row]
        assert weight == pytest.approx(last[row].max())
        assert source == cross.key_labels[int(np.argmax(last[row]))]


@pytest.mark.slow
def test_the_decoding_step_lists_the_finished_hypotheses_best_first(app, translator):
    at = app("story", text=ANIMAL, story="5")
    assert not at.exception
    table = at.dataframe[0].value
    scores = list(table["ranked by log P / lp"])
    assert scores == sorted(scores, reverse=True)
    chosen = translator.translate(ANIMAL, "de", 4, 0.6).text
    assert list(table["chosen"]) == ["✓"] + [""] * (len(table) - 1)
    assert table["finished hypothesis"].iloc[0] == chosen


@pytest.mark.slow
def test_the_decoding_step_says_when_the_search_is_greedy(app):
    at = app("story", text=ANIMAL, story="5", beam="1")
    assert not at.exception
    assert any("greedy search" in info.value for info in at.info)
    assert len(at.dataframe[0].value) == 1
