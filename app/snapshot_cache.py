"""Training dynamics' computations: every snapshot of the model run on the sentence on screen,
each view computed once and shared by every session."""

from __future__ import annotations

import streamlit as st

from app.shared_cache import shared
from app.state import cached_analysis, current, device, load_translator
from core import (
    Request,
    Translator,
)
from core.files import MODEL_FILE, ModelDir, Snapshot
from core.inspection import snapshots

SNAPSHOT_VIEWS_BYTES = 64 * 2**20


def load_snapshot(path: str, snapshot: Snapshot) -> Translator:
    """The model at a snapshot, for the time it takes to compute its views. The last snapshot
    is the model itself: the app's own translator. An earlier one is read from disk and let go
    (a whole model each, about 31 MB in float32 for the shipped shape, and as much again for
    its decoding engine): its views are cached, the model is not needed again, and an LRU of a
    few models did not help, as every new sentence visits all snapshots in order."""
    if snapshot.weights == MODEL_FILE:
        return load_translator(path)
    return snapshots.load_snapshot(path, snapshot, device())


@shared(SNAPSHOT_VIEWS_BYTES)
def snapshot_view(request: Request, snapshot: Snapshot) -> snapshots.SnapshotView:
    reference = cached_analysis(request).result
    model = load_snapshot(request.model, snapshot)
    return snapshots.view_snapshot(model, snapshot.step, request, reference)


def snapshot_views() -> list[snapshots.SnapshotView]:
    """Every snapshot of the model on the current sentence, each computed once (a progress bar
    shows the first time), so that moving the step slider only redraws."""
    request = current()
    found = ModelDir(request.model).snapshots()
    progress = st.progress(0.0, text="Running every snapshot on the sentence…")
    views = []
    for done, snapshot in enumerate(found, start=1):
        views.append(snapshot_view(request, snapshot))
        progress.progress(done / len(found), text=f"Step {snapshot.step:,} done")
    progress.empty()
    return views
