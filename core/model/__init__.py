"""The model: the paper's Transformer (transformer.py, the reference, written to be read), its
hyper-parameters (config.py: the paper's by default, and what models trained elsewhere need), the
keys and values a decoder keeps between steps (kv_cache.py), dropout (dropout.py), the sinusoids
(sinusoids.py) and each layer's fused CPU kernel, which the model's pass calls when translating
(engine.py). The app takes
what it draws from here."""

from core.model.sinusoids import wave
from core.model.transformer import positional_encoding, subsequent_mask

__all__ = ["positional_encoding", "subsequent_mask", "wave"]
