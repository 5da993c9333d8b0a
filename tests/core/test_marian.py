"""A MarianMT checkpoint read by core/files/marian.py computes what transformers' MarianMTModel
computes: logits, every attention map of every kind, tokens, greedy and beam search. The model is
tiny and random, saved by transformers itself (tests/marian_model.py); nothing is downloaded."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from core.decoding.search import beam_search, greedy_decode, max_output_length
from core.errors import InputError
from core.files.checkpoint import CheckpointError
from core.files.marian import (
    load_marian_model,
    load_marian_tokenizer,
    missing_files,
    model_config,
)
from core.files.model_dir import MarianDir, open_model_dir
from core.inspection.ablation import all_heads, head_importance, intervened_translator
from core.inspection.head_survey import load_survey
from core.model.engine import Engine
from core.translate import main as translate_main
from core.translator import Translator
from support.tiny_corpus import tiny_corpus
from tests.marian_model import build_marian_dir
from tests.training import write_tiny_data
from train.shipping.evaluate import main as evaluate_main
from train.shipping.head_survey import main as survey_main

transformers = pytest.importorskip("transformers")

TOLERANCE = 1e-5
SENTENCES = [
    "The dog runs.",
    "A small red house is very big today.",
    "Happy child reads a book in the garden.",
    "The man is riding a bicycle quickly.",
]


@pytest.fixture(scope="module")
def marian_dir(tmp_path_factory):
    return build_marian_dir(tmp_path_factory.mktemp("marian"))


@pytest.fixture(scope="module")
def hf_model(marian_dir):
    """transformers' own model of the directory, eager attention (SDPA gives no maps)."""
    transformers.logging.set_verbosity_error()  # not a warning per generate call
    hf = transformers.MarianMTModel.from_pretrained(marian_dir, attn_implementation="eager")
    return hf.eval()


@pytest.fixture(scope="module")
def hf_tokenizer(marian_dir):
    return transformers.AutoTokenizer.from_pretrained(marian_dir)


@pytest.fixture(scope="module")
def model(marian_dir):
    return load_marian_model(marian_dir)


@pytest.fixture(scope="module")
def tokenizer(marian_dir, model):
    return load_marian_tokenizer(marian_dir, model.config.vocab_size)


def padded_batch(tokenizer, texts: list[str], target: str) -> torch.Tensor:
    rows = [tokenizer.encode_source(text, target) for text in texts]
    width = max(map(len, rows))
    return torch.tensor([row + [tokenizer.pad_id] * (width - len(row)) for row in rows])


def test_marian_config_becomes_configuration_of_our_model(model, hf_model):
    config, hf = model.config, hf_model.config
    assert (config.vocab_size, config.d_model, config.n_heads) == (hf.vocab_size, 16, 4)
    assert (config.n_encoder_layers, config.n_decoder_layers, config.d_ff) == (2, 2, 32)
    assert config.pad_id == config.bos_id == hf.pad_token_id == hf.decoder_start_token_id
    assert config.eos_id == 0
    assert config.activation == "swish"
    assert config.positional_layout == "halves"
    assert config.output_bias and config.suppress_pad and config.scale_embedding
    assert not config.norm_first  # post-LN, as the paper
    assert config.max_len == hf.max_position_embeddings


def test_our_sinusoids_are_marians(model, hf_model):
    table = hf_model.model.encoder.embed_positions.weight
    assert torch.allclose(model.pe, table, atol=1e-6)


@pytest.mark.parametrize("fast", [False, True], ids=["model", "engine"])
def test_logits_and_every_attention_map_equal_transformers(model, hf_model, tokenizer, fast):
    """Four sentences of different lengths in one padded batch, for both targets: the logits and
    the encoder, decoder and cross-attention weights of every layer and head, within 1e-5."""
    runner = Engine(model) if fast else model
    for target in ("de", "fr"):
        source = padded_batch(tokenizer, SENTENCES, target)  # (4, S) with padding
        torch.manual_seed(0)
        output = torch.randint(1, model.config.vocab_size - 1, (len(SENTENCES), 7))
        decoder_input = torch.cat([torch.full((4, 1), model.config.bos_id), output], dim=1)
        with torch.no_grad():
            logits, trace = runner(source, decoder_input, trace=True)
            theirs = hf_model(
                input_ids=source,
                attention_mask=(source != model.config.pad_id).long(),
                decoder_input_ids=decoder_input,
                output_attentions=True,
            )
        assert torch.allclose(logits, theirs.logits, atol=TOLERANCE)
        kinds = {
            "encoder": (trace.encoder_self, theirs.encoder_attentions),
            "decoder": (trace.decoder_self, theirs.decoder_attentions),
            "cross": (trace.cross, theirs.cross_attentions),
        }
        for kind, (ours, hf) in kinds.items():
            assert len(ours) == len(hf) == 2, kind
            for layer, (mine, their) in enumerate(zip(ours, hf)):
                assert mine.weights.shape == their.shape, (kind, layer)
                assert torch.allclose(mine.weights, their, atol=TOLERANCE), (kind, layer)


