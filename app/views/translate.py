"""Translate: the sentence in, the translation out, optionally scored against a reference."""

import sacrebleu
import streamlit as st

from app import controls, notices, state, ui
from app.display import piece_count
from app.figures.heatmaps import attention_map
from core.text import is_sentence, joined

PAGE = "translate"  # its settings: app/page_settings.py

st.title("Translate")
analysis = state.analysis()
settings = state.settings()
result = analysis.result
language = state.languages()[settings.to]
notices.show()  # beside the translation too: the sidebar is closed on a phone and a projector

sentences = analysis.read.sentences
shown_first = result.text  # what the reference is scored against
if sentences > 1:
    st.subheader(f"{language}, sentence by sentence")
    progress = st.progress(0.0, text=f"Translating {sentences} sentences…")
    pairs, cut = state.sentence_by_sentence(progress.progress)
    progress.empty()
    note = state.cut_sentences_note(cut)
    if note:
        st.warning(note)
    shown_first = joined(pairs)
    st.code(shown_first, language=None, wrap_lines=True)
    with st.expander("Each sentence and its translation"):
        ui.table(
            [
                {"sentence": part, "translation": translation}
                for part, translation in pairs
                if is_sentence(part)
            ]
        )
    every = "both" if sentences == 2 else f"all {sentences}"
    st.caption(
        f"The model learnt from single sentences, so a text goes through it one sentence at a "
        f"time (cut by sentencex). Every other page shows the model reading {every} as one "
        "sequence, as below: given a whole paragraph at once, it tends to leave sentences out."
    )
    heading = f"{language}, the whole text as one sequence"
else:
    heading = language
if sentences > 1 or not settings.present:  # one sentence on a projector: the banner says it
    st.subheader(heading)
    st.code(result.text, language=None, wrap_lines=True)
search = (
    "greedy search"
    if settings.beam == 1
    else f"beam search, beam {settings.beam}, α = {settings.alpha:.1f}"
)
source_pieces, output_pieces = map(piece_count, (result.source_kinds, result.output_kinds))
st.caption(
    f"{search} · log P = {result.log_prob:.2f} · {source_pieces} source pieces → {output_pieces} "
    "output pieces (without the language tag and `</s>`, as on the Tokenization page) · the "
    f"model took {analysis.seconds * 1000:.0f} ms"
)
if result.truncated:
    st.text("What the model read:")
    st.code(state.translator().tokenizer.decode(result.source_ids), language=None, wrap_lines=True)

reference = st.text_area(
    controls.setting(PAGE, "ref").label,
    key="ref",
    bind="query-params",
    placeholder=f"A {language} translation to score the output against",
)
if reference.strip():
    bleu = sacrebleu.sentence_bleu(shown_first, [reference])
    chrf = sacrebleu.sentence_chrf(shown_first, [reference])
    left, right = st.columns(2)
    left.metric("BLEU", f"{bleu.score:.1f}", help="sacreBLEU sentence BLEU (exp smoothing)")
    right.metric("chrF", f"{chrf.score:.1f}", help="sacreBLEU sentence chrF")
    scored = (
        "the sentence-by-sentence translation, the first above"
        if sentences > 1
        else "the translation above"
    )
    st.caption(
        f"Scored: {scored}. A sentence or a few are a noisy sample: corpus scores are on the "
        "Model page."
    )

earlier = ui.snapshot_picker()
if earlier is not None:
    st.text(f"After {earlier.step:,} steps the model translated:")
    st.code(earlier.translation.text, language=None, wrap_lines=True)
    result = earlier.forced

st.subheader("Which source words each output word looked at")
st.caption(
    "Cross-attention of the last decoder layer, averaged over the heads, pieces merged into "
    "words: the Attention page shows the same map, and every other layer and head."
)
cross = result.word_attention.cross
st.caption(ui.decoder_rows(cross))
step = "" if earlier is None else f", step {earlier.step:,}"
ui.chart(
    attention_map(cross, len(cross.weights) - 1, title=f"Alignment{step}"),
    "alignment",
    caption=ui.sentence_caption(
        kind="cross",
        layer=len(cross.weights),
        head="avg",
        training_step=None if earlier is None else earlier.step,
    ),
)
