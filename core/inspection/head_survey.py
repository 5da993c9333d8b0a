"""What every head does on average, and what the model loses as heads go: ``heads.json``.

A head survey is computed once per model by a command (``python -m train.shipping.head_survey``), on
a sample of the validation split (by default 100 en->de + 100 en->fr pairs, evenly spread over it),
and stored beside the model as ``<model dir>/heads.json``, never on a page load. For each kind of
attention ("encoder", "decoder", "cross") it holds

- every statistic of :func:`core.inspection.head_statistics.head_statistics`, averaged over the
  sentences by
  :func:`core.inspection.head_statistics.mean_over_sentences` (each sentence counts the same), on
  the attention of each sentence's own beam translation, read as the Story and the Heads lab read
  a head (:func:`core.inspection.head_statistics.role_attention`: in words, the decoder in
  pieces);
- the mean head importance: :func:`core.inspection.ablation.head_importance` on that translation,
  the drop in its log-probability (nats, summed over the output tokens) when one head alone is
  switched off
  (Michel et al. 2019), averaged over the sentences;

and, over all heads of all kinds, the pruning curve: heads switched off cumulatively in order of
mean importance, least important first (Michel et al. 2019, "Are Sixteen Heads Really Better than
One?", Fig. 3; Voita et al. 2019), with the sample's corpus BLEU and chrF (sacreBLEU) at a handful
of points from 0 heads off to all of them. The order is read once off the full model; unlike
Michel et al. the scores are not normalised per layer: they are log-probability drops on one scale.

The file (JSON, written atomically)::

    {"format": "attention-lab/heads/1",
     "model_sha256": "<sha256 of the model.pt it was computed from>",
     "computed_at": "2026-11-24T12:00:00+00:00", "seconds": 812.4,
     "sentences": 200, "targets": {"de": 100, "fr": 100},
     "sample": "<how the sample was chosen>", "sample_sha256": "<sha256 of its text>",
     "beam_size": 4, "alpha": 0.6,
     "kinds": {"encoder": {"statistics": {"entropy": [[...]], ...}, "importance": [[...]]},
               "decoder": {...}, "cross": {...}},            # every array (layers, heads)
     "pruning": {"order": ["cross L2 H3", "enc L1 H1", ...],  # least important first
                 "points": [{"heads_off": 0, "bleu": 37.1, "chrf": 61.2,
                             "by_target": {"de": {"bleu": ..., "chrf": ...}, "fr": {...}}}, ...],
                 "bleu_signature": "nrefs:1|case:mixed|...", "chrf_signature": "..."}}

Reading follows the model card's convention (:meth:`core.files.model_dir.ModelDir.read_card`): no
file is None, a file that is not UTF-8 JSON of this shape is a
:class:`core.files.checkpoint.CheckpointError` naming it.
:meth:`core.files.model_dir.ModelDir.is_current` tells whether it was computed on the model.pt now
beside it.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.decoding.search import PAPER_DECODING
from core.errors import InputError
from core.files.checkpoint import CheckpointError, write_text_atomically
from core.files.model_dir import ModelDir
from core.inspection.ablation import (
    KINDS,
    Head,
    all_heads,
    head_importance,
    intervened_translator,
)
from core.inspection.head_statistics import mean_over_sentences, role_attention
from core.scoring import score_translations

if TYPE_CHECKING:  # a type hint only: inspection does not import the translator above it
    from core.translator import Translator

FORMAT = "attention-lab/heads/1"
# Points of the pruning curve, as shares of all heads: 0, 6, 12, 24, 48, 72, 96, 120, 144 of 144.
PRUNING_FRACTIONS = (0, 1 / 24, 1 / 12, 1 / 6, 1 / 3, 1 / 2, 2 / 3, 5 / 6, 1)
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

Progress = Callable[[str], None]  # called after each unit of work with what was just done


@dataclass(frozen=True)
class SamplePair:
    """One sentence of the sample: the target language, the English source, its reference."""

    target: str
    source: str
    reference: str


@dataclass(frozen=True)
class PruningPoint:
    """The sample's corpus scores with the ``heads_off`` least important heads switched off."""

    heads_off: int
    bleu: float
    chrf: float
    by_target: dict[str, dict[str, float]]  # {"de": {"bleu": ..., "chrf": ...}, "fr": ...}


