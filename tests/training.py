"""Helpers for the tests that run `python -m train`: a small synthetic corpus laid out like
../shared/data, and the dry run on it in a subprocess."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

from support.tiny_corpus import tiny_corpus


def write_gz(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def write_tiny_data(root: Path) -> Path:
    """Tatoeba-style TSVs, Multi30k- and FLORES-style line-aligned files, made-up sentences."""
    en, de, fr = (tiny_corpus(400, seed) for seed in (1, 2, 3))
    write_gz(root / "tatoeba/eng-deu.tsv.gz", [f"{e}\t{d}" for e, d in zip(en, de)])
    write_gz(root / "tatoeba/eng-fra.tsv.gz", [f"{e}\t{f}\u202f!" for e, f in zip(en, fr)])
    general = tiny_corpus(400, 7)
    write_gz(root / "general/en-de.tsv.gz", [f"{e}\t{d}" for e, d in zip(general, de)])
    for split, n in (("train", 150), ("val", 30), ("test_2016_flickr", 20)):
        for lang, lines in (("en", en), ("de", de), ("fr", fr)):
            write_gz(root / f"multi30k/{split}.{lang}.gz", lines[-n:])
    for lang, lines in (("en", en), ("de", de), ("fr", fr)):  # a test set only, never trained on
        write_gz(root / f"flores/devtest.{lang}.gz", lines[:20])
    return root


def train_command(data_dir: Path, out: Path, *flags: str) -> list[str]:
    """The arguments of `python -m train --dry-run` on data_dir into out, after the program."""
    return ["--dry-run", "--data-dir", str(data_dir), "--out", str(out), *flags]


def run_train(data_dir: Path, out: Path, *flags: str, **kwargs) -> subprocess.Popen:
    """`python -m train --dry-run` started in the background, stdout and stderr together."""
    command = [sys.executable, "-m", "train", *train_command(data_dir, out, *flags)]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs
    )
