"""Export a model of ours to Hugging Face transformers: a folder that ``from_pretrained`` loads.

python -m train.shipping.export_hf --model pretrained/en-de-fr --out exported/en-de-fr

Which transformers class: MarianMTModel is the paper's post-LN Transformer and has no setting for
pre-LN (its layers normalise after the residual sum; the ``normalize_before`` of early Marian
configs is ignored by transformers). A post-LN model of ours is exported as MarianMTModel. A
pre-LN model (the shipped one) is exported as PegasusForConditionalGeneration, which is Marian's
architecture with pre-LN layers and a final LayerNorm on each stack: the same sinusoids, scaled
and tied embeddings, logit bias and attention. Either way the folder has MarianTokenizer's files
(source.spm and target.spm, both our SentencePiece model, and vocab.json with our ids), and our
tags <2de>, <2fr> become Marian's language tokens >>de<<, >>fr<<: the source text starts with one.

Our sinusoids interleave sin and cos (dimensions 2i, 2i+1), transformers' lie sines first: the
exported weights are ours with the model dimensions permuted to match (LayerNorm, attention and
the feed-forward do not depend on the order of the dimensions), so the numbers are the same.
tests/train/test_export_hf.py checks that transformers computes our logits and greedy outputs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import torch

from core.decoding.search import PAPER_DECODING
from core.files.checkpoint import CheckpointError
from core.files.marian import EMBEDDING_NAMES, OUTPUT_BIAS_NAME, hf_names
from core.files.model_dir import TRUECASE_FILE
from core.model.transformer import Transformer
from core.text.elision import JOIN_PATTERN
from core.text.marian_tokenizer import language_token
from core.text.tokenizer import Tokenizer, language_tag
from core.translator import DEFAULT_MODEL, Translator

# Weights whose input (columns) or output (rows) is the model dimension D, by name ending.
READS_D = (".w_q.weight", ".w_k.weight", ".w_v.weight", ".w_1.weight", "embedding.weight")
WRITES_D = (".w_o.weight", ".w_o.bias", ".w_2.weight", ".w_2.bias", "norm.weight", "norm.bias")
# transformers' own names of an activation, where they differ from ours
HF_ACTIVATIONS = {"swish": "swish", "relu": "relu", "gelu": "gelu"}


def halves_order(d_model: int) -> torch.Tensor:
    """The permutation of the model dimensions from interleaved sinusoids to sines-then-cosines:
    new dimension j is old dimension order[j] (i -> 2i for the sines, d/2 + i -> 2i + 1)."""
    return torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])


def in_halves_order(name: str, tensor: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """One weight with its model dimension permuted by ``order`` (see :func:`halves_order`)."""
    if name.endswith(READS_D):
        return tensor[:, order]
    if name.endswith(WRITES_D):
        return tensor[order]
    return tensor


def hf_state_dict(model: Transformer) -> dict[str, torch.Tensor]:
    """Our weights by transformers' names, in its sinusoids' dimension order."""
    config, state, theirs = model.config, model.state_dict(), hf_names(model)
    if config.positional_layout == "interleaved":
        order = halves_order(config.d_model)
        state = {name: in_halves_order(name, tensor, order) for name, tensor in state.items()}
    bias = state.pop("output_bias", torch.zeros(config.vocab_size))
    embedding = state.pop("embedding.weight")
    return {
        **{theirs[name]: tensor for name, tensor in state.items()},
        **dict.fromkeys(EMBEDDING_NAMES, embedding),  # one matrix, tied
        OUTPUT_BIAS_NAME: bias[None],  # (1, V)
    }


def hf_model(model: Transformer):
    """A transformers model computing what ``model`` computes: MarianMTModel for post-LN,
    PegasusForConditionalGeneration for pre-LN (see the module docstring)."""
    import transformers

    config = model.config
    config_class, model_class = (
        (transformers.PegasusConfig, transformers.PegasusForConditionalGeneration)
        if config.norm_first
        else (transformers.MarianConfig, transformers.MarianMTModel)
    )
    hf_config = config_class(
        vocab_size=config.vocab_size,
        d_model=config.d_model,
        encoder_layers=config.n_encoder_layers,
        decoder_layers=config.n_decoder_layers,
        encoder_attention_heads=config.n_heads,
        decoder_attention_heads=config.n_heads,
        encoder_ffn_dim=config.d_ff,
        decoder_ffn_dim=config.d_ff,
        max_position_embeddings=config.max_len,
        activation_function=HF_ACTIVATIONS[config.activation],
        dropout=config.dropout,
        attention_dropout=0.0,  # section 5.4: none on the attention weights
        activation_dropout=0.0,
        scale_embedding=config.scale_embedding,
        pad_token_id=config.pad_id,
        eos_token_id=config.eos_id,
        decoder_start_token_id=config.bos_id,
        forced_eos_token_id=None,  # ours ends where the budget ends, </s> or not
    )
    exported = model_class(hf_config).eval()
    missing, unexpected = exported.load_state_dict(hf_state_dict(model), strict=False)
    computed = [name for name in missing if "embed_positions" in name]  # the sinusoids
    if unexpected or len(computed) != len(missing):
        raise RuntimeError(f"names do not match: missing {missing}, unexpected {unexpected}")
    exported.generation_config = transformers.GenerationConfig(
        decoder_start_token_id=config.bos_id,
        eos_token_id=config.eos_id,
        pad_token_id=config.pad_id,
        bad_words_ids=[[config.pad_id]] if config.suppress_pad else None,
        max_length=config.max_len,
        num_beams=PAPER_DECODING.beam_size,  # as the lab translates; lp differs, see README.md
        early_stopping=True,
        length_penalty=PAPER_DECODING.alpha,
    )
    return exported


def marian_vocab(tokenizer: Tokenizer) -> dict[str, int]:
    """vocab.json: every piece's id, our tags as Marian's >>xx<< tokens."""
    tags = {language_tag(target): language_token(target) for target in tokenizer.languages}
    pieces = tokenizer.pieces(range(len(tokenizer)))
    return {tags.get(piece, piece): i for i, piece in enumerate(pieces)}


def write_tokenizer(tokenizer: Tokenizer, out: Path, max_len: int) -> None:
    """MarianTokenizer's files: source.spm = target.spm = our SentencePiece model, vocab.json,
    tokenizer_config.json; written by transformers' MarianTokenizer itself."""
    import transformers

    vocab_file = out / "vocab.json"
    vocab_file.write_text(json.dumps(marian_vocab(tokenizer), ensure_ascii=False, indent=2))
    hf_tokenizer = transformers.MarianTokenizer(
        source_spm=str(tokenizer.model_file),
        target_spm=str(tokenizer.model_file),
        vocab=str(vocab_file),
        source_lang="en",
        target_lang="+".join(tokenizer.languages),
        model_max_length=max_len,
        bos_token="<s>",  # the decoder's first input: a special token, dropped from the text
    )
    hf_tokenizer.save_pretrained(out)


