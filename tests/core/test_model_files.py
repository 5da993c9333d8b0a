"""A damaged or hostile model file is refused with a CheckpointError naming the file, before
any weight is allocated."""

import dataclasses
import time

import pytest

from core.files.checkpoint import (
    FORMAT,
    MAX_NUMBERS,
    CheckpointError,
    allocated_numbers,
    atomic_save,
    load_model,
)
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from tests.conftest import TINY


def model_file(tmp_path, **config):
    """A model.pt whose config is TINY's with ``config`` changed, and no weights."""
    path = tmp_path / "model.pt"
    values = {**dataclasses.asdict(TINY), **config}
    atomic_save({"format": FORMAT, "config": values, "state_dict": {}, "metadata": {}}, path)
    return path


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"vocab_size": -5}, r"vocab_size=-5 is outside \[1, "),
        ({"n_heads": 0}, r"n_heads=0 is outside"),
        ({"n_encoder_layers": 0}, r"n_encoder_layers=0 is outside"),
        ({"max_len": -1}, r"max_len=-1 is outside"),
        ({"pad_id": 400}, r"pad_id=400 is outside \[0, 399\]"),
        ({"dropout": float("nan")}, r"dropout=nan is outside"),
        ({"d_model": "32"}, r"d_model='32' is not int"),
        ({"d_model": 32.0}, r"d_model=32.0 is not int"),
        ({"norm_first": 1}, r"norm_first=1 is not bool"),
        ({"n_layers": 2}, r"unknown model config field 'n_layers'"),
        ({"d_model": 30}, r"bad model config \(d_model=30 is not divisible"),
    ],
)
def test_config_values_out_of_range_or_of_the_wrong_type_are_refused(tmp_path, config, message):
    path = model_file(tmp_path, **config)
    with pytest.raises(CheckpointError, match=f"^{path}: .*{message}"):
        load_model(path)


def test_a_config_asking_for_256_gb_is_refused_before_allocating(tmp_path):
    # every field in its range, together 64 G numbers (256 GB of float32)
    path = model_file(
        tmp_path, vocab_size=1_000_000, d_model=16_384, n_heads=16, d_ff=65_536, max_len=65_536
    )
    started = time.perf_counter()
    with pytest.raises(CheckpointError, match=f"^{path}: the model config asks for .* numbers"):
        load_model(path)
    assert time.perf_counter() - started < 5


def test_a_config_that_is_not_a_dict_is_refused(tmp_path):
    path = tmp_path / "model.pt"
    atomic_save({"format": FORMAT, "config": [1, 2], "state_dict": {}}, path)
    with pytest.raises(CheckpointError, match=f"^{path}: no model config"):
        load_model(path)


@pytest.mark.parametrize("norm_first", [False, True])
def test_the_allocation_estimate_is_what_a_model_allocates(norm_first):
    config = dataclasses.replace(TINY, n_decoder_layers=3, norm_first=norm_first)
    model = Transformer(config)
    assert allocated_numbers(config) == model.num_parameters() + model.pe.numel()
    assert allocated_numbers(ModelConfig()) < MAX_NUMBERS  # the paper's base model loads
