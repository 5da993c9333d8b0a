"""core/model/engine.py computes what core/model/transformer.py computes: the same translations,
beam steps and attention maps, for random models and the shipped one, greedy and beam 4, single
sentences and padded batches. Tokens, texts and beam decisions must be identical; numbers agree
within 5e-5, or 1e-6 of their size (a beam's summed log-probability reaches -100, where float32
steps by 8e-6). The engine runs its large weights on oneDNN, whose sums are ordered unlike MKL's: on
the shipped model (d192) at most 1.3e-5 on beam scores, 1.2e-5 on logits, 1.6e-6 on attention
weights (one thread, 2026-11-25); MKL may also pick other kernels on another CPU or with two
threads."""

from __future__ import annotations

import ast
import collections
import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from core.decoding.search import beam_search, greedy_decode
from core.inspection.ablation import Head, intervened, intervened_translator
from core.model import transformer
from core.model.config import ACTIVATIONS, POSITIONAL_LAYOUTS, ModelConfig
from core.model.engine import PACK_ABOVE_BYTES, Engine, PackedLinear
from core.model.transformer import Attend, Transformer, attention
from core.text.tokenizer import BOS_ID, EOS_ID
from core.translator import Translator
from tests.conftest import TINY

# post-LN with d_k 8 (the tiny test model), and pre-LN with d_k 12 and uneven depths
CONFIGS = {
    "post-LN": TINY,
    "pre-LN": dataclasses.replace(
        TINY, d_model=48, n_heads=4, n_encoder_layers=3, n_decoder_layers=2, norm_first=True
    ),
}
SENTENCES = [
    ("The dog runs away.", "de"),
    ("She reads a book in the garden every morning.", "fr"),
    ("Where is the station?", "de"),
    ("I think that the weather will be better tomorrow, but I am not sure.", "fr"),
]
TOLERANCE = 5e-5
RELATIVE_TOLERANCE = 1e-6


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def assert_same(expected, actual, where: str = "result") -> None:
    """Every field of two results equal: tensors, arrays and floats within tolerance; token ids,
    texts, statuses, dtypes and shapes exactly. Recurses into dataclasses and lists."""
    if isinstance(expected, (torch.Tensor, np.ndarray)):
        expected, actual = torch.as_tensor(expected), torch.as_tensor(actual)
        assert (expected.dtype, expected.shape) == (actual.dtype, actual.shape), where
        close = torch.allclose(
            expected, actual, rtol=RELATIVE_TOLERANCE, atol=TOLERANCE, equal_nan=True
        )
        assert close, f"{where}: {(expected - actual).abs().nan_to_num().max()}"
    elif dataclasses.is_dataclass(expected):
        assert type(expected) is type(actual), where
        for field in dataclasses.fields(expected):
            name = field.name
            assert_same(getattr(expected, name), getattr(actual, name), f"{where}.{name}")
    elif isinstance(expected, (list, tuple)):
        assert len(expected) == len(actual), f"{where}: {len(expected)} != {len(actual)} items"
        for i, (a, b) in enumerate(zip(expected, actual)):
            assert_same(a, b, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert expected == pytest.approx(
            actual, rel=RELATIVE_TOLERANCE, abs=TOLERANCE, nan_ok=True
        ), where
    else:
        assert expected == actual, f"{where}: {expected!r} != {actual!r}"


def random_model(config: ModelConfig, seed: int) -> Transformer:
    """A random model nudged to say </s> now and then, so searches also end by eos."""
    torch.manual_seed(seed)
    model = Transformer(config).eval()
    with torch.no_grad():
        model.embedding.weight[EOS_ID] *= 6
    return model


def random_sources(config: ModelConfig, n: int = 4) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(7)
    lengths = torch.randint(3, 20, (n,), generator=generator).tolist()
    return [torch.randint(5, config.vocab_size, (1, s), generator=generator) for s in lengths]


def padded(rows: list[list[int]], pad_id: int = 0) -> torch.Tensor:
    width = max(len(row) for row in rows)
    return torch.tensor([row + [pad_id] * (width - len(row)) for row in rows])


# --------------------------------------------------------------------------------------------------
# Random models
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("beam_size", [1, 4])
def test_beam_search_is_the_models(name, beam_size):
    config = CONFIGS[name]
    ended_by_eos = reordered = 0
    for seed in range(3):
        model = random_model(config, seed)
        engine = Engine(model)
        for source in random_sources(config):
            for trace in (False, True):
                expected = beam_search(model, source, beam_size, trace=trace)
                actual = beam_search(engine, source, beam_size, trace=trace)
                assert_same(expected, actual)
            ended_by_eos += expected.ids[-1] == EOS_ID
            reordered += any(c.parent > 0 for s in expected.steps for c in s.candidates)
    assert ended_by_eos and expected.steps  # eos, the length limit and the trace were exercised
    assert reordered or beam_size == 1  # survivors took other rows' keys and values


@pytest.mark.parametrize("name", CONFIGS)
def test_padded_greedy_batch_is_the_models(name):
    config = CONFIGS[name]
    model = random_model(config, 1)
    batch = padded([source[0].tolist() for source in random_sources(config, 6)])
    assert (batch == config.pad_id).any()
    expected = greedy_decode(model, batch)
    assert greedy_decode(Engine(model), batch) == expected
    assert expected == [greedy_decode(model, row[row != config.pad_id][None])[0] for row in batch]


@pytest.mark.parametrize("name", CONFIGS)
def test_traced_pass_over_a_padded_batch_is_the_models(name):
    """Every attention map (scores, masked scores, weights), the embeddings and the logits."""
    config = CONFIGS[name]
    model = random_model(config, 2)
    sources = padded([s[0].tolist() for s in random_sources(config, 3)])
    targets = padded([[BOS_ID, *s[0, :5].tolist()] for s in random_sources(config, 3)])
    engine = Engine(model)
    with torch.inference_mode():
        expected = model(sources, targets, trace=True)
        assert_same(expected, engine(sources, targets, trace=True))
        assert_same(model(sources, targets), engine(sources, targets))
    _, trace = expected
    assert len(trace.cross) == config.n_decoder_layers
    assert torch.isinf(trace.encoder_self[0].masked_scores).any()  # the padding was masked


def test_every_map_the_engine_traces_is_computed_by_the_models_attention(monkeypatch):
    """The engine attends with each module's own Attend: its maps are the very objects
    core.model.transformer.attention returned, one per layer and kind."""
    model = random_model(CONFIGS["pre-LN"], 3)
    engine, (source,) = Engine(model), random_sources(model.config, 1)
    computed = []

    def spied(*arguments):
        output, maps = attention(*arguments)
        computed.append(maps)
        return output, maps

    monkeypatch.setattr(transformer, "attention", spied)
    with torch.inference_mode():
        _, intermediates = engine(source, torch.tensor([[BOS_ID, 9, 10]]), trace=True)
    traced = [*intermediates.encoder_self, *intermediates.decoder_self, *intermediates.cross]
    assert len(traced) == 3 + 2 * 2 and len(computed) == len(traced)
    assert {id(maps) for maps in traced} == {id(maps) for maps in computed}


def test_the_engine_runs_the_models_own_pass_with_its_layer_kernels(monkeypatch):
    """One forward pass: the engine's encode and decode are the model's (its embedding, masks,
    layer loop and output projection), which asks the engine's kernel for each layer in place of
    the layer's modules, and never runs those."""
    model = random_model(CONFIGS["pre-LN"], 4)
    engine, (source,) = Engine(model), random_sources(model.config, 1)
    calls = collections.Counter()

    def count(owner: type, name: str) -> None:
        method = getattr(owner, name)

        def counted(*arguments, **keywords):
            calls[name] += 1
            return method(*arguments, **keywords)

        monkeypatch.setattr(owner, name, counted)

    for name in ("encode", "embed", "decoder_output"):
        count(Transformer, name)
    for name in ("encoder_layer", "decoder_layer"):
        count(Engine, name)
    for module in (transformer.EncoderLayer, transformer.DecoderLayer):
        monkeypatch.setattr(module, "forward", lambda *_: pytest.fail("a module computed a layer"))
    (ids,) = greedy_decode(engine, source, max_length=6)
    steps, config = calls["decoder_output"], model.config
    assert calls["encode"] == 1 and steps >= len(ids) >= 1 and calls["embed"] == 1 + steps
    assert calls["encoder_layer"] == config.n_encoder_layers
    assert calls["decoder_layer"] == config.n_decoder_layers * steps


PASSES = {"encode", "decode", "decoder_output", "forward", "__call__"}


def passes_over_layers(source: str) -> set[str]:
    """The functions in ``source`` named as a pass (PASSES) that loop over a model's layers."""
    found = set()
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, ast.FunctionDef) and function.name in PASSES:
            loops = [node for node in ast.walk(function) if isinstance(node, ast.For)]
            names = {n.attr for loop in loops for n in ast.walk(loop.iter) if hasattr(n, "attr")}
            if names & {"encoder_layers", "decoder_layers"}:
                found.add(function.name)
    return found