TRUECASE_NOTE = f"""
## Truecased English

The model learnt from truecased English: the first word of each sentence written as it usually is
inside one ("attention is all you need.", not "Attention is all you need."). MarianTokenizer does
not truecase; `{TRUECASE_FILE}`, Moses's truecase model, is here to do it first, as the lab does
(`core/text/truecase.py`, with sacremoses). Without it the first word of a sentence is read as
typed, a spelling the model saw less often in training.
"""

ELISION_NOTE = f"""
## Elided French

The lab writes an elided French word apart from the next one ("l' animal", "qu' il"), so that the
next word keeps the piece it has everywhere else, and joins them for the reader
(`core/text/elision.py`). MarianTokenizer's `decode` does not join them; do it after, with
`re.sub(r"{JOIN_PATTERN}", r"\\1", text)`.
"""


def model_card(card: dict, architecture: str, languages: dict[str, str]) -> str:
    """README.md of the exported folder: what it is, how to call it, what differs from ours."""
    examples, targets = card.get("examples", [])[:4], list(languages)
    lines = [
        "---",
        "language: [en, " + ", ".join(targets) + "]",
        "tags: [translation, attention-lab]",
        "pipeline_tag: translation",
        "---",
        f"# {card.get('name', 'attention-lab')}: English to {' and '.join(languages.values())}",
        "",
        card.get("description", ""),
        "",
        f"Exported from Attention Lab by `python -m train.shipping.export_hf` as {architecture}.",
        "",
        "## Use",
        "",
        "Start the source with the target language's token: "
        + ", ".join(f"`{language_token(t)}`" for t in targets)
        + " (the lab's `<2de>`-style tags, in Marian's spelling).",
        "",
        "```python",
        "from transformers import AutoModelForSeq2SeqLM, AutoTokenizer",
        "tokenizer = AutoTokenizer.from_pretrained(FOLDER)",
        "model = AutoModelForSeq2SeqLM.from_pretrained(FOLDER)",
        f'batch = tokenizer(["{language_token(targets[0])} A man is riding a bicycle."], '
        'return_tensors="pt")',
        "output = model.generate(**batch, num_beams=1)  # greedy: the lab's greedy output",
        "print(tokenizer.batch_decode(output, skip_special_tokens=True))",
        "```",
        "",
        "Checked with transformers 5, which has no translation pipeline any more (4.x had "
        '`pipeline("translation")`); `generate` as above is what it did.',
        "",
        "## What differs from the lab",
        "",
        "- Greedy search (`num_beams=1`) gives the lab's output token for token.",
        "- Beam search: transformers ranks finished hypotheses by log P / length^alpha, the lab"
        " by GNMT's log P / ((5 + length) / 6)^alpha, so for alpha > 0 an output may differ;"
        " with `length_penalty=0` the two searches coincide.",
        "- The lab normalises text first (NFC, one space for any run of white space); "
        "MarianTokenizer gives the text to SentencePiece as it is.",
        "- The model dimensions are permuted (transformers lays the sinusoids out sines first,"
        " the lab interleaves them); the numbers computed are the same.",
    ]
    if examples:
        lines += ["", "## Examples (the lab's beam search)", ""]
        lines += [f"- {e['source']} → ({e['target']}) {e['translation']}" for e in examples]
    return "\n".join(lines) + "\n"


