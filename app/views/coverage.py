"""Coverage: how much attention each source word received over the whole translation (Tu et al.
2016), the words it may have left out or said twice, and the output rows that attended each."""

import streamlit as st

from app import state, ui
from app.display import ATTENTION_KINDS
from app.figures.coverage import (
    attended_map,
    coverage_bars,
    coverage_map,
    measured_note,
    named_flags,
)
from app.figures.heads import focus_bars
from core.files import ModelDir
from core.inspection import (
    EVERY_HEAD,
    Aggregation,
    MeasuredFlags,
    Thresholds,
    attention_coverage,
    flag,
    measured_flags,
    word_coverage,
)
from core.text import is_special_piece

THRESHOLDS = Thresholds()


@st.cache_data(show_spinner=False, max_entries=8)
def measured_study(model_dir: str, model_changed: float) -> MeasuredFlags | None:
    """The coverage study's record in the model's card (python -m train.coverage_study), None
    without one or when it was measured on another model.pt (``model_changed``, its mtime, keys
    the cache)."""
    directory = ModelDir(model_dir)
    study = measured_flags(directory.read_card())
    return study if study and directory.is_current(study.model_sha256) else None


def model_study() -> MeasuredFlags | None:
    directory = ModelDir(state.model_dir())
    if not directory.model_file.is_file():
        return None
    return measured_study(str(directory.path), directory.model_file.stat().st_mtime)


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
found = attention_coverage(result.attention.cross) if pieces else word_coverage(result)
cross = found.attention
study = model_study()
n_layers = cross.weights.shape[0]
views = {
    **({"best": f"measured best: {study.aggregation.name}"} if study and not pieces else {}),
    "all": "every layer (mean)",
    **{n: f"layer {n}" for n in range(1, n_layers + 1)},
}
layer = ui.pick(
    f"{ATTENTION_KINDS['cross']} of",
    list(views),
    "coverage_layer",
    format_func=views.get,
    in_presentation=True,
    help="The measured best is the aggregation and thresholds that found dropped and repeated "
    "words best on the labelled set of python -m train.coverage_study.",
)
if layer == "best":
    aggregation, thresholds = study.aggregation, study.thresholds
else:
    aggregation = EVERY_HEAD if layer == "all" else Aggregation(f"layer {layer}", layer=layer - 1)
    thresholds = THRESHOLDS
shown_layer = layer if isinstance(layer, int) else None  # counted from 1, for captions
shown_head = None if aggregation.heads else "avg"
values = aggregation.values(found)
flags = flag(values, found.source_labels, thresholds)
labels = found.source_labels
unit = "pieces" if pieces else "words"
ui.chart(
    coverage_bars(
        values, labels, flags, thresholds, f"Coverage of the source {unit}, {views[layer]}"
    ),
    "coverage",
    caption=ui.sentence_caption(kind="cross", layer=shown_layer, head=shown_head),
)
st.caption(
    f"Mean of {aggregation.describe() if aggregation.heads else 'the heads'}"
    f"{' and layers' if aggregation is EVERY_HEAD else ''}. Under-covered: below "
    f"{thresholds.under:g} (orange); over-covered: above {thresholds.over:g} (purple). The "
    "language tag, `</s>` and punctuation are never flagged; punctuation at a word's end has its "
    "own column (it soaks up attention)."
)

st.text(
    f"Likely dropped (coverage below {thresholds.under:g}): "
    f"{named_flags(labels, values, flags.under)}"
)
st.text(
    f"Likely said twice (coverage above {thresholds.over:g}): "
    f"{named_flags(labels, values, flags.over)}"
)
st.markdown(measured_note(study, aggregation.name if layer != "best" else None, pieces))

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
received = aggregation.received(found)
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
        caption=ui.sentence_caption(kind="cross", layer=shown_layer, head=shown_head, word=word),
    )
with right:
    ui.chart(
        attended_map(
            received,
            rows,
            labels,
            column,
            f"{ATTENTION_KINDS['cross']}, {views[layer]}, mean of heads",
        ),
        "coverage-attention",
        caption=ui.sentence_caption(kind="cross", layer=shown_layer, head=shown_head, word=word),
    )
st.caption(
    f"{ui.decoder_rows(cross)} The outlined column is the word followed; its weights add up to "
    "its coverage. A dropped word that was still attended shows where the model looked when it "
    "decided: the row's prediction is what it wrote instead."
)

st.header("How coverage grew, row by row")
ui.chart(
    coverage_map(
        aggregation.growth(found),
        rows,
        labels,
        f"Coverage after each output row, {views[layer]}",
    ),
    "coverage-growth",
    caption=ui.sentence_caption(kind="cross", layer=shown_layer, head=shown_head),
)
st.caption(
    "Tu et al.'s C(i, j) = C(i − 1, j) + α(i, j): each row adds its attention to what the source "
    "had received; the last row is the bar chart above. The Beam search page shows it growing "
    "for every hypothesis the search keeps."
)