def test_core_writes_the_encode_and_decode_pass_once():
    """Only core/model/transformer.py loops over the layers in an encode or decode pass: the
    engine supplies kernels for a layer, not a second pass (the rule finds its planted case)."""
    planted = "class Engine:\n    def decode(self, x):\n        for l in self.decoder_layers:\n"
    assert passes_over_layers(planted + "            x = l(x)\n") == {"decode"}
    core = Path(transformer.__file__).parents[1]
    passes = {
        path.relative_to(core).as_posix(): found
        for path in sorted(core.rglob("*.py"))
        if (found := passes_over_layers(path.read_text()))
    }
    assert passes == {"model/transformer.py": {"encode", "decoder_output"}}


# --------------------------------------------------------------------------------------------------
# Every setting of the config: the engine packs the model's modules, so none can diverge unseen
# --------------------------------------------------------------------------------------------------

# ModelConfig's fields that size the model, tried by the tests above at two shapes
SIZES = {"vocab_size", "d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff"}
SIZES |= {"dropout", "max_len", "pad_id", "eos_id"}
# every other field, with each value it can take beside TINY's
SETTINGS = {
    "norm_first": [True],
    "activation": sorted(set(ACTIVATIONS) - {TINY.activation}),
    "scale_embedding": [False],
    "positional_layout": sorted(set(POSITIONAL_LAYOUTS) - {TINY.positional_layout}),
    "output_bias": [True],
    "bos_id": [TINY.pad_id],  # Marian's: the decoder starts from pad
    "suppress_pad": [True],
}
MARIAN = {name: values[0] for name, values in SETTINGS.items() if name != "norm_first"}
MARIAN["activation"] = "swish"


