"""The README screenshots of the app's main views, taken in Chromium.

    python -m tests.screenshots                      # the shipped model -> docs/screenshots/
    python -m tests.screenshots --model DIR --out DIR

Each view is opened from a link (its state in the URL), so the pictures are reproducible. The
browser tests take the same pictures of the tiny test model.
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
    # a step the tiny test model lacks falls back to its final model
    ("training", "training", {"kind": "cross", "layer": "3", "head": "4", "snapshot": "3000"}),
    ("model", "model", {}),
]


def take_screenshots(page, url: str, out: Path, sentence: str = SENTENCE) -> list[Path]:
    """Open every view of VIEWS on ``sentence`` and save a PNG of each; returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for name, path, query in VIEWS:
        page.goto(f"{url}/{path}?{urlencode({'text': sentence, **query})}")
        wait_for_app(page)
        if name != "model":
            page.wait_for_selector(CHART)
        page.wait_for_timeout(800)  # plotly's transitions
        files.append(out / f"{name}.png")
        page.screenshot(path=files[-1])
    return files


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="model directory")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="folder")
    args = parser.parse_args(argv)
    with app_server(args.model) as url, chromium_page(1440, 1000) as page:
        for file in take_screenshots(page, url, Path(args.out)):
            print(file)


if __name__ == "__main__":
    main()
