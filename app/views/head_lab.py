"""Heads lab: find the head you want, see what every head does, and switch heads off live."""

import numpy as np
import streamlit as st

from app import controls, heads_cache, presentation, state, ui
from app.analysis import importance_estimate
from app.display import ATTENTION_KINDS
from app.figures.heads import (
    attention_lines,
    focus_bars,
    head_dashboard,
    pruning_curve,
    token_log_prob_changes,
)
from app.figures.heatmaps import attention_map
from app.numbering import shown_of
from app.word_choice import first_word, follow
from core.inspection import (
    ALIGNMENT_THRESHOLD,
    BROAD_ENTROPY,
    INTERVENTIONS,
    POSITIONAL_THRESHOLD,
    SINK_THRESHOLD,
    head_roles,
    rank_heads,
    role_attention,
    statistics_per_head,
    what_to_notice,
    word_changes,
)

TOP_HEADS = 10
# the statistics in a chart title, which fits one line after the longest kind's name (see
# app/slides.py TITLE_CHARS)
STATISTIC_TITLES = {
    "confidence": "confidence",
    "entropy": "entropy (nats)",
    "sink_share": "share on sinks",
    "mean_distance": "mean distance |i − j|",
    "same_share": "top key at the same position",
    "previous_share": "top key one position back",
    "next_share": "top key one position ahead",
    "diagonality": "diagonality",
    "monotonicity": "monotonicity (Spearman's ρ)",
}
# the statistics on a colour bar, short enough for its title
SCALE_NAMES = {
    "confidence": "confidence",
    "entropy": "entropy",
    "sink_share": "on sinks",
    "mean_distance": "distance",
    "same_share": "own word",
    "previous_share": "previous word",
    "next_share": "next word",
    "diagonality": "diagonality",
    "monotonicity": "ρ",
}
THRESHOLDS = (
    f"Roles, first match wins: **sink** if ≥ {SINK_THRESHOLD:.0%} of the weight is on sinks and "
    f"the head is not broad; **previous word**, **own word** or **next word** (positional) if ≥ "
    f"{POSITIONAL_THRESHOLD:.0%} of rows put their top weight on that neighbour, the share in the "
    "cell (Voita et al. 2019 asked 90% of a larger model; in words, over the survey's sample, the "
    "shipped model's two neighbour heads score 78% and 79%, every other head at most 64%); "
    f"**alignment-like** if diagonality ≥ {ALIGNMENT_THRESHOLD}; **broad** if normalised entropy "
    f"≥ {BROAD_ENTROPY}; else **other**. Read in words, as the Story reads a head (the decoder in "
    "pieces: its words do not pair a query with its own key)."
)
IMPORTANCE = (
    "Each head switched off alone, the translation kept (teacher forcing): log P of the "
    "translation drops by the number in the head's cell (nats; below 0, the head was in the way). "
    "Michel et al. 2019."
)


PAGE = "head_lab"  # its settings: app/page_settings.py

st.title("Heads lab: what each head does")
analysis = state.analysis()
result = analysis.result
settings = state.settings()
kind = controls.pick(PAGE, "kind")
# presentation mode with heads switched off (a deck's step): what they change is the view, drawn
# here, above the rest, so that the projector shows it without scrolling
lead = st.container()

st.header("Find the head: focus on one word")
words = getattr(result.word_attention, kind)
default = first_word(words.query_labels)
lost = [follow("focus", words.query_labels, default), follow("at_word", words.key_labels, None)]
query = controls.selectbox(
    PAGE,
    "focus",
    range(len(words.query_labels)),
    index=0 if "focus" in st.session_state else default,  # see follow()
    format_func=words.query_labels.__getitem__,
)
key = controls.selectbox(
    PAGE,
    "at_word",
    [None, *range(len(words.key_labels))],
    format_func={None: "its top word, whichever it is", **dict(enumerate(words.key_labels))}.get,
)
named = ATTENTION_KINDS[kind].lower()
if lost[0] is not None:
    st.text(f"No “{lost[0]}” attends in {named}: showing “{words.query_labels[default]}”.")
