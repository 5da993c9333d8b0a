"""Time the app against its budgets (issue 4) and print the numbers.

    python -m benchmarks.app_timings               # the shipped model, or $ATTENTION_LAB_MODEL
    python -m benchmarks.app_timings --model DIR
    python -m benchmarks.app_timings --random      # a random model shaped like the CPU preset
    python -m benchmarks.app_timings --no-browser  # server side only

Server side, through streamlit.testing (the real scripts, in this process): a new sentence with
the full trace (the model alone, and the whole Translate page), switching layer, head, beam step
and training snapshot (a rerun that hits the cache), the first visit of the Training dynamics
page, the Heads lab's dashboard, head importance and ablated translation, and a cold start (a
fresh Python process up to the first rendered Translate page). In the browser (Chromium): from
`streamlit run` to the first chart, and from opening the page of a running server to the first
chart.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from benchmarks.flags import at_least
from core import DEFAULT_MODEL, ModelConfig, Request, Tokenizer, Transformer, Translator
from core.files.model_dir import ModelDir
from support.tiny_corpus import tiny_corpus

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "app" / "main.py")
SENTENCES = [
    "The dog runs in the garden today.",
    "A man is riding a bicycle.",
    "The small cat sleeps in the house.",
    "My friend reads a big red book.",
    "The happy child eats quickly.",
    "The woman is very hungry today.",
]
BUDGETS = {
    "new sentence": 0.300,
    "switch": 0.100,
    "cold start": 5.0,
    "snapshot step": 0.300,
    "heads dashboard": 1.0,
    "head importance": 2.0,
}
# About 30 pieces with the language tag and </s>, as the training-dynamics budget says.
LONG_SENTENCE = (
    "Two young children in red shirts are playing football in a park next to a large fountain."
)
COLD_START = """
import time, sys
start = time.perf_counter()
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=600).switch_page("views/translate.py").run()
assert not at.exception, at.exception
assert at.get("plotly_chart")
print(time.perf_counter() - start)
"""


def random_model(root: Path) -> Path:
    """A random model with the widths of train's CPU preset (6+6 layers, 8 heads, d_model 128,
    d_ff 512, pre-LN) on a small vocabulary. Untrained, it never says </s> early, so every
    search runs to its length budget: a worst case for the time per sentence."""
    tokenizer = Tokenizer.train(tiny_corpus(), root / "spm", vocab_size=400)
    config = ModelConfig(
        vocab_size=400, d_model=128, n_heads=8, d_ff=512, max_len=128, norm_first=True
    )
    torch.manual_seed(0)
    return ModelDir(root / "model").write(Transformer(config), tokenizer.model_file).path


def median_time(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def server_side(model: Path, repeat: int) -> dict[str, float]:
    from streamlit.testing.v1 import AppTest

    os.environ["ATTENTION_LAB_MODEL"] = str(model)
    results = {}
    out = subprocess.run(
        [sys.executable, "-c", COLD_START, MAIN], capture_output=True, text=True, check=True
    )
    results["cold start: fresh process to the rendered Translate page"] = float(
        out.stdout.split()[-1]
    )

    translator = Translator.load(model)
    torch.set_num_threads(1)  # as app/state.py does
    from app.analysis import analyse

    analyse(translator, Request(model, SENTENCES[0], "de", 4))  # warm up torch
    sentences = iter(SENTENCES * repeat)
    results["new sentence: the model, beam 4, full trace"] = median_time(
        lambda: analyse(translator, Request(model, next(sentences), "de", 4)), repeat
    )

    at = AppTest.from_file(MAIN, default_timeout=600).switch_page("views/translate.py").run()
    sentences = iter(SENTENCES[::-1] * repeat)
    results["new sentence: whole Translate page, beam 4"] = median_time(
        lambda: at.text_area(key="text").set_value(next(sentences)).run(), repeat
    )

    at = AppTest.from_file(MAIN, default_timeout=600).switch_page("views/attention.py").run()
    n_layers = len(at.button_group(key="layer").options)
    layers = iter([str(1 + i % n_layers) for i in range(repeat)])
    results["switch layer (Attention page)"] = median_time(
        lambda: at.button_group(key="layer").set_value(next(layers)).run(), repeat
    )
    heads = iter(["1", "2", "avg", "3"] * repeat)
    results["switch head (Attention page)"] = median_time(
        lambda: at.button_group(key="head").set_value(next(heads)).run(), repeat
    )
    at.session_state["view"] = "All layers and heads"
    at.run()
    kinds = iter(["cross", "decoder"] * repeat)
    results["switch attention kind, model view of all heads"] = median_time(
        lambda: at.button_group(key="kind").set_value(next(kinds)).run(), repeat
    )

    at = AppTest.from_file(MAIN, default_timeout=600).switch_page("views/beam_search.py").run()
    results["switch step (Beam search page)"] = median_time(
        lambda: at.button(key="next").click().run(), repeat
    )
    assert not at.exception, at.exception
    return results | training_dynamics(repeat) | heads_lab(translator, model, repeat)


def heads_lab(translator: Translator, model: Path, repeat: int) -> dict[str, float]:
    """The Heads lab's work on a 30-piece sentence: the dashboard of every kind (statistics and
    figure), the importance of every head of every kind, and a re-translation with heads off
    beside a normal one (it should cost the same)."""
    from app.analysis import analyse
    from app.figures.heads import head_dashboard
    from core.inspection.ablation import Head, head_importance, intervened_translator
    from core.inspection.head_statistics import head_roles, statistics_per_head

    result = analyse(translator, Request(model, LONG_SENTENCE, "de", 4)).result

    def dashboards() -> None:
        for kind in ("encoder", "decoder", "cross"):
            attention = getattr(result.attention, kind)
            statistics = statistics_per_head(
                attention.weights, attention.key_labels, kind != "cross"
            )
            roles = [role.role for role in head_roles(statistics)]
            head_dashboard(statistics["entropy"], roles, kind, "entropy").to_json()

    def importance() -> None:
        for kind in ("encoder", "decoder", "cross"):
            head_importance(translator, result, kind)

    ablated = intervened_translator(translator, [Head("encoder", 4, 4), Head("cross", 5, 0)])
    return {
        "heads dashboard: statistics and figure of all three kinds, 30 pieces": median_time(
            dashboards, repeat
        ),
        "head importance: every head of all three kinds, 30 pieces": median_time(
            importance, repeat
        ),
        "translation beam 4, 30 pieces, all heads on": median_time(
            lambda: translator.translate(LONG_SENTENCE, "de", 4, 0.6), repeat
        ),
        "translation beam 4, 30 pieces, two heads off": median_time(
            lambda: ablated.translate(LONG_SENTENCE, "de", 4, 0.6), repeat
        ),
    }


def training_dynamics(repeat: int) -> dict[str, float]:
    """The Training dynamics page: the first visit runs every snapshot on the sentence; moving
    the step slider afterwards only redraws. A model without snapshots has nothing to time."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(MAIN, default_timeout=600)
    at.query_params["text"] = LONG_SENTENCE
    at.switch_page("views/training.py")
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    assert not at.exception, at.exception
    if not at.get("select_slider"):
        return {}
    moves = iter(["earlier", "later"] * repeat)
    switch = median_time(lambda: at.button(key=next(moves)).click().run(), repeat)
    assert not at.exception, at.exception
    return {
        "first visit (Training dynamics page): every snapshot on a 30-piece sentence": first,
        "snapshot step switch (Training dynamics page), 30-piece sentence": switch,
    }


