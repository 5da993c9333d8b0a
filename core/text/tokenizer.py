"""Text normalisation and the shared SentencePiece vocabulary.

One vocabulary serves English, German and French (the embedding matrix is shared). The target
language is chosen by a tag token at the start of the source, ``<2de>`` or ``<2fr>`` (Johnson et
al., 2017, "Google's Multilingual NMT"). Byte fallback spells any character the vocabulary lacks
(emoji, other scripts) as UTF-8 bytes ``<0xF0>``..., so no input is ever lost to ``<unk>``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

import sentencepiece as spm

from core.text.elision import join_elisions, split_elisions
from core.text.truecase import Truecaser

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
LANGUAGES = {"de": "German", "fr": "French"}


def language_tag(target: str) -> str:
    """The source-side token that asks for a translation into ``target``: 'de' -> '<2de>'."""
    if target not in LANGUAGES:
        raise ValueError(f"unknown target language {target!r}; choose one of {sorted(LANGUAGES)}")
    return f"<2{target}>"


_SPACES = re.compile(r"\s+")
# U+00A0 and U+202F are the spaces French typography puts before ? ! : ; and inside quotes.
_NARROW_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2009": " "})
# control and zero-width characters; \t \n \v \f \r are white space, handled by _SPACES
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]")


def has_control_characters(text: str) -> bool:
    """True if ``text`` holds control or zero-width characters, which normalize_text turns into
    spaces (tab, newline and carriage return are ordinary white space)."""
    return bool(_CONTROL.search(text))


def normalize_text(text: str) -> str:
    """The one normalisation shared by training data and user input.

    Unicode NFC; the non-breaking spaces of French typography become plain spaces (so "Bonjour !"
    is written the same with either space); control and zero-width characters are dropped; runs of
    white space become one space; ends are stripped.
    """
    text = unicodedata.normalize("NFC", text).translate(_NARROW_SPACES)
    text = _CONTROL.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


class Tokenizer:
    """A SentencePiece model plus the project's conventions (ids, tags, normalisation).

    The interface every vocabulary of the lab offers (core/text/marian_tokenizer.py has another):
    ``languages`` (target code -> name), ``tag_ids`` (target code -> its tag's id), ``pad_id``,
    ``unk_id``, ``eos_id``, len(), and the methods below."""

    languages = LANGUAGES
    pad_id, unk_id, eos_id = PAD_ID, UNK_ID, EOS_ID

    def __init__(self, model_file: str | Path, truecaser: Truecaser | None = None) -> None:
        self.model_file = Path(model_file)
        self.truecaser = truecaser  # None: the source is read as typed
        self.sp = spm.SentencePieceProcessor(model_file=str(self.model_file))
        if (self.sp.pad_id(), self.sp.unk_id(), self.sp.bos_id(), self.sp.eos_id()) != (
            PAD_ID,
            UNK_ID,
            BOS_ID,
            EOS_ID,
        ):
            raise ValueError(
                f"{self.model_file}: special token ids differ from pad/unk/bos/eos 0-3"
            )
        self.tag_ids = {t: self.sp.piece_to_id(language_tag(t)) for t in LANGUAGES}
        if UNK_ID in self.tag_ids.values():
            raise ValueError(f"{self.model_file}: no language tag tokens {sorted(LANGUAGES)}")
        self.special_ids = {PAD_ID, UNK_ID, BOS_ID, EOS_ID, *self.tag_ids.values()}

    @staticmethod
    def train(
        sentences: Iterable[str],
        model_prefix: str | Path,
        vocab_size: int,
        model_type: str = "unigram",
    ) -> Tokenizer:
        """Train a shared vocabulary on normalised sentences; writes <prefix>.model and .vocab."""
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_prefix=str(model_prefix),
            vocab_size=vocab_size,
            model_type=model_type,
            character_coverage=1.0,
            byte_fallback=True,
            split_digits=True,  # numbers as digit pieces, so years and prices are copied exactly
            normalization_rule_name="identity",  # normalize_text() already did it, for all callers
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            user_defined_symbols=[language_tag(t) for t in LANGUAGES],
            input_sentence_size=2_000_000,
            shuffle_input_sentence=True,
            num_threads=2,
            minloglevel=2,
        )
        return Tokenizer(f"{model_prefix}.model")

    def __len__(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, text: str) -> list[int]:
        """Normalised text -> piece ids, without special tokens."""
        return self.sp.encode(normalize_text(text))

    def truecase(self, text: str) -> str:
        """English as the encoder reads it: normalised, and truecased when the vocabulary has a
        truecaser (core/text/truecase.py: "Attention is ..." -> "attention is ...")."""
        text = normalize_text(text)
        return self.truecaser(text) if self.truecaser else text

    def encode_source(self, text: str, target: str) -> list[int]:
        """The encoder input: <2xx> pieces </s>, of the truecased text."""
        return self.source_input(self.encode(self.truecase(text)), target)

    def source_input(self, pieces: list[int], target: str) -> list[int]:
        """A source sentence's piece ids as the encoder takes them: <2xx> pieces </s>."""
        return [self.sp.piece_to_id(language_tag(target)), *pieces, EOS_ID]

    @staticmethod
    def target_text(text: str, target: str) -> str:
        """A translation as the decoder learns to write it: normalised, and French elisions split
        (core/text/elision.py: "l'animal" -> "l' animal", so "animal" is the usual piece)."""
        text = normalize_text(text)
        return split_elisions(text) if target == "fr" else text

    def decode(self, ids: Iterable[int], target: str | None = None) -> str:
        """Piece ids -> text; pad, bos, eos and language tags are dropped. An output in ``target``
        French has its elisions joined again ("l' animal" -> "l'animal")."""
        dropped = self.special_ids - {UNK_ID}
        text = self.sp.decode([i for i in ids if i not in dropped])
        return join_elisions(text) if target == "fr" else text

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.sp.id_to_piece(int(i)) for i in ids]

    def is_byte(self, token_id: int) -> bool:
        """True for a byte-fallback piece like <0xF0>."""
        return self.sp.is_byte(int(token_id))

    def is_special(self, token_id: int) -> bool:
        """pad, unk, bos, eos and the language tags."""
        return int(token_id) in self.special_ids
