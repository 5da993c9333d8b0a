"""Text: normalisation and the SentencePiece vocabulary (tokenizer.py, and a MarianMT model's in
marian_tokenizer.py), pieces grouped into words (words.py), a text cut into sentences
(sentences.py), and what the model reads well (readable.py). The app takes them from here."""

from core.text import readable
from core.text.marian_tokenizer import MarianTokenizer
from core.text.sentences import Excerpt, excerpt, is_sentence, joined, translate_text
from core.text.tokenizer import Tokenizer, has_control_characters, normalize_text
from core.text.words import is_special_piece, words

__all__ = [
    "Excerpt",
    "MarianTokenizer",
    "Tokenizer",
    "excerpt",
    "has_control_characters",
    "is_sentence",
    "is_special_piece",
    "joined",
    "normalize_text",
    "readable",
    "translate_text",
    "words",
]
