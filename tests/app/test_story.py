"""The guided story: every step opens on the user's sentence, the arrow keys' buttons step through
it, the prediction is revealed from the model's own attention, and the facts it states are the
model's."""

import numpy as np
import pytest

from app import story
from core.inspection.labelled_attention import LabelledAttention
from tests.conftest import chart_specs, plotted

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
    table = at.table[0].value
    scores = [float(score) for score in table["ranked by log P / lp"]]
    assert scores == sorted(scores, reverse=True)
    chosen = translator.translate(ANIMAL, "de", 4, 0.6).text
    assert list(table["chosen"]) == ["✓"] + [""] * (len(table) - 1)
    assert table["finished hypothesis"].iloc[0] == chosen


@pytest.mark.slow
def test_the_decoding_step_says_when_the_search_is_greedy(app):
    at = app("story", text=ANIMAL, story="5", beam="1")
    assert not at.exception
    assert any("greedy search" in info.value for info in at.info)
    assert len(at.table[0].value) == 1


LABELS = ["<2de>", "The", "animal", "left", "because", "it", "was", "tired.", "</s>"]
IT = LABELS.index("it")


def heads_looking_at(*keys: int) -> LabelledAttention:
    """Word attention of one layer whose head h puts 0.7 of the weight of every row on
    ``keys[h]`` (the rest on the row's own word)."""
    n = len(LABELS)
    weights = np.zeros((1, len(keys), n, n))
    for head, key in enumerate(keys):
        weights[0, head, :, key] = 0.7
        weights[0, head, np.arange(n), np.arange(n)] += 0.3
    return LabelledAttention(weights, LABELS, LABELS)


def test_each_heads_job_is_named_in_words():
    assert [story.relation(LABELS, IT, key) for key in (4, 6, 0, 8, 2)] == [
        "the previous word",
        "the next word",
        "the language tag",
        "the end of the sentence",
        story.FARTHER,
    ]
    words = heads_looking_at(4, 4, 6, 8, 2)
    assert story.jobs(words, IT) == (
        "Of its 5 heads, 2 look at the previous word, 1 at the next word, 1 at the end of the "
        "sentence and 1 at a word farther away (“animal” 1)."
    )
    assert story.strongest(words, IT).startswith(
        "layer 1, head 1: 70% on “because”, the previous word; layer 1, head 2: 70%"
    )


def test_the_story_says_which_head_links_it_to_the_word_it_stands_for():
    sentence = "The animal didn't cross the street because it was too tired."
    words = heads_looking_at(4, 2, 6)
    assert story.coreference(words, IT, sentence) == (
        "One head of 3 links “it” to “animal”, the word it stands for: layer 1, head 2 with "
        "70% of its weight."
    )
    assert (story.shown_head(words, IT, sentence).head, story.shown_head(words, IT, "").head) == (
        1,
        0,
    )


def test_the_story_says_so_when_no_head_links_it_to_the_word_it_stands_for():
    sentence = "The animal didn't cross the street because it was too tired."
    words = heads_looking_at(4, 6)
    said = story.coreference(words, IT, sentence)
    assert said.startswith("No head links “it” to “animal”, the word it stands for")
    assert "The most weight any head puts on it is 0% (layer 1, head 1)." in said
    assert story.coreference(words, IT, "An unknown sentence with it.") is None


@pytest.mark.slow
def test_the_reveal_tells_what_the_heads_do_and_keeps_the_guess(app, translator):
    at = app("story", text=ANIMAL, story="2")
    words = translator.translate(ANIMAL, "de", 4, 0.6, trace=True).word_attention.encoder
    query = story.question_word(words)
    at.radio(key="guess-it").set_value(words.key_labels.index("animal")).run()
    assert not at.exception
    said = [box.value for box in (*at.info, *at.success, *at.warning)]
    assert story.coreference(words, query, ANIMAL) in said
    assert f"The strongest heads: {story.strongest(words, query)}. " in said[1]
    assert said[1].endswith(story.jobs(words, query))
    next(button for button in at.button if button.label == "Next ▶").click().run()
    next(button for button in at.button if button.label == "◀ Back").click().run()
    assert at.radio(key="guess-it").value == words.key_labels.index("animal")  # the guess stays


@pytest.mark.slow
def test_a_one_word_sentence_asks_no_question(app):
    at = app("story", text="Hi.", story="2")
    assert not at.exception
    assert not at.radio
    assert any("one word" in info.value for info in at.info)


@pytest.mark.slow
def test_the_mask_step_draws_the_masked_cells_solid(app, translator):
    at = app("story", text=ANIMAL, story="3")
    assert not at.exception
    decoder = translator.translate(ANIMAL, "de", 4, 0.6, trace=True).attention.decoder
    (figure,) = [
        spec for spec in chart_specs(at) if "grey: masked" in spec["layout"]["title"]["text"]
    ]
    (masked,) = [trace for trace in figure["data"] if trace.get("name") == "masked"]
    drawn = ~np.isnan(plotted(masked["z"]))
    np.testing.assert_array_equal(drawn, ~decoder.allowed)  # exactly the cells above the diagonal
    assert drawn.sum() == len(decoder.query_labels) * (len(decoder.query_labels) - 1) // 2
