"""Inspection: what the model computed and why, above the translator it runs (attention with its
labels, the data every lens reads, is core/labelled_attention.py, below both). One query of one
head step by step (scaled_dot_product.py), what each head does (head_statistics.py, head_focus.py,
head_survey.py), interventions on heads (ablation.py), other lenses than attention
(attribution.py), source coverage (coverage.py), experiments (minimal_pairs.py,
worked_example.py) and the model at earlier steps (snapshots.py).

The app takes them from here. attribution.py loads Captum, which takes seconds: it is imported
where it is used (``from core.inspection import attribution``), not by this face.
"""

from core.inspection import snapshots
from core.inspection.ablation import (
    INTERVENTIONS,
    KINDS,
    Head,
    Shift,
    all_heads,
    distribution_shift,
    head_importance,
    intervened_translator,
)
from core.inspection.coverage import (
    EVERY_HEAD,
    OVER_COVERED,
    UNDER_COVERED,
    Aggregation,
    Coverage,
    Flags,
    MeasuredFlags,
    Thresholds,
    attention_coverage,
    flag,
    measured_flags,
    step_coverage,
    word_coverage,
)
from core.inspection.head_focus import (
    END,
    FARTHER,
    ITSELF,
    NEXT,
    PREVIOUS,
    TAG,
    HeadFocus,
    RowProfile,
    rank_heads,
    relation,
    row_profile,
    row_profiles,
)
from core.inspection.head_statistics import (
    ALIGNMENT_THRESHOLD,
    BROAD_ENTROPY,
    POSITIONAL_THRESHOLD,
    SINK_THRESHOLD,
    head_roles,
    role_attention,
    sentence_roles,
    statistics_per_head,
    what_to_notice,
)
from core.inspection.head_survey import HeadSurvey, load_survey
from core.inspection.minimal_pairs import (
    PAIRS,
    aligned_words,
    attention_difference,
    partner,
    word_changes,
)
from core.inspection.scaled_dot_product import ScaledDotProduct, scaled_dot_product_of
from core.inspection.snapshots import (
    SnapshotView,
    head_dynamics,
    training_record,
    vocabulary_change,
)
from core.inspection.worked_example import W_KEY, W_QUERY, W_VALUE, walk_through

__all__ = [
    "ALIGNMENT_THRESHOLD",
    "BROAD_ENTROPY",
    "END",
    "EVERY_HEAD",
    "FARTHER",
    "INTERVENTIONS",
    "ITSELF",
    "KINDS",
    "NEXT",
    "OVER_COVERED",
    "PAIRS",
    "POSITIONAL_THRESHOLD",
    "PREVIOUS",
    "SINK_THRESHOLD",
    "TAG",
    "UNDER_COVERED",
    "W_KEY",
    "W_QUERY",
    "W_VALUE",
    "Aggregation",
    "Coverage",
    "Flags",
    "Head",
    "HeadFocus",
    "HeadSurvey",
    "MeasuredFlags",
    "RowProfile",
    "ScaledDotProduct",
    "Shift",
    "SnapshotView",
    "Thresholds",
    "aligned_words",
    "all_heads",
    "attention_coverage",
    "attention_difference",
    "distribution_shift",
    "flag",
    "head_dynamics",
    "head_importance",
    "head_roles",
    "intervened_translator",
    "load_survey",
    "measured_flags",
    "partner",
    "rank_heads",
    "relation",
    "role_attention",
    "row_profile",
    "row_profiles",
    "scaled_dot_product_of",
    "sentence_roles",
    "snapshots",
    "statistics_per_head",
    "step_coverage",
    "training_record",
    "vocabulary_change",
    "walk_through",
    "what_to_notice",
    "word_changes",
    "word_coverage",
]
