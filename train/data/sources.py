"""The corpora a model card names: each one's name, size, licence and attribution, and which of
the dictionaries (GPL-2+) and the Hansard, named only when a run trained on them, a run's mixture
read."""

from __future__ import annotations

from train.data.corpora import (
    DICTIONARY_FILES,
    corpus_weight,
    parse_mixture,
)

DATA_SOURCES = [
    {
        "name": "Tatoeba English-German (manythings.org/anki release 2018-05-13)",
        "pairs": 159665,
        "license": "CC-BY 2.0 FR",
        "attribution": "Sentences from tatoeba.org, via manythings.org/anki",
    },
    {
        "name": "Tatoeba English-French (manythings.org/anki release 2019-04-07)",
        "pairs": 153401,
        "license": "CC-BY 2.0 FR",
        "attribution": "Sentences from tatoeba.org, via manythings.org/anki",
    },
    {
        "name": "Multi30k task 1 (en-de, en-fr): train for training, val for validation",
        "pairs": 2 * (29000 + 1014),
        "license": "research use",
        "attribution": "Elliott et al. 2016, Multi30K: Multilingual English-German Image "
        "Descriptions (github.com/multi30k/dataset)",
    },
    {
        "name": "WMT news test sets en-de (newstest 2008-2021 except 2014 and 2019, WMT general "
        "test 2022-2024)",
        "pairs": 33815 + 5632,
        "license": "research use",
        "attribution": "statmt.org WMT shared tasks, via github Helsinki-NLP/OPUS-MT-testsets "
        "and wmt-conference/wmt22-24-news-systems",
    },
    {
        "name": "MLQE-PE English-German Wikipedia sentences with post-edits",
        "pairs": 8999,
        "license": "CC0",
        "attribution": "Fomicheva et al. 2022, MLQE-PE (github sheffieldnlp/mlqe-pe)",
    },
    {
        "name": "BConTrasT English-German customer-service chat (WMT20 chat task)",
        "pairs": 13962,
        "license": "CC BY-SA 4.0 (share-alike: this model is derived from it)",
        "attribution": "Farajian et al. 2020, BConTrasT (github Unbabel/BConTrasT)",
    },
    {
        "name": "WMT news test sets en-fr (newstest 2008-2013, newsdiscusstest 2015)",
        "pairs": 18035,
        "license": "research use",
        "attribution": "statmt.org WMT shared tasks, via github Helsinki-NLP/OPUS-MT-testsets",
    },
]


DICTIONARY_SOURCES = {  # train/data/corpora.py's DICTIONARY_FILES: named when a run trains on them
    "ding-sentences": {
        "name": "Ding English-German dictionary, its example sentences",
        "pairs": 21478,
        "license": "GPL-2+",
        "attribution": "Ding, Frank Richter, TU Chemnitz, via Debian's trans-de-en 1.9",
    },
    "ding-terms": {
        "name": "Ding English-German dictionary, its headwords and phrases (one row per sense)",
        "pairs": 357405,
        "license": "GPL-2+",
        "attribution": "Ding, Frank Richter, TU Chemnitz, via Debian's trans-de-en 1.9",
    },
    "freedict-terms": {
        "name": "FreeDict English-French and French-English dictionaries, headwords and senses",
        "pairs": 17453,
        "license": "GPL-2+",
        "attribution": "FreeDict, via Debian's dict-freedict-eng-fra / -fra-eng 2022.04.21",
    },
}


HANSARD_SOURCE = {  # train/data/corpora.py's HANSARD_FILES: named when a run trains on it
    "name": "Aligned Hansards of the 36th Parliament of Canada, English-French (House of Commons "
    "and Senate debates, 1997-2000; release 2001-1a)",
    "pairs": 927788,
    "license": "research use",
    "attribution": "U. Germann, USC/ISI, Aligned Hansards of the 36th Parliament of Canada, via "
    "github EKarton/English-French-Translator",
}


def dictionary_weights(recipe: dict) -> dict[str, float]:
    """The dictionaries a run's mixture gave a weight above 0 (train/data/corpora.py), with it."""
    weights = parse_mixture(recipe.get("mixture", ""))
    return {
        corpus: max(corpus_weight(weights, corpus, target) for target in files)
        for corpus, files in DICTIONARY_FILES.items()
        if any(corpus_weight(weights, corpus, target) > 0 for target in files)
    }


def trained_named_corpora(recipe: dict) -> list[dict]:
    """The card's data sources for the corpora read only when named that the run trained on:
    the dictionaries (GPL-2+) and the Hansard (research use)."""
    hansard = corpus_weight(parse_mixture(recipe.get("mixture", "")), "hansard", "fr") > 0
    dictionaries = [DICTIONARY_SOURCES[corpus] for corpus in dictionary_weights(recipe)]
    return dictionaries + ([HANSARD_SOURCE] if hansard else [])
