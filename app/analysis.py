"""The sentence's analysis, computed without Streamlit.

:func:`analyse` runs the model once per request (core.Request: model, sentence, target, beam
size, alpha) and keeps everything the views draw from, attention included, labelled by core, with
what the user should know about the input. (The beam search's layout for its page is
app/figures/beam_layout.py; the training log and the model card are read by
app/figures/training_log.py.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from core import Request, Translation, Translator
from core.text import Excerpt, excerpt, has_control_characters

# Longer input is cut before tokenizing, between sentences (core.text.sentences.excerpt): far more
# than the pieces the model reads as one sequence (Translator.max_source_tokens), which the
# truncation note reports.
MAX_CHARS = 2000


@dataclass
class Analysis:
    """One translation with its full trace, and what the user should know about the input."""

    result: Translation
    read: Excerpt  # what of the text the app read: whole sentences up to MAX_CHARS characters
    pieces: dict[int, str]  # every token id that appears in the beam search trace -> its piece
    notes: list[str] = field(default_factory=list)  # messages about the input, no user text
    seconds: float = 0.0  # time the model took


def analyse(translator: Translator, request: Request) -> Analysis:
    """Translate the part of the request's text the app reads (``read``) with the full trace, on
    ``translator``, the model of ``request.model``."""
    read = excerpt(request.text, MAX_CHARS)
    notes = []
    if note := excerpt_note(read):
        notes.append(note)
    if has_control_characters(read.text):
        notes.append(
            "The text holds control or zero-width characters; the model reads them as spaces."
        )
    start = time.perf_counter()
    result = translator.translate(**replace(request, text=read.text).arguments, trace=True)
    seconds = time.perf_counter() - start
    if result.truncated:
        limit = translator.max_source_tokens
        notes.append(truncation_note(result.uncut_source_length, limit, read.sentences))
    if bytes_read := result.source_kinds.count("byte"):
        notes.append(
            f"{bytes_read} pieces are raw UTF-8 bytes (byte fallback): characters "
            "the vocabulary lacks, such as emoji or other scripts. The model saw few of them in "
            "training, so expect a poor translation of that part."
        )
    ids = {c.token for step in result.steps for c in step.candidates}
    ids |= {t for h in result.finished for t in h.ids}
    return Analysis(result, read, dict(zip(ids, translator.tokenizer.pieces(ids))), notes, seconds)


def excerpt_note(read: Excerpt) -> str | None:
    """What the app left out of a text longer than MAX_CHARS characters; None when nothing (or
    only space) was."""
    if read.whole and not read.sentences_left_out:
        return None
    if not read.whole:
        return (
            f"The text is longer than {MAX_CHARS} characters, and so is its first sentence: only "
            f"the start is used ({read.characters_left_out:,} characters left out)."
        )
    kept = "sentence" if read.sentences == 1 else f"{read.sentences} sentences"
    left = "sentence" if read.sentences_left_out == 1 else f"{read.sentences_left_out} sentences"
    return (
        f"The text is longer than {MAX_CHARS} characters: the app reads its first {kept} "
        f"({len(read.text):,} characters) and leaves out the {left} after "
        f"{'it' if read.sentences == 1 else 'them'} ({read.characters_left_out:,} characters)."
    )


def truncation_note(pieces: int, max_pieces: int, sentences: int) -> str:
    """The note on a text of ``pieces`` source pieces, more than the model reads; a text of
    several ``sentences`` is cut only where it is read as one sequence."""
    cut = (
        f"the model reads at most {max_pieces}, so it was cut after piece {max_pieces - 1} and "
        "the rest is ignored."
    )
    if sentences <= 1:
        return f"The sentence is {pieces} pieces long (with the language tag and </s>); {cut}"
    return (
        f"Read as one sequence, as the charts read it, the text is {pieces} pieces long (with the "
        f"language tag and </s>); {cut} Translated sentence by sentence (the Translate page), "
        "each sentence is read on its own."
    )


# Switching each head of one kind off alone is one batched, teacher-forced pass over
# 1 + layers x heads copies of the sentence: on the shipped model (one thread, as the app runs
# it) it took 1.2 to 5 times as long as the traced search that translated the sentence, 2 to 3
# times for most sentences and beam sizes.
IMPORTANCE_PER_TRANSLATION = 3.0


def importance_estimate(analysis: Analysis) -> str:
    """How long head importance for ``analysis`` should take on this server, for people: "under
    a second", "about 4 s"."""
    seconds = IMPORTANCE_PER_TRANSLATION * analysis.seconds
    return "under a second" if seconds < 1 else f"about {seconds:.0f} s"
