"""Tokenization: the SentencePiece pieces the model reads and writes, with their ids."""

import streamlit as st

from app import state, ui
from app.display import SENTENCEPIECE_WORD_START, WORD_START, piece_count
from app.figures.tokens import token_chips
from core.tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID

st.title("Tokenization")
analysis = state.analysis()
result = analysis.result
tokenizer = state.translator().tokenizer
st.markdown(
    f"One SentencePiece vocabulary of {len(tokenizer)} pieces serves English, German and French. "
    f"`{SENTENCEPIECE_WORD_START}` (shown as `{WORD_START}` in the figures and tables) marks a "
    "piece that starts a word; a character "
    "the vocabulary lacks is spelled as its UTF-8 bytes (`<0xF0>`...), so no input is lost to "
    "`<unk>`. The language tag in front tells the model which language to write."
)


def show(title: str, text: str, pieces: list[str], ids: list[int], kinds: list[str], name: str):
    st.subheader(title)
    real = piece_count(kinds)
    left, middle, right = st.columns(3)
    left.metric("words", len(text.split()))
    middle.metric("pieces", real, help="without special tokens")
    right.metric("pieces per word", f"{real / max(len(text.split()), 1):.2f}")
    ui.chart(token_chips(pieces, ids, kinds), name)
    with st.expander("As a table"):
        ui.table(
            [
                {"position": position, "piece": piece, "id": token, "kind": kind}
                for position, (piece, token, kind) in enumerate(zip(pieces, ids, kinds))
            ]
        )


show(
    "Source: the encoder input",
    tokenizer.decode(result.source_ids),
    result.source_tokens,
    result.source_ids,
    analysis.source_kinds,
    "source-pieces",
)
show(
    "Output: what the decoder wrote",
    result.text,
    result.output_tokens,
    result.output_ids,
    analysis.output_kinds,
    "output-pieces",
)
st.caption("The decoder reads <s> followed by its own output so far, one position behind.")

st.subheader("Special tokens")
specials = [
    (PAD_ID, "padding, never attended to"),
    (UNK_ID, "unknown (unused: byte fallback)"),
    (BOS_ID, "begin: the decoder's first input"),
    (EOS_ID, "end of sentence"),
]
specials += [
    (tokenizer.sp.piece_to_id(f"<2{target}>"), f"translate into {target}")
    for target in ("de", "fr")
]
ui.table(
    [
        {"id": token, "piece": tokenizer.sp.id_to_piece(token), "role": role}
        for token, role in specials
    ]
)