@dataclass(frozen=True)
class HeadSurvey:
    """The content of heads.json (see the module docstring)."""

    model_sha256: str
    computed_at: str  # ISO 8601, UTC
    seconds: float
    sentences: int
    targets: dict[str, int]  # sentences per target language
    sample: str  # how the sample was chosen, for people
    sample_sha256: str
    beam_size: int
    alpha: float  # the length penalty's
    statistics: dict[str, dict[str, np.ndarray]]  # kind -> statistic -> (layers, heads)
    importance: dict[str, np.ndarray]  # kind -> (layers, heads), mean log-probability drop
    pruning_order: list[Head]  # every head, least important first
    pruning: list[PruningPoint]  # by heads_off, from 0
    bleu_signature: str
    chrf_signature: str

    def heads_off(self, point: PruningPoint) -> list[Head]:
        """The heads switched off at ``point``: the first ``point.heads_off`` of the order."""
        return self.pruning_order[: point.heads_off]


def sample_sha256(pairs: Sequence[SamplePair]) -> str:
    """A fingerprint of the sample's text (target, source, reference of every pair, in order)."""
    text = json.dumps([[p.target, p.source, p.reference] for p in pairs], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pruning_counts(total_heads: int) -> list[int]:
    """The numbers of heads off at the points of the curve: PRUNING_FRACTIONS of the heads,
    rounded, without repeats; for 144 heads 0, 6, 12, 24, 48, 72, 96, 120, 144."""
    return sorted({round(fraction * total_heads) for fraction in PRUNING_FRACTIONS})


def work_units(sentences: int, points: int) -> int:
    """How many times :func:`survey` calls its progress callback: once per sentence for the
    statistics and importance (which also gives point 0), once per sentence per other point."""
    return sentences * max(points, 1)


def pruning_point(
    heads_off: int, hypotheses: list[str], pairs: Sequence[SamplePair]
) -> PruningPoint:
    """The :class:`PruningPoint` of ``hypotheses`` (one per pair): the whole sample as one
    corpus, and each target language on its own."""
    references = [pair.reference for pair in pairs]
    overall = score_translations(hypotheses, references)
    by_target = {}
    for target in sorted({pair.target for pair in pairs}):
        chosen = [i for i, pair in enumerate(pairs) if pair.target == target]
        scores = score_translations(
            [hypotheses[i] for i in chosen], [references[i] for i in chosen]
        )
        by_target[target] = {"bleu": scores["bleu"], "chrf": scores["chrf"]}
    return PruningPoint(heads_off, overall["bleu"], overall["chrf"], by_target)


def translate_sample(
    translator: Translator,
    pairs: Sequence[SamplePair],
    beam_size: int,
    alpha: float,
    progress: Progress,
    what: str,
) -> list[str]:
    """The beam translation of every source of the sample, one progress unit each."""
    hypotheses = []
    for pair in pairs:
        hypotheses.append(translator.translate(pair.source, pair.target, beam_size, alpha).text)
        progress(what)
    return hypotheses


def read_sentences(
    translator: Translator,
    pairs: Sequence[SamplePair],
    beam_size: int,
    alpha: float,
    progress: Progress,
) -> tuple[list[str], dict[str, list], dict[str, list[np.ndarray]]]:
    """Translate each sentence, and keep, per kind, its attention as heads are read (weights
    (L, H, Q, K), key labels) and its head importance (L, H): (translations, attention,
    importance)."""
    texts: list[str] = []
    attention: dict[str, list] = {kind: [] for kind in KINDS}
    importance: dict[str, list[np.ndarray]] = {kind: [] for kind in KINDS}
    for pair in pairs:
        result = translator.translate(pair.source, pair.target, beam_size, alpha)
        texts.append(result.text)
        traced = translator.trace(result)  # the same output, teacher-forced
        for kind in KINDS:
            kind_attention = role_attention(traced.attention, traced.word_attention, kind)
            attention[kind].append((kind_attention.weights, kind_attention.key_labels))
            importance[kind].append(head_importance(translator, result, kind))
        progress("statistics and importance")
    return texts, attention, importance


def pruning_order(importance: dict[str, np.ndarray]) -> list[Head]:
    """Every head of every kind by mean importance, least important first; equal scores in the
    order of :class:`core.inspection.ablation.Head` (kind name, layer, head)."""
    heads = [
        Head(kind, layer, head)
        for kind, scores in importance.items()
        for layer in range(scores.shape[0])
        for head in range(scores.shape[1])
    ]
    return sorted(heads, key=lambda h: (float(importance[h.kind][h.layer, h.head]), h))


def pruning_curve(
    translator: Translator,
    pairs: Sequence[SamplePair],
    plain_texts: list[str],
    order: list[Head],
    counts: Sequence[int],
    decoding: tuple[int, float],
    progress: Progress,
) -> list[PruningPoint]:
    """The sample's scores with the first k heads of ``order`` off, for each k of ``counts``
    (sorted, from 0): k = 0 scores ``plain_texts``, the full model's translations; every other k
    translates the sample again with :func:`core.inspection.ablation.intervened_translator` (beam
    search, ``decoding`` = (beam size, alpha))."""
    points = [pruning_point(0, plain_texts, pairs)]
    for count in counts[1:]:
        ablated = intervened_translator(translator, order[:count])
        what = f"{count} heads off"
        hypotheses = translate_sample(ablated, pairs, *decoding, progress, what)
        points.append(pruning_point(count, hypotheses, pairs))
    return points


def check_counts(heads_off: Sequence[int], total_heads: int) -> list[int]:
    """The pruning points, sorted, each between 0 and the number of heads; 0 is always one."""
    wrong = [count for count in heads_off if not 0 <= count <= total_heads]
    if wrong:
        raise InputError(f"heads off must be between 0 and {total_heads}, got {wrong}.")
    return sorted({0, *heads_off})


def survey(
    translator: Translator,
    pairs: Sequence[SamplePair],
    model_sha256: str,
    sample: str = "",
    heads_off: Sequence[int] | None = None,
    beam_size: int = PAPER_DECODING.beam_size,
    alpha: float = PAPER_DECODING.alpha,
    progress: Progress | None = None,
) -> HeadSurvey:
    """Survey every head of ``translator`` on ``pairs`` (see the module docstring).

    ``model_sha256`` is :meth:`core.files.model_dir.ModelDir.model_sha256` of the directory the
    translator was loaded from; ``heads_off`` the points of the pruning curve (default
    :func:`pruning_counts`); ``progress`` is called :func:`work_units` times. Cost: per sentence
    one beam search, one traced pass and three batched importance passes, then one beam search
    per sentence per other point.
    """
    if not pairs:
        raise InputError("The sample has no sentences.")
    started, progress = time.perf_counter(), progress or (lambda what: None)
    total_heads = len(all_heads(translator))
    counts = check_counts(
        pruning_counts(total_heads) if heads_off is None else heads_off, total_heads
    )
    texts, attention, importance = read_sentences(translator, pairs, beam_size, alpha, progress)
    statistics = {kind: mean_over_sentences(attention[kind], kind != "cross") for kind in KINDS}
    mean_importance = {kind: np.mean(importance[kind], axis=0) for kind in KINDS}  # (L, H)
    order = pruning_order(mean_importance)
    decoding = (beam_size, alpha)
    points = pruning_curve(translator, pairs, texts, order, counts, decoding, progress)
    signatures = score_translations(texts, [pair.reference for pair in pairs])
    return HeadSurvey(
        model_sha256=model_sha256,
        computed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        seconds=round(time.perf_counter() - started, 1),
        sentences=len(pairs),
        targets={t: sum(p.target == t for p in pairs) for t in sorted({p.target for p in pairs})},
        sample=sample,
        sample_sha256=sample_sha256(pairs),
        beam_size=beam_size,
        alpha=alpha,
        statistics=statistics,
        importance=mean_importance,
        pruning_order=order,
        pruning=points,
        bleu_signature=signatures["signature"],
        chrf_signature=signatures["chrf_signature"],
    )


def survey_to_json(survey: HeadSurvey) -> dict:
    """The JSON object of heads.json; arrays become nested lists (layers, heads)."""
    kinds = {
        kind: {
            "statistics": {name: values.tolist() for name, values in stats.items()},
            "importance": survey.importance[kind].tolist(),
        }
        for kind, stats in survey.statistics.items()
    }
    points = [
        {"heads_off": p.heads_off, "bleu": p.bleu, "chrf": p.chrf, "by_target": p.by_target}
        for p in survey.pruning
    ]
    return {
        "format": FORMAT,
        **{name: getattr(survey, name) for name in _SCALARS},
        "kinds": kinds,
        "pruning": {
            "order": [head.name for head in survey.pruning_order],
            "points": points,
            "bleu_signature": survey.bleu_signature,
            "chrf_signature": survey.chrf_signature,
        },
    }


# The top-level fields of heads.json besides format, kinds and pruning, with their JSON types.
_SCALARS = {
    "model_sha256": str,
    "computed_at": str,
    "seconds": (int, float),
    "sentences": int,
    "targets": dict,
    "sample": str,
    "sample_sha256": str,
    "beam_size": int,
    "alpha": (int, float),
}


def save_survey(path: str | Path, survey: HeadSurvey) -> None:
    """Write heads.json atomically (:func:`core.files.checkpoint.atomic_write`)."""
    text = json.dumps(survey_to_json(survey), indent=1, ensure_ascii=False) + "\n"
    write_text_atomically(path, text)


def _matrix(values: object) -> np.ndarray:
    """A (layers, heads) array of numbers from nested lists; ValueError otherwise."""
    array = np.asarray(values, dtype=np.float64)  # ragged or non-numeric: ValueError
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"expected a (layers, heads) table, got shape {array.shape}")
    return array


