"""Every API argument is checked at the door: a bad one is an InputError naming it, never a raw
TypeError, IndexError or AssertionError from deep in torch, nor a silent other meaning (issue 59,
finding 6)."""

import pytest
import torch

from core.errors import InputError
from core.files.model_dir import open_model_dir
from core.inspection.ablation import head_importance
from core.translator import Translator


def attribution():
    """core.inspection.attribution, or a skip where captum is not installed (a training box)."""
    pytest.importorskip("captum")
    from core.inspection import attribution

    return attribution


@pytest.fixture(scope="module")
def translator(tiny_model_dir):
    return Translator.load(tiny_model_dir)


@pytest.fixture(scope="module")
def translation(translator):
    return translator.translate("The dog runs.", "de", beam_size=1)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_load_on_cuda_without_a_gpu(tiny_model_dir):
    with pytest.raises(InputError, match="sees no CUDA GPU"):
        Translator.load(tiny_model_dir, device="cuda")


def test_load_on_a_device_torch_does_not_know(tiny_model_dir):
    with pytest.raises(InputError, match="Unknown device 'gpu7'"):
        Translator.load(tiny_model_dir, device="gpu7")


@pytest.mark.parametrize("path", [123, 4.5, ["pretrained"]])
def test_load_of_something_that_is_not_a_path(path):
    with pytest.raises(InputError, match="A model directory is a path"):
        Translator.load(path)


@pytest.mark.parametrize("texts", [[None], ["A dog.", 7], [b"bytes"]])
def test_translate_batch_of_something_that_is_not_text(translator, texts):
    with pytest.raises(InputError, match="The text must be a string"):
        translator.translate_batch(texts, "de", beam_size=1)


@pytest.mark.parametrize("position", [999, -1, 1.5, "0"])
def test_occlusion_at_a_position_the_translation_does_not_have(translator, translation, position):
    with pytest.raises(InputError, match=r"[Pp]osition"):
        attribution().occlusion(translator.model, translation, position)


def test_occlusion_at_the_last_position_works(translator, translation):
    last = len(translation.output_ids) - 1
    assert attribution().occlusion(translator.model, translation, last).shape == (
        len(translation.source_ids),
    )


def test_head_importance_of_an_unknown_kind(translator, translation):
    with pytest.raises(InputError, match="Unknown kind of head 'bogus'"):
        head_importance(translator, translation, kind="bogus")


def test_a_marian_folder_missing_its_vocabulary_is_told_so(tmp_path):
    for name in ("config.json", "source.spm", "target.spm", "model.safetensors"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(InputError) as error:
        open_model_dir(tmp_path)
    assert "it has no vocab.json" in str(error.value)
    assert "no model.pt" not in str(error.value)


def test_a_folder_of_neither_format_is_told_what_ours_needs(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InputError, match=r"it has no model\.pt and spm\.model"):
        open_model_dir(tmp_path)
