"""The guided story: from pieces to a translation, one short screen per idea, on the user's own
sentence. ← and → step through it (for use from the lectern)."""

from functools import partial

import streamlit as st

from app import state, ui
from app.display import ATTENTION_KINDS
from app.figures.beam_layout import rerank
from app.figures.heads import vote_bars
from app.figures.heatmaps import attention_map
from app.figures.positional import positional_heatmap
from app.figures.tokens import token_chips
from app.story import (
    STEPS,
    alignment,
    answer,
    head_for,
    head_votes,
    largest_masked_weight,
    position_name,
    question_word,
)

st.title("Story: how a Transformer translates your sentence")
analysis = state.analysis()
result = analysis.result
chapters = range(len(STEPS))
numbered = [f"{number} · {chapter.title}" for number, chapter in enumerate(STEPS, start=1)]
step = ui.pick("Step", chapters, "story", 0, numbered.__getitem__)
back, forward, _ = st.columns([1, 1, 4])
back.button(
    "◀ Back",
    shortcut="Left",
    on_click=ui.step_through,
    args=("story", chapters, -1),
    disabled=step == 0,
)
forward.button(
    "Next ▶",
    shortcut="Right",
    on_click=ui.step_through,
    args=("story", chapters, 1),
    disabled=step == len(STEPS) - 1,
)
st.caption("Keys ← and → step through the story.")

st.header(f"{step + 1} · {STEPS[step].title}")
st.markdown(f"**What to notice.** {STEPS[step].notice}")
if step == 0:
    ui.chart(
        token_chips(result.source_tokens, result.source_ids, analysis.source_kinds),
        "story-pieces",
    )
elif step == 1:
    ui.chart(
        positional_heatmap(
            result.embeddings.source_position,
            result.source_tokens,
            "Positional encoding added to each source piece",
        ),
        "story-positions",
    )
elif step == 2:
    words = result.word_attention.encoder
    query = question_word(words)
    word = words.query_labels[query]
    guess = st.radio(
        f"Predict first: which word will “{word}” attend to most, in its strongest head?",
        [i for i in range(len(words.key_labels)) if i != query],
        format_func=partial(position_name, words.key_labels),
        index=None,
        key=f"guess-{word}",
        horizontal=True,
    )
    if guess is not None:
        strongest, yours = answer(words, query), head_for(words, query, guess)
        verdict = "Right" if guess == strongest.key else "Not quite"
        strongest_word, your_word = (
            position_name(words.key_labels, key) for key in (strongest.key, guess)
        )
        st.info(
            f"{verdict}: its strongest head, encoder layer {strongest.layer + 1}, head "
            f"{strongest.head + 1}, puts {strongest.weight:.0%} of “{word}”'s attention on "
            f"“{strongest_word}”. The head that looks most at your “{your_word}” is "
            f"layer {yours.layer + 1}, head {yours.head + 1}, with {yours.weight:.0%}."
        )
        ui.chart(vote_bars(head_votes(words, query), word), "story-votes")
        title = f"{ATTENTION_KINDS['encoder']}, layer {yours.layer + 1}, head {yours.head + 1}"
        ui.chart(attention_map(words, yours.layer, yours.head, title), "story-self")
elif step == 3:
    decoder = result.attention.decoder
    title = f"{ATTENTION_KINDS['decoder']}, last layer, average of the heads"
    last_layer = decoder.weights.shape[0] - 1
    ui.chart(attention_map(decoder, last_layer, None, title), "story-mask")
    st.caption(ui.decoder_rows(decoder))
    st.metric(
        "Largest weight above the diagonal, any layer and head",
        f"{largest_masked_weight(decoder):.1f}",
        help="Exactly 0: softmax of -inf is 0.",
    )
elif step == 4:
    cross = result.word_attention.cross
    title = f"{ATTENTION_KINDS['cross']} in words, last layer, average of the heads"
    ui.chart(attention_map(cross, cross.weights.shape[0] - 1, None, title), "story-cross")
    ui.table(
        [
            {"translation row": row, "looks most at": source, "weight": weight}
            for row, source, weight in alignment(cross)
        ],
        {"weight": "%.2f"},
    )
else:
    settings = state.settings()
    if settings.beam == 1:
        st.info(
            "Beam size 1 is greedy search: one hypothesis, the likeliest piece at every step. "
            "Raise the beam size in the sidebar to watch beam search keep several."
        )
    ranked = rerank(result.finished, settings.alpha, state.translator().tokenizer.decode)
    ui.table(
        [
            {
                "rank": row["rank"],
                "finished hypothesis": row["hypothesis"],
                "log P": row["log P"],
                "ranked by log P / lp": row["normalised"],
                "chosen": "✓" if row["chosen"] else "",
            }
            for row in ranked
        ],
        {"log P": "%.3f", "ranked by log P / lp": "%.3f"},
    )
    st.text(f"Chosen: {result.text}")
st.page_link(STEPS[step].page, label=f"The full page on {STEPS[step].title.lower()}", icon="➡️")
