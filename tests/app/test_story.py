"""The guided story: every step opens on the user's sentence, the arrow keys' buttons step through
it, the prediction is revealed from the model's own attention, and the facts it states are the
model's."""

import numpy as np
import pytest

from app import story
from app.plain_text import escaped
from core.inspection.head_focus import relation
from core.inspection.head_statistics import sentence_roles
from core.labelled_attention import LabelledAttention
from tests.app.apptest import chart_specs, plotted

ANIMAL = "The animal didn't cross the street because it was too tired."


def forward(at):
    """The forward button, which a clicker's forward key presses (app/lectern.py)."""
    return at.button(key="story-next")


@pytest.mark.slow
def test_the_story_is_the_start_page_and_steps_with_the_arrow_buttons(app):
    at = app("story", text=ANIMAL)
    assert not at.exception
    assert at.segmented_control(key="story").value == 0
    for expected in range(1, len(story.STEPS)):
        if expected == 3:  # the question of step 3 is revealed by the first press
            assert forward(at).label == "Reveal ▶"
            forward(at).click().run()
            assert at.segmented_control(key="story").value == 2
        assert forward(at).label == "Next ▶"
        forward(at).click().run()
        assert not at.exception, [error.message for error in at.exception]
        assert at.segmented_control(key="story").value == expected
        assert at.header[0].value.startswith(f"{expected + 1} · {story.STEPS[expected].title}")
    assert forward(at).disabled
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
    assert at.info[0].value == escaped(story.reveal_text(words, query, found.key, ANIMAL))
    assert at.info[0].value.startswith(r"Right\: of the words other than “it”, the most")

    animal = words.key_labels.index("animal")
    at.radio(key="guess-it").set_value(animal).run()
    revealed = at.info[0].value
    assert revealed == escaped(story.reveal_text(words, query, animal, ANIMAL))
    assert revealed.startswith("Not quite") or found.key == animal


@pytest.mark.slow
@pytest.mark.parametrize("present", ["false", "true"], ids=["normal", "presentation"])
def test_a_clicker_reveals_the_answer_and_its_text_names_the_maps_head(app, translator, present):
    at = app("story", text=ANIMAL, story="2", present=present)
    assert not at.info
    forward(at).click().run()
    assert not at.exception
    words = translator.translate(ANIMAL, "de", 4, 0.6, trace=True).word_attention.encoder
    query = story.question_word(words)
    said = at.info[0].value
    assert said == escaped(story.reveal_text(words, query, None, ANIMAL))
    assert said.startswith("Of the words other than “it”") and "your" not in said
    assert at.radio(key="guess-it").value is None  # the room's guess was not made up
    shown = story.shown_head(words, query, ANIMAL)
    head = f"layer {shown.layer + 1}, head {shown.head + 1}"
    assert f"The map\\: encoder {head}" in said
    assert head in chart_specs(at)[-1]["layout"]["title"]["text"]
    assert forward(at).label == "Next ▶"


def test_the_votes_count_every_head_once_by_its_top_word_itself_included(translator):
    words = translator.translate(ANIMAL, "de", 4, 0.6, trace=True).word_attention.encoder
    query = story.question_word(words)
    votes = story.head_votes(words, query)
    layers, heads = words.weights.shape[:2]
    assert sum(count for _, count in votes) == layers * heads
    assert [count for _, count in votes] == sorted((count for _, count in votes), reverse=True)
    tops = [int(key) for key in words.weights[:, :, query, :].argmax(axis=-1).ravel()]
    named = {
        story.position_name(words.key_labels, key) + (" (itself)" if key == query else ""): (
            tops.count(key)
        )
        for key in set(tops)
    }
    assert dict(votes) == named


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
LAST = LABELS.index("tired.")


def heads_looking_at(*keys: int, on_key: float = 0.7) -> LabelledAttention:
    """Word attention of one layer whose head h puts ``on_key`` of the weight of every row on
    ``keys[h]`` (the rest on the row's own word)."""
    n = len(LABELS)
    weights = np.zeros((1, len(keys), n, n))
    for head, key in enumerate(keys):
        weights[0, head, :, key] = on_key
        weights[0, head, np.arange(n), np.arange(n)] += 1 - on_key
    return LabelledAttention(weights, LABELS, LABELS)


def test_each_key_is_named_by_what_it_is_to_the_word():
    assert [relation(LABELS, IT, key) for key in (5, 4, 6, 0, 8, 2)] == [
        "the word itself",
        "the previous word",
        "the next word",
        "the language tag",
        "the end of the sentence",
        story.FARTHER,
    ]
    # </s> follows the last word, but it is the end of the sentence, not the next word
    assert relation(LABELS, LAST, LABELS.index("</s>")) == "the end of the sentence"


def test_the_jobs_count_every_head_by_its_top_word_itself_included():
    words = heads_looking_at(4, 4, 6, 8, 2)
    assert story.jobs(words, IT) == (
        "Of its 5 heads, 2 look most at the previous word, 1 at the next word, 1 at the end of "
        "the sentence and 1 at a word farther away (“animal” 1)."
    )
    on_itself = heads_looking_at(4, 6, on_key=0.3)  # 0.7 on the word itself
    assert story.jobs(on_itself, IT) == "Of its 2 heads, 2 look most at the word itself."


