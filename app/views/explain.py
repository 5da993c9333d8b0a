"""Explain: for one produced word, what the model attended to beside what the word depends on;
and minimal pairs, two sentences a word apart, side by side."""

from dataclasses import replace

import streamlit as st

from app import controls, explain_cache, state, ui
from app.display import ATTENTION_KINDS, piece_text
from app.figures.explain import agreement_map, difference_map, lens_map
from app.figures.heads import focus_bars
from app.numbering import index_or_every, shown_of
from app.page_settings import layer_or_mean
from core import Translation
from core.inspection import (
    INTERVENTIONS,
    PAIRS,
    Head,
    aligned_words,
    attention_difference,
    attribution,
    partner,
    rank_heads,
    word_changes,
)
from core.text import is_special_piece, words

READING_GUIDE = (
    "**How to read this.** The first four rows are attention in different guises: the raw "
    "cross-attention, attention rolled out through the encoder (Abnar & Zuidema 2020), and "
    "attention weighted by the size of what each source piece adds (Kobayashi et al. 2020). The "
    "last three ask the model what the word *depends on*: gradient × input and integrated "
    "gradients (Captum) measure how the word's log-probability responds to each source "
    "embedding, occlusion removes a piece and measures the drop. Where attention and the "
    "dependence lenses rank the pieces alike (tau near 1), attention is a fair explanation for "
    "this word; where they disagree, the model attends to one place while the prediction hinges "
    "on another: attention says where information flows, not why the word was chosen (Jain & "
    "Wallace 2019; Wiegreffe & Pinter 2019). Pieces such as the language tag and `</s>` often "
    "soak up attention without mattering much: look for them."
)

# what the classic pair asks of the target language, as the minimal pairs' introduction says it
PRONOUN_CHOICE = {
    "de": "German must choose between *es* (das Tier) and *sie* (die Straße)",
    "fr": "French must choose between *il* (l'animal) and *elle* (la rue)",
}
ANY_PRONOUN_CHOICE = "a language with grammatical gender must choose the pronoun of the right noun"
NATS = "nats (natural log)"

PAGE = "explain"  # its settings: app/page_settings.py


def word_difference(first: Translation, second: Translation, sentences: tuple[str, str]) -> None:
    """Pick an output word of the first translation with a partner in the second (the first
    changed one by default) and draw where each looks, and the difference, over the source
    (``sentences``: the two English sentences, for the caption)."""
    first_words, second_words = (words(r.output_tokens)[1] for r in (first, second))
    partners = aligned_words(first_words, second_words)
    if not partners:
        return
    label = {k: f"{first_words[i]} / {second_words[j]}" for k, (i, j) in enumerate(partners)}
    numbered = {k: f"word {i + 1}: {text}" for (k, text), (i, _) in zip(label.items(), partners)}
    changed = [k for k, (i, j) in enumerate(partners) if first_words[i] != second_words[j]]
    if st.session_state.get("pair_word", 0) not in range(len(partners)):
        del st.session_state["pair_word"]
    compared = controls.selectbox(
        PAGE,
        "pair_word",
        range(len(partners)),
        index=changed[0] if changed else 0,
        format_func=numbered.get,  # the URL holds this text: unique, though words repeat
    )
    layer = controls.pick(PAGE, "pair_layer")
    found = attention_difference(
        first.word_attention.cross,
        second.word_attention.cross,
        partners[compared],
        index_or_every(layer),
    )
    ui.chart(
        difference_map(
            found.first,
            found.second,
            found.source_labels,
            ("first sentence", "second sentence"),
            f"Where “{label[compared]}” looks: {ATTENTION_KINDS['cross'].lower()}, "
            f"{layer_or_mean(layer)}, mean of heads",
        ),
        "pair-difference",
        caption=replace(
            ui.sentence_caption(kind="cross", layer=None if layer == "mean" else layer, head="avg"),
            sentence=f"first: {sentences[0]} / second: {sentences[1]}",
            translation=f"first: {first.text} / second: {second.text}",
        ),
    )
    st.caption(
        "Columns are the source words the two sentences share, a changed word shown as "
        "“first / second”; words without a partner are left out. The lower row is the second "
        "sentence's weight minus the first's: red, the second looks there more."
    )