def _typed(value: object, kind: type | tuple, what: str) -> object:
    """``value`` if it is of the JSON type ``kind`` (a bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"{what} is {value!r}, not {kind}")
    return value


def _kind_tables(kinds: object) -> tuple[dict, dict]:
    """(statistics, importance) of the "kinds" object, every table of a kind the same shape."""
    statistics, importance = {}, {}
    for kind in KINDS:
        entry = _typed(kinds[kind], dict, kind)
        importance[kind] = _matrix(entry["importance"])
        stats = _typed(entry["statistics"], dict, f"{kind} statistics")
        statistics[kind] = {str(name): _matrix(values) for name, values in stats.items()}
        shapes = {table.shape for table in [importance[kind], *statistics[kind].values()]}
        if len(shapes) != 1:
            raise ValueError(f"{kind} tables of different shapes {sorted(shapes)}")
    return statistics, importance


def _point(entry: dict) -> PruningPoint:
    by_target = {
        str(target): {
            name: float(_typed(scores[name], (int, float), name)) for name in ("bleu", "chrf")
        }
        for target, scores in _typed(entry["by_target"], dict, "by_target").items()
    }
    return PruningPoint(
        _typed(entry["heads_off"], int, "heads_off"),
        float(_typed(entry["bleu"], (int, float), "bleu")),
        float(_typed(entry["chrf"], (int, float), "chrf")),
        by_target,
    )


def _pruning(pruning: dict, importance: dict) -> tuple[list[Head], list[PruningPoint]]:
    """The order (every head once, as the tables count them) and the points (within it)."""
    order = [Head.parse(_typed(name, str, "head")) for name in pruning["order"]]
    expected = {
        Head(kind, layer, head)
        for kind, table in importance.items()
        for layer in range(table.shape[0])
        for head in range(table.shape[1])
    }
    if len(order) != len(expected) or set(order) != expected:
        raise ValueError("the pruning order does not list every head exactly once")
    points = [_point(entry) for entry in pruning["points"]]
    if not points or any(not 0 <= p.heads_off <= len(order) for p in points):
        raise ValueError("pruning points missing or outside 0..number of heads")
    return order, points


def survey_from_json(obj: object) -> HeadSurvey:
    """The :class:`HeadSurvey` of a heads.json object; KeyError, TypeError or ValueError (with
    :class:`InputError`) when it is not of that shape."""
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT!r} object")
    if "alpha" not in obj and "length_penalty" in obj:  # alpha's name in files before 2026-11-29
        obj = {**obj, "alpha": obj["length_penalty"]}
    scalars = {name: _typed(obj[name], kind, name) for name, kind in _SCALARS.items()}
    scalars["targets"] = {
        str(target): _typed(count, int, target) for target, count in scalars["targets"].items()
    }
    if not _SHA256.match(scalars["model_sha256"]):
        raise ValueError("model_sha256 is not 64 hex digits")
    statistics, importance = _kind_tables(obj["kinds"])
    pruning = _typed(obj["pruning"], dict, "pruning")
    order, points = _pruning(pruning, importance)
    return HeadSurvey(
        **scalars,
        statistics=statistics,
        importance=importance,
        pruning_order=order,
        pruning=points,
        bleu_signature=_typed(pruning["bleu_signature"], str, "bleu_signature"),
        chrf_signature=_typed(pruning["chrf_signature"], str, "chrf_signature"),
    )


def read_survey(path: str | Path) -> HeadSurvey | None:
    """A heads.json file; None when there is none. A file that is not UTF-8 JSON of the shape
    of :func:`survey_to_json` is a CheckpointError naming it (as
    :meth:`core.files.model_dir.ModelDir.read_card` treats card.json)."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        return survey_from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, KeyError, TypeError, ValueError, RecursionError) as error:
        # ValueError: bad UTF-8, bad JSON, a wrong value; KeyError/TypeError: a wrong shape
        raise CheckpointError(f"{path}: not a readable head survey ({error!r})") from error


def load_survey(model_dir: str | Path) -> HeadSurvey | None:
    """The head survey stored beside a model (ModelDir.heads_file); None when there is none (see
    :func:`read_survey` for a damaged file). Whether it still describes the model there:
    ``ModelDir(model_dir).is_current(survey.model_sha256)``."""
    return read_survey(ModelDir(model_dir).heads_file)
