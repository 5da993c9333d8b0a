"""Corpus-level BLEU and chrF by sacreBLEU, with the signatures that make the numbers comparable."""

from __future__ import annotations

from sacrebleu.metrics import BLEU, CHRF


def score_translations(hypotheses: list[str], references: list[str]) -> dict:
    """{"bleu", "chrf", "signature" (BLEU's), "chrf_signature"} for one reference per sentence."""
    bleu, chrf = BLEU(), CHRF()
    bleu_score = bleu.corpus_score(hypotheses, [references])
    chrf_score = chrf.corpus_score(hypotheses, [references])
    return {
        "bleu": round(bleu_score.score, 2),
        "chrf": round(chrf_score.score, 2),
        "signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
    }
