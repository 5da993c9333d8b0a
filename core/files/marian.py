"""A MarianMT checkpoint as the lab's Transformer: read, weight by weight, without transformers.

Helsinki-NLP's OPUS-MT models are the paper's Transformer trained with Marian; transformers keeps
them as MarianMTModel, and ``save_pretrained`` writes a directory of::

    config.json                   the architecture (model_type "marian")
    model.safetensors             the weights (older uploads: pytorch_model.bin)
    source.spm, target.spm        SentencePiece models cutting source and target text into pieces
    vocab.json                    every piece's id (core/text/marian_tokenizer.py)
    generation_config.json        decoding settings: Marian never outputs <pad>
    tokenizer_config.json         source_lang, target_lang (the target of a one-target model)

What Marian does beyond the paper becomes configuration of
:class:`core.model.config.ModelConfig`, whose defaults stay the paper's: the feed-forward's
activation is swish (``activation``), the logits have a bias (``output_bias``, final_logits_bias),
the sinusoids lie sines first, cosines after
(``positional_layout="halves"``), the decoder starts from <pad> and </s> is id 0 (``bos_id``,
``eos_id``), and decoding never outputs <pad> (``suppress_pad``). Like the paper, Marian is
post-LN, scales the embeddings by sqrt(d_model) and shares one embedding matrix between encoder,
decoder and output. A pre-LN directory of the same files (model_type "pegasus": pre-LN layers
with a final LayerNorm on each stack, otherwise Marian's layout) is read too: it is what
train/shipping/export_hf.py writes for a pre-LN model of ours.

A model with two vocabularies of their own ids (``share_encoder_decoder_embeddings: false``),
untied output weights, or encoder and decoder of different widths is refused with a
CheckpointError that says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from core.files.checkpoint import CheckpointError, checked_model_config, safe_load
from core.model.config import ModelConfig
from core.model.transformer import (
    DecoderLayer,
    EncoderLayer,
    FeedForward,
    MultiHeadAttention,
    Residual,
    Transformer,
)
from core.text.marian_tokenizer import MarianTokenizer

CONFIG_FILE = "config.json"
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")  # the first present is read
SOURCE_SPM, TARGET_SPM, VOCAB_FILE = "source.spm", "target.spm", "vocab.json"
GENERATION_CONFIG_FILE = "generation_config.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
REQUIRED_FILES = (CONFIG_FILE, SOURCE_SPM, TARGET_SPM, VOCAB_FILE)
# model_type -> pre-LN: MarianMTModel is post-LN as the paper; Pegasus the same model, pre-LN
MODEL_TYPES = {"marian": False, "pegasus": True}
ACTIVATIONS = {"relu": "relu", "swish": "swish", "silu": "swish", "gelu": "gelu"}

# transformers' name of each attribute of our modules, by the module's class ("": that level has
# no name of its own there); hf_names walks a model's modules with it.
HF_ATTRIBUTES = {
    Transformer: {
        "encoder_layers": "model.encoder.layers",
        "decoder_layers": "model.decoder.layers",
        "encoder_norm": "model.encoder.layer_norm",
        "decoder_norm": "model.decoder.layer_norm",
    },
    EncoderLayer: {
        "feed_forward": "",
        "residual_attn": "self_attn_layer_norm",
        "residual_ff": "final_layer_norm",
    },
    DecoderLayer: {
        "cross_attn": "encoder_attn",
        "feed_forward": "",
        "residual_self": "self_attn_layer_norm",
        "residual_cross": "encoder_attn_layer_norm",
        "residual_ff": "final_layer_norm",
    },
    MultiHeadAttention: {"w_q": "q_proj", "w_k": "k_proj", "w_v": "v_proj", "w_o": "out_proj"},
    FeedForward: {"w_1": "fc1", "w_2": "fc2"},
    Residual: {"norm": ""},
}
# The one embedding matrix (tied, section 3.4) under each name a checkpoint may store it.
EMBEDDING_NAMES = (
    "model.shared.weight",
    "model.encoder.embed_tokens.weight",
    "model.decoder.embed_tokens.weight",
    "lm_head.weight",
)
OUTPUT_BIAS_NAME = "final_logits_bias"  # (1, V)


def hf_names(model: Transformer) -> dict[str, str]:
    """Each name of ``model``'s state_dict -> the name transformers gives that weight (the
    embedding and the output bias aside: see EMBEDDING_NAMES, OUTPUT_BIAS_NAME), found by walking
    the modules with HF_ATTRIBUTES."""
    names = {}

    def walk(module: torch.nn.Module, ours: list[str], theirs: list[str]) -> None:
        for name, _ in module.named_parameters(recurse=False):
            names[".".join([*ours, name])] = ".".join(part for part in [*theirs, name] if part)
        renames = HF_ATTRIBUTES.get(type(module), {})
        for name, child in module.named_children():
            walk(child, [*ours, name], [*theirs, renames.get(name, name)])

    walk(model, [], [])
    return names


def is_marian_dir(path: Path) -> bool:
    return not missing_files(path)


def missing_files(path: Path) -> list[str]:
    """What ``path`` lacks to be a MarianMT directory: REQUIRED_FILES and one of WEIGHT_FILES."""
    missing = [name for name in REQUIRED_FILES if not (path / name).is_file()]
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        missing.append(" or ".join(WEIGHT_FILES))
    return missing


def read_json(path: Path, default: dict | None = None) -> dict:
    """A JSON object file; ``default`` when it does not exist (None: it must)."""
    if default is not None and not path.is_file():
        return default
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:
        raise CheckpointError(f"{path}: not a readable JSON file ({error})") from error
    if not isinstance(value, dict):
        raise CheckpointError(f"{path}: a {type(value).__name__}, not a JSON object")
    return value


def model_config(path: Path) -> ModelConfig:
    """config.json (and generation_config.json) as a checked :class:`ModelConfig`."""
    hf = read_json(path / CONFIG_FILE)
    generation = {**hf, **read_json(path / GENERATION_CONFIG_FILE, {})}
    model_type = hf.get("model_type")
    if model_type not in MODEL_TYPES:
        raise CheckpointError(
            f"{path / CONFIG_FILE}: model_type {model_type!r}, expected one of {list(MODEL_TYPES)}"
        )
    refuse_unsupported(path / CONFIG_FILE, hf)
    pad = hf.get("pad_token_id")
    values = {
        "vocab_size": hf.get("vocab_size"),
        "d_model": hf.get("d_model"),
        "n_heads": hf.get("encoder_attention_heads"),
        "n_encoder_layers": hf.get("encoder_layers"),
        "n_decoder_layers": hf.get("decoder_layers"),
        "d_ff": hf.get("encoder_ffn_dim"),
        "dropout": hf.get("dropout", 0.1),
        "max_len": hf.get("max_position_embeddings"),
        "pad_id": pad,
        "norm_first": MODEL_TYPES[model_type],
        "bos_id": hf.get("decoder_start_token_id", pad),
        "eos_id": hf.get("eos_token_id"),
        "suppress_pad": [pad] in (generation.get("bad_words_ids") or []),
        "activation": ACTIVATIONS.get(hf.get("activation_function"), hf.get("activation_function")),
        "scale_embedding": hf.get("scale_embedding", False),
        "positional_layout": "halves",
        "output_bias": True,
    }
    return checked_model_config(path / CONFIG_FILE, values)


def refuse_unsupported(path: Path, hf: dict) -> None:
    """A CheckpointError for what a MarianMT model may be and this lab's model cannot."""
    differences = {
        "separate vocabularies with ids of their own (share_encoder_decoder_embeddings false)": (
            hf.get("share_encoder_decoder_embeddings", True) is not True
            or hf.get("decoder_vocab_size") not in (None, hf.get("vocab_size"))
        ),
        "an output layer not tied to the embedding (tie_word_embeddings false)": (
            hf.get("tie_word_embeddings", True) is not True
        ),
        "encoder and decoder of different widths": any(
            hf.get(f"encoder_{name}") != hf.get(f"decoder_{name}")
            for name in ("attention_heads", "ffn_dim")
        ),
    }
    for difference, present in differences.items():
        if present:
            raise CheckpointError(f"{path}: a model with {difference}; the lab reads tied ones")