def export(model_dir: str | Path, out: str | Path) -> Path:
    """Write the transformers folder of the model directory ``model_dir`` to ``out``."""
    translator = Translator.load(model_dir, fast=False)
    tokenizer = translator.tokenizer
    if not isinstance(tokenizer, Tokenizer):
        raise CheckpointError(f"{model_dir}: not a model of ours; it is transformers' already")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    exported = hf_model(translator.model)
    exported.save_pretrained(out)
    write_tokenizer(tokenizer, out, translator.model.config.max_len)
    architecture = type(exported).__name__ + (
        " (pre-LN, which MarianMTModel cannot express)"
        if translator.model.config.norm_first
        else ""
    )
    card_text = model_card(translator.card, architecture, tokenizer.languages)
    if tokenizer.truecaser:  # MarianTokenizer cannot truecase: the folder says how to
        shutil.copyfile(tokenizer.truecaser.model_file, out / TRUECASE_FILE)
        card_text += TRUECASE_NOTE
    if "fr" in tokenizer.languages:
        card_text += ELISION_NOTE
    (out / "README.md").write_text(card_text, encoding="utf-8")
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m train.shipping.export_hf", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--model", default=str(DEFAULT_MODEL), help="model directory (default: %(default)s)"
    )
    parser.add_argument("--out", required=True, help="folder to write")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import transformers  # noqa: F401
    except ImportError:
        print("error: exporting needs transformers (pip install transformers)", file=sys.stderr)
        return 2
    try:
        if Path(args.out).resolve() == Path(args.model).resolve():
            raise CheckpointError(f"--out {args.out}: that is the model directory read (--model)")
        out = export(args.model, args.out)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
