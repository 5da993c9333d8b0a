"""Compare: two views of the sentence side by side. Two heads or two layers of one kind of
attention on one colour scale; the German and the French translation with their cross-attention;
greedy search against beam search."""

from dataclasses import replace

import streamlit as st

from app import controls, presentation, state, ui
from app.display import ATTENTION_KINDS, piece_text
from app.figures.coverage import compared_coverage, coverage_rows, named_flags
from app.figures.heatmaps import attention_map
from app.numbering import index_of, index_or_every
from core import LabelledAttention, Translation, first_divergence, length_penalty
from core.inspection import Thresholds, word_coverage

PAGE = "compare"  # its settings: app/page_settings.py
SIDES = {"a": "Left", "b": "Right"}


def head_picker(prefix: str) -> tuple[int, int | str]:
    """A layer and a head ("avg" averages the heads), counted from 1 and kept in the URL as
    ``<prefix>_layer`` and ``<prefix>_head``."""
    return controls.pick(PAGE, f"{prefix}_layer"), controls.pick(PAGE, f"{prefix}_head")


def head_map(attention: LabelledAttention, layer: int, head: int | str, title: str):
    """attention_map for a layer and head counted from 1 ("avg": the mean of the heads)."""
    return attention_map(attention, index_of(layer), index_or_every(head), title)


def piece_at(output: Translation, position: int, missing: str = "") -> str:
    """The output piece at ``position``, or ``missing`` past the end of a shorter output."""
    tokens = output.output_tokens
    return tokens[position] if position < len(tokens) else missing


def head_name(layer: int, head: int | str) -> str:
    return f"layer {layer}, " + ("average of the heads" if head == "avg" else f"head {head}")


st.title("Compare")
result = state.analysis().result
settings = state.settings()
request = state.current()

if not settings.present:  # on a projector the maps' titles say it, and the maps take the room
    st.header("Two heads or two layers")
kind = controls.pick(PAGE, "compare_kind")
attention = getattr(result.attention, kind)
st.caption(
    "The same sentence and the same kind of attention, each side its own layer and head, both "
    "on one colour scale from 0 to 1, so equal colours are equal weights."
)
for column, (prefix, side) in zip(st.columns(2), SIDES.items()):
    with column:
        layer, chosen = head_picker(prefix)
        title = f"{side}: {ATTENTION_KINDS[kind]}, {head_name(layer, chosen)}"
        caption = ui.sentence_caption(kind=kind, layer=layer, head=chosen)
        ui.chart(head_map(attention, layer, chosen, title), f"compare-{prefix}", caption=caption)
        if settings.present:  # above the map, a second row of pickers: the head
            st.html(presentation.controls_above(f"compare-{prefix}", 1))

languages = state.languages()  # the shipped model's: German and French
st.header(" and ".join(languages.values()))
translations: dict[str, Translation] = {
    target: state.cached_analysis(replace(request, target=target)).result for target in languages
}
st.caption(
    f"The same sentence into each language (beam {settings.beam}, α {settings.alpha}), with the "
    "cross-attention of the layer and head picked here: where each translation looks in the "
    "English. The source columns are the same pieces but for the language tag."
)
layer, chosen = head_picker("language")
for column, (target, translation) in zip(st.columns(len(translations)), translations.items()):
    with column:
        st.caption(languages[target])
        st.code(translation.text, language=None, wrap_lines=True)
        cross = ATTENTION_KINDS["cross"].lower()
        title = f"{languages[target]}: {cross}, {head_name(layer, chosen)}"
        # the caption names this map's language and translation, not the sidebar's
        caption = replace(
            ui.sentence_caption(kind="cross", layer=layer, head=chosen),
            target=target,
            translation=translation.text,
        )
        figure = head_map(translation.attention.cross, layer, chosen, title)
        ui.chart(figure, f"compare-{target}", caption=caption)

st.header("Greedy and beam search")
if settings.beam == 1:
    st.info("The beam size in the sidebar is 1, which is greedy search: pick a larger one.")
    st.stop()
outputs = {
    "greedy (beam 1)": state.cached_analysis(replace(request, beam_size=1)).result,
    f"beam {settings.beam}": result,
}
for column, (name, output) in zip(st.columns(2), outputs.items()):
    column.caption(name)
    column.code(output.text, language=None, wrap_lines=True)
ui.table(
    [
        {
            "search": name,
            "pieces": len(output.output_tokens),
            "log P": output.log_prob,
            "log P / lp": output.log_prob
            / length_penalty(len(output.output_tokens), settings.alpha),
        }
        for name, output in outputs.items()
    ],
    {"log P": "%.3f", "log P / lp": "%.3f"},
)
st.caption(
    f"Beam search ranks finished hypotheses by log P / lp with lp = ((5 + length) / 6)^α, "
    f"α = {settings.alpha}; greedy takes the likeliest piece at every step."
)
greedy, beam = outputs.values()
apart = first_divergence(greedy.output_tokens, beam.output_tokens)
if apart is None:
    st.text("Both searches find the same translation.")
    st.stop()
greedy_piece, beam_piece = (
    piece_text(piece_at(output, apart, "(nothing)")) for output in (greedy, beam)
)
st.text(
    f"They agree on the first {apart} pieces; at step {apart} (steps count from 0) greedy "
    f"search writes “{greedy_piece}” and beam search “{beam_piece}”."
)
ui.table(
    [
        {
            "step": position,
            "greedy": piece_at(greedy, position),
            f"beam {settings.beam}": piece_at(beam, position),
            "same": piece_at(greedy, position) == piece_at(beam, position),
        }
        for position in range(max(len(greedy.output_tokens), len(beam.output_tokens)))
    ]
)

st.subheader("Coverage: what each search left out or said twice")
searches = {name: word_coverage(output) for name, output in outputs.items()}
thresholds = Thresholds()
ui.chart(
    compared_coverage(
        {name: found.values() for name, found in searches.items()},
        next(iter(searches.values())).source_labels,
        thresholds,
        f"Coverage of the source words: {' and '.join(searches)}",
    ),
    "compare-coverage",
    caption=ui.sentence_caption(kind="cross", head="avg"),
)
for name, found in searches.items():
    values, flags = found.values(), found.flags(thresholds=thresholds)
    labels = found.source_labels
    st.text(
        f"{name}: likely dropped {named_flags(labels, values, flags.under)}; likely said twice "
        f"{named_flags(labels, values, flags.over)}"
    )
ui.table(coverage_rows(searches), {name: "%.2f" for name in searches})
st.caption(
    f"Coverage: the attention a source word received over the whole output, every layer and "
    f"head's mean (the Coverage page has the definition); below {thresholds.under:g} a word was "
    f"likely dropped, above {thresholds.over:g} likely said twice. Punctuation at a word's end "
    "has its own column and is never flagged. Where a word's coverage is "
    "about the same in both but the row that attended it most predicts another word, both "
    "searches looked at it when they decided, and only one of them wrote it."
)