def test_every_field_of_the_config_is_a_size_or_a_setting_tried_below():
    """A new field of ModelConfig fails here until the parity tests try it."""
    assert {field.name for field in dataclasses.fields(ModelConfig)} == SIZES | set(SETTINGS)


def assert_engine_is_model(model: Transformer) -> None:
    """A traced teacher-forced pass over a padded batch and a traced beam search, equal."""
    config = model.config
    sources = padded([s[0].tolist() for s in random_sources(config, 3)], config.pad_id)
    targets = padded([[config.bos_id, *s[0, :5].tolist()] for s in random_sources(config, 3)])
    engine = Engine(model)
    with torch.inference_mode():
        assert_same(model(sources, targets, trace=True), engine(sources, targets, trace=True))
    source = random_sources(config, 1)[0]
    assert_same(
        beam_search(model, source, 4, trace=True), beam_search(engine, source, 4, trace=True)
    )


def with_random_output_bias(model: Transformer) -> Transformer:
    if model.config.output_bias:
        with torch.no_grad():
            model.output_bias.normal_()
    return model


@pytest.mark.parametrize(
    "setting",
    [{name: value} for name, values in SETTINGS.items() for value in values] + [MARIAN],
    ids=lambda setting: ",".join(f"{name}={value}" for name, value in setting.items()),
)
def test_the_engine_computes_what_the_model_computes_for_every_setting(setting):
    config = dataclasses.replace(TINY, **setting)
    assert_engine_is_model(with_random_output_bias(random_model(config, 4)))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_the_engine_takes_each_layer_norms_own_epsilon(norm_first):
    """A setting that has no weight: each nn.LayerNorm's eps, read from the module."""
    model = random_model(dataclasses.replace(TINY, norm_first=norm_first), 5)
    norms = [module for module in model.modules() if isinstance(module, torch.nn.LayerNorm)]
    for i, norm in enumerate(norms):
        norm.eps = 10.0 ** -(i % 4)  # large enough to change the numbers
    assert_engine_is_model(model)


