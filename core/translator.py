"""The public face of ``core``: load a model directory, translate, and show what the model computed.

    from core import Translator
    translator = Translator.load()                 # the shipped model in pretrained/
    result = translator.translate("The dog runs away.", target="de", trace=True)
    result.text, result.source_tokens, result.decoder_input_tokens, result.output_tokens
    result.attention.cross.weights         # (layers, heads, T, S)   rows: queries, columns: keys
    result.attention.cross.query_labels    # T decoder positions: "<s> → ▁Der", ...
    result.attention.cross.key_labels      # S source pieces: "<2de>", "▁The", ...
    result.word_attention.cross            # the same, pieces merged into words
    result.steps                           # the beam search, step by step

Decoding runs on :class:`core.model.engine.Engine`: the model's own pass, its layers computed by
fused CPU kernels with the same numbers; ``Translator.load(fast=False)`` decodes with the layers'
readable modules of core/model/transformer.py alone.

S indexes ``source_tokens`` (the encoder input: <2de> pieces </s>); T indexes the decoder
positions: position t reads ``decoder_input_tokens[t]`` (<s>, then the output so far) and predicts
``output_tokens[t]``. See :mod:`core.labelled_attention` for every kind of attention.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from core.decoding.search import (
    PAPER_DECODING,
    BeamStep,
    Hypothesis,
    batch_beam_search,
    beam_search,
    greedy_decode,
)
from core.errors import InputError
from core.files.model_dir import MODEL_FILE, open_model_dir
from core.labelled_attention import (
    AttentionSet,
    LabelledAttention,
    hypothesis_labels,
    in_words,
    labelled,
    traced_attention,
)
from core.model.engine import Engine
from core.model.transformer import Intermediates, Transformer
from core.text.clauses import clause_parts
from core.text.tokenizer import Tokenizer, normalize_text

PRETRAINED_DIR = Path(__file__).resolve().parent.parent / "pretrained"
DEFAULT_MODEL = PRETRAINED_DIR / "en-de-fr"
# The source may fill half of the model's positions: its output budget (1.5 x source + 10
# tokens, core.decoding.search.max_output_length) then still fits the decoder's max_len.
SOURCE_SHARE_OF_MAX_LEN = 0.5
# translate_batch's batches: at most this many decoder rows (sentences x beam size) x source
# tokens, which bounds the keys and values held per step. On the shipped model (beam 4, Multi30k
# and FLORES, one thread) 2048 to 8192 ran alike, within the noise of a busy machine.
BATCH_TOKENS = 4096
# On a GPU a decoding step of a few hundred rows waits on its kernels' launches, not on their
# arithmetic: 16x the CPU's budget, two or three batches per test set of about 1,000 sentences
# (at beam 4 and d_model 192 about 2 GB of keys and values). Reasoned, not yet measured on a GPU.
GPU_BATCH_TOKENS = 65536
# Every beam keeps its hypotheses' attention while tracing: beam 1000 took 160 s and 18.6 GB on a
# 30-piece sentence. Beyond 16, beam search rarely changes a translation (the app offers 1-8).
MAX_BEAM_SIZE = 16
MAX_ALPHA = 5.0  # the length penalty's alpha; Wu et al. 2016 tuned it in 0.6..1.0
# What a piece is (Translation.source_kinds, output_kinds): data, as the attention kinds' keys are
# (the app's words for them: app/display.py)
PIECE_KINDS = ("word_start", "continuation", "special", "byte")


def check_text(text: object) -> None:
    """A sentence must be a str that encodes to UTF-8: a lone surrogate ("\\ud800"), which only
    a program can produce, is refused before it reaches SentencePiece."""
    if not isinstance(text, str):
        raise InputError(f"The text must be a string, got {type(text).__name__}.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            f"The text is not valid Unicode (a lone surrogate at character {error.start + 1})."
        ) from None


def check_target(target: object, languages: Iterable[str]) -> None:
    """A target language must be one of the model's ``languages``."""
    if target not in languages:
        raise InputError(
            f"Unknown target language {target!r}: choose one of {', '.join(languages)}."
        )


def usable_device(device: object) -> torch.device:
    """``device`` as a torch.device this machine has: a name torch does not know, or CUDA where
    PyTorch sees no GPU, is an InputError (core.device.resolve_device turns --device into one)."""
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise InputError(f"Unknown device {device!r} ({error}).") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"Device {device} was asked for, but PyTorch sees no CUDA GPU here.")
    return device


