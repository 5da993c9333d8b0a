"""Truecasing: the first word of each sentence written as it is usually written inside one.

"Attention is all you need." reads as "attention is all you need.": the vocabulary knows
"▁attention" from hundreds of sentences, while "Attention" at the start of one is rare and falls
apart into "▁At tention", pieces the model never learnt to translate. "The" becomes "the", while
"John" and "Paris" stay capitalised, because inside sentences they are. Only the English source is
truecased; the model learns to write the target's own capitals. This is the truecasing step of
the Moses pipeline (Koehn et al., 2007); its statistics and file come from sacremoses.

The truecase model is learnt from the English training sentences: for each word, how often each
spelling of it occurs where the spelling is not forced by a sentence start. A sentence-initial word
written with one capital (or a lone capital, "A") becomes its most frequent spelling; a word in
capitals ("US", "NASA") and a word the model has not seen are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

# a sentence starts the text or follows . ! ? : and white space; quotes and brackets may come
# first. Group 1 is what comes before the word, group 2 the word (letters only: "Let's" -> "Let").
SENTENCE_START = re.compile(r"""((?:^|[.!?:]["'»”’)\]]*\s+)["'«“‘(\[]*)([^\W\d_]+)""")


def is_capitalised(word: str) -> bool:
    """ "The", "A": one capital, then lower case (not "US", not "iPhone")."""
    return word[:1].isupper() and (word[1:].islower() or len(word) == 1)


class Truecaser:
    """Sentence-initial words to their usual spelling, by a Moses truecase model file."""

    def __init__(self, model_file: str | Path) -> None:
        from sacremoses import MosesTruecaser  # here: `import core` needs no Moses

        self.model_file = Path(model_file)
        self.moses = MosesTruecaser(load_from=str(self.model_file))

    @staticmethod
    def learn(english: Iterable[str], model_file: str | Path) -> Truecaser:
        """Learn from English sentences (Moses-tokenised here) and write ``model_file``
        (sacremoses writes it atomically)."""
        from sacremoses import MosesTokenizer, MosesTruecaser

        tokenizer = MosesTokenizer(lang="en")
        sentences = [tokenizer.tokenize(text, escape=False) for text in english]
        MosesTruecaser().train(sentences, save_to=str(model_file))
        return Truecaser(model_file)

    def usual_spelling(self, word: str) -> str:
        """The spelling of a capitalised ``word`` seen most often inside sentences."""
        if not is_capitalised(word):
            return word
        return self.moses.truecase(word)[0]  # a lone word is sentence-initial: its best case

    def __call__(self, text: str) -> str:
        """``text`` with the first word of each sentence in its usual spelling."""
        return SENTENCE_START.sub(lambda match: match[1] + self.usual_spelling(match[2]), text)
