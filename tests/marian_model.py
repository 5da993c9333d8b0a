"""A tiny random MarianMT checkpoint directory, built with transformers' own classes and
SentencePiece models trained on made-up sentences in a second: what `save_pretrained` writes for
an OPUS-MT model (config.json, model.safetensors, source.spm, target.spm, vocab.json), without a
download."""

from __future__ import annotations

import json
from pathlib import Path

import sentencepiece as spm
import torch

from support.tiny_corpus import tiny_corpus

SOURCE_LANGUAGE = "en"
# Random weights. A random post-LN decoder repeats one piece, and says </s> at once or never,
# whatever its weights: </s>'s bias is set where some searches of the tests end by </s> (at the
# first step) and others run out of budget.
MATRICES = ("proj.weight", "fc1.weight", "fc2.weight")  # N(0, 9 / fan_in)
OTHERS_STD = 0.5  # embeddings, biases, LayerNorm gains around 1
EOS_BIAS = 4.0  # on </s>'s logit, the other biases N(0, 0.1)


def train_spm(sentences: list[str], prefix: Path, vocab_size: int) -> Path:
    """A SentencePiece unigram model as OPUS-MT ships them: <unk> 0, <s> 1, </s> 2."""
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_prefix=str(prefix),
        vocab_size=vocab_size,
        character_coverage=1.0,
        num_threads=1,
        minloglevel=2,
    )
    return prefix.with_suffix(".model")


def marian_vocabulary(source: Path, target: Path, targets: tuple[str, ...]) -> dict[str, int]:
    """vocab.json as Marian's converter writes it: </s> 0, <unk> 1, the >>xx<< language tokens of
    a multi-target model, every piece of both SentencePiece models once, <pad> last."""
    pieces = ["</s>", "<unk>", *(f">>{t}<<" for t in targets if len(targets) > 1)]
    for model_file in (source, target):
        sp = spm.SentencePieceProcessor(model_file=str(model_file))
        for i in range(sp.get_piece_size()):
            if not sp.is_control(i) and not sp.is_unknown(i) and sp.id_to_piece(i) not in pieces:
                pieces.append(sp.id_to_piece(i))
    return {piece: i for i, piece in enumerate([*pieces, "<pad>"])}


def build_marian_dir(
    root: Path,
    targets: tuple[str, ...] = ("de", "fr"),
    seed: int = 0,
    activation: str = "swish",
    safetensors: bool = True,
) -> Path:
    """A random MarianMTModel translating English into ``targets`` (more than one: >>xx<< tokens),
    saved with save_pretrained into root/model with its tokenizer files (``safetensors`` False:
    pytorch_model.bin instead). Every weight random,
    final_logits_bias and the LayerNorms included, so that each of them matters."""
    import transformers

    root.mkdir(parents=True, exist_ok=True)
    english = tiny_corpus(300, seed=1)
    others = [line for seed in (2, 3)[: len(targets)] for line in tiny_corpus(300, seed)]
    source = train_spm(english[::3] + english, root / "source", 120)
    target = train_spm(others, root / "target", 150)
    vocabulary = marian_vocabulary(source, target, targets)
    pad = vocabulary["<pad>"]
    config = transformers.MarianConfig(
        vocab_size=len(vocabulary),
        decoder_vocab_size=len(vocabulary),
        d_model=16,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        activation_function=activation,
        scale_embedding=True,
        pad_token_id=pad,
        decoder_start_token_id=pad,
        eos_token_id=0,
        forced_eos_token_id=0,
    )
    torch.manual_seed(seed)
    model = transformers.MarianMTModel(config).eval()
    model.generation_config = transformers.GenerationConfig(  # as OPUS-MT's
        bad_words_ids=[[pad]],
        decoder_start_token_id=pad,
        eos_token_id=0,
        forced_eos_token_id=0,
        pad_token_id=pad,
        num_beams=4,
        max_length=64,
    )
    with torch.no_grad():
        for name, tensor in model.named_parameters():
            if "embed_positions" not in name:  # the sinusoids stay
                fan_in = tensor.size(-1) if name.endswith(MATRICES) else 0
                tensor.normal_(0.0, 3 * fan_in**-0.5 if fan_in else OTHERS_STD)
                if name.endswith("layer_norm.weight"):
                    tensor.add_(1.0)
        model.final_logits_bias.normal_(0.0, 0.1)[0, 0] += EOS_BIAS
    out = root / "model"
    model.save_pretrained(out)
    if not safetensors:  # as older uploads: every name of the state_dict, tied ones included
        (out / "model.safetensors").unlink()
        torch.save(model.state_dict(), out / "pytorch_model.bin")
    for name, file in (("source.spm", source), ("target.spm", target)):
        (out / name).write_bytes(file.read_bytes())
    (out / "vocab.json").write_text(json.dumps(vocabulary, ensure_ascii=False, indent=2))
    tokenizer_config = {"source_lang": SOURCE_LANGUAGE, "target_lang": "+".join(targets)}
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    return out