st.title("Explain: is attention an explanation?")
result = state.analysis().result
settings = state.settings()
rows = result.attention.cross.query_labels  # "reads → predicts", one per produced piece
if st.session_state.get("word", 0) not in range(len(rows)):
    del st.session_state["word"]
position = controls.selectbox(
    PAGE,
    "word",
    range(len(rows)),
    index=min(1, len(rows) - 1),
    # the URL holds this text: unique, as rows repeat
    format_func=[f"{i}: {piece_text(row)}" for i, row in enumerate(rows)].__getitem__,
)
lenses = explain_cache.cached_lenses(state.current(), position)
predicted = piece_text(lenses.predicted)
title = f"Why “{predicted}”? Every lens over the source pieces"
ui.chart(lens_map(lenses.values, lenses.source_labels, title), f"lenses-{position}")
# Captum's delta = sum(attributions) - (f(x) - f(baseline)), so the change is their sum - delta
attributed = float(lenses.values["integrated gradients"].sum())
st.caption(
    f"log p(“{predicted}”) = {lenses.log_prob:.3f} {NATS}. Each row is divided by its largest "
    "absolute value (hover for the raw value); red: for the word, blue: against it. Integrated "
    f"gradients, {attribution.IG_STEPS} steps from a zero embedding: log p changes by "
    f"{attributed - lenses.ig_delta:+.4f} from that baseline, and the attributions sum to "
    f"{attributed:+.4f} (completeness error, Captum's convergence delta: {lenses.ig_delta:+.4f})."
)
ui.chart(
    agreement_map(list(lenses.values), attribution.rank_agreement(lenses.values)),
    "lens-agreement",
)
st.markdown(READING_GUIDE)

st.header("Why this piece rather than another?")
alternatives = explain_cache.cached_alternatives(state.current(), position)
foils = [piece for piece, _, _ in alternatives]
if st.session_state.get("foil", foils[0]) not in foils:  # an alternative at another piece
    del st.session_state["foil"]
foil = controls.selectbox(
    PAGE,
    "foil",
    foils,
    # the URL holds this text: the sentence and the piece explained, there too, fix the chances
    format_func={
        piece: f"{piece_text(text)} (P {chance:.3f})" for piece, text, chance in alternatives
    }.get,
)
found = explain_cache.cached_contrast(state.current(), position, foil)
foil_piece = piece_text(next(text for piece, text, _ in alternatives if piece == foil))
ui.chart(
    lens_map(
        {f"“{predicted}” rather than “{foil_piece}”": found.values},
        lenses.source_labels,
        "Contrastive integrated gradients over the source pieces",
    ),
    f"contrast-{position}",
)
contrasted = float(found.values.sum())
st.caption(
    f"log p(“{predicted}”) − log p(“{foil_piece}”) = {found.log_ratio:.3f} {NATS}. Integrated "
    "gradients of that difference (Yin & Neubig 2022): red pieces push towards the chosen piece, "
    f"blue towards the other. It changes by {contrasted - found.delta:+.4f} from the zero "
    f"embedding, the attributions sum to {contrasted:+.4f} (completeness error {found.delta:+.4f})."
)

st.header("Intervene: change one head, watch this word")
cross = result.attention.cross
top_head = rank_heads(cross, position)[0]  # the cross head most focused for this word
options = controls.options(PAGE, "probe")
default = Head("cross", top_head.layer, top_head.head).name
if st.session_state.get("probe", default) not in options:
    del st.session_state["probe"]
left, right = st.columns(2)
with left:
    head_name = controls.selectbox(PAGE, "probe", options, index=options.index(default))
with right:
    how = controls.pick(PAGE, "probe_how")
