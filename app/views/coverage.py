"""Coverage: how much attention each source word received over the whole translation (Tu et al.
2016), the words it may have left out or said twice, and the output rows that attended each. Where
the model's coverage study measured a lens better at that than attention (the shipped model's
occlusion), the page opens on it, computed through the Explain page's cache."""

import streamlit as st

from app import controls, state, ui
from app.display import ATTENTION_KINDS
from app.figures.coverage import (
    attended_map,
    coverage_bars,
    coverage_map,
    measured_note,
    named_flags,
    occlusion_note,
    percent,
)
from app.figures.heads import focus_bars
from app.numbering import index_of
from core.files import ModelDir
from core.inspection import (
    EVERY_HEAD,
    OCCLUSION,
    Aggregation,
    MeasuredFlags,
    Thresholds,
    attention_coverage,
    flag,
    lens_coverage,
    measured_flags,
    occlusion_per_translation,
    word_coverage,
)
from core.text import is_special_piece

THRESHOLDS = Thresholds()
# Occlusion coverage is computed without asking when it should take at most this long (the
# translation's time x core.inspection.occlusion_per_translation): the default sentence took
# 1.1-1.5 s into German and 1.6-2.0 s into French on one thread of the shipped model's Xeon, two
# sentences at once 4.5 s, three 17-22 s. A longer text waits for its button.
OCCLUSION_AT_ONCE = 2.0  # seconds
OCCLUSION_VIEW = Aggregation(OCCLUSION)  # the lens's coverage: one "layer" of one "head"

PAGE = "coverage"  # its settings: app/page_settings.py


@st.cache_data(show_spinner=False, max_entries=8)
def measured_study(model_dir: str, model_changed: float) -> MeasuredFlags | None:
    """The coverage study's record in the model's card (python -m train.studies.coverage_study),
    None without one or when it was measured on another model.pt (``model_changed``, its mtime, keys
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
analysis = state.analysis()
result = analysis.result
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
pieces = controls.toggle(PAGE, "coverage_pieces")
found = attention_coverage(result.attention.cross) if pieces else word_coverage(result)
cross = found.attention
study = model_study()
lens = study.best_lens if study and not pieces else None
occlusion = lens if lens and lens.lens == OCCLUSION else None  # the one lens the page computes
n_layers = cross.weights.shape[0]
attention_best = "best of attention" if lens else "measured best"
views = {
    **({"occlusion": f"measured best: {OCCLUSION}"} if occlusion else {}),
    **({"best": f"{attention_best}: {study.aggregation.name}"} if study and not pieces else {}),
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
    "words best on the labelled set of python -m train.studies.coverage_study"
    + (
        f"; of all it measured, the {OCCLUSION} lens (the Explain page's), which takes a pass of "
        "the model per output piece; of attention alone, the best needs nothing more."
        if occlusion
        else "."
    ),
)
if layer == "occlusion":
    request = state.current()
    with st.spinner("Loading the lenses (Captum)…"):
        from app import explain_cache  # Captum loads with it: only when a lens is asked for
    seconds = analysis.seconds * occlusion_per_translation(result)
    asked = ui.on_demand(
        f"Compute the measured best: {OCCLUSION}, precision {percent(occlusion.precision)}, "
        f"recall {percent(occlusion.recall)} (about {max(seconds, 1):.0f} s)",
        "coverage_occlusion",
        request,
        done=seconds <= OCCLUSION_AT_ONCE
        or explain_cache.cached_occlusion.stored(request) is not None,
        help="Runs the model once per output piece, over the sentence with each source piece "
        "hidden in turn: 1-2 s for the default sentence on one core, far more for a long text. "
        "Once computed, it is kept for everyone on this server.",
    )
    if asked:
        found = lens_coverage(result, explain_cache.cached_occlusion(request))
        aggregation, thresholds = OCCLUSION_VIEW, occlusion.thresholds
    else:
        st.info(
            f"This text is long for {OCCLUSION} (a pass of the model per output piece): press "
            f"the button for it. Shown until then: the {attention_best}, "
            f"{study.aggregation.name} ({study.aggregation.describe()}), from the "
            "cross-attention alone."
        )
        layer = "best"
if layer == "best":
    aggregation, thresholds = study.aggregation, study.thresholds
elif layer != "occlusion":
    aggregation = (
        EVERY_HEAD if layer == "all" else Aggregation(f"layer {layer}", layer=index_of(layer))
    )
    thresholds = THRESHOLDS
shown_layer = layer if isinstance(layer, int) else None  # counted from 1, for captions
shown_head = None if aggregation.heads or layer == "occlusion" else "avg"
kind = None if layer == "occlusion" else "cross"  # a lens, not attention
values = aggregation.values(found)
flags = flag(values, found.source_labels, thresholds)
labels = found.source_labels
unit = "pieces" if pieces else "words"
ui.chart(
    coverage_bars(
        values, labels, flags, thresholds, f"Coverage of the source {unit}, {views[layer]}"
    ),
    "coverage",
    caption=ui.sentence_caption(kind=kind, layer=shown_layer, head=shown_head),
)
what = (
    f"The {OCCLUSION} lens summed over the output: each output piece's drops in log-probability "
    "made shares that sum to 1, |drop| over the sum of |drops|, as an attention row does"
    if layer == "occlusion"
    else f"Mean of {aggregation.describe() if aggregation.heads else 'the heads'}"
    f"{' and layers' if aggregation is EVERY_HEAD else ''}"
)
st.caption(
    f"{what}. Under-covered: below "
    f"{thresholds.under:g} (vermillion, crossed); over-covered: above {thresholds.over:g} "
    "(purple, hatched). The "
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
st.markdown(
    occlusion_note(study)
    if layer == "occlusion"
    else measured_note(study, aggregation.name if layer != "best" else None, pieces)
)

st.header("Which output rows attended it")
words = [i for i, label in enumerate(labels) if not is_special_piece(label)]
choices = [f"{i}: {labels[i]}" for i in words]  # the URL holds this text: unique, as words repeat
flagged = [*flags.under, *flags.over]
if st.session_state.get("coverage_word") not in choices:
    st.session_state.pop("coverage_word", None)
followed = controls.selectbox(
    PAGE, "coverage_word", choices, index=words.index(flagged[0]) if flagged else 0
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
        caption=ui.sentence_caption(kind=kind, layer=shown_layer, head=shown_head, word=word),
    )
with right:
    ui.chart(
        attended_map(
            received,
            rows,
            labels,
            column,
            f"{OCCLUSION.capitalize()}, each output row's drops in log p as shares"
            if layer == "occlusion"
            else f"{ATTENTION_KINDS['cross']}, {views[layer]}, mean of heads",
        ),
        "coverage-attention",
        caption=ui.sentence_caption(kind=kind, layer=shown_layer, head=shown_head, word=word),
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
    caption=ui.sentence_caption(kind=kind, layer=shown_layer, head=shown_head),
)
st.caption(
    "Tu et al.'s C(i, j) = C(i − 1, j) + α(i, j): each row adds its attention to what the source "
    "had received; the last row is the bar chart above. The Beam search page shows it growing "
    "for every hypothesis the search keeps."
)