if lost[1] is not None:
    st.text(f"No “{lost[1]}” to look at in {named}: showing each head's top word.")
ranking = rank_heads(words, query, key, skip_self=kind != "cross" and key is None)
label = words.query_labels[query]
top = ranking[:TOP_HEADS]
ui.chart(
    focus_bars(
        [
            f"L{shown_of(found.layer)} H{shown_of(found.head)} on “{found.key_label}”"
            for found in top
        ],
        [found.weight for found in top],
        f"Where “{label}” looks: the {TOP_HEADS} strongest heads",
        "weight on the top key" if key is None else f"weight on “{words.key_labels[key]}”",
    ),
    "focus",
    caption=ui.sentence_caption(kind=kind, word=label),
)
best = ranking[0]
best_caption = ui.sentence_caption(
    kind=kind, layer=shown_of(best.layer), head=shown_of(best.head), word=label
)
title = (
    f"{ATTENTION_KINDS[kind]}, layer {shown_of(best.layer)}, head {shown_of(best.head)} "
    "(the top head)"
)
ui.chart(
    attention_lines(words, best.layer, best.head, query, f"“{label}” in the top head"),
    "focus-lines",
    caption=best_caption,
)
st.caption(
    "BertViz's head view: a line from the word to every word it attends to in the top head, as "
    "thick and as dark as the weight."
)
ui.chart(attention_map(words, best.layer, best.head, title), "focus-head", caption=best_caption)
ui.attention_download(words, best_caption, f"{kind}-words")
if kind != "cross":
    st.caption("A word's weight on itself is left out of the ranking.")

st.header("Head dashboard")
survey, current = heads_cache.head_survey()
over = "sentence"
if survey is not None:
    sample = f"{survey.sentences} validation sentences"
    over = ui.pick(
        "Computed on",
        ["sentence", "sample"],
        "over",
        format_func={
            "sentence": "your sentence",
            "sample": sample,
        }.get,
        help="One sentence is a small sample; the validation sample gives stable figures.",
    )
if over == "sample":
    statistics = survey.statistics[kind]
else:  # as the Story and the survey read a head
    read = role_attention(result.attention, result.word_attention, kind)
    statistics = statistics_per_head(read.weights, read.key_labels, self_attention=kind != "cross")
available = [name for name in controls.options(PAGE, "stat") if name in statistics]
statistic = controls.pick(PAGE, "stat", among=available)
roles = head_roles(statistics)
ui.chart(
    head_dashboard(
        statistics[statistic],
        [role.label for role in roles],
        f"{ATTENTION_KINDS[kind]}: {STATISTIC_TITLES[statistic]}",
        SCALE_NAMES[statistic],
    ),
    f"heads-{kind}-{statistic}-{over}",
    caption=ui.sentence_caption(kind=kind, computed_on=sample if over == "sample" else None),
)
st.caption(THRESHOLDS)
st.markdown(f"**What to notice.** {what_to_notice(roles)}")
if over == "sample":
    st.caption(f"Mean over the sample: {survey.sample}")
else:
    st.caption(
        "Computed on your sentence, word by word (the decoder piece by piece, as its words do "
        "not pair query and key), as the Story reads a head: one sentence is a small sample."
    )
if survey is not None and not current:
    st.warning(
        "The head survey was computed on an earlier model: run "
        "`python -m train.shipping.head_survey` again to bring it up to date."
    )

st.header("Which heads matter for this sentence")
wanted = (state.current(), kind)
asked = ui.on_demand(
    f"Compute head importance for your sentence ({importance_estimate(analysis)})",
    "importance",
    wanted,
    done=heads_cache.cached_importance.stored(*wanted) is not None,
    help=f"Switches each of the {len(roles)} heads off alone and scores the translation again, "
    "in one batched pass. Once computed, it is kept for everyone on this server.",
)
importance, computed_on = None, None
if asked:
    importance = heads_cache.cached_importance(*wanted)
