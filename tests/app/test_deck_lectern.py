"""A deck at the lectern, through streamlit.testing: the shipped deck steps forward and back on
the shipped model, each step opening its page with its settings; every setting a deck can name
is one its page draws; a malformed deck is a message, and the view on screen saves as a step."""

import re
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app import deck, deck_controls
from app.page_settings import PAGES, ModelShape
from core import DEFAULT_MODEL
from tests.app.apptest import MAIN
from tests.app.test_deck import shipped_shape
from tests.conftest import EARLY_STEPS, FINAL_STEP
from tests.conftest import TINY as TINY_MODEL

VIEWS = Path(deck.__file__).parent / "views"
# Each page's title (its st.title), by page
TITLES = {
    path.stem: re.search(r'^st\.title\("(.+)"\)$', path.read_text(), re.MULTILINE)[1]
    for path in VIEWS.glob("*.py")
}
# The widgets that hold a deck's settings, by AppTest's name for them
WIDGETS = (
    "segmented_control",
    "selectbox",
    "toggle",
    "slider",
    "select_slider",
    "multiselect",
    "text_input",
    "text_area",
)


def widget(at: AppTest, key: str):
    """The widget keyed ``key`` on screen; KeyError when the page drew none."""
    for kind in WIDGETS:
        try:
            return getattr(at, kind)(key=key)
        except KeyError:
            continue
    raise KeyError(f"no widget with the key {key!r}")


def shown(at: AppTest, key: str):
    """The value of the widget keyed ``key`` on screen."""
    return widget(at, key).value


def chart_keys(at: AppTest) -> list[str]:
    return [chart.key for chart in at.get("plotly_chart")]


def assert_step(at: AppTest, step: deck.Step, number: int, name: str) -> None:
    """Step ``number`` of deck ``name`` is on screen: its page, every setting it names in its
    widget (the attention page's tab by the chart it draws), the deck and step in the URL."""
    assert not at.exception, [error.message for error in at.exception]
    assert not at.error, [error.value for error in at.error]
    assert at.title[0].value == TITLES[step.page]
    for key, value in step.settings.items():
        if key == "view":
            grid = value == "All layers and heads"
            tab = [key for key in chart_keys(at) if key.startswith("chart-attention-")]
            assert tab[0] == ("chart-attention-grid" if grid else "chart-attention-head")
        else:
            assert shown(at, key) == value, (number, key)
    assert at.selectbox(key=deck_controls.SLIDE).value == number
    assert at.query_params[deck_controls.DECK] == name
    assert at.query_params[deck_controls.SLIDE] == str(number)


def press(at: AppTest, key: str) -> AppTest:
    return at.button(key=key).click().run()


def open_app(model: Path | str, page: str = "model", **query: str) -> AppTest:
    """The app on the model at ``model``, opened at ``page`` by a link with ``query``."""
    at = AppTest.from_file(MAIN, default_timeout=180)
    at.query_params.update(query)
    at.switch_page(f"views/{page}.py")
    return at.run()


@pytest.mark.slow
def test_the_shipped_deck_steps_forward_and_back_on_the_shipped_model(monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(DEFAULT_MODEL))
    steps = deck.parse(deck.read("paper"), shipped_shape()).steps
    at = open_app(DEFAULT_MODEL, deck="paper")  # a link to the deck opens its first step
    assert_step(at, steps[0], 1, "paper")
    assert at.button(key=deck_controls.BACK).disabled
    for number, step in enumerate(steps[1:], start=2):
        press(at, deck_controls.FORWARD)
        assert_step(at, step, number, "paper")
    assert at.button(key=deck_controls.FORWARD).disabled
    for number in range(len(steps) - 1, len(steps) - 5, -1):  # back through the training steps
        press(at, deck_controls.BACK)
        assert_step(at, steps[number - 1], number, "paper")


