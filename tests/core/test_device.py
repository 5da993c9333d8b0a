"""The one device choice (core.device), and every path that reads results with the model on a GPU:
traced translation, the explain lenses, coverage and head importance give the CPU's numbers. The
tests marked gpu run only where PyTorch sees CUDA (python -m train.gpu_run runs them on one)."""

import numpy as np
import pytest
import torch

from core.device import resolve_device
from core.errors import InputError
from core.inspection.ablation import KINDS, head_importance
from core.inspection.coverage import attention_coverage, step_coverage
from core.translator import Translation, Translator

# Sentences whose beam candidates (beam 3, 6 a hypothesis) lie at least 2e-4 apart in log P on the
# tiny model: a closer pair may swap ranks between devices, whose float32 sums differ by ~1e-6.
SENTENCES = [("The dog runs away.", "de"), ("Where is the station?", "de")]
BEAM_SIZE = 3
TOLERANCE = 1e-4  # attention, scores, log-probabilities
GRADIENT_TOLERANCE = 1e-3  # gradient x input and integrated gradients: sums of many gradients


def test_cpu_is_the_cpu():
    assert resolve_device("cpu") == torch.device("cpu")


def test_auto_is_the_cpu_without_cuda_and_the_local_gpu_with_it(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == torch.device("cuda", 0)
    assert resolve_device("cuda", local_rank=1) == torch.device("cuda", 1)  # torchrun's rank


def test_cuda_without_cuda_is_an_input_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InputError, match="PyTorch sees no CUDA GPU"):
        resolve_device("cuda")


@pytest.mark.parametrize("choice", ["tpu", "CUDA", "cuda:0", ""])
def test_an_unknown_device_is_an_input_error(choice):
    with pytest.raises(InputError, match=f"Unknown device {choice!r}: choose one of auto, cpu"):
        resolve_device(choice)


# --------------------------------------------------------------------------------------------------
# On a GPU: the CPU's numbers
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def on_gpu(tiny_model_dir) -> Translator:
    """The tiny model on the GPU (the translator fixture is the same model on the CPU)."""
    return Translator.load(tiny_model_dir, resolve_device("cuda"))


@pytest.fixture(autouse=True)
def full_float32():
    """float32 matmuls in full precision on the GPU, as on the CPU (no TF32), whatever an earlier
    test in the process set."""
    precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    yield
    torch.set_float32_matmul_precision(precision)


def assert_close(cpu, gpu, tolerance: float = TOLERANCE) -> None:
    np.testing.assert_allclose(np.asarray(gpu), np.asarray(cpu), rtol=tolerance, atol=tolerance)


def traced(translator: Translator, text: str, target: str) -> Translation:
    return translator.translate(text, target, beam_size=BEAM_SIZE, trace=True)


@pytest.mark.gpu
@pytest.mark.parametrize(("text", "target"), SENTENCES)
def test_a_traced_translation_on_the_gpu_is_the_cpus(translator, on_gpu, text, target):
    assert on_gpu.device.type == "cuda" and translator.device.type == "cpu"
    assert on_gpu.backend is on_gpu.model  # the engine is a CPU backend: the model decodes
    cpu, gpu = traced(translator, text, target), traced(on_gpu, text, target)
    assert (gpu.output_ids, gpu.text) == (cpu.output_ids, cpu.text)
    assert gpu.log_prob == pytest.approx(cpu.log_prob, abs=TOLERANCE)
    assert_close(cpu.token_log_probs, gpu.token_log_probs)
    for kind in ("encoder", "decoder", "cross"):
        on_cpu, on_cuda = getattr(cpu.attention, kind), getattr(gpu.attention, kind)
        assert on_cuda.weights.dtype == np.float32 and on_cuda.weights.shape == on_cpu.weights.shape
        assert_close(on_cpu.weights, on_cuda.weights)
        assert_close(on_cpu.scores, on_cuda.scores)
        np.testing.assert_array_equal(on_cpu.allowed, on_cuda.allowed)
    for name, values in vars(cpu.embeddings).items():
        assert_close(values, getattr(gpu.embeddings, name))
    assert len(gpu.steps) == len(cpu.steps)
    for on_cpu, on_cuda in zip(cpu.steps, gpu.steps):
        assert [h.ids for h in on_cuda.hypotheses] == [h.ids for h in on_cpu.hypotheses]
        decided = [[(c.parent, c.token, c.status) for c in s.candidates] for s in (on_cpu, on_cuda)]
        assert decided[1] == decided[0]
        log_probs = [[c.log_prob for c in s.candidates] for s in (on_cpu, on_cuda)]
        assert_close(*log_probs)
        assert_close(on_cpu.cross_weights, on_cuda.cross_weights)
    assert [h.ids for h in gpu.finished] == [h.ids for h in cpu.finished]
    assert_close(translator.trace(cpu).token_log_probs, on_gpu.trace(cpu).token_log_probs)


@pytest.mark.gpu
def test_the_explain_lenses_on_the_gpu_are_the_cpus(translator, on_gpu):
    pytest.importorskip("captum", reason="the explain lenses are the app's (requirements.txt)")
    from core.inspection.attribution import contrast, lenses

    text, target = SENTENCES[0]
    cpu, gpu = traced(translator, text, target), traced(on_gpu, text, target)
    position = 1
    expected, found = lenses(translator.model, cpu, position), lenses(on_gpu.model, gpu, position)
    assert list(found.values) == list(expected.values)
    for name, values in expected.values.items():
        gradients = name in ("gradient x input", "integrated gradients")
        assert found.values[name].shape == values.shape, name
        assert_close(values, found.values[name], GRADIENT_TOLERANCE if gradients else TOLERANCE)
    assert found.log_prob == pytest.approx(expected.log_prob, abs=TOLERANCE)
    assert found.ig_delta == pytest.approx(expected.ig_delta, abs=GRADIENT_TOLERANCE)
    foil = next(piece for piece in cpu.output_ids if piece != cpu.output_ids[position])
    why = contrast(translator.model, cpu, position, foil)
    why_on_gpu = contrast(on_gpu.model, gpu, position, foil)
    assert_close(why.values, why_on_gpu.values, GRADIENT_TOLERANCE)
    assert why_on_gpu.log_ratio == pytest.approx(why.log_ratio, abs=TOLERANCE)


@pytest.mark.gpu
def test_coverage_on_the_gpu_is_the_cpus(translator, on_gpu):
    text, target = SENTENCES[1]
    cpu, gpu = traced(translator, text, target), traced(on_gpu, text, target)
    for kind in ("attention", "word_attention"):  # by pieces, and by words
        expected, found = (attention_coverage(getattr(result, kind).cross) for result in (cpu, gpu))
        assert_close(expected.values(), found.values())
        assert found.flags() == expected.flags()
    pieces = translator.tokenizer.pieces
    for step in range(len(cpu.steps)):
        expected = step_coverage(cpu.steps, step, pieces)
        found = step_coverage(gpu.steps, step, pieces)
        assert len(found) == len(expected)
        for on_cpu, on_cuda in zip(expected, found):
            assert_close(on_cpu.values(), on_cuda.values())


@pytest.mark.gpu
@pytest.mark.parametrize("kind", KINDS)
def test_head_importance_on_the_gpu_is_the_cpus(translator, on_gpu, kind):
    result = traced(translator, *SENTENCES[0])
    assert_close(head_importance(translator, result, kind), head_importance(on_gpu, result, kind))