# --------------------------------------------------------------------------------------------------
# Translator: fast by default, the same results as the readable path
# --------------------------------------------------------------------------------------------------


def fast_and_readable(translator: Translator) -> tuple[Translator, Translator]:
    readable = Translator(translator.model, translator.tokenizer, translator.card, fast=False)
    assert isinstance(translator.backend, Engine) and readable.backend is readable.model
    return translator, readable


def assert_translators_agree(fast: Translator, readable: Translator, sentences) -> None:
    for text, target in sentences:
        for beam_size in (1, 4):
            expected = readable.translate(text, target, beam_size, trace=True)
            assert_same(expected, fast.translate(text, target, beam_size, trace=True))
    texts = [text for text, _ in sentences]
    assert fast.translate_batch(texts, "de", beam_size=1) == readable.translate_batch(
        texts, "de", beam_size=1
    )


def test_translator_is_fast_and_the_same(translator):
    fast, readable = fast_and_readable(translator)
    assert_translators_agree(fast, readable, SENTENCES)
    result = readable.translate(*SENTENCES[1], trace=True)
    assert_same(readable.trace(result), fast.trace(result))
    assert_same(readable.predictions(result), fast.predictions(result))
    texts = [text for text, _ in SENTENCES]  # of different lengths: padded
    assert_same(readable.encode_batch(texts), fast.encode_batch(texts))


@pytest.mark.parametrize("rows", [1, 4, 30])
def test_a_large_layer_runs_on_onednn_a_small_one_as_nn_linear_does(rows):
    torch.manual_seed(0)
    large, small = torch.nn.Linear(256, 1024), torch.nn.Linear(256, 128)
    assert large.weight.nbytes > PACK_ABOVE_BYTES >= small.weight.nbytes
    x = torch.randn(rows, 256)
    with torch.inference_mode():
        fast_small, fast_large = (
            PackedLinear.of(m.weight.detach(), m.bias.detach()) for m in (small, large)
        )
        assert fast_small.packed is None
        assert torch.equal(fast_small(x), small(x))
        if torch.backends.mkldnn.is_available():
            assert fast_large.packed is not None
        assert_same(large(x), fast_large(x))


@pytest.fixture(scope="module")
def shipped() -> Translator:
    return Translator.load()


@pytest.mark.slow
def test_the_shipped_model_translates_the_same(shipped):
    fast, readable = fast_and_readable(shipped)
    assert_translators_agree(fast, readable, SENTENCES)
    result = fast.translate(*SENTENCES[0])
    assert "Hund" in result.text  # a real translation, not noise


def test_cached_steps_give_the_models_logits_for_any_number_of_rows(shipped):
    """1 to 9 hypotheses (oneDNN lays the large weights out for 4 rows; any number must do)."""
    model, engine = shipped.model, Engine(shipped.model)
    source = torch.tensor([shipped.source_ids(*SENTENCES[3])[0]])
    generator = torch.Generator().manual_seed(3)
    for rows in range(1, 10):
        prefix = torch.randint(5, model.config.vocab_size, (rows, 3), generator=generator)
        with torch.inference_mode():
            caches = model.new_cache(), engine.new_cache()
            memories = model.encode(source), engine.encode(source)
            for position in range(prefix.size(1)):
                tokens = prefix[:, position : position + 1]
                expected = model.decode(tokens, *memories[0], caches[0])
                assert_same(expected, engine.decode(tokens, *memories[1], caches[1]))


@pytest.mark.slow
def test_two_threads_keep_the_tokens_and_the_numbers_within_tolerance(shipped):
    fast, readable = fast_and_readable(shipped)
    torch.set_num_threads(2)  # on a busy machine two threads are slow: one sentence
    expected = readable.translate(*SENTENCES[0], beam_size=4, trace=True)
    actual = fast.translate(*SENTENCES[0], beam_size=4, trace=True)
    assert_same(expected, actual)


# --------------------------------------------------------------------------------------------------
# When the engine cannot stand for the model
# --------------------------------------------------------------------------------------------------


