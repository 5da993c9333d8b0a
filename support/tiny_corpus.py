"""Made-up sentences in English, German and French: enough text to train a tiny vocabulary in a
second, so tests and benchmarks need no data."""

from __future__ import annotations

import itertools
import random

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