def check_decoding(beam_size: object, alpha: object, max_length: object = None) -> None:
    """Refuse decoding settings that would fail deep in torch, run for minutes, or silently mean
    something else: a beam size outside 1..MAX_BEAM_SIZE or not an integer, a length penalty alpha
    that is not a finite number in 0..MAX_ALPHA, a max_length below 1."""
    if isinstance(beam_size, bool) or not isinstance(beam_size, int):
        raise InputError(f"beam_size must be an integer, got {beam_size!r}.")
    if not 1 <= beam_size <= MAX_BEAM_SIZE:
        raise InputError(f"beam_size must be between 1 and {MAX_BEAM_SIZE}, got {beam_size}.")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise InputError(f"alpha (the length penalty) must be a number, got {alpha!r}.")
    if not (math.isfinite(alpha) and 0 <= alpha <= MAX_ALPHA):
        raise InputError(
            f"alpha (the length penalty) must be between 0 and {MAX_ALPHA}, got {alpha}."
        )
    if max_length is not None and (
        isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1
    ):
        raise InputError(f"max_length must be a whole number of at least 1, got {max_length!r}.")


def piece_kind(piece: str, is_special: bool, is_byte: bool) -> str:
    """What a piece is (PIECE_KINDS): 'special' (pad, bos, eos, a language tag), 'byte' (byte
    fallback), 'word_start' (begins with SentencePiece's ▁) or 'continuation'."""
    if is_special:
        return "special"
    if is_byte:
        return "byte"
    return "word_start" if piece.startswith("▁") else "continuation"


@dataclass
class Embeddings:
    """What entered the first layers: token embedding * sqrt(d_model), and positional encoding."""

    source_token: np.ndarray  # (S, D)
    source_position: np.ndarray  # (S, D)
    decoder_input_token: np.ndarray  # (T, D)
    decoder_input_position: np.ndarray  # (T, D)


@dataclass
class Translation:
    text: str
    target: str
    source_ids: list[int]
    source_tokens: list[str]  # encoder input pieces: <2xx> ... </s>
    decoder_input_ids: list[int]
    decoder_input_tokens: list[str]  # what each decoder position reads: <s> ...
    output_ids: list[int]
    output_tokens: list[str]  # what each decoder position predicted: ... </s>
    log_prob: float  # log-probability of the output
    source_kinds: list[str]  # piece_kind of each source piece
    output_kinds: list[str]  # piece_kind of each output piece
    uncut_source_length: int  # the source's pieces before any cut, <2xx> and </s> included
    token_log_probs: list[float] | None = None  # log P of each output token; None untraced
    attention: AttentionSet | None = None  # piece by piece: weights, scores, masked scores
    word_attention: AttentionSet | None = None  # pieces merged into words: weights
    embeddings: Embeddings | None = None
    steps: list[BeamStep] = field(default_factory=list)
    # each step's cross-attention, labelled: a row per live hypothesis, a column per source piece
    step_attention: list[LabelledAttention] = field(default_factory=list)
    finished: list[Hypothesis] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        """Whether the source was longer than the model takes, and was cut."""
        return self.uncut_source_length > len(self.source_ids)


@dataclass
class EncoderBatch:
    """Several sentences through the encoder as one padded batch (the padding mask at work)."""

    source_ids: np.ndarray  # (B, S), padded with the model's pad id
    source_tokens: list[list[str]]  # B lists of S pieces, "<pad>" included
    padding_mask: np.ndarray  # (B, S), True for real tokens
    attention: list[LabelledAttention]  # per sentence, (L, H, S, S) encoder self-attention