def read_weights(path: Path) -> dict[str, torch.Tensor]:
    """The checkpoint's tensors by name, as float32: model.safetensors through the safetensors
    package, or pytorch_model.bin with torch.load(weights_only=True), which runs no code."""
    file = next(path / name for name in WEIGHT_FILES if (path / name).is_file())
    if file.suffix == ".bin":
        weights = safe_load(file)
    else:
        try:
            from safetensors.torch import load_file
        except ImportError as error:
            raise CheckpointError(
                f"{file}: reading safetensors needs the safetensors package "
                "(pip install safetensors)"
            ) from error
        try:
            weights = load_file(file)
        except Exception as error:  # a truncated or foreign file: safetensors' own errors
            raise CheckpointError(f"{file}: not a readable safetensors file ({error})") from error
    return {name: tensor.float() for name, tensor in weights.items() if torch.is_tensor(tensor)}


def embedding_matrix(path: Path, weights: dict[str, torch.Tensor]) -> torch.Tensor:
    """The shared embedding E, (V, D), under whichever names the checkpoint stores it; all of
    them must hold the same matrix (the output layer tied to the embedding)."""
    stored = [weights[name] for name in EMBEDDING_NAMES if name in weights]
    if not stored:
        raise CheckpointError(f"{path}: no embedding matrix ({' or '.join(EMBEDDING_NAMES)})")
    if any(other.shape != stored[0].shape or not torch.equal(other, stored[0]) for other in stored):
        raise CheckpointError(
            f"{path}: embeddings and output layer differ; the lab reads tied ones"
        )
    return stored[0]


