"""Shared fixtures: a tiny random model directory, built in a second, so tests need no data."""

from __future__ import annotations

import itertools
import random

import pytest
import torch

from core.checkpoint import write_model_dir
from core.model import ModelConfig, Transformer
from core.tokenizer import Tokenizer
from core.translator import Translator

TINY = ModelConfig(
    vocab_size=400,
    d_model=32,
    n_heads=4,
    n_encoder_layers=2,
    n_decoder_layers=2,
    d_ff=64,
    dropout=0.0,
    max_len=96,
)

_WORDS = {
    "en": "the a dog cat man woman child runs sleeps eats reads house garden street red small big "
    "happy quickly today bicycle riding is are very hungry water book friend",
    "de": "der die das Hund Katze Mann Frau Kind läuft schläft isst liest Haus Garten Straße rot "
    "klein groß glücklich schnell heute Fahrrad fährt ist sind sehr hungrig Wasser Buch",
    "fr": "le la un une chien chat homme femme enfant court dort mange lit maison jardin rue rouge "
    "petit grand heureux vite aujourd'hui vélo est sont très faim eau livre ami",
}


def tiny_corpus(lines: int = 600, seed: int = 0) -> list[str]:
    """Made-up sentences in the three languages, enough for a 400-piece vocabulary."""
    rng = random.Random(seed)
    cycle = itertools.cycle(words.split() for words in _WORDS.values())
    return [
        " ".join(rng.choices(next(cycle), k=rng.randint(3, 12))).capitalize() + "."
        for _ in range(lines)
    ]


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A loadable model directory (model.pt, spm.model, card.json) holding a random tiny model."""
    root = tmp_path_factory.mktemp("tiny")
    tokenizer = Tokenizer.train(tiny_corpus(), root / "spm", vocab_size=TINY.vocab_size)
    torch.manual_seed(0)
    model = Transformer(TINY)
    return write_model_dir(root / "model", model, tokenizer.model_file, {"name": "tiny-random"})


@pytest.fixture(scope="session")
def translator(tiny_model_dir) -> Translator:
    return Translator.load(tiny_model_dir)


@pytest.fixture
def model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(TINY).eval()
