"""The Story's reveal on the shipped model: every sentence it states about a head is checked
against that head's row for "it", read here straight from the weights, and the Story and the Heads
lab give every head the same role."""

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app import story
from core.inspection.head_statistics import sentence_roles
from core.translator import DEFAULT_MODEL, Translator
from tests.app.apptest import MAIN
from tests.app.test_lab_pages import by_key

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not DEFAULT_MODEL.is_dir(), reason="no shipped model"),
]

ANIMAL = "The animal didn't cross the street because it was too tired."
TROPHY = "The trophy didn't fit into the suitcase because it was too big."


@pytest.fixture(scope="module")
def shipped() -> Translator:
    return Translator.load(DEFAULT_MODEL)


@pytest.fixture(scope="module", params=["de", "fr"])
def words(shipped, request):
    """The shipped model's encoder attention in words on the animal sentence, into ``target``."""
    return shipped.translate(ANIMAL, request.param, 4, 0.6, trace=True).word_attention.encoder


def rows_of_it(words) -> tuple[np.ndarray, int]:
    """Every head's row for "it", (layers, heads, keys), and the position of "it"."""
    it = words.query_labels.index("it")
    return words.weights[:, :, it, :], it


def head(layer: int, head_index: int) -> str:
    return f"layer {layer + 1}, head {head_index + 1}"


def test_the_link_to_animal_is_claimed_only_for_heads_whose_top_word_it_is(words):
    rows, it = rows_of_it(words)
    animal = words.key_labels.index("animal")
    said = story.coreference(words, it, ANIMAL)
    tops = rows.argmax(axis=-1)
    linking = np.argwhere(tops == animal)
    if len(linking):
        assert said.startswith(f"{'One head' if len(linking) == 1 else f'{len(linking)} heads'}")
        for layer, index in linking:
            assert f"{head(layer, index)} with {rows[layer, index, animal]:.0%}" in said
        return
    assert said.startswith("No head links “it” to “animal”")
    others = rows.copy()
    others[:, :, it] = -1.0
    for layer, index in np.argwhere(others.argmax(axis=-1) == animal):
        on_it = rows[layer, index, it]
        assert (
            f"{head(layer, index)} ({rows[layer, index, animal]:.0%}, with {on_it:.0%} on “it” "
            "itself)" in said
        )
    best = np.unravel_index(rows[:, :, animal].argmax(), rows.shape[:2])
    top = words.key_labels[tops[best]]
    assert (
        f"The most weight any head puts on “animal” is {rows[best][animal]:.0%} "
        f"({head(*best)}, whose top word is “{top}”" in said
    )
    assert said.endswith(f", {rows[best].max():.0%}).")
    shown = story.shown_head(words, it, ANIMAL)
    title = story.map_title(words, it, shown, ANIMAL)
    assert "links" not in title
    assert title.endswith(f"“animal” {rows[shown.layer, shown.head, animal]:.0%}")


def test_the_strongest_heads_table_is_each_heads_row(words):
    rows, it = rows_of_it(words)
    labels = words.key_labels
    strongest = np.argsort(-rows.max(axis=-1), axis=None)[: story.STRONGEST_SHOWN]
    table = story.strongest_table(words, it)
    roles = sentence_roles(words, self_attention=True)
    heads = rows.shape[1]
    for flat, shown in zip(strongest, table, strict=True):
        layer, index = divmod(int(flat), heads)
        row = rows[layer, index]
        assert shown["head"] == head(layer, index)
        assert shown["role in this sentence"] == roles[flat].label
        assert shown["top word"].startswith(f"“{labels[row.argmax()]}”")
        assert shown["its weight"] == f"{row.max():.0%}"
        named = {
            "itself": row[it],
            "previous word": row[it - 1],
            "next word": row[it + 1],
            "</s>": row[labels.index("</s>")],
            "language tag": row[0],
        }
        for column, weight in named.items():
            assert shown[column] == f"{weight:.0%}", column
        assert shown["farther words"] == f"{1 - sum(named.values()):.0%}"


