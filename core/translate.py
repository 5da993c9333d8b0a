"""Translate from the command line.

python -m core.translate --model pretrained/en-de-fr --target de "A man is riding a bicycle."
echo "I am very hungry." | python -m core.translate --target fr
python -m core.translate --split-sentences "It rains. We stay at home."

One output line per sentence. A sentence over the model's source budget (64 pieces for the shipped
model) is translated clause by clause, with a note on stderr (a warning if a part of it still had
to be cut); a line that does not look like English gets a note on stderr. A sentence that cannot
be translated (not valid UTF-8, nothing to translate) gets an empty output line and an error on
stderr naming it; the others are translated and the exit status is 1. A model that cannot be
loaded: exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

from core.cli import add_decoding_flags
from core.files.checkpoint import CheckpointError
from core.text.readable import other_language
from core.text.sentences import is_sentence, translate_by_sentence
from core.translator import DEFAULT_MODEL, Translator


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m core.translate", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "text", nargs="*", help="sentences to translate; none: read lines from stdin"
    )
    parser.add_argument(
        "--model", default=str(DEFAULT_MODEL), help="model directory (default: %(default)s)"
    )
    parser.add_argument(
        "--target", default="de", help="target language, one of the model's (ours: de, fr)"
    )
    add_decoding_flags(parser)
    parser.add_argument(
        "--split-sentences",
        action="store_true",
        help="translate each sentence of a line on its own (the model learnt from single "
        "sentences; core/text/sentences.py), the line's spaces kept between them",
    )
    return parser.parse_args(argv)


def raw_sentences(arguments: list[str]) -> Iterator[tuple[str, bytes]]:
    """Each sentence as the bytes it came as, with where it came from. Bytes, so that one line of
    invalid UTF-8 is one sentence's error, not the end of reading."""
    if arguments:
        for number, text in enumerate(arguments, 1):
            yield f"argument {number}", os.fsencode(text)  # the bytes behind undecodable argv
    else:
        for number, line in enumerate(sys.stdin.buffer, 1):
            yield f"line {number}", line.rstrip(b"\r\n")


def decoded(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not valid UTF-8 (byte {error.start + 1})") from None


def translate_line(translator: Translator, text: str, args: argparse.Namespace, where: str) -> str:
    def translate(sentence: str) -> str:
        translator.source_ids(sentence, args.target)  # the InputError of what cannot be read
        long = translator.long_sources([sentence], args.target)
        if long.warning():  # a long sentence goes clause by clause; never a silent cut
            kind = "warning" if long.cut else "note"
            print(f"{kind}: {where}: {long.warning()}", file=sys.stderr)
        return translator.translate_batch([sentence], args.target, args.beam_size, args.alpha)[0]

    language = other_language(text)
    if language is not None:
        print(
            f"note: {where}: this looks like {language}, not English: the model reads "
            "English only, other languages come out as invented words",
            file=sys.stderr,
        )

    if not args.split_sentences or not is_sentence(text):  # the latter: the usual InputError
        return translate(text)
    return translate_by_sentence(text, translate)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        translator = Translator.load(args.model)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.target not in translator.languages:
        languages = ", ".join(translator.languages)
        print(f"error: --target {args.target}: the model writes {languages}", file=sys.stderr)
        return 2
    failed = 0
    for where, raw in raw_sentences(args.text):
        try:
            text = decoded(raw)
            print(translate_line(translator, text, args, where))
        except ValueError as error:  # not UTF-8, or the translator's InputError
            failed += 1
            print(f"error: {where}: {error}", file=sys.stderr)
            print()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