# On the tiny model (2 layers of 4 heads, snapshots at EARLY_STEPS and FINAL_STEP): every setting
# of every page, none at its page's default, and the sidebar's for every step
EVERY_SETTING = """
[settings]
text = "A cat sleeps on the mat."
to = "fr"
beam = 3
alpha = 1.0
present = true

[[step]]
page = "story"
story = 4

[[step]]
page = "translate"
ref = "Un chat dort sur le tapis."
snapshot = {early}

[[step]]
page = "embeddings"
peorder = "blocks"
positions = 40
dims = [2, 5]
escale = "own"

[[step]]
page = "attention"
kind = "cross"
view = "One head"
layer = 1
head = 3
words = true
snapshot = {early}
query = 2

[[step]]
title = "The grid, at the page's layer and head"
page = "attention"
view = "All layers and heads"

[[step]]
page = "masking"
other = "A dog runs in the park."
player = 1
phead = 2
mkind = "cross"
mlayer = 1
mhead = 3
scaled = false

[[step]]
page = "beam_search"
step = 2
xlayer = 1
xhead = 2

[[step]]
page = "compare"
compare_kind = "decoder"
a_layer = 1
a_head = 3
b_layer = 1
b_head = "avg"
language_layer = 1
language_head = 2

[[step]]
page = "head_lab"
kind = "decoder"
focus = 0
at_word = 1
stat = "entropy"
how = "uniform"
off = ["dec L1 H1", "cross L2 H4"]

# the second sentence is the first: the tiny model's translations of two sentences share no word
# to compare (its foil, 399, is the piece "r", the second alternative after the second piece)
[[step]]
page = "explain"
word = 2
foil = 399
probe = "enc L2 H3"
probe_how = "permute"
pair = "A cat sleeps on the mat."
pair_word = 0
pair_layer = 2
follow = 3

[[step]]
page = "coverage"
coverage_pieces = true
coverage_word = "7: ▁sleeps"

[[step]]
page = "logit_lens"
lens_sublayers = true
lens_position = 1
lens_layer = 2

[[step]]
page = "training"
snapshot = {later}
kind = "cross"
layer = 1
head = 3
""".format(early=EARLY_STEPS[0], later=EARLY_STEPS[1])


@pytest.fixture
def tiny_deck(history_dir, monkeypatch, tmp_path):
    """Open the app on the tiny model with snapshots by a link to a deck holding the text given,
    in a lecturer's own folder of decks; returns the AppTest and the deck's name in the link."""
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(history_dir))
    monkeypatch.setenv(deck.FOLDER_ENV, str(tmp_path))

    def open_deck(text: str, page: str = "model") -> tuple[AppTest, str]:
        (tmp_path / "lecture.toml").write_text(text, encoding="utf-8")
        return open_app(history_dir, page, deck="lecture"), "lecture"

    return open_deck


TINY = ModelShape.of(
    2,
    2,
    4,
    ["de", "fr"],
    [*EARLY_STEPS, FINAL_STEP],
    d_model=TINY_MODEL.d_model,
    max_len=TINY_MODEL.max_len,
)


@pytest.mark.slow
def test_every_setting_a_deck_names_is_drawn_by_its_page(tiny_deck):
    steps = deck.parse(EVERY_SETTING, TINY).steps
    for name, page in PAGES.items():  # a new setting of a page is tested here too
        named = {key for step in steps if step.page == name for key in step.settings}
        assert set(page.settings) <= named, name
    at, name = tiny_deck(EVERY_SETTING)
    assert_step(at, steps[0], 1, name)
    for number, step in enumerate(steps[1:], start=2):
        press(at, deck_controls.FORWARD)
        assert_step(at, step, number, name)
        if number == 4:  # presentation mode: the query the step names is the view, on top
            assert chart_keys(at)[:2] == ["chart-scaled-dot-product", "chart-layer-lines"]
        if number == 5:  # the step names no layer or head: the page's defaults, not step 4's
            assert not at.session_state["words"]
            assert at.selectbox(key="query").value is None  # nor its query
            assert "chart-scaled-dot-product" not in chart_keys(at)
            zoomed = at.get("plotly_chart")[1].proto.spec
            assert "Encoder self-attention, layer 2, head 1" in zoomed


