"""The guided story: from pieces to a translation, one short screen per idea, on the user's own
sentence. A clicker's keys step through it (app/lectern.py)."""

import streamlit as st

from app import controls, lectern, state, ui
from app.display import ATTENTION_KINDS
from app.figures.beam_layout import rerank
from app.figures.heads import vote_bars
from app.figures.heatmaps import attention_map, with_masked_cells
from app.figures.positional import positional_heatmap
from app.figures.tokens import token_chips
from app.numbering import shown_of
from app.plain_text import escaped
from app.story import (
    QUESTION_STEP,
    STEPS,
    alignment,
    coreference,
    has_question,
    head_votes,
    jobs,
    largest_masked_weight,
    map_title,
    notice,
    position_name,
    question_word,
    reveal_text,
    shown_head,
    strongest_table,
)
from core import LabelledAttention
from core.inspection import POSITIONAL_THRESHOLD

REVEALED = -1  # an answer revealed by the forward key (a clicker), with no guess of its own


def given_answer(words: LabelledAttention, sentence: str) -> int | None:
    """The guess given for the question on ``sentence`` (REVEALED where a clicker revealed the
    answer without one), None while it is open: the radio's value, which Streamlit sets before
    the page runs, or the answer kept while the story stepped on."""
    word = words.query_labels[question_word(words)]
    picked = st.session_state.get(f"guess-{word}")
    return picked if picked is not None else st.session_state.story_answers.get((sentence, word))


def reveal_answer(words: LabelledAttention, sentence: str) -> None:
    """The forward key on the open question: show the model's answer (no guess of the room's)."""
    word = words.query_labels[question_word(words)]
    st.session_state.story_answers[(sentence, word)] = REVEALED


def reveal(words: LabelledAttention, sentence: str) -> None:
    """The predict-then-reveal question on the word that "it" (or the last word) attends to, and
    what the model's heads really do for it: the strongest heads and their jobs in words, and for
    the classic coreference sentences whether any head links "it" to the word it stands for."""
    query = question_word(words)
    word = words.query_labels[query]
    options = [i for i in range(len(words.key_labels)) if i != query]
    answers = st.session_state.story_answers  # kept while the story steps on
    given = given_answer(words, sentence)
    # a projector, once the audience has answered: the question and the answer on the left, the
    # head's map on the right, as tall as the screen allows: all of it in view
    beside = st.columns([2, 3]) if state.settings().present and given is not None else None
    with beside[0] if beside else st.container():
        guess = st.radio(  # its label and options are markdown: the words are the person's
            f"Predict first: which word will “{escaped(word)}” attend to most, in its strongest "
            "head?",
            options,
            format_func=lambda position: escaped(position_name(words.key_labels, position)),
            index=options.index(given) if given in options else None,
            key=f"guess-{word}",
            horizontal=True,
        )
    if guess is None and given != REVEALED:
        return
    answers[(sentence, word)] = REVEALED if guess is None else guess
    said = escaped(reveal_text(words, query, guess, sentence))
    if beside:
        beside[0].info(said)
        with beside[1]:
            self_attention_map(words, query, sentence)
        return
    st.info(said)
    linked = coreference(words, query, sentence)
    if linked is not None:
        (st.warning if linked.startswith("No head") else st.success)(escaped(linked))
    st.markdown(f"**The strongest heads** for “{escaped(word)}”, each over its whole row:")
    ui.table(strongest_table(words, query))
    st.caption(
        "Role in this sentence: the Heads lab's, over every word's row (a previous-, own- or "
        "next-word head puts its top weight on that neighbour in at least "
        f"{POSITIONAL_THRESHOLD:.0%} of them). The shares add up to the row's 100%. "
        f"{escaped(jobs(words, query))}"
    )
    ui.chart(vote_bars(head_votes(words, query), word), "story-votes")
    self_attention_map(words, query, sentence)


