"""The Heads lab's computations: a translation with some heads changed, every head's importance
(shared by every session) and the model's head survey (heads.json), read again when it changes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from app.shared_cache import shared
from app.state import cached_analysis, load_translator, model_dir
from core import (
    CheckpointError,
    Request,
    Translation,
)
from core.files import ModelDir
from core.inspection import (
    Head,
    HeadSurvey,
    head_importance,
    intervened_translator,
    load_survey,
)

IMPORTANCE_BYTES = 2**20  # a (layers, heads) array each: thousands of sentences


@dataclass(frozen=True)
class Intervention:
    """The translation with an intervention on some heads, and both models' view of the normal
    translation, token by token (teacher-forced)."""

    changed: Translation  # what the changed model translates
    normal_log_probs: list[float]  # log P of each normal output token, normal model
    changed_log_probs: list[float]  # ... the changed model


@st.cache_data(max_entries=32, show_spinner="Translating with those heads changed…")
def cached_intervention(request: Request, heads: tuple[str, ...], how: str = "off") -> Intervention:
    """``how`` ("off", "uniform", "permute") on ``heads`` (names such as "enc L5 H5")."""
    normal = cached_analysis(request).result
    translator = load_translator(request.model)
    changed = intervened_translator(translator, [Head.parse(name) for name in heads], how)
    return Intervention(
        changed.translate(**request.arguments),
        translator.trace(normal).token_log_probs,
        changed.trace(normal).token_log_probs,
    )


@shared(IMPORTANCE_BYTES, spinner="Switching each head off in turn…")
def cached_importance(request: Request, kind: str) -> np.ndarray:
    """Every head's importance for the translation (layers, heads): core.inspection.ablation. The
    costliest pass a page makes, so the Heads lab makes it only when asked; once made, every session
    finds it (``cached_importance.stored``)."""
    normal = cached_analysis(request).result
    return head_importance(load_translator(request.model), normal, kind)


@st.cache_data(max_entries=4, show_spinner=False)
def _survey(path: str, versions: tuple[float, float]) -> tuple[HeadSurvey | None, bool]:
    """heads.json beside the model and whether model.pt is the one it was computed from; read
    again when either file changes (``versions``: their modification times)."""
    survey = load_survey(path)
    return survey, survey is not None and ModelDir(path).is_current(survey.model_sha256)


def head_survey() -> tuple[HeadSurvey | None, bool]:
    """The model's head survey (None if it has none, or a message if it is damaged) and whether
    it is current."""
    directory = ModelDir(model_dir())
    versions = tuple(
        file.stat().st_mtime if file.exists() else 0.0
        for file in (directory.heads_file, directory.model_file)
    )
    try:
        return _survey(str(directory.path), versions)
    except CheckpointError as error:
        st.warning(f"The head survey beside the model is unreadable: {error}")
        return None, False
