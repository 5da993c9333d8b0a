"""The lectern keys in Chromium (app/lectern.py): what a presentation clicker sends (→, ←,
PageDown, PageUp, Space) steps the Story, the beam search and the training snapshots whatever
widget has focus, without changing the audience's answer, and leaves a text box being typed in
alone.

Run only these: python -m pytest -m browser tests/browser/test_browser_lectern.py
"""

import re
from urllib.parse import urlencode

import pytest

from support.browser import CHART, wait_for_app
from tests.browser.test_browser import (  # noqa: F401 (fixtures)
    chart_title,
    page,
    server,
    step,
    step_value,
)
from tests.conftest import EARLY_STEPS, FINAL_STEP

pytestmark = pytest.mark.browser

ANIMAL = "The animal didn't cross the street because it was too tired."


def press(tab, key: str) -> None:
    """Press ``key`` and wait for the run it starts, if any."""
    tab.keyboard.press(key)
    wait_for_app(tab)


def story_step(tab) -> str:
    """The Story's step as its header shows it ("3 · Self-attention")."""
    return tab.locator("[data-testid='stMain'] h2").first.inner_text()


def guess(tab) -> str | None:
    """The label of the audience's checked answer, None before one is given."""
    checked = tab.locator("[data-testid='stRadio'] label:has(input:checked)")
    return checked.inner_text() if checked.count() else None


def focus_the_answer(tab) -> None:
    """Give the checked answer focus with a click, as the guess's click leaves it: in
    presentation mode the answer is drawn anew beside the head's map once given, and the new
    radio has not got it."""
    tab.locator("[data-testid='stRadio'] label:has(input:checked)").click()
    assert tab.evaluate("document.activeElement.type") == "radio"


def test_clicker_keys_step_the_story_whatever_has_focus(server, page):  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{server}/?{urlencode({'text': ANIMAL, 'present': 'true', 'story': '2'})}")
    page.wait_for_selector("[data-testid='stRadio']", timeout=240_000)  # the server starts cold
    wait_for_app(page)
    assert story_step(page).startswith("3 ·")
    page.locator("[data-testid='stRadio'] label", has_text="animal").click()  # the guess
    wait_for_app(page)
    assert guess(page) == "animal"
    focus_the_answer(page)

    press(page, "PageDown")  # the radio has focus: the key steps, it does not change the guess
    assert story_step(page).startswith("4 ·") and re.search(r"[?&]story=3\b", page.url)
    page.get_by_role("button", name="◀ Back").click()  # now a button has focus
    wait_for_app(page)
    assert story_step(page).startswith("3 ·")
    assert guess(page) == "animal"  # the audience's answer stays
    page.locator("[data-testid='stRadio'] label", has_text="animal").click()
    wait_for_app(page)
    focus_the_answer(page)
    press(page, "ArrowRight")
    assert story_step(page).startswith("4 ·")
    page.get_by_role("button", name="Next ▶").click()
    wait_for_app(page)
    assert story_step(page).startswith("5 ·")
    assert page.evaluate("document.activeElement.tagName") == "BUTTON"
    press(page, "ArrowRight")  # a focused button: → steps instead of moving the focus
    assert story_step(page).startswith("6 ·")
    press(page, "PageUp")
    assert story_step(page).startswith("5 ·")
    page.get_by_role("button", name="◀ Back").click()
    wait_for_app(page)
    assert story_step(page).startswith("4 ·")
    press(page, "Space")  # on the focused ◀ Back: a step forward, not a click of the button too
    assert story_step(page).startswith("5 ·")
    press(page, "Shift+Space")
    press(page, "ArrowLeft")
    assert story_step(page).startswith("3 ·")
    assert guess(page) == "animal"
    assert not page.locator("[data-testid='stException']").count()


def test_a_clicker_alone_reveals_the_storys_answer_beside_its_map_then_steps_on(server, page):  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{server}/?{urlencode({'text': ANIMAL, 'present': 'true', 'story': '2'})}")
    page.wait_for_selector("[data-testid='stRadio']", timeout=240_000)
    wait_for_app(page)
    assert not page.locator("[data-testid='stAlertContentInfo']").count()
    press(page, "PageDown")  # no guess was given: the key reveals the model's answer
    assert story_step(page).startswith("3 ·")
    answer = page.locator("[data-testid='stAlertContentInfo']").first
    assert answer.inner_text().startswith("Of the words other than “it”")
    assert guess(page) is None  # the room's guess is not made up
    head = re.search(r"The map: encoder (layer \d+, head \d+)", answer.inner_text()).group(1)
    title = page.locator(".st-key-chart-story-self .gtitle").evaluate(
        "t => [...t.querySelectorAll('tspan.line')].map(line => line.textContent).join(' ')"
        " || t.textContent"  # a title of one line has no lines of its own
    )
    assert head in title  # the text speaks of the map's head
    figure = page.locator(".st-key-chart-story-self .js-plotly-plot").bounding_box()
    assert figure["y"] >= 0 and figure["y"] + figure["height"] <= 720, figure  # both in view
    press(page, "PageDown")
    assert story_step(page).startswith("4 ·")