def test_the_answer_names_the_most_any_head_puts_on_another_word(words):
    rows, it = rows_of_it(words)
    animal = words.key_labels.index("animal")
    others = rows.copy()
    others[:, :, it] = -1.0
    best = np.unravel_index(others.max(axis=-1).argmax(), rows.shape[:2])
    key = int(others[best].argmax())
    said = story.reveal_text(words, it, animal, ANIMAL)
    end = words.key_labels.index("</s>")
    what = {
        it - 1: ", the previous word",
        it + 1: ", the next word",
        end: ", the end of the sentence",
        0: ", the language tag",
    }.get(key, "")
    assert (
        f"the most any head puts on one is {others[best].max():.0%}: encoder {head(*best)}, on "
        f"“{words.key_labels[key]}”{what}" in said
    )
    if rows[best].argmax() != key:  # a head that looks most at "it" itself is said to
        assert f"(its top word is “it” itself, {rows[best].max():.0%})" in said
    on_animal = np.unravel_index(rows[:, :, animal].argmax(), rows.shape[:2])
    assert f"on your “animal” is {rows[on_animal][animal]:.0%} ({head(*on_animal)}, " in said


def test_every_head_votes_and_the_jobs_count_the_heads_on_it_itself(words):
    rows, it = rows_of_it(words)
    tops = rows.argmax(axis=-1).ravel()
    votes = dict(story.head_votes(words, it))
    assert sum(votes.values()) == tops.size
    assert votes.get("it (itself)", 0) == int((tops == it).sum())
    end = words.key_labels.index("</s>")
    counts = {
        "the word itself": (tops == it).sum(),
        "the previous word": (tops == it - 1).sum(),
        "the next word": (tops == it + 1).sum(),
        "the end of the sentence": (tops == end).sum(),
        "the language tag": (tops == 0).sum(),
    }
    jobs = story.jobs(words, it)
    assert jobs.startswith(f"Of its {tops.size} heads, ")
    for name, count in counts.items():
        said = re.search(rf"(\d+) (?:looks? most )?at {name}\b", jobs)
        assert (int(said.group(1)) if said else 0) == count, name


@pytest.fixture
def shipped_app(monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(DEFAULT_MODEL))

    def open_page(page: str, **query: str) -> AppTest:
        at = AppTest.from_file(MAIN, default_timeout=300)
        at.query_params.update(query)
        at.switch_page(f"views/{page}.py")
        return at.run()

    return open_page


@pytest.mark.parametrize(("text", "target"), [(ANIMAL, "de"), (TROPHY, "fr")])
def test_the_story_and_the_heads_lab_give_every_head_the_same_role(
    shipped_app, shipped, text, target
):
    words = shipped.translate(text, target, 4, 0.6, trace=True).word_attention.encoder
    lab = shipped_app("head_lab", text=text, to=target, kind="encoder")
    assert not lab.exception
    (dashboard,) = [spec for key, spec in by_key(lab).items() if key.startswith("heads-encoder-")]
    cells = [cell.split("<br>")[0] for row in dashboard["data"][0]["text"] for cell in row]
    roles = [role.label for role in sentence_roles(words, self_attention=True)]
    assert cells == roles
    at = shipped_app("story", text=text, to=target, story="2")
    at.radio(key="guess-it").set_value(words.key_labels.index("because")).run()
    assert not at.exception
    heads = words.weights.shape[1]
    for shown in at.dataframe[0].value.to_dict("records"):
        layer, index = (int(number) for number in re.findall(r"\d+", shown["head"]))
        assert shown["role in this sentence"] == cells[(layer - 1) * heads + index - 1]


def test_the_end_of_the_sentence_is_never_called_the_next_word(shipped):
    sentence = "A man is riding a bicycle."
    words = shipped.translate(sentence, "de", 4, 0.6, trace=True).word_attention.encoder
    last = story.question_word(words)
    assert words.key_labels[last + 1] == "</s>"
    rows = words.weights[:, :, last, :]
    on_end = int((rows.argmax(axis=-1) == last + 1).sum())
    jobs = story.jobs(words, last)
    assert "the next word" not in jobs
    said = re.search(r"(\d+) (?:looks? most )?at the end of the sentence", jobs)
    assert (int(said.group(1)) if said else 0) == on_end
    for shown in story.strongest_table(words, last):
        assert "next word" not in shown["top word"]