shift, changed = explain_cache.cached_word_shift(state.current(), position, head_name, how)
st.metric(
    f"Total variation distance of the distribution “{predicted}” was chosen from",
    f"{shift.total_variation:.3f}",
    help="TV(P, Q) = ½ Σ_w |P(w) − Q(w)|: 0 when the intervention changes nothing, 1 when the "
    "two distributions share no word. Teacher-forced on the translation so far.",
)
before, after = st.columns(2)
for column, name, top in (
    (before, "As trained", shift.before),
    (after, INTERVENTIONS[how], shift.after),
):
    column.caption(name)
    with column:
        ui.table([{"piece": piece, "P": probability} for piece, probability in top], {"P": "%.3f"})
st.caption(f"The whole sentence, re-translated with {head_name} {INTERVENTIONS[how]}:")
st.code(changed.text, language=None, wrap_lines=True)
st.caption(
    "Uniform weights average the values a head may see (Wiegreffe & Pinter 2019); shuffled "
    "weights keep the same numbers in other places (Jain & Wallace 2019). If the word barely "
    "moves, this head's attention pattern is not what the word depends on."
)

st.header("Minimal pairs: change a word, watch the translation")
st.markdown(
    "Change one word and see what moves. In the classic pair, *tired* fits the animal and *wide* "
    f"the street, so {PRONOUN_CHOICE.get(settings.to, ANY_PRONOUN_CHOICE)} for *it*: does the "
    "model follow, and does a head that links *it* to the right noun show why?"
)


st.pills("Bundled pairs", list(PAIRS), key="bundled", on_change=ui.use_pair, args=(PAIRS,))
if "pair" not in st.session_state and "pair" not in st.query_params:
    st.session_state.pair = partner(settings.text)
other = st.text_input(controls.setting(PAGE, "pair").label, key="pair", bind="query-params")
second = state.analysis(other).result
left, right = st.columns(2)
for column, text, translation in ((left, settings.text, result), (right, other, second)):
    column.text(text)
    column.code(translation.text, language=None, wrap_lines=True)
changes = word_changes(result.text.split(), second.text.split())
st.text(
    "The translations differ in: "
    + ("; ".join(f"{old or '∅'} → {new or '∅'}" for old, new in changes) or "nothing")
)
word_difference(result, second, (settings.text, other))
first_words, second_words = result.word_attention.encoder, second.word_attention.encoder
# each occurrence of a word the two sentences share, with its partner: (row in the first, second)
shared = [
    (i, j)
    for i, j in aligned_words(first_words.query_labels, second_words.query_labels)
    if first_words.query_labels[i] == second_words.query_labels[j]
    and not is_special_piece(first_words.query_labels[i])
]
if not shared:
    st.info("The two sentences share no word to follow.")
    st.stop()
shared_words = [first_words.query_labels[i] for i, _ in shared]
if st.session_state.get("follow", 0) not in range(len(shared)):
    del st.session_state["follow"]
followed = controls.selectbox(
    PAGE,
    "follow",
    range(len(shared)),
    index=shared_words.index("it") if "it" in shared_words else 0,
    # the URL holds this text: unique, as words repeat ("the" twice), numbered as in the charts
    format_func=[f"{shared[k][0]}: {shared_words[k]}" for k in range(len(shared))].__getitem__,
)
word = shared_words[followed]
best = rank_heads(first_words, shared[followed][0], skip_self=True)[0]
st.caption(
    f"Encoder layer {shown_of(best.layer)}, head {shown_of(best.head)}: the head whose top key "
    f"for “{word}” is strongest in the first sentence, shown for both."
)
first_caption = ui.sentence_caption(
    kind="encoder", layer=shown_of(best.layer), head=shown_of(best.head), word=word
)
second_caption = replace(first_caption, sentence=other, translation=second.text)
left, right = st.columns(2)
sides = (
    (left, first_words, "first", first_caption),
    (right, second_words, "second", second_caption),
)
for (column, attention, name, caption), row in zip(sides, shared[followed]):
    with column:
        ui.chart(
            focus_bars(
                [f"{i} {key}" for i, key in enumerate(attention.key_labels)],  # "the" twice
                attention.weights[best.layer, best.head, row],
                f"“{word}” in the {name} sentence",
                "attention weight",
            ),
            f"pair-{name}",
            caption=caption,
        )
