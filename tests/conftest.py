"""Shared fixtures: a tiny random model directory, built in a second, so tests need no data. Nothing
here imports streamlit or app: what only the app's tests use is in tests/app (conftest.py and
apptest.py)."""

from __future__ import annotations

import shutil

import pytest
import torch

from core.files.model_dir import ModelDir
from core.inspection.head_survey import SamplePair, survey, work_units
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.text.tokenizer import EOS_ID, Tokenizer
from core.translator import Translator
from support.tiny_corpus import tiny_corpus
from train.loop.environment import APP_PACKAGES

TINY = ModelConfig(
    vocab_size=400,
    d_model=32,
    n_heads=4,
    n_encoder_layers=2,
    n_decoder_layers=2,
    d_ff=64,
    dropout=0.0,
    max_len=96,
)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A loadable model directory (model.pt, spm.model, card.json) holding a random tiny model."""
    root = tmp_path_factory.mktemp("tiny")
    tokenizer = Tokenizer.train(tiny_corpus(), root / "spm", vocab_size=TINY.vocab_size)
    torch.manual_seed(0)
    model = Transformer(TINY)
    return ModelDir(root / "model").write(model, tokenizer.model_file, {"name": "tiny-random"}).path


EARLY_STEPS = (5, 20)  # the snapshots of history_dir
FINAL_STEP = 40


@pytest.fixture(scope="session")
def history_dir(tiny_model_dir, tmp_path_factory):
    """The tiny model with a training history: two earlier (random) snapshots, a card giving its
    step count and a training log, as the Training dynamics page reads them."""
    model_dir = ModelDir(tmp_path_factory.mktemp("history") / "model")
    shutil.copytree(tiny_model_dir, model_dir.path)
    for seed, step in enumerate(EARLY_STEPS, start=1):
        torch.manual_seed(seed)
        model_dir.save_snapshot(Transformer(TINY), step, train_seconds=0.0)
    model_dir.write_card({**model_dir.read_card(), "training": {"steps": FINAL_STEP}})
    log = [{"step": step, "train_loss": 9.0 - step / 10} for step in range(5, FINAL_STEP + 1, 5)]
    validation = {"step": 20, "val_loss": 3.5, "val_bleu_de": 12.5}
    model_dir.write_metrics([*log, validation])
    return model_dir.path


@pytest.fixture
def moved_history_dir(history_dir, tmp_path):
    """The history, as if the model had been moved onto its vocabulary after EARLY_STEPS[0]."""
    moved = ModelDir(tmp_path / "moved")
    shutil.copytree(history_dir, moved.path)
    record = {"at_step": EARLY_STEPS[0], "old_vocab_size": 300, "new_vocab_size": TINY.vocab_size}
    training = {**moved.read_card()["training"], "vocabulary_transfer": record}
    moved.write_card({**moved.read_card(), "training": training})
    return moved.path


@pytest.fixture(scope="session")
def translator(tiny_model_dir) -> Translator:
    return Translator.load(tiny_model_dir)


@pytest.fixture
def model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(TINY).eval()


def eos_prone_model(seed: int) -> Transformer:
    """A random model nudged to say </s> now and then, so searches end by eos, not by length."""
    torch.manual_seed(seed)
    model = Transformer(TINY).eval()
    with torch.no_grad():
        model.embedding.weight[EOS_ID] *= 6
    return model


# The head survey of four sentences: tests/core/test_head_survey.py checks it, and
# tests/app/test_head_lab_survey.py checks that the Heads lab draws it.
BEAM, ALPHA = 4, 0.6
HEADS_OFF = [4, 24]  # with 0: three points of the tiny model's 24 heads (2 + 2 layers x 4 x 3)


def plain_translations(translator, pairs):
    return [translator.translate(p.source, p.target, BEAM, ALPHA).text for p in pairs]


@pytest.fixture(scope="module")
def pairs(translator):
    """Four made-up sentences, de and fr alternating, whose references are the plain model's own
    beam translations: the full model scores BLEU 100, any change in its output scores less."""
    sources = tiny_corpus(4, seed=11)
    drafts = [SamplePair("de" if i % 2 == 0 else "fr", s, "") for i, s in enumerate(sources)]
    references = plain_translations(translator, drafts)
    assert all(references)  # non-empty, so BLEU is defined
    return [SamplePair(p.target, p.source, r) for p, r in zip(drafts, references)]


@pytest.fixture(scope="module")
def surveyed(translator, pairs, tiny_model_dir):
    calls = []
    result = survey(
        translator,
        pairs,
        ModelDir(tiny_model_dir).model_sha256(),
        "four made-up sentences",
        HEADS_OFF,
        BEAM,
        ALPHA,
        progress=calls.append,
    )
    assert len(calls) == work_units(len(pairs), len(result.pruning)) == 12
    return result


def skip_without_app() -> None:
    """Skip the calling test module (or conftest's folder) on a machine without the app's
    packages: one that only trains (requirements-train.txt, train/loop/environment.py)."""
    for package in APP_PACKAGES:
        pytest.importorskip(package, reason="the app's packages (requirements.txt) are missing")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` need CUDA: skipped, with the reason, on a machine without a GPU."""
    if torch.cuda.is_available():
        return
    no_gpu = pytest.mark.skip(reason="needs a CUDA GPU (python -m train.gpu_run runs these on one)")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(no_gpu)