def test_the_engine_follows_changed_weights(tiny_model_dir):
    fast, readable = fast_and_readable(Translator.load(tiny_model_dir))
    engine = fast.backend
    with torch.no_grad():
        fast.model.decoder_layers[0].self_attn.w_q.weight.mul_(3.0)  # inside the fused W^QKV
    assert fast.backend is not engine
    assert_translators_agree(fast, readable, SENTENCES[:1])


def test_the_engine_packs_the_modules_and_checks_every_shape(model):
    """The engine walks the model's modules: a weight of another shape, a weight the config
    promises but the model lacks, or a parameter the engine would not run is an error naming
    it."""
    d_model = model.config.d_model
    wrong_shape = copy.deepcopy(model)
    wrong_shape.decoder_layers[0].cross_attn.w_o.weight = torch.nn.Parameter(
        torch.zeros(d_model, d_model + 1)
    )
    with pytest.raises(ValueError, match=r"decoder_layers\.0\.cross_attn\.w_o\.weight has shape"):
        Engine(wrong_shape)
    missing = copy.deepcopy(model)
    missing.config = dataclasses.replace(model.config, output_bias=True)
    with pytest.raises(ValueError, match="no weight 'output_bias'"):
        Engine(missing)
    extra = copy.deepcopy(model)
    extra.register_parameter("temperature", torch.nn.Parameter(torch.ones(1)))
    with pytest.raises(ValueError, match="does not run: temperature"):
        Engine(extra)
    Engine(model)  # the model itself is read whole


class SameAttend(Attend):
    """An Attend of another type that changes nothing."""


@pytest.mark.parametrize("how", ["off", "uniform", "permute", "same"])
def test_the_engine_runs_only_models_that_attend_with_the_models_own_attend(model, how):
    """Whatever is put in place of an attention's Attend, an intervention or a subclass that
    changes nothing, the engine does not stand for the model: the check is by type."""
    assert Engine.can_run(model)
    if how == "same":
        changed = copy.deepcopy(model)
        changed.decoder_layers[1].cross_attn.attend = SameAttend().eval()
    else:
        changed = intervened(model, [Head("encoder", 1, 0)], how)
    assert not Engine.can_run(changed)
    assert Engine.can_run(model)  # the original is untouched


def test_the_engine_declines_weights_off_the_cpu(translator):
    """The engine is a CPU backend (oneDNN): a model elsewhere (meta tensors stand for a GPU's
    here) is decoded by the model itself, and an engine is not built for it."""
    elsewhere = copy.deepcopy(translator.model).to("meta")
    assert Engine.can_run(translator.model) and not Engine.can_run(elsewhere)
    with pytest.raises(ValueError, match="runs on the CPU, and the model's weights are on meta"):
        Engine(elsewhere)
    decoding = Translator(elsewhere, translator.tokenizer)
    assert decoding.device == torch.device("meta") and decoding.backend is elsewhere
    one_layer_elsewhere = copy.deepcopy(translator.model)
    one_layer_elsewhere.decoder_layers[-1].feed_forward.w_2.to("meta")  # every weight counts
    assert not Engine.can_run(one_layer_elsewhere)


def test_interventions_and_training_mode_decode_on_the_model(translator):
    ablated = intervened_translator(translator, [Head("cross", 0, 1)])
    assert ablated.backend is ablated.model
    translator.model.train()
    try:
        assert translator.backend is translator.model
    finally:
        translator.model.eval()
    assert isinstance(translator.backend, Engine)


# --------------------------------------------------------------------------------------------------
# The latency benchmark's peers (optional packages of requirements-dev.txt)
# --------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_peers_benchmark_dry_run_times_every_engine(capsys):
    pytest.importorskip("transformers")
    pytest.importorskip("ctranslate2")
    from benchmarks import latency

    latency.main(["--peers", "--dry-run"])
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("tiny, 1 thread(s), ")]
    assert len(rows) == 4  # with and without maps, in wall time and in CPU time
    assert all(float(ms) > 0 for row in rows for ms in row[-7:])  # five engines and two ratios
    exact = [line for line in out.splitlines() if "computes Attention Lab's log P" in line]
    assert len(exact) == 1 and float(exact[0].split("within ")[1].split()[0]) < 1e-4