@pytest.mark.slow
def test_the_sidebar_opens_a_deck_jumps_to_a_step_and_closes_it(monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(DEFAULT_MODEL))
    steps = deck.parse(deck.read("paper"), shipped_shape()).steps
    at = open_app(DEFAULT_MODEL)
    assert at.selectbox(key=deck_controls.DECK).value is None
    with pytest.raises(KeyError):
        at.button(key=deck_controls.FORWARD)  # no deck, no steps
    at.selectbox(key=deck_controls.DECK).set_value("paper").run()
    assert_step(at, steps[0], 1, "paper")
    at.selectbox(key=deck_controls.SLIDE).set_value(3).run()
    assert_step(at, steps[2], 3, "paper")
    press(at, deck_controls.BACK)
    assert_step(at, steps[1], 2, "paper")
    at.selectbox(key=deck_controls.DECK).set_value(None).run()
    assert not at.exception
    assert deck_controls.DECK not in at.query_params and deck_controls.SLIDE not in at.query_params
    with pytest.raises(KeyError):
        at.button(key=deck_controls.FORWARD)


BROKEN = """
[[step]]
page = "**every** <b>page</b>"

[[step]]
page = "attention"
layer = 3
"""


@pytest.mark.slow
def test_a_deck_that_cannot_be_shown_is_a_message_naming_step_and_setting(tiny_deck):
    at, _ = tiny_deck(BROKEN, page="attention")
    assert not at.exception, [error.message for error in at.exception]
    assert at.title[0].value == TITLES["attention"]  # the page is drawn as without a deck
    with pytest.raises(deck.DeckError) as raised:
        deck.parse(BROKEN, TINY)
    assert [error.value for error in at.error] == [
        deck_controls.escaped(problem) for problem in raised.value.problems
    ]
    first, second = (error.value for error in at.error)
    assert r"\*\*every\*\* \<b\>page\</b\>" in first  # shown as typed: no bold, no HTML
    assert second == deck_controls.escaped("Step 2 (attention), layer: 3 is not one of 1, 2.")
    with pytest.raises(KeyError):
        at.button(key=deck_controls.FORWARD)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("no-such-deck", 'No deck "no-such-deck" can be read (FileNotFoundError); decks/ holds'),
        ("/etc/passwd", '"/etc/passwd" is not a deck\'s name: a deck is a .toml file of decks/.'),
    ],
)
def test_a_link_to_a_deck_that_is_not_there_is_a_message(
    tiny_model_dir, monkeypatch, name, expected
):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))
    at = open_app(tiny_model_dir, "tokenization", deck=name)
    assert not at.exception, [error.message for error in at.exception]
    assert at.title[0].value == TITLES["tokenization"]
    (error,) = at.error
    assert error.value.startswith(deck_controls.escaped(expected))


@pytest.fixture
def saved(monkeypatch) -> list[str]:
    """What the Save this view as a step button offers for download, run after run."""
    offered = []
    download_button = st.download_button

    def recording(label, data, **kwargs):
        if kwargs.get("key") == "deck-save":
            offered.append(data)
        return download_button(label, data, **kwargs)

    monkeypatch.setattr(st, "download_button", recording)
    return offered


@pytest.mark.slow
def test_the_view_on_screen_saves_as_a_new_decks_step(history_dir, monkeypatch, saved):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(history_dir))
    at = open_app(history_dir, "attention", kind="cross", words="true", query="2")
    at.segmented_control(key="layer").set_value(1).run()
    assert not at.exception
    lecture = deck.parse(saved[-1], TINY)
    assert saved[-1].startswith(deck_controls.NEW_DECK)
    (step,) = lecture.steps
    assert step.page == "attention" and step.title == "Attention"
    assert {key: step.settings[key] for key in ("kind", "layer", "head", "words", "query")} == {
        "kind": "cross",
        "layer": 1,
        "head": 1,
        "words": True,
        "query": 2,  # the row followed step by step
    }


@pytest.mark.slow
def test_a_decks_step_saved_from_the_screen_is_the_step_itself(tiny_deck, saved):
    at, _ = tiny_deck(EVERY_SETTING)
    assert not at.exception
    steps = deck.parse(EVERY_SETTING, TINY).steps
    lecture = deck.parse(saved[-1], TINY)
    assert saved[-1].startswith(EVERY_SETTING.rstrip())
    assert lecture.steps[:-1] == steps
    assert lecture.steps[-1] == deck.Step("story", steps[0].settings, "Story: start here")