def test_keys_step_after_the_sentence_is_sent_but_not_while_typing(server, page):  # noqa: F811
    page.goto(f"{server}/?{urlencode({'text': ANIMAL})}")
    page.wait_for_selector("h2:has-text('1 · Pieces')", timeout=240_000)
    wait_for_app(page)
    box = page.get_by_role("textbox", name="English sentence")
    box.fill("The cat sleeps.")
    box.press("Control+Enter")
    wait_for_app(page)
    assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"
    press(page, "ArrowRight")  # sent: the key is the lectern's
    assert story_step(page).startswith("2 ·")
    box.press("End")
    box.type(" Yes")  # typing again: the keys are the text's
    press(page, "ArrowLeft")
    press(page, "Space")
    assert story_step(page).startswith("2 ·")
    assert box.input_value() == "The cat sleeps. Ye s"


def test_clicker_keys_step_the_beam_search_and_the_training(server, page):  # noqa: F811
    from playwright.sync_api import expect

    page.goto(f"{server}/beam_search?{urlencode({'text': ANIMAL, 'present': 'true'})}")
    page.wait_for_selector(CHART, timeout=240_000)
    wait_for_app(page)
    page.get_by_role("button", name="Next ▶").click()
    wait_for_app(page)
    assert step(page) == 1
    for key, expected in [("ArrowRight", 2), ("PageDown", 3), ("Space", 4), ("PageUp", 3)]:
        press(page, key)  # on a busy machine the rerun may start after wait_for_app's grace
        expect(step_value(page)).to_have_text(str(expected), timeout=60_000)
    slider = page.locator("[data-testid='stMain'] [data-testid='stSlider']", has_text="Step")
    slider.locator("input").focus()  # the slider would take the key for itself
    press(page, "ArrowLeft")
    assert step(page) == 2

    page.goto(f"{server}/training?{urlencode({'text': ANIMAL, 'kind': 'cross'})}")
    page.wait_for_selector(CHART)
    wait_for_app(page)
    assert chart_title(page).startswith(f"Step {EARLY_STEPS[0]}:")
    press(page, "PageDown")
    assert chart_title(page).startswith(f"Step {EARLY_STEPS[1]}:")
    press(page, "ArrowLeft")
    assert chart_title(page).startswith(f"Step {EARLY_STEPS[0]}:")


WATCH_FOR_ERRORS = """() => {
    window.errorBoxSeen = false;
    const seen = () => document.querySelector("[data-testid='stException']");
    new MutationObserver(() => { window.errorBoxSeen ||= Boolean(seen()); })
        .observe(document.body, {childList: true, subtree: true});
}"""


def play_at_the_end(tab, play: str, forward: str) -> None:
    """Press the page's Play toggle, then its forward key, and check that no error box ever
    appears, even for a moment, and that Play is off again."""
    from playwright.sync_api import expect

    tab.evaluate(WATCH_FOR_ERRORS)
    tab.get_by_text(play).click()
    wait_for_app(tab)
    toggle = tab.get_by_role("switch", name=play)
    expect(toggle).not_to_be_checked(timeout=30_000)
    press(tab, forward)
    tab.wait_for_timeout(2_000)  # longer than a play's tick: nothing more happens
    assert not tab.evaluate("window.errorBoxSeen")
    expect(toggle).not_to_be_checked()


def test_play_and_the_keys_at_the_last_step_stop_quietly(server, page, translator):  # noqa: F811
    last = len(translator.translate(ANIMAL, "de", 4, 0.6, trace=True).steps) - 1
    assert last > 0
    page.goto(f"{server}/beam_search?{urlencode({'text': ANIMAL, 'step': last})}")
    page.wait_for_selector(CHART, timeout=240_000)
    wait_for_app(page)
    assert step(page) == last
    play_at_the_end(page, "Play the search", "PageDown")
    assert step(page) == last

    page.goto(f"{server}/training?{urlencode({'text': ANIMAL, 'snapshot': FINAL_STEP})}")
    page.wait_for_selector(CHART)
    wait_for_app(page)
    play_at_the_end(page, "Play the training", "ArrowRight")
    assert chart_title(page).startswith(f"Step {FINAL_STEP}:")


def test_the_keys_toast_leaves_the_sentence_and_translation_in_view(server, page):  # noqa: F811
    """Presentation mode tells the keys once per session in a toast: at the bottom of the screen,
    not over the banner's translation at the top right (issue #48)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{server}/?{urlencode({'text': ANIMAL, 'present': 'true'})}")
    toast = page.locator("[data-testid='stToast']")
    toast.wait_for(state="visible", timeout=240_000)
    banner = page.locator(".st-key-sentence-banner").bounding_box()
    box = toast.bounding_box()
    assert box["y"] >= banner["y"] + banner["height"]  # below the sentence and its translation
    assert box["y"] + box["height"] <= 720  # and on screen


def test_a_radio_reached_by_the_keyboard_keeps_its_arrow_keys(server, page):  # noqa: F811
    page.goto(f"{server}/?{urlencode({'text': ANIMAL, 'story': '2'})}")
    page.wait_for_selector("[data-testid='stRadio']", timeout=240_000)
    wait_for_app(page)
    page.get_by_role("textbox", name="English sentence").focus()
    for _ in range(40):  # Tab on, as a keyboard user does, to the audience's answer
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.type") == "radio":
            break
    assert page.evaluate("document.activeElement.matches(':focus-visible')")
    press(page, "ArrowDown")  # a radio group's key: the next answer
    first = guess(page)
    press(page, "ArrowRight")  # the radio's, as WAI-ARIA's radio group has it: not a step
    assert first is not None and guess(page) not in (None, first)
    assert story_step(page).startswith("3 ·")
    assert page.evaluate("document.activeElement.type") == "radio"  # the focus stays
    press(page, "PageDown")  # the clicker's key still steps
    assert story_step(page).startswith("4 ·")
    assert not page.locator("[data-testid='stException']").count()
