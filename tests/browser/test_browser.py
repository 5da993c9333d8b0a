"""The app in a real browser: `streamlit run` on 127.0.0.1 and Debian's Chromium via Playwright.

Run only these: python -m pytest -m browser. Without Chromium they are skipped, except in CI
(CI=true), where a missing browser is a failure.
"""

import os
import re
from pathlib import Path

import pytest

from core.inspection.ablation import Head, intervened_translator
from support.browser import (
    CHART,
    CHROMIUM,
    app_server,
    chromium_page,
    open_view,
    set_sentence,
    wait_for_app,
)
from tests.conftest import EARLY_STEPS, FINAL_STEP
from tests.screenshots import VIEWS, take_screenshots

pytestmark = pytest.mark.browser

TITLES = [
    "Story: start here",
    "Tokenization",
    "Embeddings & positional encoding",
    "Attention",
    "Masking",
    "Beam search",
    "Heads lab",
    "Explain",
    "Coverage",
    "Compare",
    "Training dynamics",
    "Model",
    "Translate",
]


@pytest.fixture(scope="module")
def server(history_dir, tmp_path_factory):
    """The app on the tiny model with its snapshots (history_dir)."""
    require_browser()
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with app_server(history_dir, log) as url:
        yield url


def require_browser() -> None:
    """Skip (under CI=true: fail) when there is no Chromium or no Playwright."""
    problem = None
    if not Path(CHROMIUM).is_file():
        problem = f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    elif not _has_playwright():
        problem = "playwright is not installed (pip install -r requirements-dev.txt)"
    if problem:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(problem)
        pytest.skip(problem)


def _has_playwright() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def step_value(page):
    """The beam search page's step slider's shown value. While Play reruns the page, the slider
    of the run before can stand beside the new one for a moment on a busy machine: the last drawn
    is the page's."""
    slider = page.locator("[data-testid='stSlider']", has_text="Step").last
    return slider.locator("[data-testid='stSliderThumbValue']")


def step(page) -> int:
    return int(step_value(page).inner_text())


def click_to_step(page, button: str, expected: int) -> None:
    """Click ``button`` and wait until the slider shows ``expected``: on a busy machine the rerun a
    click starts may begin after wait_for_app's grace period, so the outcome is what is awaited."""
    from playwright.sync_api import expect

    page.get_by_role("button", name=button).click()
    expect(step_value(page)).to_have_text(str(expected), timeout=60_000)
    wait_for_app(page)


@pytest.fixture
def page():
    with chromium_page() as page:
        yield page


def test_translate_click_through_every_page_and_step(server, page, translator, tmp_path):
    page.goto(f"{server}/translate")
    page.wait_for_selector(CHART)
    sentence = "The happy child reads a book."
    set_sentence(page, sentence)
    assert "text=The+happy+child" in page.url  # the view lives in the URL
    expected = translator.translate(sentence, "de", 4, 0.6).text
    assert page.locator("[data-testid='stCode'] code").first.inner_text() == expected
    page.screenshot(path=tmp_path / "translate.png")

    for title in TITLES:
        open_view(page, title)
        if title != "Model":
            page.wait_for_selector(CHART)
        assert not page.locator("[data-testid='stException']").count()
        page.screenshot(path=tmp_path / f"{title.split()[0].lower()}.png")
    assert "text=The+happy+child" in page.url  # the sentence survives page changes

    open_view(page, "Beam search")
    assert step(page) == 0
    for expected in (1, 2, 3):
        click_to_step(page, "Next ▶", expected)
    assert re.search(r"[?&]step=3\b", page.url)
    click_to_step(page, "◀ Previous", 2)

    page.get_by_text("Play the search").click()  # the steps advance by themselves
    for _ in range(100):
        page.wait_for_timeout(200)
        if step(page) > 4:
            break
    assert step(page) > 4
    page.get_by_text("Play the search").click()
    wait_for_app(page)

    shared = page.url
    page.goto(shared)  # a shared link opens the same view
    wait_for_app(page)
    assert step(page) == int(re.search(r"step=(\d+)", shared).group(1))
    assert page.get_by_text(f"Step {step(page)}: the candidates").count() == 1


def chart_title(page) -> str:
    return page.locator(".js-plotly-plot .gtitle").first.text_content()


def test_training_dynamics_steps_through_the_snapshots_from_the_first(server, page):
    page.goto(f"{server}/training?kind=cross")
    page.wait_for_selector(CHART)
    assert chart_title(page).startswith(f"Step {EARLY_STEPS[0]}:")
    # the page's first text follows the banner's sentence and translation
    snapshot_text = page.locator("[data-testid='stMain'] [data-testid='stText']").nth(2)
    first_translation = snapshot_text.inner_text()
    later = page.get_by_role("button", name="Later ▶")
    for step in (*EARLY_STEPS[1:], FINAL_STEP):
        later.click()
        wait_for_app(page)
        assert chart_title(page).startswith(f"Step {step}:")
        assert re.search(rf"[?&]snapshot={step}\b", page.url)
    assert snapshot_text.inner_text() != first_translation
    assert not page.locator("[data-testid='stException']").count()


