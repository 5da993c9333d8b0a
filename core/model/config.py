"""The model's hyper-parameters: by default the paper's base model (Table 3), and the few choices
beyond the paper that models trained elsewhere need (MarianMT, read by core/files/marian.py)."""

from __future__ import annotations

from dataclasses import dataclass

import torch.nn.functional as F

# the feed-forward's nonlinearity: the paper's max(0, x), or swish x * sigmoid(x) (Marian)
ACTIVATIONS = {"relu": F.relu, "swish": F.silu, "gelu": F.gelu}
# where core.model.transformer.positional_encoding puts the sines and the cosines
POSITIONAL_LAYOUTS = ("interleaved", "halves")


@dataclass
class ModelConfig:
    """Hyper-parameters of the model. The defaults are the paper's base model (Table 3)."""

    vocab_size: int = 8000
    d_model: int = 512
    n_heads: int = 8
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 256
    pad_id: int = 0
    # False: the paper's post-LN, LayerNorm(x + Sublayer(x)). True: pre-LN, x + Sublayer(LN(x)).
    norm_first: bool = False
    # Beyond the paper, for models trained elsewhere (core/files/marian.py); the defaults are the
    # paper's.
    bos_id: int = 2  # the decoder's first input (Marian's: pad)
    eos_id: int = 3
    suppress_pad: bool = False  # decoding never outputs pad (Marian's generation rule)
    activation: str = "relu"  # the feed-forward's max(0, .) (section 3.3), or "swish", "gelu"
    scale_embedding: bool = True  # Embedding(x) * sqrt(D) (section 3.4), or Embedding(x)
    positional_layout: str = "interleaved"  # see positional_encoding
    output_bias: bool = False  # logits x E^T + b, with a learned b (Marian's final_logits_bias)

    def __post_init__(self) -> None:
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.d_model % 2:
            raise ValueError(f"d_model={self.d_model} must be even for the sinusoidal encoding")
        for name, value, choices in (
            ("activation", self.activation, ACTIVATIONS),
            ("positional_layout", self.positional_layout, POSITIONAL_LAYOUTS),
        ):
            if value not in choices:
                raise ValueError(f"{name}={value!r} is not one of {', '.join(choices)}")

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads
