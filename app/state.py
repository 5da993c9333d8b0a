"""The app's state: the shared settings, whose widgets (see app/ui.py) live in the URL; the model
they chose, loaded once; and one cached analysis per request (core.Request: model, sentence,
target, beam size, alpha), the key of every cache. The pages' own computations are cached beside
it, one module per feature: app/attention_cache.py, explain_cache.py, heads_cache.py,
snapshot_cache.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import streamlit as st
import torch

from app import garbage
from app.analysis import MAX_CHARS, Analysis, analyse
from app.page_settings import SIDEBAR, ModelShape
from app.plain_text import escaped
from app.shared_cache import shared
from core import (
    DEFAULT_MODEL,
    DEVICE_CHOICES,
    LANGUAGES,
    CheckpointError,
    EncoderBatch,
    InputError,
    Request,
    Translator,
    resolve_device,
)
from core.files import CARD_FILE, MODEL_FILE, TOKENIZER_FILE, ModelDir
from core.text import translate_text

MODEL_ENV = "ATTENTION_LAB_MODEL"
DEVICE_ENV = "ATTENTION_LAB_DEVICE"
MODEL_KEY = "model"  # the sidebar's choice among model_choices(), by name (?model= in the URL)

EXAMPLES = [
    "The animal didn't cross the street because it was too tired.",
    "A man is riding a bicycle.",
    "I am very hungry.",
    "The agreement on the European Economic Area was signed in August 1992.",
    "She reads the book that her friend gave her.",
]


@dataclass(frozen=True)
class Settings:
    """What the sidebar holds; the field names are the URL's query parameters."""

    text: str = EXAMPLES[0]
    to: str = SIDEBAR["to"].default  # their types, ranges and labels: app/page_settings.py
    beam: int = SIDEBAR["beam"].default
    alpha: float = SIDEBAR["alpha"].default
    present: bool = SIDEBAR["present"].default
    img: str = "png"


DEFAULTS = Settings()


def settings() -> Settings:
    """The current settings, from the sidebar widgets (which app/main.py draws before each page)."""
    return Settings(
        **{name: st.session_state.get(name, value) for name, value in vars(DEFAULTS).items()}
    )


def model_choices() -> dict[str, Path]:
    """The models the sidebar offers, by name: those of $ATTENTION_LAB_MODEL (a directory of
    ours or a MarianMT one; several separated by os.pathsep), the first the default, then the
    shipped model."""
    paths = [Path(p) for p in os.environ.get(MODEL_ENV, "").split(os.pathsep) if p]
    choices: dict[str, Path] = {}
    for path in [*paths, DEFAULT_MODEL]:
        if path.resolve() not in {p.resolve() for p in choices.values()}:
            name = path.name if path.name not in choices else f"{path.parent.name}/{path.name}"
            choices[name] = path
    return choices


def model_dir() -> Path:
    """The model chosen in the sidebar (or in the URL, before the sidebar has drawn its choice),
    else the first of :func:`model_choices`."""
    choices = model_choices()
    chosen = st.session_state.get(MODEL_KEY) or st.query_params.get(MODEL_KEY)
    return choices.get(chosen, next(iter(choices.values())))


def languages() -> dict[str, str]:
    """The languages the model translates into, code -> name (the lab's own while it cannot be
    loaded: the page says why)."""
    try:
        return load_translator(str(model_dir())).languages
    except (CheckpointError, InputError):
        return LANGUAGES


def model_shape() -> ModelShape | None:
    """The shape of the model chosen in the sidebar, which the pages' settings fit (their
    widgets' options, a deck's steps); None while there is no usable model (the page says
    why)."""
    try:
        translator = load_translator(str(model_dir()))
    except (CheckpointError, InputError):
        return None
    config = translator.model.config
    return ModelShape.of(
        config.n_encoder_layers,
        config.n_decoder_layers,
        config.n_heads,
        list(translator.languages),
        [snapshot.step for snapshot in ModelDir(model_dir()).snapshots()],
        d_model=config.d_model,
        max_len=config.max_len,
    )


def use_one_thread() -> None:
    """Compute this script run on one thread. One sentence at a time is too small to gain from
    more, and on a busy machine (2 cores) two threads waiting on each other made a translation
    10-30x slower. Called at the start of every run, not once at load: Streamlit runs each
    script in a thread of its own, and OpenMP keeps a thread count per thread, which torch sets
    in the calling thread only (see benchmarks/latency.py's notes on threads)."""
    torch.set_num_threads(1)


def device() -> torch.device:
    """Where the app's models compute: $ATTENTION_LAB_DEVICE (auto, cpu or cuda: core.device),
    by default the CPU, on which the app's numbers and timings are measured. Raises InputError
    for a value that cannot be used here."""
    choice = os.environ.get(DEVICE_ENV, "cpu")
    try:
        return resolve_device(choice)
    except InputError as error:
        raise InputError(f"${DEVICE_ENV}={choice!r} cannot be used: {error}") from error


