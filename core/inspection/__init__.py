"""Inspection: what the model computed and why, above the translator it runs (attention with its
labels, the data every lens reads, is core/labelled_attention.py, below both). One query of one
head step by step (scaled_dot_product.py), what each head does (head_statistics.py, head_focus.py,
head_survey.py), interventions on heads (ablation.py), other lenses than attention
(attribution.py), source coverage (coverage.py), experiments (minimal_pairs.py,
worked_example.py) and the model at earlier steps (snapshots.py)."""
