"""The README screenshots of the app's main views, taken in Chromium.

    python -m tests.screenshots                      # the shipped model -> docs/screenshots/
    python -m tests.screenshots --model DIR --out DIR

Each view is opened from a link (its state in the URL), so the pictures are reproducible: the
desktop views at 1440x1000, then some of them in presentation mode at 1920x1080 and 1280x720
and on a 390x844 phone (SCREENS). The browser tests take the desktop pictures of the tiny test
model.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlencode

from core import DEFAULT_MODEL
from support.browser import CHART, ROOT, app_server, chromium_page, wait_for_app

SENTENCE = "The animal didn't cross the street because it was too tired."
REFERENCE = "Das Tier überquerte die Straße nicht, weil es zu müde war."
# (file name, page path, query): what the README shows
VIEWS = [
    ("story", "", {"story": "4"}),
    ("translate", "translate", {"ref": REFERENCE}),
    ("tokenization", "tokenization", {}),
    ("embeddings", "embeddings", {}),
    ("attention", "attention", {"kind": "cross", "head": "avg", "words": "true"}),
    ("attention-grid", "attention", {"view": "All layers and heads"}),
    ("masking", "masking", {}),
    ("beam-search", "beam_search", {"step": "3"}),
    ("heads-lab", "head_lab", {"kind": "cross", "over": "sample"}),
    # the URL holds the slider's label ("10,000"); a step the model lacks falls back to its last
    ("training", "training", {"kind": "cross", "layer": "3", "head": "4", "snapshot": "10,000"}),
    ("model", "model", {}),
]


# (file name prefix, viewport, query added to each view's, the views of VIEWS): presentation
# mode on a projector of each common size, and a phone
SCREENS = [
    ("present-1920", (1920, 1080), {"present": "true"}, ["story", "attention", "beam-search"]),
    ("present-1280", (1280, 720), {"present": "true"}, ["attention", "beam-search", "masking"]),
    ("phone", (390, 844), {}, ["story", "translate", "attention", "beam-search"]),
]


def take_screenshots(
    page,
    url: str,
    out: Path,
    sentence: str = SENTENCE,
    views: list[tuple[str, str, dict]] = VIEWS,
    prefix: str = "",
    extra: dict[str, str] | None = None,
) -> list[Path]:
    """Open each view of ``views`` on ``sentence``, with ``extra`` added to its query, and save a
    PNG of the window as ``<prefix>-<name>.png`` (``<name>.png`` without prefix); returns the
    files."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for name, path, query in views:
        page.goto(f"{url}/{path}?{urlencode({'text': sentence, **query, **(extra or {})})}")
        wait_for_app(page)
        if name != "model":
            page.wait_for_selector(CHART)
        page.wait_for_timeout(800)  # plotly's transitions
        files.append(out / f"{prefix}-{name}.png" if prefix else out / f"{name}.png")
        page.screenshot(path=files[-1])
    return files


def take_screen_screenshots(page, url: str, out: Path, sentence: str = SENTENCE) -> list[Path]:
    """The views of SCREENS, each at its screen's size; the window keeps the last size."""
    files = []
    for prefix, (width, height), extra, names in SCREENS:
        page.set_viewport_size({"width": width, "height": height})
        views = [view for view in VIEWS if view[0] in names]
        files += take_screenshots(page, url, out, sentence, views, prefix, extra)
    return files


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="model directory")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="folder")
    args = parser.parse_args(argv)
    with app_server(args.model) as url, chromium_page(1440, 1000) as page:
        files = take_screenshots(page, url, Path(args.out))
        for file in files + take_screen_screenshots(page, url, Path(args.out)):
            print(file)


if __name__ == "__main__":
    main()
