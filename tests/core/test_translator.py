"""The public contract: Translator.load, translate, traces shaped as documented, clear errors."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

from core import CheckpointError, InputError, Translator
from core.decoding.search import batch_beam_search
from core.files.checkpoint import load_model, save_model
from core.files.model_dir import MODEL_FILE, TOKENIZER_FILE
from core.model.config import ModelConfig
from core.model.engine import Engine
from core.model.transformer import Transformer
from core.text.tokenizer import PAD_ID
from core.translator import PIECE_KINDS, batch_budget, length_batches, piece_kind
from support.tiny_corpus import tiny_corpus
from tests.conftest import TINY


def test_translate_returns_text_and_tokens(translator):
    result = translator.translate("The dog runs.", target="de", beam_size=2)
    assert isinstance(result.text, str)
    assert result.source_tokens[0] == "<2de>" and result.source_tokens[-1] == "</s>"
    assert result.decoder_input_tokens[0] == "<s>"
    assert len(result.output_tokens) == len(result.decoder_input_tokens)
    assert result.attention is None and result.steps == []
    assert result.token_log_probs is None  # not computed, so not there


def test_trace_shapes_follow_the_contract(translator):
    result = translator.translate("The small dog runs.", target="fr", beam_size=3, trace=True)
    s, t = len(result.source_tokens), len(result.decoder_input_tokens)
    layers, heads = TINY.n_encoder_layers, TINY.n_heads
    encoder, decoder, cross = (
        result.attention.encoder,
        result.attention.decoder,
        result.attention.cross,
    )
    assert encoder.weights.shape == (layers, heads, s, s)
    assert decoder.weights.shape == (TINY.n_decoder_layers, heads, t, t)
    assert cross.weights.shape == (TINY.n_decoder_layers, heads, t, s)
    for weights in (encoder.weights, decoder.weights, cross.weights):
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    assert (decoder.weights[..., np.triu_indices(t, 1)[0], np.triu_indices(t, 1)[1]] == 0).all()
    assert np.isinf(decoder.masked_scores[0, 0, 0, 1:]).all()
    assert result.embeddings.source_token.shape == (s, TINY.d_model)
    assert result.steps and result.finished


def test_trace_equals_what_cached_beam_search_saw(translator):
    """The full pass behind the pictures and the cached search behind the text agree."""
    result = translator.translate("The cat sleeps.", target="de", beam_size=1, trace=True)
    assert len(result.steps) == len(result.output_tokens)
    for step in result.steps:  # with one beam, every step's prefix is a prefix of the output
        assert step.hypotheses[0].ids == result.decoder_input_ids[1 : step.step + 1]
        np.testing.assert_allclose(
            step.cross_weights[:, :, 0],
            result.attention.cross.weights[:, :, step.step],
            atol=1e-5,
        )


@pytest.mark.parametrize("fast", [True, False])
def test_a_traced_translation_carries_the_token_log_probs_trace_gives(translator, fast):
    translator = Translator(translator.model, translator.tokenizer, fast=fast)
    result = translator.translate("The small dog runs.", target="fr", beam_size=3, trace=True)
    assert len(result.token_log_probs) == len(result.output_ids)
    assert result.token_log_probs == translator.trace(result).token_log_probs
    # the beam's score is the sum of the same log-probabilities, computed step by step
    assert sum(result.token_log_probs) == pytest.approx(result.log_prob, abs=1e-4)


def test_encode_batch_pads_and_masks(translator):
    batch = translator.encode_batch(["A dog.", "The happy child reads a big red book today."])
    assert batch.padding_mask[0].sum() < batch.padding_mask.shape[1]
    pad = ~batch.padding_mask[0]
    assert (batch.attention[0].weights[..., pad] == 0).all()
    assert batch.source_tokens[0][-1] == "<pad>"


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_is_a_clear_error(translator, text):
    with pytest.raises(InputError, match="nothing to translate"):
        translator.translate(text)


def test_overlong_text_is_truncated_and_says_so(translator):
    text = "the dog runs " * 200
    result = translator.translate(text, beam_size=1)
    assert result.truncated and len(result.source_ids) == translator.max_source_tokens
    assert result.source_tokens[-1] == "</s>"
    # the length before the cut, as the app reports it, without tokenizing again
    assert result.uncut_source_length == len(translator.tokenizer.encode_source(text, "de"))
    short = translator.translate("The dog runs.", beam_size=1)
    assert not short.truncated and short.uncut_source_length == len(short.source_ids)


def test_the_translation_names_the_kind_of_each_piece(translator):
    result = translator.translate("The dog 🐕 runs.", "fr", beam_size=1)
    assert len(result.source_kinds) == len(result.source_ids)
    assert len(result.output_kinds) == len(result.output_ids)
    assert result.source_kinds[0] == result.source_kinds[-1] == "special"  # <2fr>, </s>
    assert "byte" in result.source_kinds  # the emoji, by byte fallback
    expected = [
        piece_kind(piece, translator.tokenizer.is_special(i), translator.tokenizer.is_byte(i))
        for i, piece in zip(result.output_ids, result.output_tokens)
    ]
    assert result.output_kinds == expected
    assert set(result.source_kinds) <= set(PIECE_KINDS)


def test_piece_kinds_follow_the_tokenizer_and_the_word_start_mark():
    assert piece_kind("▁dog", is_special=False, is_byte=False) == "word_start"
    assert piece_kind("s", is_special=False, is_byte=False) == "continuation"
    assert piece_kind("<2de>", is_special=True, is_byte=False) == "special"
    assert piece_kind("<0xF0>", is_special=False, is_byte=True) == "byte"
    # special wins over the mark: a special piece never counts as a word's start
    assert piece_kind("▁x", is_special=True, is_byte=False) == "special"


def test_a_traced_translation_asks_once_whether_the_engine_is_current(translator, monkeypatch):
    asked = []
    is_current = Engine.is_current
    monkeypatch.setattr(Engine, "is_current", lambda self: asked.append(1) or is_current(self))
    translator.translate("The dog runs.", "de", beam_size=2, trace=True)
    assert len(asked) == 1


def test_translate_batch_matches_single_sentences(translator):
    texts = ["The dog runs.", "", "A cat sleeps in the garden."]
    assert translator.translate_batch(texts, "de", beam_size=1) == [
        translator.translate(t, "de", beam_size=1).text if t else "" for t in texts
    ]
    assert translator.translate_batch(texts[:1], "fr", beam_size=2) == [
        translator.translate(texts[0], "fr", beam_size=2).text
    ]


@pytest.mark.parametrize("beam_size", [1, 4])
def test_translate_batch_in_several_batches_matches_single_sentences(
    translator, monkeypatch, beam_size
):
    """Sentences of mixed lengths and blank lines, cut into batches by length, come back in
    their own order, each translated as translate() translates it alone."""
    monkeypatch.setattr("core.translator.BATCH_TOKENS", 300)
    texts = [*tiny_corpus(40, seed=4), "", "  ", tiny_corpus(1, seed=5)[0] * 3]
    done = []
    outputs = translator.translate_batch(texts, "fr", beam_size, 0.6, progress=done.append)
    assert outputs == [
        translator.translate(t, "fr", beam_size, 0.6).text if t.strip() else "" for t in texts
    ]
    assert len(done) > 2 and sum(done) == len(texts) - 2  # each batch reported, blanks not


def test_length_batches_go_longest_first_within_the_budget(monkeypatch):
    monkeypatch.setattr("core.translator.BATCH_TOKENS", 40)
    rows = [[5] * n for n in (3, 9, 5, 30, 5, 4, 2)]
    batches = list(length_batches(rows, beam_size=2))
    assert sorted(i for batch in batches for i in batch) == list(range(len(rows)))
    lengths = [len(rows[i]) for batch in batches for i in batch]
    assert lengths == sorted(lengths, reverse=True)
    assert batches[0] == [3]  # alone over the budget (2 x 30 tokens), not left out
    for batch in batches[1:]:
        assert len(batch) * 2 * len(rows[batch[0]]) <= 40
    assert batches[1:] == [[1, 2], [4, 5, 0, 6]]


def test_a_gpu_decodes_in_batches_16_times_a_cpus():
    cpu, gpu = batch_budget(torch.device("cpu")), batch_budget(torch.device("cuda"))
    assert (cpu, gpu) == (4096, 65536)
    rows = [[5] * 30 for _ in range(1012)]  # FLORES devtest's size, at beam 4
    assert len(list(length_batches(rows, 4, gpu))) == 2 < len(list(length_batches(rows, 4, cpu)))


@pytest.mark.slow
def test_the_shipped_model_translates_the_same_in_batches():
    """Beam 4 on the shipped model: batched texts equal one-at-a-time texts, scores to rounding."""
    translator = Translator.load()
    texts = [example["source"] for example in translator.card["examples"][::2]]
    texts += ["Two dogs play in the snow.", "A woman in a red coat is waiting for the bus."]
    rows = [translator.source_ids(text, "de")[0] for text in texts]
    width = max(len(row) for row in rows)
    source = torch.tensor([row + [PAD_ID] * (width - len(row)) for row in rows])
    batched = batch_beam_search(translator.backend, source, 4, 0.6)
    for text, result in zip(texts, batched):
        alone = translator.translate(text, "de", 4, 0.6)
        assert result.ids == alone.output_ids
        assert result.log_prob == pytest.approx(alone.log_prob, abs=1e-4)
    assert translator.translate_batch(texts, "de") == [
        translator.translate(text, "de").text for text in texts
    ]


def test_checkpoint_round_trip_keeps_weights_to_float16(tmp_path):
    torch.manual_seed(0)
    model = Transformer(TINY)
    save_model(model, tmp_path / "m.pt", {"step": 3})
    loaded, meta = load_model(tmp_path / "m.pt")
    assert meta == {"step": 3} and loaded.config == TINY
    for (name, a), b in zip(model.state_dict().items(), loaded.state_dict().values()):
        assert torch.allclose(a.half().float(), b), name


def test_bad_model_files_give_errors_naming_the_file(tmp_path, tiny_model_dir):
    with pytest.raises(CheckpointError, match="no such model directory"):
        Translator.load(tmp_path / "nowhere")
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model_dir, broken)
    data = (broken / MODEL_FILE).read_bytes()
    (broken / MODEL_FILE).write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=f"{MODEL_FILE}: not a readable checkpoint"):
        Translator.load(broken)
    save_model(Transformer(ModelConfig(**{**TINY.__dict__, "d_ff": 48})), broken / MODEL_FILE)
    obj = torch.load(broken / MODEL_FILE, weights_only=True)
    obj["config"]["d_ff"] = 64  # the config says one size, the weights another
    torch.save(obj, broken / MODEL_FILE)
    with pytest.raises(CheckpointError, match="weights do not fit"):
        Translator.load(broken)
    shutil.copy(tiny_model_dir / MODEL_FILE, broken / MODEL_FILE)
    (broken / TOKENIZER_FILE).write_bytes(b"not a sentencepiece model")
    with pytest.raises(CheckpointError, match="SentencePiece"):
        Translator.load(broken)


def test_pickled_code_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("ran",))

    torch.save({"format": "attention-lab/1", "x": Evil()}, tmp_path / "evil.pt")
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load_model(tmp_path / "evil.pt")


@pytest.mark.slow
def test_command_line_translates(tiny_model_dir):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "core.translate",
            "--model",
            str(tiny_model_dir),
            "--target",
            "fr",
            "--beam-size",
            "2",
            "The dog runs.",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert (
        run.stdout.strip()
        == Translator.load(tiny_model_dir).translate("The dog runs.", "fr", 2).text.strip()
    )
    bad = subprocess.run(
        [sys.executable, "-m", "core.translate", "--model", "/nonexistent", "x"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "no such model directory" in bad.stderr


@pytest.mark.parametrize("card_text", ["[1, 2]", "{not json", b"\xff\xfe{}"])
def test_a_broken_card_is_a_checkpoint_error_naming_the_file(tiny_model_dir, tmp_path, card_text):
    broken = tmp_path / "model"
    shutil.copytree(tiny_model_dir, broken)
    card = broken / "card.json"
    card.write_bytes(card_text if isinstance(card_text, bytes) else card_text.encode())
    with pytest.raises(CheckpointError, match=r"card\.json"):
        Translator.load(broken)
