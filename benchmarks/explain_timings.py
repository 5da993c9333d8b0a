"""Time the Explain page against its budgets (issue 11), and print what its lenses say about the
pronoun of the lecture's minimal pair.

    python -m benchmarks.explain_timings             # the budgets, on the shipped model
    python -m benchmarks.explain_timings --report    # each lens on "es" / "sie", Kendall's tau
    python -m benchmarks.explain_timings --convergence   # integrated gradients' delta by steps
    python -m benchmarks.explain_timings --model DIR --threads 2 --repeat 5

Budgets (2 cores): every lens for one produced piece of a 30-piece sentence
(core.inspection.attribution.lenses, --threads torch threads) under 2 s; the minimal-pair view under
1 s once both translations are done. The view is timed as a whole rerun of the Explain page through
streamlit.testing after picking another word to compare or to follow, every model result already
cached (the app itself runs torch on one thread).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import torch

from benchmarks.app_timings import MAIN, median_time
from benchmarks.flags import at_least
from core import DEFAULT_MODEL, Translator
from core.inspection.attribution import (
    LogProbability,
    contrast,
    integrated_gradients,
    lenses,
    rank_agreement,
    source_token,
)
from core.inspection.minimal_pairs import COREFERENCE_PAIR

BUDGETS = {"lenses": 2.0, "minimal-pair view": 1.0}
# 30 pieces on the shipped model, the language tag and </s> included (the run prints the count)
LONG_SENTENCE = (
    "A group of young children in colourful shirts are playing football in a small park "
    "next to a large old fountain in the city."
)
PRONOUNS = ("▁es", "▁sie", "▁er")  # das Tier / die Straße / (der)
TOP = 3  # source pieces shown per lens


def time_lenses(translator: Translator, repeat: int) -> dict[str, float]:
    """Every lens for the middle piece of LONG_SENTENCE's translation, and how complete the
    integrated gradients are there (Captum's delta over the attributed change)."""
    result = translator.translate(LONG_SENTENCE, "de", trace=True)
    position = len(result.output_tokens) // 2
    found = lenses(translator.model, result, position)  # warm up
    integrated = found.values["integrated gradients"]
    attributed = integrated.sum() - found.ig_delta  # f(x) - f(baseline), by Captum's definition
    name = f"lenses: all 7 for “{found.predicted}” of a {len(result.source_tokens)}-piece sentence"
    print(
        f"integrated gradients: delta {found.ig_delta:+.4f} of a change of {attributed:.4f} in "
        f"log p ({abs(found.ig_delta / attributed):.1%})"
    )
    results = {}
    for threads in sorted({torch.get_num_threads(), 1}, reverse=True):  # 1: as the app runs
        torch.set_num_threads(threads)
        results[f"{name}, {threads} thread(s)"] = median_time(
            lambda: lenses(translator.model, result, position), repeat
        )
    return results


def time_minimal_pair(model: Path, repeat: int) -> dict[str, float]:
    """Reruns of the Explain page on the tired / wide pair, both translations and every lens
    cached: another output word to compare, another source word to follow."""
    from streamlit.testing.v1 import AppTest

    os.environ["ATTENTION_LAB_MODEL"] = str(model)
    first, second = COREFERENCE_PAIR
    at = AppTest.from_file(MAIN, default_timeout=600)
    at.query_params.update(text=first, pair=second)
    at.switch_page("views/explain.py").run()
    assert not at.exception, at.exception
    partners = iter([0, 1] * repeat)  # indices of aligned output words
    compare = median_time(
        lambda: at.selectbox(key="pair_word").set_value(next(partners)).run(), repeat
    )
    followed = iter([1, 2] * repeat)  # the 2nd and 3rd words the two sentences share
    follow = median_time(lambda: at.selectbox(key="follow").set_value(next(followed)).run(), repeat)
    assert not at.exception, at.exception
    return {
        "minimal-pair view: Explain page rerun, another word to compare": compare,
        "minimal-pair view: Explain page rerun, another word to follow": follow,
    }


def convergence(translator: Translator, steps: tuple[int, ...] = (64, 128, 256)) -> None:
    """How complete integrated gradients are with each number of steps: Captum's delta as a share
    of the change it attributes, f(x) - f(0), over five output pieces of three sentences."""
    cases = []
    for sentence in (LONG_SENTENCE, *COREFERENCE_PAIR):
        result = translator.translate(sentence, "de", trace=True)
        length = len(result.output_tokens)
        cases += [(result, position) for position in np.linspace(1, length - 2, 5, dtype=int)]
    for count in steps:
        shares = []
        for result, position in cases:
            log_prob = LogProbability(translator.model, result, position)
            embedding = source_token(translator.model, result)
            attributions, delta = integrated_gradients(log_prob, embedding, count)
            change = float(attributions.sum()) - float(delta[0])  # f(x) - f(0), as Captum defines
            shares.append(abs(float(delta[0]) / change))
        print(
            f"{count:4d} steps: |delta| / |f(x) - f(0)| median {np.median(shares):.1%}, "
            f"max {max(shares):.1%} over {len(shares)} output pieces"
        )


def report(translator: Translator) -> None:
    """For each half of the tired / wide pair (German): the translation, then per lens the source
    pieces it ranks highest for the pronoun, and Kendall's tau between the lenses."""
    tokenizer = translator.tokenizer
    for sentence in COREFERENCE_PAIR:
        result = translator.translate(sentence, "de", trace=True)
        position = next(i for i, piece in enumerate(result.output_tokens) if piece in PRONOUNS)
        found = lenses(translator.model, result, position)
        print(f"\n{sentence}\n→ {result.text}")
        foil_piece = "▁sie" if found.predicted != "▁sie" else "▁es"
        foil = contrast(translator.model, result, position, tokenizer.sp.piece_to_id(foil_piece))
        print(
            f"pronoun: {found.predicted} (output piece {position}), log p {found.log_prob:.3f}, "
            f"log p({found.predicted}) - log p({foil_piece}) = {foil.log_ratio:.3f}; "
            f"integrated gradients' delta {found.ig_delta:+.4f}, contrast's {foil.delta:+.4f}"
        )
        rows = {**found.values, f"contrast: rather than {foil_piece}": foil.values}
        print("\n| lens | top source pieces (value) |\n|---|---|")
        for name, values in rows.items():
            top = np.argsort(-values)[:TOP]
            pieces = ", ".join(f"{found.source_labels[j]} ({values[j]:.3f})" for j in top)
            print(f"| {name} | {pieces} |")
        print(f"\nKendall's tau between the lenses ({len(found.source_labels)} source pieces)")
        names = list(found.values)
        print("| lens | " + " | ".join(str(i) for i in range(1, len(names) + 1)) + " |")
        print("|---" * (len(names) + 1) + "|")
        for i, (name, row) in enumerate(zip(names, rank_agreement(found.values)), start=1):
            print(f"| {i} {name} | " + " | ".join(f"{tau:+.2f}" for tau in row) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("ATTENTION_LAB_MODEL", DEFAULT_MODEL))
    parser.add_argument(
        "--threads", type=at_least(1), default=2, help="torch threads for the lenses"
    )
    parser.add_argument("--repeat", type=at_least(1), default=5, help="runs per median")
    parser.add_argument("--report", action="store_true", help="the lenses on es / sie instead")
    parser.add_argument("--convergence", action="store_true", help="IG's delta by step count")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    translator = Translator.load(args.model)
    if args.report:
        report(translator)
        return
    if args.convergence:
        convergence(translator)
        return
    print(
        f"model: {args.model}, torch threads: {args.threads}, cores: {os.cpu_count()}, "
        f"load average before: {os.getloadavg()[0]:.1f}"  # other work on the cores slows us
    )
    results = time_lenses(translator, args.repeat)
    results |= time_minimal_pair(Path(args.model), args.repeat)
    for name, seconds in results.items():
        budget = next(b for key, b in BUDGETS.items() if name.startswith(key))
        print(f"{seconds * 1000:8.0f} ms  {name}  (budget {budget * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