elif survey is not None:
    importance, computed_on = survey.importance[kind], sample
    st.caption(f"Until you ask for your sentence's own, the map below is the mean over {sample}.")
if importance is not None:
    ui.chart(
        head_dashboard(
            importance,
            [role.label for role in roles],
            f"{ATTENTION_KINDS[kind]}: importance, drop in log P",
            "importance",
        ),
        f"importance-{kind}-{'sentence' if computed_on is None else 'sample'}",
        caption=ui.sentence_caption(kind=kind, computed_on=computed_on),
    )
    most = np.unravel_index(importance.argmax(), importance.shape)
    st.caption(
        f"{IMPORTANCE} Here the most important is layer {shown_of(most[0])}, "
        f"head {shown_of(most[1])} ({importance[most]:.2f} nats)."
    )
else:
    st.caption(IMPORTANCE)

if survey is not None:
    st.header(f"Does this model need all its {len(survey.pruning_order)} heads? The pruning curve")
    heads = [point.heads_off for point in survey.pruning]
    ui.chart(
        pruning_curve(
            heads,
            [point.bleu for point in survey.pruning],
            [point.chrf for point in survey.pruning],
            len(survey.pruning_order),
            f"{survey.sentences} validation sentences, beam {survey.beam_size}",
        ),
        "pruning-curve",
        caption=ui.sentence_caption(computed_on=sample),
    )
    st.caption(
        "Heads ranked by their mean importance over the sample and switched off cumulatively, "
        "least important first (Michel et al. 2019, “Are Sixteen Heads Really Better than "
        "One?”). sacreBLEU "
        f"`{survey.bleu_signature}`, chrF `{survey.chrf_signature}`."
    )
else:
    st.caption(
        "No head survey beside this model: "
        "`python -m train.shipping.head_survey --model <its folder>` computes the statistics "
        "over a validation sample and the pruning curve."
    )

switched = settings.present and bool(st.session_state.get("off"))
with lead if switched else st.container():
    st.header("Switch heads off, or change their attention")
    how = controls.pick(PAGE, "how")
    chosen = controls.multiselect(PAGE, "off", placeholder="e.g. enc L5 H5")
    if chosen:
        outcome = heads_cache.cached_intervention(state.current(), tuple(sorted(chosen)), how)
        changes = word_changes(result.text.split(), outcome.changed.text.split())
        changed = f"{len(chosen)} head(s) {INTERVENTIONS[how]}"
        if not changes:
            changed += ": the translation did not change"
        left, right = st.columns(2)
        for column, name, label, text in [
            (left, "normal", "All heads as trained", result.text),
            (right, "changed", changed, outcome.changed.text),
        ]:
            with column:
                # kept in presentation mode, which hides captions: the two boxes are named
                with st.container(key=f"{presentation.KEPT}{name}-label"):
                    st.caption(label)
                st.code(text, language=None, wrap_lines=True)
        if switched:  # the two translations say what changed; the chart right under them
            st.html(presentation.controls_above("intervention-tokens", 2))
        elif changes:
            ui.table([{"before": before, "after": after} for before, after in changes])
        else:
            st.success("The translation did not change.")
        ui.chart(
            token_log_prob_changes(
                result.output_tokens,
                outcome.normal_log_probs,
                outcome.changed_log_probs,
                "What each piece of the normal translation loses (log P, teacher-forced)",
            ),
            "intervention-tokens",
            caption=ui.sentence_caption(
                heads_changed=tuple(sorted(chosen)), change=INTERVENTIONS[how]
            ),
        )
        after, before = sum(outcome.changed_log_probs), sum(outcome.normal_log_probs)
        st.metric(
            "log P(the normal translation)",
            f"{after:.2f}",
            delta=f"{after - before:+.2f} after the change",
            help="How likely the changed model finds the translation of the full model.",
        )
