"""A shared link cannot make the app fetch or show anything from outside it (issue 59, finding 4):
the Story opened on a sentence of markdown and HTML, its question answered, requests nothing but
the app's own address and draws no outside link or image."""

from urllib.parse import urlencode

import pytest

from support.browser import chromium_page, wait_for_app
from tests.browser.test_browser import server  # noqa: F401  (a fixture: the app on a tiny model)

pytestmark = pytest.mark.browser

OUTSIDE = "example.org"
HOSTILE = (
    f"It saw ![x](https://{OUTSIDE}/t.png) [click](https://{OUTSIDE}/login) "
    f'<img src="https://{OUTSIDE}/h.png"> <a href="https://{OUTSIDE}/a">it</a>.'
)


def outside_elements(page) -> list[str]:
    """Every link, image, frame or SVG link in the page that points outside the app."""
    return page.evaluate(
        """(outside) => [...document.querySelectorAll('a, img, iframe, image, use')]
            .map(e => e.getAttribute('href') || e.getAttribute('src')
                      || e.getAttribute('xlink:href') || '')
            .filter(address => address.includes(outside))""",
        OUTSIDE,
    )


def test_a_hostile_link_requests_nothing_outside_the_app(server):  # noqa: F811
    requested = []
    with chromium_page() as page:
        page.on("request", lambda request: requested.append(request.url))
        page.route(f"**/*{OUTSIDE}*/**", lambda route: route.abort())  # never leave the machine
        page.goto(f"{server}/?{urlencode({'text': HOSTILE, 'story': 2})}")
        wait_for_app(page)
        question = page.locator("[data-testid='stRadio']").first
        question.wait_for()
        assert "![x]" in question.inner_text()  # the words are shown, as they were typed
        question.locator("label").nth(1).click()
        wait_for_app(page)
        page.locator("[data-testid='stAlertContentInfo']").first.wait_for()
        page.wait_for_timeout(500)  # an image's request would have started by now
        drawn = outside_elements(page)
    outside = [url for url in requested if not url.startswith((server, "data:", "blob:"))]
    assert outside == [], outside
    assert drawn == [], drawn
