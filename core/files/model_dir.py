"""The model directory: every file of one trained model, named, read and written here alone.

A model directory (the shipped pretrained/en-de-fr, a training run's model/) holds::

    file             written by                  read by                        format
    ---------------  --------------------------  -----------------------------  --------------------
    model.pt         the trainer's               Translator.load, the head      torch.save dict (1)
                     export                      survey, --init-from
    spm.model        the trainer's               Translator.load                SentencePiece model
                     export (a copy)
    truecase.en      the trainer's               Translator.load                Moses truecase
                     export (a copy)                                            model (6)
    card.json        the trainer's               Translator.load (its card),    JSON object (2)
                     export,                     the snapshots' last step,
                     train.shipping.card,        --init-from,
                     train.studies.width_study   train.shipping.card
    card.md          train.shipping.card_md,     the app's Model page           Markdown, for people
                     train.studies.width_study
    metrics.jsonl    the trainer's               the app's Model and Training   JSON lines (3)
                     export (lineage)            dynamics pages,
                                                 train.shipping.card
    snapshots/       the trainer's               the app's Training dynamics    as model.pt (4)
     step_NNNNNNN.pt export (lineage)            page and training-step slider
    heads.json       train.shipping.head_survey  the app's Heads lab            JSON (5)

(1) {"format": "attention-lab/1", "config": the ModelConfig's fields, "state_dict": float16
    tensors, "metadata": dict}, see core/files/checkpoint.py; read with
    torch.load(weights_only=True), so loading a file cannot run code. model.pt and spm.model are
    what makes a model directory.
(2) UTF-8, indented by 2, a newline at the end. No card reads as {}; a card that is not a JSON
    object is a CheckpointError naming it.
(3) One JSON object a line, each with its "step" (core/files/metrics_log.py): the run's log, after
    the log of the model it was continued from, on one step axis (train/loop/lineage.py).
(4) The model at a few log-spaced training steps, metadata {"step", "train_seconds"}; the final
    model.pt comes last, at the card's training.steps (:meth:`ModelDir.snapshots`).
(5) The head survey (core/inspection/head_survey.py), with the sha256 of the model.pt it was
    computed on: :meth:`ModelDir.is_current` tells whether that is still the model.pt beside it.
(6) Optional: a vocabulary with it truecases the English source (core/text/truecase.py), one without
    reads it as typed. It goes wherever spm.model goes (:func:`copy_vocabulary`).

Every file here is written atomically (:func:`core.files.checkpoint.atomic_write`): a process killed
mid-write leaves the previous file whole, and a hidden ``.<name>.<random>.tmp`` that no reader
looks at. The one file appended to, a run's metrics.jsonl, is read skipping a half-written line.

A training run's folder shares these names, with spm.vocab beside spm.model (SentencePiece writes
both); its layout is train's (train/loop/run_folder.py).

To read a directory a person chose, :func:`open_model_dir` finds its format among
:data:`FORMATS`, this one or a MarianMT directory of transformers (:class:`MarianDir`), or says
which file is missing; ``ModelDir(path)`` only names the files, for writing a new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import torch

from core.errors import InputError
from core.files.checkpoint import (
    CheckpointError,
    atomic_write,
    load_model,
    save_model,
    write_text_atomically,
)
from core.files.marian import REQUIRED_FILES as MARIAN_FILES
from core.files.marian import (
    WEIGHT_FILES,
    load_marian_model,
    load_marian_tokenizer,
    marian_card,
    missing_files,
    model_config,
)
from core.files.metrics_log import read_metrics, write_metrics
from core.model.transformer import Transformer
from core.text.marian_tokenizer import MarianTokenizer
from core.text.tokenizer import Tokenizer
from core.text.truecase import Truecaser

MODEL_FILE = "model.pt"
TOKENIZER_FILE = "spm.model"
TRUECASE_FILE = "truecase.en"  # beside TOKENIZER_FILE when the vocabulary truecases its source
CARD_FILE = "card.json"
CARD_TEXT_FILE = "card.md"
METRICS_FILE = "metrics.jsonl"
SNAPSHOT_DIR = "snapshots"
HEADS_FILE = "heads.json"
REQUIRED_FILES = (MODEL_FILE, TOKENIZER_FILE)
# What shipping a model copies, with snapshots/. Not heads.json: a survey belongs to one model.pt.
SHIPPED_FILES = (MODEL_FILE, METRICS_FILE, CARD_FILE, CARD_TEXT_FILE)  # and copy_vocabulary()


class NotAModelDir(InputError, CheckpointError):
    """A folder that is not a model directory: the person who chose it can choose another. A
    CheckpointError too, as every other unusable model file is, for the callers that catch it."""


def step_file(step: int) -> str:
    """The file name of a checkpoint or a snapshot at training step ``step``."""
    return f"step_{step:07d}.pt"


def file_step(path: Path) -> int:
    """The training step a checkpoint or snapshot holds, from its file name."""
    return int(path.stem.split("_")[1])


def step_files(folder: Path) -> list[Path]:
    """The checkpoints or snapshots in ``folder``, by step ([] when there is no folder); the
    temporary file of a killed write is none of them."""
    return sorted(folder.glob("step_*.pt"), key=file_step)


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes, as 64 hex digits."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def copy_atomically(source: Path, destination: Path) -> None:
    """``source``'s bytes as ``destination``, written atomically."""

    def write(f) -> None:
        with open(source, "rb") as original:
            shutil.copyfileobj(original, f)

    atomic_write(destination, write)


