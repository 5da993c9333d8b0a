"""Translate from the command line.

python -m core.translate --model pretrained/en-de-fr --target de "A man is riding a bicycle."
echo "I am very hungry." | python -m core.translate --target fr
"""

from __future__ import annotations

import argparse
import sys

from core.checkpoint import CheckpointError
from core.tokenizer import LANGUAGES
from core.translator import DEFAULT_MODEL, Translator


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.translate", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "text", nargs="*", help="sentences to translate; none: read lines from stdin"
    )
    parser.add_argument(
        "--model", default=str(DEFAULT_MODEL), help="model directory (default: %(default)s)"
    )
    parser.add_argument("--target", default="de", choices=sorted(LANGUAGES), help="target language")
    parser.add_argument("--beam-size", type=int, default=4, help="beam size; 1 is greedy search")
    parser.add_argument(
        "--length-penalty", type=float, default=0.6, help="GNMT length penalty alpha"
    )
    args = parser.parse_args(argv)
    try:
        translator = Translator.load(args.model)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    sentences = args.text or [line.rstrip("\n") for line in sys.stdin]
    for sentence in sentences:
        try:
            print(
                translator.translate(
                    sentence, args.target, args.beam_size, args.length_penalty
                ).text
            )
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