def test_the_strongest_heads_table_reads_each_heads_whole_row():
    words = heads_looking_at(4, 2, 8)
    words.weights[0, 2, IT] = [0.05, 0, 0.05, 0, 0.1, 0.2, 0.1, 0, 0.5]  # head 3: 50% on </s>
    table = story.strongest_table(words, IT)
    assert [row["head"] for row in table] == [
        "layer 1, head 1",
        "layer 1, head 2",
        "layer 1, head 3",
    ]
    assert table[0] | {"role in this sentence": ""} == {
        "head": "layer 1, head 1",
        "role in this sentence": "",
        "top word": "“because”, the previous word",
        "its weight": "70%",
        "itself": "30%",
        "previous word": "70%",
        "next word": "0%",
        "</s>": "0%",
        "language tag": "0%",
        "farther words": "0%",
    }
    assert table[1]["top word"] == "“animal”"
    assert [
        table[2][column] for column in ("top word", "itself", "language tag", "farther words")
    ] == [
        "“</s>”, the end of the sentence",
        "20%",
        "5%",
        "5%",  # animal
    ]
    roles = sentence_roles(words, self_attention=True)
    assert [row["role in this sentence"] for row in table] == [role.label for role in roles]


def test_the_story_says_which_head_links_it_to_the_word_it_stands_for():
    words = heads_looking_at(4, 2, 6)
    assert story.coreference(words, IT, ANIMAL) == (
        "One head of 3 links “it” to “animal”, the word it stands for: layer 1, head 2 with "
        "70% of its weight."
    )
    assert (story.shown_head(words, IT, ANIMAL).head, story.shown_head(words, IT, "").head) == (
        1,
        0,
    )
    assert story.map_title(words, IT, story.shown_head(words, IT, ANIMAL), ANIMAL) == (
        "“it” → links “it” to “animal”"
    )


def test_the_map_sentence_says_which_head_the_map_draws_and_why():
    words = heads_looking_at(4, 2, 6)
    linking = story.shown_head(words, IT, ANIMAL)
    assert story.map_head_text(words, IT, linking, ANIMAL) == (
        "The map: encoder layer 1, head 2, the strongest head whose top word is “animal”, the "
        "word “it” stands for."
    )
    assert story.reveal_text(words, IT, None, ANIMAL).endswith(
        story.map_head_text(words, IT, linking, ANIMAL)
    )
    strongest = story.shown_head(words, IT, "")
    assert story.map_head_text(words, IT, strongest, "") == (
        "The map: encoder layer 1, head 1, the head with the largest weight in “it”'s row."
    )
    weak = heads_looking_at(2, 4, on_key=0.3)
    assert story.map_head_text(weak, IT, story.shown_head(weak, IT, ANIMAL), ANIMAL) == (
        "The map: encoder layer 1, head 1, the head that puts the most on “animal”, the word "
        "“it” stands for."
    )


def test_a_head_whose_top_word_is_it_itself_does_not_link_it():
    """The issue's layer 3, head 6: more weight on "it" itself than on "animal"."""
    words = heads_looking_at(2, 4, on_key=0.3)  # 0.3 on animal / because, 0.7 on it
    said = story.coreference(words, IT, ANIMAL)
    assert said == (
        "No head links “it” to “animal”, the word it stands for: in none of the 2 is it the top "
        "word of “it”'s row, “it” itself included. Only with “it” left out is it the top word: "
        "layer 1, head 1 (30%, with 70% on “it” itself). The most weight any head puts on "
        "“animal” is 30% (layer 1, head 1, whose top word is “it” itself, 70%)."
    )
    shown = story.shown_head(words, IT, ANIMAL)
    assert story.map_title(words, IT, shown, ANIMAL) == "“it” → “it” itself (70%); “animal” 30%"


def test_the_story_says_so_when_no_head_links_it_to_the_word_it_stands_for():
    words = heads_looking_at(4, 6)
    said = story.coreference(words, IT, ANIMAL)
    assert said == (
        "No head links “it” to “animal”, the word it stands for: in none of the 2 is it the top "
        "word of “it”'s row, “it” itself included. The most weight any head puts on “animal” is "
        "0% (layer 1, head 1, whose top word is “because”, the previous word, 70%)."
    )
    assert story.coreference(words, IT, "An unknown sentence with it.") is None


@pytest.mark.slow
def test_the_reveal_tells_what_the_heads_do_and_keeps_the_guess(app, translator):
    at = app("story", text=ANIMAL, story="2")
    words = translator.translate(ANIMAL, "de", 4, 0.6, trace=True).word_attention.encoder
    query = story.question_word(words)
    at.radio(key="guess-it").set_value(words.key_labels.index("animal")).run()
    assert not at.exception
    said = [box.value for box in (*at.info, *at.success, *at.warning)]
    assert escaped(story.coreference(words, query, ANIMAL)) in said
    assert at.dataframe[0].value.to_dict("records") == story.strongest_table(words, query)
    assert any(caption.value.endswith(escaped(story.jobs(words, query))) for caption in at.caption)
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


HOSTILE = "It saw ![x](https://example.org/t.png) [click](https://example.org/login) <b>it</b>."


@pytest.mark.slow
def test_a_hostile_sentence_is_shown_as_text_in_the_question_answer_and_caption(app, translator):
    """Issue 59, finding 4: the words of a shared link are never markdown (an outside image or
    link) in the Story's question, options, answer and captions."""
    at = app("story", text=HOSTILE, story="2")
    assert not at.exception
    radio = at.radio[0]
    shown = [radio.label, *radio.options]
    assert not any("](" in text or "![" in text or "<b>" in text for text in shown), shown
    assert any(r"\!\[x\]" in text for text in shown)  # the words are there, escaped
    words = translator.translate(HOSTILE, "de", 4, 0.6, trace=True).word_attention.encoder
    query = story.question_word(words)
    radio.set_value(next(i for i in range(len(words.key_labels)) if i != query)).run()
    assert not at.exception and at.info
    said = [box.value for box in (*at.info, *at.success, *at.warning, *at.caption, *at.markdown)]
    for text in said:
        assert "](http" not in text and "<b>" not in text and "![" not in text, text
