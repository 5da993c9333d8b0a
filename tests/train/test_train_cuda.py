"""The trainer's whole path on a GPU (skipped without one; `python -m train.gpu_run` runs these on
one): steps with compiled layers and length buckets, validation, export, resume; and on the CPU,
that asking for a GPU where there is none is a message, not a traceback."""

import json

import pytest
import torch

from core.files.checkpoint import safe_load
from core.translator import Translator
from tests.training import run_train, write_tiny_data


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_tiny_data(tmp_path_factory.mktemp("data"))


@pytest.mark.slow
def test_device_cuda_without_a_gpu_is_a_clear_error(data_dir, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    process = run_train(data_dir, tmp_path / "run", "--device", "cuda")
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 1
    assert "error: --device cuda was asked for, but PyTorch sees no CUDA GPU here." in output
    assert "Traceback" not in output


@pytest.mark.gpu
def test_the_trainer_trains_validates_exports_and_resumes_on_a_gpu(data_dir, tmp_path):
    flags = ["--device", "cuda", "--length-bucket", "16", "--eval-every", "10"]
    first = run_train(data_dir, tmp_path / "run", *flags, "--compile", "--max-steps", "20")
    output, _ = first.communicate(timeout=900)
    assert first.returncode == 0, output
    assert "BLEU" in output and "compiled the layers" in output
    # resumed without --compile: the same model, and a shorter test on a lent GPU's clock
    resumed = run_train(data_dir, tmp_path / "run", *flags, "--max-steps", "30")
    output, _ = resumed.communicate(timeout=900)
    assert resumed.returncode == 0, output
    assert "resumed from" in output
    checkpoint = safe_load(sorted((tmp_path / "run/checkpoints").glob("step_*.pt"))[-1])
    assert checkpoint["step"] == 30 and "cuda" in checkpoint["rng"]
    card = json.loads((tmp_path / "run/model/card.json").read_text())
    training = card["training"]
    assert training["device"] == "cuda" and training["steps"] == 30
    assert training["fast_paths"] == {
        "explicit_attention": False, "byte_mask_dropout": False, "loss_chunk_rows": 0,
    }  # fmt: skip
    assert training["validation"]["val_loss"] > 0
    translator = Translator.load(tmp_path / "run/model", device="cuda")
    traced = translator.translate("The dog runs.", "de", beam_size=2, trace=True)
    assert traced.attention.cross.weights.shape[-1] == len(traced.source_tokens)