def copy_vocabulary(tokenizer_file: Path, destination: Path) -> None:
    """Copy the vocabulary of ``tokenizer_file`` (an spm.model) to the spm.model ``destination``:
    the SentencePiece model, and its truecaser when it has one (a stale one is removed)."""
    copy_atomically(tokenizer_file, destination)
    truecase_file = tokenizer_file.with_name(TRUECASE_FILE)
    if truecase_file.is_file():
        copy_atomically(truecase_file, destination.with_name(TRUECASE_FILE))
    else:
        destination.with_name(TRUECASE_FILE).unlink(missing_ok=True)


def card_json(card: dict) -> str:
    """card.json's text (see the module docstring, (2))."""
    return json.dumps(card, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Snapshot:
    """The model after ``step`` training steps, in the file ``weights`` of its directory."""

    step: int
    weights: str  # relative to the directory: snapshots/step_0000100.pt ..., or model.pt


@dataclass(frozen=True)
class TrainingFiles:
    """What a run folder (train/loop/run_folder.py) and a model directory have alike: the
    vocabulary, the training log and the snapshots."""

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    @property
    def tokenizer_file(self) -> Path:
        return self.path / TOKENIZER_FILE

    @property
    def truecase_file(self) -> Path:
        return self.path / TRUECASE_FILE

    @property
    def metrics_file(self) -> Path:
        return self.path / METRICS_FILE

    def load_tokenizer(self) -> Tokenizer:
        """The vocabulary: spm.model, with the truecaser of truecase.en when there is one."""
        if not self.tokenizer_file.is_file():
            raise CheckpointError(f"{self.tokenizer_file}: no such file")
        try:
            truecaser = Truecaser(self.truecase_file) if self.truecase_file.is_file() else None
        except (OSError, ValueError) as error:
            raise CheckpointError(
                f"{self.truecase_file}: not a usable truecase model ({error})"
            ) from error
        try:
            return Tokenizer(self.tokenizer_file, truecaser)
        except (OSError, RuntimeError, ValueError) as error:
            raise CheckpointError(
                f"{self.tokenizer_file}: not a usable SentencePiece model ({error})"
            ) from error

    @property
    def snapshot_dir(self) -> Path:
        return self.path / SNAPSHOT_DIR

    def snapshot_file(self, step: int) -> Path:
        return self.snapshot_dir / step_file(step)

    def snapshot_files(self) -> list[Path]:
        return step_files(self.snapshot_dir)

    def read_metrics(self) -> list[dict]:
        """Every readable record of the training log, in order; [] when there is none."""
        return read_metrics(self.metrics_file)


@dataclass(frozen=True)
class ModelDir(TrainingFiles):
    """A model directory (see the module docstring)."""

    @property
    def model_file(self) -> Path:
        return self.path / MODEL_FILE

    @property
    def card_file(self) -> Path:
        return self.path / CARD_FILE

    @property
    def card_text_file(self) -> Path:
        return self.path / CARD_TEXT_FILE

    @property
    def heads_file(self) -> Path:
        return self.path / HEADS_FILE

    # -- reading -------------------------------------------------------------------------------

    @staticmethod
    def missing(path: Path) -> list[str]:
        """The files that make a model directory of this format that ``path`` lacks."""
        return [name for name in REQUIRED_FILES if not (path / name).is_file()]

    def load(
        self, weights: str = MODEL_FILE, device: str | torch.device = "cpu"
    ) -> tuple[Transformer, Tokenizer, dict]:
        """(model in eval mode, vocabulary, card), checked to fit together; ``weights`` is
        model.pt or the file of a snapshot (:attr:`Snapshot.weights`)."""
        model, _ = self.load_model(weights, device)
        tokenizer = self.load_tokenizer()
        if len(tokenizer) != model.config.vocab_size:
            raise CheckpointError(
                f"{self.tokenizer_file}: {len(tokenizer)} pieces, "
                f"the model expects {model.config.vocab_size}"
            )
        return model, tokenizer, self.read_card()

    def load_model(
        self, weights: str = MODEL_FILE, device: str | torch.device = "cpu"
    ) -> tuple[Transformer, dict]:
        """The model in ``weights`` (see :meth:`load`) and its metadata."""
        return load_model(self.path / weights, device)

    def read_card(self) -> dict:
        """card.json as a dict; {} when there is none. A card that is not a UTF-8 JSON object is
        a CheckpointError naming the file."""
        path = self.card_file
        if not path.exists():
            return {}
        try:
            card = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as error:  # ValueError: bad UTF-8 or JSON
            raise CheckpointError(f"{path}: not a readable JSON model card ({error})") from error
        if not isinstance(card, dict):
            raise CheckpointError(
                f"{path}: the model card is a {type(card).__name__}, not an object"
            )
        return card

    def read_card_text(self) -> str | None:
        """card.md, for people (a byte that is not UTF-8 shows as �); None when there is none."""
        if not self.card_text_file.is_file():
            return None
        return self.card_text_file.read_text(encoding="utf-8", errors="replace")

    def snapshots(self) -> list[Snapshot]:
        """The snapshots, oldest first, ending with the final model.pt at the step its card
        gives; [] when the directory keeps no snapshots."""
        files = self.snapshot_files()
        if not files:
            return []
        found = [Snapshot(file_step(path), f"{SNAPSHOT_DIR}/{path.name}") for path in files]
        final_step = self.read_card().get("training", {}).get("steps")
        if not isinstance(final_step, int) or final_step <= found[-1].step:
            final_step = found[-1].step + 1  # a card without a step count still orders it last
        return [*found, Snapshot(final_step, MODEL_FILE)]

    def model_sha256(self) -> str:
        """The sha256 of model.pt: what a file computed from it records (heads.json)."""
        if not self.model_file.is_file():
            raise CheckpointError(f"{self.model_file}: no such file")
        return file_sha256(self.model_file)

    def is_current(self, model_sha256: str) -> bool:
        """Whether what was computed on the model.pt of sha256 ``model_sha256`` still describes
        the one here; False when the model changed since, or there is no model.pt."""
        return self.model_file.is_file() and file_sha256(self.model_file) == model_sha256

    # -- writing -------------------------------------------------------------------------------

    def write(
        self, model: Transformer, tokenizer_file: str | Path, card: dict | None = None
    ) -> ModelDir:
        """A loadable model directory: model.pt, spm.model (a copy of ``tokenizer_file``, with
        its truecase.en) and card.json. Returns self."""
        self.path.mkdir(parents=True, exist_ok=True)
        save_model(model, self.model_file)
        if Path(tokenizer_file).resolve() != self.tokenizer_file.resolve():
            copy_vocabulary(Path(tokenizer_file), self.tokenizer_file)
        write_text_atomically(self.card_file, card_json(card or {}))
        return self

    def write_card(self, card: dict, text: str | None = None) -> None:
        """card.json, and card.md when there is its ``text``."""
        write_text_atomically(self.card_file, card_json(card))
        if text is not None:
            write_text_atomically(self.card_text_file, text)

    def write_metrics(self, records: Iterable[dict]) -> None:
        write_metrics(self.metrics_file, list(records))

    def save_snapshot(self, model: Transformer, step: int, train_seconds: float) -> None:
        """``model`` as the snapshot of ``step`` (float16, as model.pt)."""
        save_model(model, self.snapshot_file(step), {"step": step, "train_seconds": train_seconds})

    def remove_snapshots(self, steps: Iterable[int] | None = None) -> None:
        """The snapshots of ``steps``; all of them, snapshots/ with them, when None."""
        if steps is None:
            shutil.rmtree(self.snapshot_dir, ignore_errors=True)
            return
        for step in steps:
            self.snapshot_file(step).unlink()

    def copy_to(self, destination: ModelDir) -> None:
        """Replace ``destination``'s model by this one: the files of SHIPPED_FILES, the vocabulary
        and the snapshots (a survey stays: its sha256 says whether it still describes the new
        model)."""
        destination.path.mkdir(parents=True, exist_ok=True)
        destination.remove_snapshots()
        for name in SHIPPED_FILES:
            copy_atomically(self.path / name, destination.path / name)
        copy_vocabulary(self.tokenizer_file, destination.tokenizer_file)
        if self.snapshot_dir.is_dir():
            shutil.copytree(self.snapshot_dir, destination.snapshot_dir)


@dataclass(frozen=True)
class MarianDir(ModelDir):
    """A MarianMT directory as transformers' save_pretrained writes it, such as Helsinki-NLP's
    OPUS-MT models (core/files/marian.py reads it): read, never written here. It has no snapshots,
    training log or card.json; its card says what it is."""

    @property
    def model_file(self) -> Path:
        """The weights (model.safetensors or pytorch_model.bin): what a head survey names."""
        return next(p for p in map(self.path.joinpath, WEIGHT_FILES) if p.is_file())

    @staticmethod
    def missing(path: Path) -> list[str]:
        return missing_files(path)

    def load_tokenizer(self) -> MarianTokenizer:
        """Its vocabulary, read against the size config.json gives the model, without the
        weights."""
        return load_marian_tokenizer(self.path, model_config(self.path).vocab_size)

    def load(
        self, weights: str = MODEL_FILE, device: str | torch.device = "cpu"
    ) -> tuple[Transformer, MarianTokenizer, dict]:
        """(model in eval mode, vocabulary, card); there are no other ``weights`` to read."""
        if weights != MODEL_FILE:
            raise CheckpointError(f"{self.path}: a MarianMT directory has no {weights}")
        model = load_marian_model(self.path, device)
        tokenizer = load_marian_tokenizer(self.path, model.config.vocab_size)
        return model, tokenizer, marian_card(self.path, model.config, list(tokenizer.languages))


# The formats of model directory the lab reads, tried in this order by open_model_dir. Another
# format is one more class here, with a static method ``missing(path)`` (what the folder lacks to
# be of that format) and a method ``load``.
FORMATS: tuple[type[ModelDir], ...] = (ModelDir, MarianDir)


def open_model_dir(path: str | Path) -> ModelDir:
    """The model directory at ``path``, in the first of :data:`FORMATS` whose files it holds. A
    folder that is none is a :class:`NotAModelDir` naming the files it lacks."""
    if not isinstance(path, (str, os.PathLike)):
        raise NotAModelDir(f"A model directory is a path, got {type(path).__name__} {path!r}.")
    path = Path(path)
    if not path.is_dir():
        raise NotAModelDir(f"{path}: no such model directory")
    for directory_format in FORMATS:
        if not directory_format.missing(path):
            return directory_format(path)
    # the format the folder has a file of, to say what it lacks; ours when it has none of either
    started = [f for f in FORMATS if len(f.missing(path)) < len(f.missing(path / "-none-"))]
    lacking = " and ".join((started or FORMATS)[0].missing(path))
    raise NotAModelDir(
        f"{path}: not a model directory, it has no {lacking} (a model directory holds "
        f"{MODEL_FILE}, {TOKENIZER_FILE} and {CARD_FILE}; a MarianMT one "
        f"{', '.join(MARIAN_FILES)} and {' or '.join(WEIGHT_FILES)})"
    )