def browser(model: Path) -> dict[str, float]:
    from support.browser import CHART, app_server, chromium_page

    results = {}
    with chromium_page() as page:
        start = time.perf_counter()
        with app_server(model) as url:
            page.goto(url)
            page.wait_for_selector(CHART)
            results["browser: `streamlit run` to the first chart (cold)"] = (
                time.perf_counter() - start
            )
            page.goto("about:blank")
            start = time.perf_counter()
            page.goto(url)
            page.wait_for_selector(CHART)
            results["browser: open the page to the first chart (warm server)"] = (
                time.perf_counter() - start
            )
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("ATTENTION_LAB_MODEL", DEFAULT_MODEL))
    parser.add_argument("--random", action="store_true", help="time a random CPU-preset model")
    parser.add_argument("--no-browser", action="store_true", help="server side only")
    parser.add_argument("--repeat", type=at_least(1), default=7, help="runs per median")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        model = random_model(Path(tmp)) if args.random else Path(args.model)
        loaded = Translator.load(model)
        print(
            f"model: {model} ({loaded.model.num_parameters():,} parameters), "
            f"torch threads: {torch.get_num_threads()}, cores: {os.cpu_count()}"
        )
        results = server_side(model, args.repeat)
        if not args.no_browser:
            results |= browser(model)
    for name, seconds in results.items():
        budget = next((b for key, b in BUDGETS.items() if name.startswith(key)), None)
        verdict = "" if budget is None else f"  (budget {budget * 1000:.0f} ms)"
        print(f"{seconds * 1000:8.0f} ms  {name}{verdict}")


if __name__ == "__main__":
    main()
