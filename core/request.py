"""One sentence to translate, and how: the model directory, the text, the target language, the
beam size, alpha (the length penalty) and the longest output, checked once, when it is made.

    from core import Request, Translator
    request = Request("pretrained/en-de-fr", "The dog runs away.", "fr", beam_size=4, alpha=0.6)
    translator = Translator.load(request.model)
    result = translator.translate(**request.arguments, trace=True)

A request is frozen and hashable, and equal requests are equal field by field (the model
directory as a str, alpha as a float): it is the key of every cache of the app (``st.cache_data``
hashes its fields, app/shared_cache.py its ``hash``) and the argument of the core's functions about
one sentence of one model (:func:`core.inspection.snapshots.view_snapshot`, the interventions of
:mod:`core.inspection.ablation`). A bad field is a :class:`core.InputError` with the message
:meth:`core.Translator.translate` gives, before anything is computed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from core.decoding.search import PAPER_DECODING
from core.errors import InputError
from core.files.model_dir import open_model_dir
from core.text.tokenizer import normalize_text
from core.translator import check_decoding, check_target, check_text


@functools.lru_cache(maxsize=16)
def target_languages(model: str) -> tuple[str, ...]:
    """The languages the model directory ``model`` translates into (its vocabulary's), read once
    per directory. A folder that is no model directory is a NotAModelDir (an InputError)."""
    return tuple(open_model_dir(model).load_tokenizer().languages)


@dataclass(frozen=True)
class Request:
    """A sentence for the model in the directory ``model``, with its decoding settings."""

    model: str  # the model directory (a str or Path given; kept as a str)
    text: str
    target: str = "de"
    beam_size: int = PAPER_DECODING.beam_size  # 1 is greedy search
    alpha: float = PAPER_DECODING.alpha  # the length penalty's alpha (Wu et al. 2016), 0: none
    max_length: int | None = None  # output tokens, eos included; None: 1.5 x the source + 10

    def __post_init__(self) -> None:
        check_decoding(self.beam_size, self.alpha, self.max_length)
        check_text(self.text)
        if isinstance(self.model, Path):
            object.__setattr__(self, "model", str(self.model))
        object.__setattr__(self, "alpha", float(self.alpha))  # alpha 1 and 1.0: one cache key
        check_target(self.target, target_languages(self.model))
        if not normalize_text(self.text):
            raise InputError("There is nothing to translate: type a sentence.")

    @property
    def arguments(self) -> dict[str, object]:
        """The keyword arguments of :meth:`core.Translator.translate` (all but ``trace``), for the
        model of :attr:`model` or a changed copy of it (a snapshot, an intervention):
        ``translator.translate(**request.arguments, trace=True)``."""
        return {
            "text": self.text,
            "target": self.target,
            "beam_size": self.beam_size,
            "alpha": self.alpha,
            "max_length": self.max_length,
        }
