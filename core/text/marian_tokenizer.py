"""A MarianMT model's vocabulary behind the interface of :class:`core.text.tokenizer.Tokenizer`.

A MarianMT directory (Helsinki-NLP's OPUS-MT models, as transformers' ``save_pretrained`` writes
them) holds two SentencePiece models, ``source.spm`` for the source language and ``target.spm``
for the target, and ``vocab.json``, which gives every piece of either its id: the model's
vocabulary is the one of vocab.json, the two SentencePiece models only cut text into pieces. A
model that translates into several languages is told which by a token such as ``>>fr<<`` at the
start of the source; one with a single target language has none. The ids follow Marian's
conventions: ``</s>`` is 0, ``<unk>`` 1, ``<pad>`` the last, and the decoder starts from
``<pad>``. This is how transformers' MarianTokenizer reads the same files (it is not needed here).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import sentencepiece as spm

from core.text.tokenizer import LANGUAGES, normalize_text

# The language codes a page names in words; any other shows as its code.
LANGUAGE_NAMES = {
    **LANGUAGES,
    "en": "English",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "ro": "Romanian",
    "ru": "Russian",
    "pl": "Polish",
    "sv": "Swedish",
    "fi": "Finnish",
    "cs": "Czech",
    "zh": "Chinese",
    "ja": "Japanese",
    "ar": "Arabic",
}
_LANGUAGE_TOKEN = re.compile(r"^>>(.+)<<$")
_BYTE_PIECE = re.compile(r"^<0x[0-9A-F]{2}>$")


def language_token(target: str) -> str:
    """Marian's source-side token that asks for ``target``: 'fr' -> '>>fr<<'."""
    return f">>{target}<<"


class MarianTokenizer:
    """source.spm, target.spm and vocab.json's ids, with :class:`core.text.tokenizer.Tokenizer`'s
    methods: the source is cut by source.spm, the output decoded by target.spm, and every id is a
    piece of vocab.json.

    ``targets``: the languages the model writes, for a model with one target language (whose
    source has no language token); a multi-target model's are its >>xx<< tokens."""

    def __init__(
        self,
        source_spm: str | Path,
        target_spm: str | Path,
        vocab: dict[str, int],
        size: int,
        targets: Iterable[str] = (),
    ) -> None:
        self.source_sp = spm.SentencePieceProcessor(model_file=str(source_spm))
        self.target_sp = spm.SentencePieceProcessor(model_file=str(target_spm))
        self.vocab, self.size = vocab, size
        self.id_pieces = {i: piece for piece, i in vocab.items()}
        self.pad_id, self.unk_id, self.eos_id = (vocab[p] for p in ("<pad>", "<unk>", "</s>"))
        self.tag_ids = {
            match[1]: i for piece, i in vocab.items() if (match := _LANGUAGE_TOKEN.match(piece))
        }
        codes = self.tag_ids or dict.fromkeys(targets)
        self.languages = {code: LANGUAGE_NAMES.get(code, code) for code in codes}
        self.special_ids = {self.pad_id, self.unk_id, self.eos_id, *self.tag_ids.values()}

    def __len__(self) -> int:
        return self.size

    def encode(self, text: str) -> list[int]:
        """Normalised text -> the ids of its source.spm pieces (<unk> for a piece vocab.json
        lacks), without special tokens."""
        pieces = self.source_sp.encode(normalize_text(text), out_type=str)
        return [self.vocab.get(piece, self.unk_id) for piece in pieces]

    def encode_source(self, text: str, target: str) -> list[int]:
        """The encoder input: >>xx<< pieces </s> (no language token for one target language)."""
        return self.source_input(self.encode(text), target)

    def source_input(self, pieces: list[int], target: str) -> list[int]:
        """A source sentence's piece ids as the encoder takes them: [>>xx<<] pieces </s>."""
        if target not in self.languages:
            raise ValueError(f"unknown target language {target!r}; choose one of {self.languages}")
        tag = [self.tag_ids[target]] if self.tag_ids else []
        return [*tag, *pieces, self.eos_id]

    def decode(self, ids: Iterable[int], target: str | None = None) -> str:
        """Output ids -> text by target.spm; pad, eos and language tokens are dropped. ``target``
        changes nothing: Marian's vocabularies write French elisions whole."""
        dropped = self.special_ids - {self.unk_id}
        return self.target_sp.decode_pieces(self.pieces(i for i in ids if i not in dropped))

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.id_pieces.get(int(i), "<unk>") for i in ids]

    def is_byte(self, token_id: int) -> bool:
        """True for a byte-fallback piece like <0xF0>."""
        return bool(_BYTE_PIECE.match(self.id_pieces.get(int(token_id), "")))

    def is_special(self, token_id: int) -> bool:
        """pad, unk, eos and the language tokens."""
        return int(token_id) in self.special_ids
