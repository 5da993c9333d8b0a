"""Coverage: how much attention each source word received over the whole translation (Tu et al.
2016), the words it may have left out or said twice, and the output rows that attended each."""

import streamlit as st

from app import state, ui
from app.display import ATTENTION_KINDS
from app.figures.coverage import attended_map, coverage_bars, coverage_map, named_flags
from app.figures.heads import focus_bars
from core.inspection.coverage import Thresholds, coverage, word_coverage
from core.text.words import is_special_piece

THRESHOLDS = Thresholds()

st.title("Coverage: what the translation left out, and what it said twice")
result = state.analysis().result
st.markdown(
    "Sum each source word's column of the cross-attention over every output row: that is its "
    "*coverage*, how much attention it received over the whole translation (Tu et al. 2016, "
    "*Modeling Coverage for Neural Machine Translation*; GNMT's coverage penalty, Wu et al. "
    "2016, punishes a word whose coverage stays below 1). Every row gives 1 in all, so a word "
    "translated once receives about 1. A word that received little was likely **dropped**; one "
    "that several output words attended was likely **said twice**. Candidates, not verdicts: "
    "attention spreads over heads, the language tag and `</s>` soak it up, and a decoder can look "
    "at a word and still leave it out (the rows below show where it looked)."
)
pieces = st.toggle(
    "Pieces instead of words",
    key="coverage_pieces",
    bind="query-params",
    help="In words, a row is an output word, so a word spelt in three pieces counts once.",
)
found = coverage(result.attention.cross) if pieces else word_coverage(result)
cross = found.attention
n_layers = cross.weights.shape[0]
layers = {"all": "every layer (mean)", **{n: f"layer {n}" for n in range(1, n_layers + 1)}}
layer = ui.pick(
    f"{ATTENTION_KINDS['cross']} of",
    list(layers),
    "coverage_layer",
    format_func=layers.get,
    in_presentation=True,
)
shown_layer = None if layer == "all" else layer  # counted from 1, for captions
index = None if layer == "all" else layer - 1
values, flags = found.values(index), found.flags(index, THRESHOLDS)
labels = found.source_labels
unit = "pieces" if pieces else "words"
ui.chart(
    coverage_bars(
        values, labels, flags, THRESHOLDS, f"Coverage of the source {unit}, {layers[layer]}"
    ),
    "coverage",
    caption=ui.sentence_caption(kind="cross", layer=shown_layer, head="avg"),
)
st.caption(
    f"Mean of the heads{'' if index is not None else ' and layers'}. Under-covered: below "
    f"{THRESHOLDS.under:g} (orange); over-covered: above {THRESHOLDS.over:g} (purple); "
    "thresholds of core/inspection/coverage.py. The language tag, `</s>` and punctuation are "
    "never flagged; punctuation at a word's end has its own column (it soaks up attention). "
    "Articles and auxiliaries (the, was) often fold into a neighbour's translation and look "
    "dropped."
)

st.text(
    f"Likely dropped (coverage below {THRESHOLDS.under:g}): "
    f"{named_flags(labels, values, flags.under)}"
)
st.text(
    f"Likely said twice (coverage above {THRESHOLDS.over:g}): "
    f"{named_flags(labels, values, flags.over)}"
)

st.header("Which output rows attended it")
words = [i for i, label in enumerate(labels) if not is_special_piece(label)]
choices = [f"{i}: {labels[i]}" for i in words]  # the URL holds this text: unique, as words repeat
flagged = [*flags.under, *flags.over]
if st.session_state.get("coverage_word") not in choices:
    st.session_state.pop("coverage_word", None)
followed = st.selectbox(
    "Source word to follow",
    choices,
    index=words.index(flagged[0]) if flagged else 0,
    key="coverage_word",
    bind="query-params",
    help="The first flagged word is followed to begin with.",
)
column = words[choices.index(followed)]
received = found.received(index)
rows = cross.query_labels
word = labels[column]
left, right = st.columns(2)
with left:
    ui.chart(
        focus_bars(
            rows,
            received[:, column],
            f"What each output row gave “{word}”: {values[column]:.2f} in all",
            f"weight on “{word}”",
        ),
        "coverage-rows",
        caption=ui.sentence_caption(kind="cross", layer=shown_layer, head="avg", word=word),
    )
with right:
    ui.chart(
        attended_map(
            received,
            rows,
            labels,
            column,
            f"{ATTENTION_KINDS['cross']}, {layers[layer]}, mean of heads",
        ),
        "coverage-attention",
        caption=ui.sentence_caption(kind="cross", layer=shown_layer, head="avg", word=word),
    )
st.caption(
    f"{ui.decoder_rows(cross)} The outlined column is the word followed; its weights add up to "
    "its coverage. A dropped word that was still attended shows where the model looked when it "
    "decided: the row's prediction is what it wrote instead."
)

st.header("How coverage grew, row by row")
ui.chart(
    coverage_map(
        found.growth(index),
        rows,
        labels,
        f"Coverage after each output row, {layers[layer]}",
    ),
    "coverage-growth",
    caption=ui.sentence_caption(kind="cross", layer=shown_layer, head="avg"),
)
st.caption(
    "Tu et al.'s C(i, j) = C(i − 1, j) + α(i, j): each row adds its attention to what the source "
    "had received; the last row is the bar chart above. The Beam search page shows it growing "
    "for every hypothesis the search keeps."
)