def self_attention_map(words: LabelledAttention, query: int, sentence: str) -> None:
    """The map of the head the reveal shows for the question's word."""
    word = words.query_labels[query]
    shown = shown_head(words, query, sentence)
    title = (
        f"{ATTENTION_KINDS['encoder']}, layer {shown_of(shown.layer)}, "
        f"head {shown_of(shown.head)}: {map_title(words, query, shown, sentence)}"
    )
    caption = ui.sentence_caption(
        kind="encoder", layer=shown_of(shown.layer), head=shown_of(shown.head), word=word
    )
    ui.chart(attention_map(words, shown.layer, shown.head, title), "story-self", caption=caption)


PAGE = "story"  # its settings: app/page_settings.py

st.title("Story: how a Transformer translates your sentence")
analysis = state.analysis()
result = analysis.result
chapters = controls.options(PAGE, "story")
step = controls.pick(PAGE, "story")
back, forward, heading = st.columns([1, 1, 4], vertical_alignment="center")
back.button(
    "◀ Back",
    key="story-back",
    on_click=ui.step_through,
    args=("story", chapters, -1),
    disabled=step == 0,
)
st.session_state.setdefault("story_answers", {})
sentence, words = state.settings().text, result.word_attention.encoder
# at the open question the forward key (a clicker's) reveals the answer before it steps on
asking = step == QUESTION_STEP and has_question(words) and given_answer(words, sentence) is None
forward.button(
    "Reveal ▶" if asking else "Next ▶",
    key="story-next",
    on_click=reveal_answer if asking else ui.step_through,
    args=(words, sentence) if asking else ("story", chapters, 1),
    disabled=step == len(STEPS) - 1,
)
lectern.keys("story-back", "story-next")
if asking:  # in a deck too: the clicker reveals the answer before the deck's next view
    lectern.forward_first("story-next")
st.caption(lectern.HINT)

heading.header(f"{step + 1} · {STEPS[step].title}")  # beside the buttons: room for the figure
st.markdown(f"**What to notice.** {notice(step, state.translator().tokenizer)}")
if step == 0:
    ui.chart(
        token_chips(result.source_tokens, result.source_ids, result.source_kinds),
        "story-pieces",
    )
elif step == 1:
    ui.chart(
        positional_heatmap(
            result.embeddings.source_position,
            result.source_tokens,
            "Positional encoding added to each source piece",
            layout=state.translator().model.config.positional_layout,
        ),
        "story-positions",
    )
elif step == QUESTION_STEP:
    if not has_question(words):
        st.info(
            "Your sentence has one word, so there is no other word to guess at: try a longer "
            "sentence, such as the first classic example."
        )
    else:
        reveal(words, sentence)
elif step == 3:
    decoder = result.attention.decoder
    title = f"{ATTENTION_KINDS['decoder']}, last layer, average of the heads; grey: masked"
    last_layer = decoder.weights.shape[0] - 1
    caption = ui.sentence_caption(kind="decoder", layer=shown_of(last_layer), head="avg")
    figure = attention_map(decoder, last_layer, None, title)
    ui.chart(with_masked_cells(figure, decoder.allowed), "story-mask", caption=caption)
    st.caption(ui.decoder_rows(decoder))
    st.metric(
        "Largest weight above the diagonal, any layer and head",
        f"{largest_masked_weight(decoder):.1f}",
        help="Exactly 0: softmax of -inf is 0.",
    )
elif step == 4:
    cross = result.word_attention.cross
    title = f"{ATTENTION_KINDS['cross']} in words, last layer, average of the heads"
    last_layer = cross.weights.shape[0] - 1
    caption = ui.sentence_caption(kind="cross", layer=shown_of(last_layer), head="avg")
    ui.chart(attention_map(cross, last_layer, None, title), "story-cross", caption=caption)
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
    # a table of text, not a canvas: on a projector it grows with the rest of the page's text
    st.table(
        [
            {
                "rank": row["rank"],
                "finished hypothesis": row["hypothesis"],
                "log P (nats)": f"{row['log P']:.3f}",
                "ranked by log P / lp": f"{row['normalised']:.3f}",
                "chosen": "✓" if row["chosen"] else "",
            }
            for row in ranked
        ],
        hide_index=True,
    )
    st.text(f"Chosen: {result.text}")
st.page_link(STEPS[step].page, label=f"The full page on {STEPS[step].title.lower()}", icon="➡️")