class Translator:
    """A trained model with its vocabulary and model card.

    fast=True (the default) computes on :class:`core.model.engine.Engine`, the model's pass with
    its layers' fused CPU kernels, which gives the same translations, beam steps and attention
    (within 5e-5, tests/core/test_engine.py); whenever the kernels cannot stand for the layers (an
    intervention from core/inspection/ablation.py, training mode, a model on a GPU), the modules
    compute. fast=False: always the readable modules of core/model/transformer.py.
    """

    def __init__(
        self, model: Transformer, tokenizer: Tokenizer, card: dict | None = None, fast: bool = True
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.card = card or {}
        self.device = next(model.parameters()).device
        self.fast = fast
        self._engine: Engine | None = None

    @property
    def backend(self) -> Transformer | Engine:
        """What computes the model's numbers: the engine while it can stand for the model (rebuilt
        when the model's weights changed), else the model itself."""
        if not self.fast or not Engine.can_run(self.model):
            return self.model
        if self._engine is None or not self._engine.is_current():
            self._engine = Engine(self.model)
        return self._engine

    @classmethod
    def load(
        cls,
        path: str | Path | None = None,
        device: str | torch.device = "cpu",
        weights: str = MODEL_FILE,
        fast: bool = True,
    ) -> Translator:
        """Load a model directory (core/files/model_dir.py); default: the shipped model. ``device``:
        where the model computes (core.device.resolve_device turns a person's choice into one).
        ``weights`` names another model file of the directory, such as a snapshot
        (Snapshot.weights), read with the directory's vocabulary and card; ``fast``: see
        :class:`Translator`. A folder that is no model directory is a
        core.files.model_dir.NotAModelDir (an InputError)."""
        directory = open_model_dir(DEFAULT_MODEL if path is None else path)
        return cls(*directory.load(weights, usable_device(device)), fast)

    @property
    def languages(self) -> dict[str, str]:
        """The languages the model translates into, code -> name ({"de": "German", ...})."""
        return self.tokenizer.languages

    @property
    def max_source_tokens(self) -> int:
        return int(self.model.config.max_len * SOURCE_SHARE_OF_MAX_LEN)

    def source_ids(self, text: str, target: str) -> tuple[list[int], int]:
        """Encoder input ids for ``text``, cut to fit the model, and their number before the cut.

        Raises InputError for text that is not a string of valid Unicode, text with nothing to
        translate, or an unknown target language.
        """
        check_text(text)
        check_target(target, self.languages)
        if not normalize_text(text):
            raise InputError("There is nothing to translate: type a sentence.")
        ids = self.tokenizer.encode_source(text, target)
        if len(ids) <= self.max_source_tokens:
            return ids, len(ids)
        return [*ids[: self.max_source_tokens - 1], self.model.config.eos_id], len(ids)

    def piece_kinds(self, ids: Sequence[int], pieces: Sequence[str]) -> list[str]:
        """The kind of each piece of ``ids`` (:func:`piece_kind`)."""
        tokenizer = self.tokenizer
        return [
            piece_kind(p, tokenizer.is_special(i), tokenizer.is_byte(i))
            for i, p in zip(ids, pieces)
        ]

    def translate(
        self,
        text: str,
        target: str = "de",
        beam_size: int = PAPER_DECODING.beam_size,
        alpha: float = PAPER_DECODING.alpha,
        trace: bool = False,
        max_length: int | None = None,
    ) -> Translation:
        """Translate one sentence by beam search (beam_size=1 is greedy search), ranking ended
        hypotheses by log P(Y) / lp(Y), lp the length penalty of ``alpha`` (0: none).
        ``translator.translate(**request.arguments)`` translates a :class:`core.Request`.

        trace=True also returns every beam step and the attention, scores, embeddings and token
        log-probabilities (as :meth:`trace` gives them) of the model run on the chosen output
        (cached decoding and this full pass agree; the tests say so).
        max_length caps the output in tokens, eos included (default: 1.5 x the source + 10).
        """
        check_decoding(beam_size, alpha, max_length)
        ids, uncut_length = self.source_ids(text, target)
        source = torch.tensor([ids], device=self.device)
        pieces, backend = self.tokenizer.pieces, self.backend
        beam = beam_search(backend, source, beam_size, alpha, max_length, trace)
        output = beam.ids  # ends with eos unless the length budget ran out
        decoder_input = [self.model.config.bos_id, *output[:-1]]
        source_tokens, output_tokens = pieces(ids), pieces(output)
        result = Translation(
            text=self.tokenizer.decode(output, target),
            target=target,
            source_ids=ids,
            source_tokens=source_tokens,
            decoder_input_ids=decoder_input,
            decoder_input_tokens=pieces(decoder_input),
            output_ids=output,
            output_tokens=output_tokens,
            log_prob=beam.log_prob,
            source_kinds=self.piece_kinds(ids, source_tokens),
            output_kinds=self.piece_kinds(output, output_tokens),
            uncut_source_length=uncut_length,
            steps=beam.steps,
            step_attention=[self.labelled_step(step, source_tokens) for step in beam.steps],
            finished=beam.finished,
        )
        if trace:
            self._attach_trace(result, source, backend)
        return result

    def labelled_step(self, step: BeamStep, source_tokens: list[str]) -> LabelledAttention:
        """A traced beam step's cross-attention weights with their labels: each row a live
        hypothesis's newest position (hypothesis_labels), each column a source piece."""
        prefixes = [hypothesis.ids for hypothesis in step.hypotheses]
        rows = hypothesis_labels(prefixes, self.tokenizer.pieces, self.model.config.bos_id)
        return LabelledAttention(step.cross_weights, rows, source_tokens)

    @torch.inference_mode()
    def trace(self, result: Translation) -> Translation:
        """``result`` (with its source and output) as this model sees it, traced by teacher
        forcing: the attention and embeddings this model computes on that output. A snapshot
        tracing the final model's translation shows its attention on the same rows and columns."""
        forced = replace(result, steps=[], step_attention=[], finished=[])
        source = torch.tensor([result.source_ids], device=self.device)
        forced.log_prob = float(self._attach_trace(forced, source, self.backend).sum())
        return forced

    @torch.inference_mode()
    def predictions(self, result: Translation) -> np.ndarray:
        """P(next token | source, output so far) at every output position of ``result``,
        teacher-forced: (T, vocabulary), row t the distribution output token t was chosen from."""
        source = torch.tensor([result.source_ids], device=self.device)
        decoder_input = torch.tensor([result.decoder_input_ids], device=self.device)
        logits, _ = self.backend(source, decoder_input)
        return logits[0].float().softmax(-1).cpu().numpy()

    @torch.inference_mode()
    def _attach_trace(
        self, result: Translation, source: torch.Tensor, backend: Transformer | Engine
    ) -> torch.Tensor:
        """The attention, embeddings and token log-probabilities of ``backend``'s full pass over
        the chosen output (the caller's :attr:`backend`, asked for once); returns them (T,)."""
        decoder_input = torch.tensor([result.decoder_input_ids], device=self.device)
        logits, intermediates = backend(source, decoder_input, trace=True)
        texts = (result.source_tokens, result.decoder_input_tokens, result.output_tokens)
        result.attention = traced_attention(intermediates, *texts)
        result.word_attention = in_words(result.attention, *texts)
        result.embeddings = Embeddings(
            *(
                embedding.float().cpu().numpy()
                for embedding in (
                    intermediates.source_token[0],
                    intermediates.source_position,
                    intermediates.decoder_input_token[0],
                    intermediates.decoder_input_position,
                )
            )
        )
        log_probs = logits[0].float().log_softmax(-1)  # (T, V)
        output = torch.tensor(result.output_ids, device=self.device)
        token_log_probs = log_probs.gather(1, output[:, None])[:, 0]  # (T,)
        result.token_log_probs = token_log_probs.tolist()
        return token_log_probs

    @torch.inference_mode()
    def encode_batch(self, texts: list[str], target: str = "de") -> EncoderBatch:
        """Run the encoder on several sentences padded to one length, with full inspection."""
        rows = [self.source_ids(text, target)[0] for text in texts]
        width = max(len(row) for row in rows)
        pad = self.model.config.pad_id
        padded = [row + [pad] * (width - len(row)) for row in rows]
        source = torch.tensor(padded, device=self.device)
        intermediates = Intermediates()
        self.backend.encode(source, intermediates)
        tokens = [self.tokenizer.pieces(row) for row in padded]
        encoder_self = intermediates.encoder_self
        attention = [labelled(encoder_self, t, t, row) for row, t in enumerate(tokens)]
        return EncoderBatch(np.array(padded), tokens, np.array(padded) != pad, attention)

    def fits(self, text: str, target: str) -> bool:
        """Whether ``text`` is read whole: its source pieces fit :attr:`max_source_tokens`."""
        return len(self.tokenizer.encode_source(text, target)) <= self.max_source_tokens

    def source_parts(self, text: str, target: str) -> list[str]:
        """What :meth:`translate_batch` translates for ``text``: the text itself when it fits the
        model, else its clauses (core/text/clauses.py), each fitting where a boundary allows."""
        return clause_parts(text, lambda part: self.fits(part, target))

    def long_sources(self, texts: Iterable[str], target: str) -> LongSources:
        """How :meth:`translate_batch` reads ``texts``: how many are over the source budget (and
        translated clause by clause), and how many of those still lose an end to a cut."""
        long = cut = 0
        for text in texts:
            if not normalize_text(text) or self.fits(text, target):
                continue
            long += 1
            cut += not all(self.fits(part, target) for part in self.source_parts(text, target))
        return LongSources(self.max_source_tokens, long, cut)

    @torch.inference_mode()
    def translate_batch(
        self,
        texts: list[str],
        target: str = "de",
        beam_size: int = PAPER_DECODING.beam_size,
        alpha: float = PAPER_DECODING.alpha,
        progress: Callable[[int], object] | None = None,
    ) -> list[str]:
        """Translate many sentences (evaluation) as :meth:`translate` does, in batches of
        similar length: greedy search for beam_size=1, else batched beam search
        (core.decoding.search.batch_beam_search). A sentence over the source budget is translated
        clause by clause (:meth:`source_parts`), and only a clause with no boundary left is cut
        (:meth:`long_sources` counts both). Blank lines translate to blank lines; ``progress``
        is called with the number of sentences of each batch done."""
        check_decoding(beam_size, alpha)
        for text in texts:
            check_text(text)
        check_target(target, self.languages)
        outputs = [""] * len(texts)
        todo = [i for i, text in enumerate(texts) if normalize_text(text)]
        parts = {i: self.source_parts(texts[i], target) for i in todo}
        owners = [i for i in todo for _ in parts[i]]  # the sentence of each part
        left = {i: len(parts[i]) for i in todo}

        def done(batch: list[int]) -> None:  # progress counts the sentences whose parts are done
            for part in batch:
                left[owners[part]] -= 1
            finished = {owners[part] for part in batch if left[owners[part]] == 0}
            if progress and finished:
                progress(len(finished))

        flat = [part for i in todo for part in parts[i]]
        translated = iter(self._translate_parts(flat, target, beam_size, alpha, done))
        for i in todo:
            outputs[i] = " ".join(next(translated) for _ in parts[i])
        return outputs

    def _translate_parts(
        self,
        texts: list[str],
        target: str,
        beam_size: int,
        alpha: float,
        done: Callable[[list[int]], None],
    ) -> list[str]:
        """Each of ``texts`` (none blank) translated, in batches of similar length; ``done`` is
        called with the indices of each batch translated."""
        results, pad = [""] * len(texts), self.model.config.pad_id
        rows = [self.source_ids(text, target)[0] for text in texts]
        for batch in length_batches(rows, beam_size, batch_budget(self.device)):
            width = len(rows[batch[0]])
            source = torch.tensor(
                [rows[b] + [pad] * (width - len(rows[b])) for b in batch], device=self.device
            )
            if beam_size == 1:
                decoded = greedy_decode(self.backend, source)
            else:
                beams = batch_beam_search(self.backend, source, beam_size, alpha)
                decoded = [beam.ids for beam in beams]
            for b, ids in zip(batch, decoded):
                results[b] = self.tokenizer.decode(ids, target)
            done(batch)
        return results


@dataclass(frozen=True)
class LongSources:
    """What evaluation reports about sentences longer than the model reads (translate_batch)."""

    source_budget: int  # source pieces the model reads, language tag and </s> included
    long: int  # sentences over it, translated clause by clause
    cut: int  # of those, the ones with a part still over it (no boundary left): cut to it

    def warning(self) -> str | None:
        """The line that says what happened to long sentences; None when there were none."""
        if not self.long:
            return None
        said = (
            f"{self.long} sentence(s) over the model's {self.source_budget} source pieces, "
            "translated clause by clause"
        )
        if self.cut:
            said += (
                f"; {self.cut} of them kept a part over {self.source_budget} pieces with no "
                f"clause boundary to split it at: cut to {self.source_budget} pieces, its end "
                "not translated"
            )
        return said


def batch_budget(device: torch.device) -> int:
    """translate_batch's tokens per batch on ``device``: BATCH_TOKENS, or a GPU's."""
    return GPU_BATCH_TOKENS if device.type == "cuda" else BATCH_TOKENS


def length_batches(
    rows: list[list[int]], beam_size: int, budget: int | None = None
) -> Iterator[list[int]]:
    """The indices of ``rows``, longest first, in batches that pad little: each as many as
    keep (sentences x beam_size) x its longest row within ``budget`` (BATCH_TOKENS, a CPU's,
    unless given), and at least one."""
    budget = budget or BATCH_TOKENS
    batch: list[int] = []
    for i in sorted(range(len(rows)), key=lambda i: -len(rows[i])):
        if batch and (len(batch) + 1) * beam_size * len(rows[batch[0]]) > budget:
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch
