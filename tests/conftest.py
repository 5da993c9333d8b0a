"""Shared fixtures: a tiny random model directory, built in a second, so tests need no data."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from core.files.model_dir import ModelDir
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.text.tokenizer import EOS_ID, Tokenizer
from core.translator import Translator
from support.tiny_corpus import tiny_corpus

MAIN = str(Path(__file__).resolve().parent.parent / "app" / "main.py")

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


def plotted(values) -> np.ndarray:
    """An array as the browser receives it: plotly sends numeric arrays as typed base64 data."""
    if isinstance(values, dict):
        shape = [int(size) for size in str(values.get("shape", "-1")).split(",")]
        flat = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
        return flat.reshape(shape)
    return np.asarray(values)


def chart_specs(at) -> list[dict]:
    """The Plotly figures an AppTest run drew, as the JSON the browser receives."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


@pytest.fixture
def app(tiny_model_dir, monkeypatch):
    """Open a page of the app on the tiny model: app("attention", layer="1") runs it once, on the
    app's first example unless ``text=`` says otherwise."""
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))

    def open_page(page: str = "translate", **query: str) -> AppTest:
        at = AppTest.from_file(MAIN, default_timeout=120)
        at.query_params.update(query)
        at.switch_page(f"views/{page}.py")
        return at.run()

    return open_page


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` need CUDA: skipped, with the reason, on a machine without a GPU."""
    if torch.cuda.is_available():
        return
    no_gpu = pytest.mark.skip(reason="needs a CUDA GPU (python -m train.gpu_run runs these on one)")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(no_gpu)
