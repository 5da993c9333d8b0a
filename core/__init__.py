"""Attention Lab's core: the Transformer, its tokenizer, decoding and inspection. No UI here.

Glossary: one name per idea, in the code, the command lines and the files.

    source            the encoder's input: token ids (B, S), or their pieces (source_tokens),
                      <2de>/<2fr> ... </s>
    source_mask       (B, 1, 1, S), True at real source positions: the keys of encoder
                      self-attention and of cross-attention (the memory's mask)
    memory            the encoder's output (B, S, D), read by every cross-attention
    decoder_input     what the decoder reads: <s> and the output so far, ids (B, T)
    output            what each decoder position predicts: the translation's ids, ... </s>
    target            the target language code ("de", "fr"), never a tensor
    token embedding   Embedding(x) * sqrt(d_model) (Transformer.token_embedding); its values:
                      source_token, decoder_input_token (Intermediates, Embeddings)
    position          the sinusoidal positional encoding added to it: source_position,
                      decoder_input_position
    attention         weights (softmax), scores (QK^T / sqrt(d_k)), masked scores: a
                      LabelledAttention carries them with their row and column labels
    trace             trace=True keeps the maps: a forward pass returns its Intermediates, a
                      translation its attention (LabelledAttention) and beam steps
    alpha             the length penalty's exponent, lp(Y) = ((5 + |Y|) / 6) ** alpha (--alpha);
                      beam_size the beam's width; PAPER_DECODING is beam 4, alpha 0.6
                      (subword sampling's exponent, in train/, is subword_alpha)
    step              a beam search step (BeamStep: hypotheses, candidates, cross_weights), or
                      a training step (train/)
"""

from core.decoding.search import (
    PAPER_DECODING,
    REASONS,
    BeamStep,
    Candidate,
    Decoding,
    Hypothesis,
    beam_search,
    best_hypothesis,
    first_divergence,
    greedy_decode,
    length_penalty,
)
from core.device import DEVICE_CHOICES, resolve_device
from core.errors import InputError
from core.files.checkpoint import CheckpointError
from core.labelled_attention import PREDICTS, LabelledAttention
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.request import Request
from core.text.tokenizer import LANGUAGES, Tokenizer, normalize_text
from core.translator import DEFAULT_MODEL, PIECE_KINDS, EncoderBatch, Translation, Translator

__all__ = [
    "DEFAULT_MODEL",
    "DEVICE_CHOICES",
    "LANGUAGES",
    "PAPER_DECODING",
    "PIECE_KINDS",
    "PREDICTS",
    "REASONS",
    "BeamStep",
    "Candidate",
    "CheckpointError",
    "Decoding",
    "EncoderBatch",
    "Hypothesis",
    "InputError",
    "LabelledAttention",
    "ModelConfig",
    "Request",
    "Tokenizer",
    "Transformer",
    "Translation",
    "Translator",
    "beam_search",
    "best_hypothesis",
    "first_divergence",
    "greedy_decode",
    "length_penalty",
    "normalize_text",
    "resolve_device",
]
