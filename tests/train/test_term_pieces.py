"""Pieces of the dictionaries' words under the shipped vocabulary."""

from core.text.tokenizer import Tokenizer
from core.translator import DEFAULT_MODEL
from train.studies.term_pieces import common_words, cut_words, pieces_per_word, word_counts


def test_common_one_word_terms_cut_into_pieces_are_listed_most_frequent_first():
    tokenizer = Tokenizer(DEFAULT_MODEL / "spm.model")
    counts = word_counts(["The fox saw a fox.", "A fox went hiking.", "Hiking is fun, hiking."])
    assert counts["fox"] == 3 and counts["Hiking"] == 1  # as written
    terms = ["fox", "hiking", "red fox", "cat", "Hiking"]
    common = common_words(terms, counts, min_count=2)
    assert common == ["fox", "hiking"]  # one word, at least twice as written
    cut = cut_words(tokenizer, common, counts)
    assert cut == [{"word": "fox", "count": 3, "pieces": "▁f ox"}]  # "hiking" is one piece
    assert pieces_per_word(tokenizer, ["fox hiking"]) == 1.5