def test_clicking_a_grid_tile_opens_that_head_large(server, page):
    page.goto(f"{server}/attention?kind=cross&view=All+layers+and+heads")
    grid = page.locator(".st-key-chart-attention-grid .js-plotly-plot")
    zoom = page.locator(".st-key-chart-attention-grid-head .js-plotly-plot")
    zoom.locator(".gtitle").wait_for(timeout=240_000)  # run alone, the server starts cold
    assert zoom.locator(".gtitle").text_content() == "Cross-attention, layer 2, head 1"
    # the centre of the tile of layer 1, head 2, where its marker sits, scrolled into view
    centre = grid.evaluate(
        """graph => {
            const index = graph.data[1].customdata.findIndex(
                tile => tile[0] === 1 && tile[1] === 2);
            const marker = graph.querySelectorAll('.scatterlayer .point')[index];
            marker.scrollIntoView({block: 'center'});
            const box = marker.getBoundingClientRect();
            return [box.x + box.width / 2, box.y + box.height / 2];
        }"""
    )
    page.mouse.move(*centre)
    page.wait_for_timeout(300)  # plotly's hover, which its click selects from
    page.mouse.click(*centre)
    wait_for_app(page)
    page.wait_for_function(
        "() => document.querySelector('.st-key-chart-attention-grid-head .gtitle')"
        "?.textContent === 'Cross-attention, layer 1, head 2'"
    )
    assert re.search(r"[?&]layer=1\b", page.url) and re.search(r"[?&]head=2\b", page.url)
    ticks = zoom.locator(".ytick text").evaluate_all("els => els.map(e => e.textContent)")
    assert ticks and all(" → " in tick for tick in ticks)  # the zoomed head has token labels
    assert not page.locator("[data-testid='stException']").count()
    page.reload()  # the link opens the same zoomed head
    wait_for_app(page)
    page.wait_for_function(
        "() => document.querySelector('.st-key-chart-attention-grid-head .gtitle')"
        "?.textContent === 'Cross-attention, layer 1, head 2'"
    )


def test_user_text_is_shown_as_text(server, page):
    page.goto(f"{server}/translate")
    wait_for_app(page)
    text = "<b>bold</b> **strong** <img src=x onerror=alert(1)>"
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    set_sentence(page, text)
    page.wait_for_selector(CHART)
    main = page.locator("[data-testid='stMain']")
    assert main.locator("b", has_text="bold").count() == 0
    assert main.locator("strong", has_text="strong").count() == 0
    assert main.locator("img[src='x']").count() == 0
    assert not dialogs
    ticks = page.locator(".js-plotly-plot .xtick text")
    labels = ticks.evaluate_all("els => els.map(e => e.textContent)")
    assert any("<b>" in label for label in labels), labels  # plotly shows it literally
    assert ticks.locator("tspan[style*='bold']").count() == 0


def test_screenshots_of_the_main_views(server, page, tmp_path):
    files = take_screenshots(page, server, tmp_path)
    assert [f.stem for f in files] == [name for name, _, _ in VIEWS]
    assert all(f.stat().st_size > 20_000 for f in files)


def press_until(page, key: str, header: str, attempts: int = 3) -> None:
    """Press ``key`` until ``header`` shows: a key pressed while the page is still wiring up its
    shortcuts is lost, not queued."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(attempts):
        page.locator("h1").first.click()  # keys go to the page, not to a text box
        page.keyboard.press(key)
        try:
            page.wait_for_selector(f"h2:has-text('{header}')", timeout=10_000)
            wait_for_app(page)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"{key} never led to {header!r}")


def test_the_story_steps_with_the_arrow_keys(server, page):
    page.goto(server)  # the story is the start page
    page.wait_for_selector("h2:has-text('1 · Pieces')")
    wait_for_app(page)
    page.get_by_role("button", name="Next ▶").wait_for()
    press_until(page, "ArrowRight", "2 · Positions")
    press_until(page, "ArrowRight", "3 · Self-attention")
    assert re.search(r"[?&]story=2\b", page.url)
    press_until(page, "ArrowLeft", "2 · Positions")
    assert not page.locator("[data-testid='stException']").count()


def test_heads_switched_off_in_the_heads_lab_change_the_translation(server, page, translator):
    sentence = "The dog runs in the park."
    page.goto(f"{server}/head_lab?text=The+dog+runs+in+the+park.")
    page.wait_for_selector(CHART)
    wait_for_app(page)
    page.get_by_role("combobox", name="Word that attends").click()
    page.get_by_role("option", name="runs", exact=True).click()
    wait_for_app(page)
    page.wait_for_selector(".gtitle:has-text('Where “runs” looks')")
    heads = ["enc L1 H1", "enc L1 H2", "cross L2 H1"]
    box = page.get_by_role("combobox", name="Heads to change")
    for head in heads:
        box.click()
        box.fill(head)
        page.keyboard.press("Enter")
        wait_for_app(page)
    page.keyboard.press("Escape")
    page.wait_for_selector("text=3 head(s) switched off (output 0)")
    changed = intervened_translator(translator, [Head.parse(head) for head in heads])
    expected = changed.translate(sentence, "de", 4, 0.6).text
    codes = page.locator("[data-testid='stCode'] code").all_inner_texts()
    assert translator.translate(sentence, "de", 4, 0.6).text in codes and expected in codes
    assert not page.locator("[data-testid='stException']").count()