def converted_state_dict(
    path: Path, model: Transformer, weights: dict[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """``weights`` by the names of ``model``'s state_dict (sinusoids are computed, not read)."""
    state, theirs = {}, hf_names(model)
    for name in model.state_dict():
        if name == "embedding.weight":
            state[name] = embedding_matrix(path, weights)
        elif name == "output_bias":
            bias = weights.get(OUTPUT_BIAS_NAME, torch.zeros(1, model.config.vocab_size))
            state[name] = bias.reshape(-1)
        elif theirs[name] in weights:
            state[name] = weights[theirs[name]]
        else:
            raise CheckpointError(f"{path}: no weight {theirs[name]} (our {name})")
    return state


def load_marian_model(path: str | Path, device: str | torch.device = "cpu") -> Transformer:
    """The MarianMT (or pre-LN Pegasus) checkpoint in directory ``path`` as a Transformer in
    eval mode, computing what transformers' MarianMTModel computes."""
    path = Path(path)
    model = Transformer(model_config(path))
    try:
        model.load_state_dict(converted_state_dict(path, model, read_weights(path)))
    except RuntimeError as error:  # a tensor's shape does not fit the config
        raise CheckpointError(f"{path}: weights do not fit config.json ({error})") from error
    return model.to(device).eval()


_OPUS_NAME = re.compile(r"opus-mt-(?:tc-big-)?([a-zA-Z]+)-([a-zA-Z]+)$")


def target_languages(path: Path) -> list[str]:
    """The target language of a one-target model: tokenizer_config.json's target_lang, else the
    OPUS-MT name (opus-mt-en-de), else "target"."""
    configured = read_json(path / TOKENIZER_CONFIG_FILE, {}).get("target_lang")
    if isinstance(configured, str) and configured:
        return [configured]
    named = _OPUS_NAME.search(path.resolve().name)
    return [named[2]] if named else ["target"]


def load_marian_tokenizer(path: str | Path, vocab_size: int) -> MarianTokenizer:
    """source.spm, target.spm and vocab.json as a :class:`MarianTokenizer`, checked against the
    model's ``vocab_size``."""
    path = Path(path)
    vocab = read_json(path / VOCAB_FILE)
    if not all(isinstance(i, int) and 0 <= i < vocab_size for i in vocab.values()):
        raise CheckpointError(f"{path / VOCAB_FILE}: ids outside the model's {vocab_size} pieces")
    missing = [p for p in ("<pad>", "<unk>", "</s>") if p not in vocab]
    if missing:
        raise CheckpointError(f"{path / VOCAB_FILE}: no {', '.join(missing)}")
    try:
        return MarianTokenizer(
            path / SOURCE_SPM, path / TARGET_SPM, vocab, vocab_size, target_languages(path)
        )
    except (OSError, RuntimeError) as error:
        raise CheckpointError(f"{path}: not usable SentencePiece models ({error})") from error


def marian_card(path: Path, config: ModelConfig, languages: list[str]) -> dict:
    """What the lab knows of a foreign model, as a model card."""
    source = read_json(path / TOKENIZER_CONFIG_FILE, {}).get("source_lang")
    return {
        "name": path.resolve().name,
        "description": (
            f"A MarianMT model read from {path.resolve()} (transformers' save_pretrained "
            "format), not trained with Attention Lab: no training log or snapshots."
        ),
        "config": {k: v for k, v in vars(config).items()},
        "languages": {"source": source or "?", "targets": languages},
    }


def beyond_the_paper(config: ModelConfig) -> list[str]:
    """What a model computes beyond the paper's Transformer, in words ([] for the paper's)."""
    paper = ModelConfig()
    notes = {
        "activation": f"{config.activation} in the feed-forward layers, not ReLU",
        "scale_embedding": "embeddings not scaled by sqrt(d_model)",
        "positional_layout": "sinusoids laid out sines first, then cosines",
        "output_bias": "a learned bias on the logits",
        "suppress_pad": "decoding never outputs <pad>",
    }
    differ = [note for name, note in notes.items() if getattr(config, name) != getattr(paper, name)]
    if config.bos_id == config.pad_id:
        differ.append("the decoder starts from <pad>")
    return differ