def load_translator(path: str) -> Translator:
    """The model at ``path`` on the app's :func:`device`, loaded once."""
    return _loaded_translator(path, str(device()))


@st.cache_resource(show_spinner="Loading the model…")
def _loaded_translator(path: str, device: str) -> Translator:
    translator = Translator.load(path, device)
    garbage.freeze_what_is_loaded()  # collections after each run skip it: app/garbage.py
    return translator


# What the analyses of every session may hold together (pickled size; the process holds about
# 1.5 times that). A long sentence with beam 8 weighs about 28 MB, a short one about 1 MB: a
# count of entries bounded nothing (64 of the first is 1.8 GB). What the server holds after the
# worst-case fill: python -m benchmarks.load.
ANALYSES_BYTES = 128 * 2**20


@shared(ANALYSES_BYTES, spinner="Translating…")
def cached_analysis(request: Request) -> Analysis:
    """The analysis, shared by every session and never copied: do not change it."""
    return analyse(load_translator(request.model), request)


@st.cache_data(max_entries=1024, show_spinner=False)
def cached_sentence(request: Request) -> tuple[str, bool]:
    """One sentence's translation, without a trace, and whether the model read only part of it
    (a few hundred bytes an entry)."""
    result = load_translator(request.model).translate(**request.arguments)
    return result.text, result.truncated


def sentence_by_sentence(
    on_progress: Callable[[float, str], object],
) -> tuple[list[tuple[str, str]], list[int]]:
    """The text on screen translated one sentence at a time (core.text.sentences), as (part, its
    translation), and the numbers (from 1) of the sentences the model read only in part;
    ``on_progress`` (fraction done, what is done) hears of each sentence."""
    request = current()
    read = cached_analysis(request).read  # segmented once, there
    total, done, cut = read.sentences, 0, []

    def translate(sentence: str) -> str:
        nonlocal done
        translation, truncated = cached_sentence(replace(request, text=sentence))
        done += 1
        if truncated:
            cut.append(done)
        on_progress(done / total, f"Sentence {done} of {total}")
        return translation

    return translate_text(read.text, translate), cut


def cut_sentences_note(cut: list[int]) -> str | None:
    """A note for the page naming the sentences the model read only in part (longer than its
    source budget, Translator.max_source_tokens); None when none was cut."""
    if not cut:
        return None
    numbers = ", ".join(map(str, cut))
    which = f"Sentence {numbers} is" if len(cut) == 1 else f"Sentences {numbers} are"
    return (
        f"{which} longer than the {translator().max_source_tokens} pieces the model reads: the "
        "end is not translated."
    )


@st.cache_data(max_entries=16, show_spinner=False)
def padded_batch(request: Request, other: str) -> EncoderBatch:
    """The request's sentence and ``other`` through the encoder as one padded batch, each cut to
    MAX_CHARS characters."""
    texts = [request.text[:MAX_CHARS], other[:MAX_CHARS]]
    return load_translator(request.model).encode_batch(texts, request.target)


def translator() -> Translator:
    """The model, or a message saying where it was looked for (and the page stops)."""
    path = model_dir()
    try:
        return load_translator(str(path))
    except CheckpointError as error:
        st.error(
            f"No usable model at `{path}`.\n\n{error}\n\n"
            f"The shipped model lives in `pretrained/en-de-fr/`; to use another, set the "
            f"environment variable `{MODEL_ENV}` to its directory ({MODEL_FILE}, {TOKENIZER_FILE}, "
            f"{CARD_FILE}; or a MarianMT directory saved by transformers) and restart the app."
        )
        st.stop()
    except InputError as error:  # the device
        st.error(
            f"{error}\n\nSet `{DEVICE_ENV}` to one of {', '.join(DEVICE_CHOICES)} (unset: cpu) "
            "and restart the app."
        )
        st.stop()


def current(text: str | None = None) -> Request:
    """The request on screen, the key of every cache: the model chosen, the sidebar's text (or
    ``text``), target, beam size and alpha. Raises core.InputError for what the model cannot take
    (a CheckpointError when there is no usable model)."""
    now = settings()
    return Request(str(model_dir()), text or now.text, now.to, now.beam, now.alpha)


def analysis(text: str | None = None) -> Analysis:
    """The analysis of the current settings (or of another ``text`` with them), or a message
    about the input (and the page stops)."""
    translator()  # says so if there is no model
    try:
        result = cached_analysis(current(text))
    except InputError as error:  # its message may quote the text or a link's value
        st.info(escaped(str(error)))
        st.stop()
    for note in result.notes:
        st.warning(note)
    return result
