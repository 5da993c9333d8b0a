"""Explain's "Instead of" piece lives in the URL like the page's other choices: a copied link
opens the same contrast in a fresh session, and a piece that is not an alternative where it is
asked for (another produced piece, a link of another model) gives way to the likeliest one."""

import html

import pytest

from app import explain_cache
from core import Request
from tests.app.test_app import assert_fine
from tests.app.test_lab_pages import TIRED, by_key, selected


def contrast_row(at) -> str:
    """The contrastive map's one row, “chosen” rather than “foil”, as it is read."""
    (chart,) = [spec for key, spec in by_key(at).items() if key.startswith("contrast-")]
    return html.unescape(chart["layout"]["yaxis"]["ticktext"][0].replace("<br>", " "))


def piece(label: str) -> str:
    """The piece of an "Instead of" option: "·Hund (P 0.123)" -> "·Hund"."""
    return label.rsplit(" (P ", 1)[0]


def alternatives(model_dir, at) -> list[int]:
    """The pieces "Instead of" offers for the produced piece on screen, likeliest first."""
    position = at.selectbox(key="word").value
    found = explain_cache.cached_alternatives(Request(model_dir, TIRED, "de", 4, 0.6), position)
    return [piece for piece, _, _ in found]


@pytest.mark.slow
def test_a_fresh_session_opens_the_piece_instead_of_the_chosen_one_that_the_url_names(app):
    at = app("explain", text=TIRED)
    assert_fine(at)
    options = at.selectbox(key="foil").options
    assert selected(at, "foil") == options[0] and "foil" not in at.query_params  # the default
    assert contrast_row(at).endswith(f"rather than “{piece(options[0])}”")
    # the URL holds the option as shown: Streamlit's bind writes it there in the browser
    fresh = app("explain", text=TIRED, foil=options[2])  # a copied link, in a new session
    assert_fine(fresh)
    assert selected(fresh, "foil") == options[2]
    assert contrast_row(fresh).endswith(f"rather than “{piece(options[2])}”")


@pytest.mark.slow
def test_a_piece_that_is_no_alternative_gives_way_to_the_likeliest(app, tiny_model_dir):
    stale = app("explain", text=TIRED, foil="no such piece (P 0.500)")
    assert_fine(stale)
    assert selected(stale, "foil") == stale.selectbox(key="foil").options[0]

    at = app("explain", text=TIRED)
    at.selectbox(key="foil").set_value(alternatives(tiny_model_dir, at)[1]).run()
    chosen = piece(selected(at, "foil"))
    for word in range(len(at.selectbox(key="word").options)):  # a piece where it is no choice
        at.selectbox(key="word").set_value(word).run()
        assert_fine(at)
        options = at.selectbox(key="foil").options
        if chosen not in map(piece, options):
            assert selected(at, "foil") == options[0]
            return
    pytest.fail(f"{chosen} is an alternative at every produced piece")
