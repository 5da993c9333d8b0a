"""The one registry of the pages and their settings (app/page_settings.py): it lists the app's
pages; every shipped deck's steps are valid by it; every page draws each of its settings with the
registry's label and default; a value in the URL that the setting does not allow opens the
page at the default, never a traceback."""

import pytest
from streamlit.testing.v1 import AppTest

from app import deck, page_settings, state
from app.page_settings import PAGES, SIDEBAR, ModelShape
from tests.app.apptest import MAIN
from tests.app.test_deck import shipped_shape
from tests.app.test_deck_lectern import TINY, widget

# The settings whose default the page's data decides (a row of the sentence, the layer where a
# piece formed): drawn, but not at a default of the registry's
DATA_DEFAULTS = {
    ("attention", "query"),
    ("logit_lens", "lens_position"),
    ("logit_lens", "lens_layer"),
    ("explain", "probe"),  # the cross head most focused for the word explained
}
# What a page is opened with besides its settings: the Explain page compares its sentence with
# itself, as the tiny model's translations of two sentences share no word (so the page would draw
# neither the word to compare nor its layer)
OPENED_WITH = {"explain": {"pair": state.DEFAULTS.text}}


def as_shown(value):
    """A setting's value as its widget holds it: a multiselect's, a list."""
    return list(value) if isinstance(value, (tuple, range)) else value


def open_page(page: str, **query: str) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params.update({**query, **OPENED_WITH.get(page, {})})
    at.switch_page(f"views/{page}.py")
    return at.run()


def test_the_sidebars_settings_are_those_of_the_apps_state():
    """(Its pages are the app's views: tests/app/test_app.py.)"""
    assert set(SIDEBAR) <= set(vars(state.DEFAULTS))


@pytest.mark.parametrize("name", deck.names())
def test_every_step_of_every_shipped_deck_is_valid_by_the_registry(name):
    shape = shipped_shape()
    for step in deck.parse(deck.read(name), shape).steps:  # parse raises on any problem
        settings = page_settings.settings_of(step.page)
        for key, value in step.settings.items():
            assert settings[key].problem(value, step.settings, shape) is None, (step, key)


@pytest.mark.parametrize("shape", [TINY, shipped_shape()], ids=["tiny", "shipped"])
def test_every_default_is_a_value_its_setting_allows(shape):
    for name, page in PAGES.items():
        for key, setting in page.settings.items():
            options = setting.options({}, shape)
            if options is None:  # bounded by the page's data
                continue
            default = setting.default_of(options)
            assert setting.problem(default, {}, shape) is None or default == (), (name, key)
            assert setting.label or key == "view", (name, key)  # the tabs are their own labels


# Values of the settings whose options the model's shape decides beyond its layers and heads (its
# d_model, its longest input, every head by name), and what a deck is told of them
SHAPED = [
    ("embeddings", "positions", 96, None),
    ("embeddings", "positions", 97, "97 is not one of 16 to 96"),
    ("embeddings", "dims", [0, 31], None),
    ("embeddings", "dims", [0, 32], "32 is not one of 0 to 31"),
    ("embeddings", "dims", ["0"], '"0" is not one of 0 to 31'),
    ("explain", "pair_layer", "mean", None),
    ("explain", "pair_layer", 3, '3 is not one of "mean", 1, 2'),
    ("explain", "probe", "cross L2 H4", None),
    ("explain", "probe", ["cross L2 H4"], '["cross L2 H4"] is not a head such as "enc L5 H5"'),
    (
        "explain",
        "probe",
        "cross L3 H1",
        '"cross L3 H1" is not a head of this model ("enc L1 H1" to "cross L2 H4")',
    ),
    ("head_lab", "stat", "monotonicity", None),
    (
        "head_lab",
        "stat",
        "nope",
        '"nope" is not one of "confidence", "entropy", "sink_share", '
        '"mean_distance", "same_share", "previous_share", "next_share", "diagonality", '
        '"monotonicity"',
    ),
]


@pytest.mark.parametrize(("page", "key", "value", "problem"), SHAPED)
def test_a_setting_shaped_by_the_model_names_a_value_it_lacks(page, key, value, problem):
    assert PAGES[page].settings[key].problem(value, {}, TINY) == problem


def test_a_model_of_unknown_width_and_length_bounds_positions_and_dimensions_below_only():
    shape = ModelShape.of(2, 2, 4, ["de"])
    settings = PAGES["embeddings"].settings
    assert settings["positions"].problem(1000, {}, shape) is None
    assert settings["positions"].problem(15, {}, shape) == "15 is below 16"
    assert settings["dims"].problem([0, 1000], {}, shape) is None
    assert settings["dims"].problem([-1], {}, shape) == "-1 is not a dimension"


@pytest.mark.slow
@pytest.mark.parametrize("page", list(PAGES))
def test_a_page_draws_each_of_its_settings_with_the_registrys_label_and_default(
    history_dir, monkeypatch, page
):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(history_dir))
    at = open_page(page)
    assert not at.exception, [error.message for error in at.exception]
    for key, setting in PAGES[page].settings.items():
        if key == "view":  # the attention page's tabs
            assert [tab.label for tab in at.tabs] == list(setting.options({}, TINY))
            continue
        drawn = widget(at, key)
        assert drawn.label == setting.label, (page, key)
        options = setting.options({}, TINY)
        if (page, key) not in DATA_DEFAULTS and options is not None:
            assert drawn.value == as_shown(setting.default_of(options)), (page, key)


# Values a link may hold that no setting allows: a layer or head the model lacks, a word that is
# no option, a number for a switch
BAD_VALUES = ("99", "nope", "-1", "")


@pytest.mark.slow
@pytest.mark.parametrize("page", [name for name, page in PAGES.items() if page.settings])
def test_a_value_in_the_url_that_its_setting_does_not_allow_opens_the_default(
    history_dir, monkeypatch, page
):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(history_dir))
    settings = PAGES[page].settings
    for bad in BAD_VALUES:
        at = open_page(page, **{key: bad for key in settings})
        assert not at.exception, (bad, [error.message for error in at.exception])
        for key, setting in settings.items():
            options = setting.options({}, TINY)
            if key == "view" or options is None or (page, key) in DATA_DEFAULTS:
                continue
            expected = as_shown(setting.default_of(options))
            if bad == "" and list in setting.kinds:  # a list's empty value: none chosen
                expected = []
            assert widget(at, key).value == expected, (page, key, bad)