def test_tokens_are_marian_tokenizers(tokenizer, hf_tokenizer):
    """The same ids as transformers' MarianTokenizer, the >>xx<< token included, and the same
    text back from the target's SentencePiece model."""
    for text in [*SENTENCES, *tiny_corpus(20, seed=9)]:
        for target in ("de", "fr"):
            ours = tokenizer.encode_source(text, target)
            assert ours == hf_tokenizer(f">>{target}<< {text}")["input_ids"]
    for text in tiny_corpus(10, seed=2):
        ids = hf_tokenizer(text_target=text)["input_ids"]
        assert tokenizer.decode(ids) == hf_tokenizer.decode(ids, skip_special_tokens=True)
    assert tokenizer.languages == {"de": "German", "fr": "French"}
    assert tokenizer.pieces([0, tokenizer.pad_id]) == ["</s>", "<pad>"]
    assert tokenizer.is_special(tokenizer.tag_ids["fr"]) and not tokenizer.is_special(5)


def generate(hf_model, source: torch.Tensor, budget: int, **settings) -> list[int]:
    """transformers' search with our budget and stopping rule: at most ``budget`` tokens, no
    forced </s> at the last step (ours ends there without one), done when num_beams ended."""
    output = hf_model.generate(
        source,
        max_new_tokens=budget,
        forced_eos_token_id=None,
        early_stopping=True,
        do_sample=False,
        **settings,
    )[0, 1:].tolist()  # without the decoder's first input
    pad = hf_model.config.pad_token_id
    return [token for token in output if token != pad]  # a finished beam is padded


@pytest.mark.parametrize("fast", [False, True], ids=["model", "engine"])
def test_greedy_and_beam_search_equal_generate(model, hf_model, tokenizer, fast):
    """Where the rules coincide, the outputs are the same token for token: greedy search, and
    beam search (4 beams) ranking by log-probability (length penalty 0; transformers divides by
    length^alpha, ours by GNMT's ((5 + length) / 6)^alpha, so with alpha > 0 they may part)."""
    runner = Engine(model) if fast else model
    ended_by_eos = 0
    for text in tiny_corpus(12, seed=5):
        for target in ("de", "fr"):
            source = torch.tensor([tokenizer.encode_source(text, target)])
            budget = max_output_length(source.size(1), model.config.max_len)
            greedy = greedy_decode(runner, source)[0]
            assert greedy == generate(hf_model, source, budget, num_beams=1)
            beam = beam_search(runner, source, beam_size=4, alpha=0.0).ids
            assert beam == generate(hf_model, source, budget, num_beams=4, length_penalty=0.0)
            assert model.config.pad_id not in beam  # Marian's generation rule
            ended_by_eos += beam[-1] == model.config.eos_id
            # a budget that runs out at step 3
            short = beam_search(runner, source, beam_size=4, alpha=0.0, max_length=3).ids
            assert short == generate(hf_model, source, 3, num_beams=4, length_penalty=0.0)
    assert 0 < ended_by_eos < 24  # some searches end by </s>, others run out of budget


def test_pytorch_model_bin_reads_alike(tmp_path, model):
    """An older upload's pytorch_model.bin, read with weights_only=True, gives the same model."""
    directory = build_marian_dir(tmp_path, safetensors=False)
    assert (directory / "pytorch_model.bin").is_file()
    assert not (directory / "model.safetensors").exists()
    from_bin = load_marian_model(directory)
    for name, tensor in model.state_dict().items():
        assert torch.equal(from_bin.state_dict()[name], tensor), name


def test_one_target_model_has_no_language_token(tmp_path, hf_tokenizer):
    directory = build_marian_dir(tmp_path, targets=("de",))
    one = load_marian_tokenizer(directory, load_marian_model(directory).config.vocab_size)
    hf = transformers.AutoTokenizer.from_pretrained(directory)
    assert one.languages == {"de": "German"} and one.tag_ids == {}
    assert one.encode_source("The dog runs.", "de") == hf("The dog runs.")["input_ids"]
    with pytest.raises(ValueError, match="unknown target language"):
        one.encode_source("The dog runs.", "fr")


