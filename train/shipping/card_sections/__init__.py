"""card.md's sections for the studies a model was put through, one module a study: each a pure
function of the study's record in card.json, an empty list when the card has none. The card
(train/shipping/card_md.py) assembles them from its lists; a study's own module
(train/studies/term_test.py, width_study.py, ...) publishes the record and renders it here, beside
the others, so that the card needs no study's code to be written (a study rewrites the whole card
when it publishes)."""
