"""Tokenization: the SentencePiece pieces the model reads and writes, with their ids."""

import streamlit as st

from app import state, ui
from app.display import PIECE_KINDS, SENTENCEPIECE_WORD_START, WORD_START, piece_count
from app.figures.tokens import token_chips
from core.text import MarianTokenizer

st.title("Tokenization")
analysis = state.analysis()
result = analysis.result
tokenizer = state.translator().tokenizer
config = state.translator().model.config
marian = isinstance(tokenizer, MarianTokenizer)  # a MarianMT model: two SentencePiece models
if marian:
    st.markdown(
        "This MarianMT model cuts text with two SentencePiece models, `source.spm` for the "
        "English and `target.spm` for its output, and `vocab.json` gives the pieces of both their "
        f"ids, {len(tokenizer)} in all. `{SENTENCEPIECE_WORD_START}` (shown as `{WORD_START}`) "
        "marks a piece that starts a word; a piece `vocab.json` lacks becomes `<unk>`. A model "
        "with several target languages reads which one to write from a token such as `>>de<<` "
        "in front."
    )
else:
    st.markdown(
        f"One SentencePiece vocabulary of {len(tokenizer)} pieces serves English, German and "
        f"French. `{SENTENCEPIECE_WORD_START}` (shown as `{WORD_START}` in the figures and "
        "tables) marks a piece that starts a word; a character "
        "the vocabulary lacks is spelled as its UTF-8 bytes (`<0xF0>`...), so no input is lost "
        "to `<unk>`. The language tag in front tells the model which language to write."
    )
    if tokenizer.truecaser:
        st.markdown(
            "Before the English is cut into pieces it is **truecased**: the first word of each "
            "sentence is written as it usually is inside a sentence, so *Attention is all you "
            "need.* is read as *attention is all you need.* A word the vocabulary knows in lower "
            "case then has the same pieces at a sentence start; names such as *John* stay "
            "capitalised. The model writes the capitals of its translation itself."
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
                {"position": position, "piece": piece, "id": token, "kind": PIECE_KINDS[kind]}
                for position, (piece, token, kind) in enumerate(zip(pieces, ids, kinds))
            ]
        )


show(
    "Source: the encoder input",
    tokenizer.decode(result.source_ids),
    result.source_tokens,
    result.source_ids,
    result.source_kinds,
    "source-pieces",
)
show(
    "Output: what the decoder wrote",
    result.text,
    result.output_tokens,
    result.output_ids,
    result.output_kinds,
    "output-pieces",
)
if tokenizer.decode(result.output_ids) != result.text:  # only a split French elision differs
    st.caption(
        "French elision: the decoder writes an elided word apart from the next one (*l' animal*), "
        "so that the next word has the piece it has everywhere else (`▁animal`, not `ani mal`); "
        "the translation joins them again (*l'animal*)."
    )
start = tokenizer.pieces([config.bos_id])[0]  # <s>; a Marian model's <pad>
st.caption(f"The decoder reads {start} followed by its own output so far, one position behind.")

st.subheader("Special tokens")
starts_decoder = config.bos_id == config.pad_id  # Marian's decoder starts from <pad>
pad_role = "padding, never attended to" + ("; the decoder's first input" * starts_decoder)
specials = [
    (config.pad_id, pad_role),
    (tokenizer.unk_id, "unknown" if marian else "unknown (unused: byte fallback)"),
    *([] if starts_decoder else [(config.bos_id, "begin: the decoder's first input")]),
    (config.eos_id, "end of sentence"),
]
specials += [(token, f"translate into {target}") for target, token in tokenizer.tag_ids.items()]
ui.table(
    [{"id": token, "piece": tokenizer.pieces([token])[0], "role": role} for token, role in specials]
)