def edited_copy(marian_dir, tmp_path, **changes):
    """The directory with config.json's ``changes``."""
    copy = tmp_path / "edited"
    shutil.copytree(marian_dir, copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, **changes}))
    return copy


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"share_encoder_decoder_embeddings": False}, "separate vocabularies"),
        ({"tie_word_embeddings": False}, "not tied"),
        ({"decoder_ffn_dim": 64}, "different widths"),
        ({"model_type": "bart"}, "model_type 'bart'"),
        ({"activation_function": "tanh"}, "activation='tanh'"),
        ({"d_model": "16"}, "d_model"),
        ({"vocab_size": 10**9, "decoder_vocab_size": 10**9}, "vocab_size"),
    ],
)
def test_a_model_the_lab_cannot_read_is_refused(marian_dir, tmp_path, changes, message):
    with pytest.raises(CheckpointError, match=message):
        load_marian_model(edited_copy(marian_dir, tmp_path, **changes))


def test_missing_files_are_named(marian_dir, tmp_path):
    assert missing_files(marian_dir) == []
    copy = tmp_path / "copy"
    shutil.copytree(marian_dir, copy)
    (copy / "model.safetensors").unlink()
    (copy / "target.spm").unlink()
    assert missing_files(copy) == ["target.spm", "model.safetensors or pytorch_model.bin"]
    (copy / "config.json").write_text("[1, 2]")
    with pytest.raises(CheckpointError, match="not a JSON object"):
        model_config(copy)


def test_the_translator_opens_a_marian_directory(marian_dir, hf_model):
    """Translator.load, as every page and command line calls it: the Marian format is found,
    translations are transformers' (greedy here), traced and batched alike."""
    assert isinstance(open_model_dir(marian_dir), MarianDir)
    translator = Translator.load(marian_dir)
    assert translator.languages == {"de": "German", "fr": "French"}
    assert translator.card["name"] == marian_dir.name
    result = translator.translate(SENTENCES[1], "fr", beam_size=1, trace=True)
    assert result.source_tokens[0] == ">>fr<<" and result.source_tokens[-1] == "</s>"
    assert result.decoder_input_tokens[0] == "<pad>"  # Marian's decoder starts from <pad>
    budget = max_output_length(len(result.source_ids), translator.model.config.max_len)
    source = torch.tensor([result.source_ids])
    assert result.output_ids == generate(hf_model, source, budget, num_beams=1)
    assert result.attention.cross.weights.shape[-1] == len(result.source_ids)
    batch = translator.translate_batch(SENTENCES, "de", beam_size=4)
    assert batch == [translator.translate(text, "de").text for text in SENTENCES]
    with pytest.raises(InputError, match="choose one of de, fr"):
        translator.translate("The dog runs.", "es")


def test_the_command_lines_take_a_marian_directory(marian_dir, tmp_path, capsys):
    translator = Translator.load(marian_dir)
    assert translate_main(["--model", str(marian_dir), "--target", "fr", SENTENCES[0]]) == 0
    assert capsys.readouterr().out == translator.translate(SENTENCES[0], "fr").text + "\n"
    assert translate_main(["--model", str(marian_dir), "--target", "es", SENTENCES[0]]) == 2
    assert "the model writes de, fr" in capsys.readouterr().err
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{text}\tLe chien court.\n" for text in SENTENCES))
    command = ["--model", str(marian_dir), "--target", "fr", "--tsv", str(pairs), "--quiet"]
    assert evaluate_main(command) == 0
    assert json.loads(capsys.readouterr().out)["sentences"] == len(SENTENCES)


def test_the_head_survey_runs_on_a_marian_directory(marian_dir, tmp_path):
    """train.shipping.head_survey on a Marian model: its languages' validation pairs only (the
    one-target model's German), and the survey names the weights file it was computed on."""
    one = build_marian_dir(tmp_path / "one", targets=("de",))
    data = write_tiny_data(tmp_path / "data")
    output = tmp_path / "heads.json"
    command = ["--model", str(one), "--data-dir", str(data), "--output", str(output)]
    assert survey_main([*command, "--dry-run", "--quiet"]) == 0
    survey = load_survey(tmp_path)
    assert survey.model_sha256 == MarianDir(one).model_sha256()
    assert MarianDir(one).model_file.name == "model.safetensors"
    assert "en-de" in survey.sample and "en-fr" not in survey.sample


def test_heads_can_be_switched_off_in_a_marian_model(marian_dir):
    """The Heads lab's interventions on a Marian model: the readable model computes (the engine
    stands only for the model as it is), and turning heads off changes the log-probabilities."""
    translator = Translator.load(marian_dir)
    result = translator.translate(SENTENCES[1], "fr", trace=True)
    importance = head_importance(translator, result, "cross")
    assert importance.shape == (2, 4) and np.isfinite(importance).all()
    off = intervened_translator(translator, all_heads(translator), "off")
    assert not Engine.can_run(off.model)
    assert off.trace(result).log_prob != pytest.approx(translator.trace(result).log_prob)
