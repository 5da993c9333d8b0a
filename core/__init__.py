"""Attention Lab's core: the Transformer, its tokenizer, decoding and inspection. No UI here."""

from core.decoding.search import (
    PAPER_DECODING,
    Decoding,
    beam_search,
    greedy_decode,
    length_penalty,
)
from core.errors import InputError
from core.files.checkpoint import CheckpointError
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.request import Request
from core.text.tokenizer import LANGUAGES, Tokenizer, normalize_text
from core.translator import DEFAULT_MODEL, Translation, Translator

__all__ = [
    "DEFAULT_MODEL",
    "LANGUAGES",
    "PAPER_DECODING",
    "CheckpointError",
    "Decoding",
    "InputError",
    "ModelConfig",
    "Request",
    "Tokenizer",
    "Transformer",
    "Translation",
    "Translator",
    "beam_search",
    "greedy_decode",
    "length_penalty",
    "normalize_text",
]
