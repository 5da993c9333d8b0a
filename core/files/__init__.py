"""Files: the model directory and every file in it (model_dir.py), model files (checkpoint.py),
the training log (metrics_log.py) and MarianMT checkpoints read as the lab's Transformer
(marian.py). The app takes them from here."""

from core.files.marian import beyond_the_paper
from core.files.metrics_log import read_metrics
from core.files.model_dir import (
    CARD_FILE,
    METRICS_FILE,
    MODEL_FILE,
    SNAPSHOT_DIR,
    TOKENIZER_FILE,
    ModelDir,
    Snapshot,
)

__all__ = [
    "CARD_FILE",
    "METRICS_FILE",
    "MODEL_FILE",
    "SNAPSHOT_DIR",
    "TOKENIZER_FILE",
    "ModelDir",
    "Snapshot",
    "beyond_the_paper",
    "read_metrics",
]
