"""The training pipeline on a small synthetic corpus laid out like ../shared/data."""

import json
import signal
import subprocess
import sys
import time
import types
from collections import Counter

import numpy as np
import pytest
import torch

from core import Translator
from core.files.checkpoint import safe_load
from core.files.metrics_log import read_metrics
from core.files.model_dir import ModelDir
from support.tiny_corpus import tiny_corpus
from tests.training import run_train, write_tiny_data
from train.data.batching import encode_examples, padded_width, token_batches
from train.data.corpora import (
    Example,
    clean_pairs,
    corpus_weight,
    in_validation,
    keep_pair,
    load_corpus,
    repeat_by_weight,
)
from train.data.encoded_corpus import FlatPairs
from train.data.loader import collate
from train.loop import hardware
from train.loop.config import parse_args
from train.loop.hardware import best_seconds, choose_dtype
from train.loop.lineage import MODEL_FILES_BUDGET, log_spaced, snapshots_that_fit
from train.loop.schedule import continued_lr, cooldown, noam_lr
from train.loop.trainer import Trainer


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_tiny_data(tmp_path_factory.mktemp("data"))


@pytest.mark.slow
def test_dry_run_trains_and_exports_a_loadable_model(data_dir, tmp_path):
    process = run_train(data_dir, tmp_path / "run")
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output
    assert "BLEU" in output and "nrefs:1|case:mixed" in output  # sacreBLEU signature printed
    translator = Translator.load(tmp_path / "run" / "model")
    assert isinstance(translator.translate("The dog runs.", "fr", beam_size=2).text, str)
    metrics = [
        json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    ]
    assert [m["step"] for m in metrics if "train_loss" in m] == [5, 10, 15, 20, 25, 30]
    assert any("val_bleu" in m for m in metrics)


def test_tokens_per_second_counts_the_training_steps_own_time(data_dir, tmp_path, monkeypatch):
    """A slow validation between steps is not training: each logged tokens/s is the tokens of
    the window's steps over those steps' own seconds (as elapsed_s counts them). The trainer's
    clock is a fake that only the steps (1 s each) and validations (100 s) move."""
    clock = types.SimpleNamespace(now=0.0)
    monkeypatch.setattr(
        "train.loop.trainer.time", types.SimpleNamespace(perf_counter=lambda: clock.now)
    )
    tokens_per_step = []
    train_step = Trainer.train_step

    def one_second_step(trainer, batch):
        loss, tokens = train_step(trainer, batch)
        clock.now += 1.0
        tokens_per_step.append(tokens)
        return loss, tokens

    def slow_validation(trainer, model):
        clock.now += 100.0
        return {}

    monkeypatch.setattr(Trainer, "train_step", one_second_step)
    monkeypatch.setattr(Trainer, "validate", slow_validation)
    flags = ["--dry-run", "--data-dir", str(data_dir), "--out", str(tmp_path / "run")]
    Trainer(parse_args([*flags, "--max-steps", "8", "--log-every", "4", "--eval-every", "2"])).run()
    records = [r for r in read_metrics(tmp_path / "run" / "metrics.jsonl") if "tokens_per_s" in r]
    assert [record["elapsed_s"] for record in records] == [4.0, 8.0]
    windows = (tokens_per_step[:4], tokens_per_step[4:])
    assert [record["tokens_per_s"] for record in records] == [round(sum(w) / 4) for w in windows]


def final_weights(run):
    return safe_load(sorted((run / "checkpoints").glob("step_*.pt"))[-1])["model"]


@pytest.mark.slow
def test_killed_run_resumes_from_its_checkpoint_and_ends_where_an_unbroken_run_ends(
    data_dir, tmp_path
):
    flags = (
        "--max-steps",
        "40",
        "--checkpoint-every",
        "10",
        "--eval-every",
        "1000",
        "--dropout",
        "0.1",
        # each epoch's augmentation is drawn again on resuming: it must come out the same
        "--concat-fraction",
        "0.2",
        "--copy-fraction",
        "0.5",
        "--subword-alpha",
        "0.5",
        # two runs measuring --dtype auto on a busy machine may choose differently
        "--dtype",
        "fp32",
    )
    unbroken = run_train(data_dir, tmp_path / "unbroken", *flags)
    assert unbroken.wait(timeout=300) == 0

    killed = run_train(data_dir, tmp_path / "killed", *flags)
    first = tmp_path / "killed" / "checkpoints" / "step_0000010.pt"
    deadline = time.time() + 240
    while not first.exists() and killed.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    saved = sorted((tmp_path / "killed" / "checkpoints").glob("step_*.pt"))
    assert saved and saved[-1].name < "step_0000040.pt"  # it really died mid-way

    resumed = run_train(data_dir, tmp_path / "killed", *flags)
    output, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, output
    assert f"resumed from {saved[-1]}" in output
    for (name, a), b in zip(
        final_weights(tmp_path / "unbroken").items(), final_weights(tmp_path / "killed").values()
    ):
        assert torch.equal(a, b), name  # same data order, same dropout: the same model
    steps = [
        json.loads(line)["step"]
        for line in (tmp_path / "killed" / "metrics.jsonl").read_text().splitlines()
    ]
    assert steps == sorted(steps)  # lines written after the last checkpoint were not kept twice


def run_evaluate(model_dir, *flags):
    command = [sys.executable, "-m", "train.shipping.evaluate", "--model", str(model_dir), *flags]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_evaluate_prints_one_json_object(data_dir, tmp_path, tiny_model_dir):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("The dog runs.\tDer Hund läuft.\nA cat sleeps.\tEine Katze schläft.\n")
    run = run_evaluate(tiny_model_dir, "--target", "de", "--tsv", str(pairs), "--beam-size", "2")
    result = json.loads(run.stdout)
    assert result["sentences"] == 2 and 0 <= result["bleu"] <= 100 and 0 <= result["chrf"] <= 100
    assert result["signature"].startswith("nrefs:1") and result["seconds"] >= 0
    test_set = data_dir / "multi30k" / "test_2016_flickr"
    files = run_evaluate(
        tiny_model_dir, "--target", "fr", "--src", f"{test_set}.en.gz", "--ref", f"{test_set}.fr.gz"
    )
    assert json.loads(files.stdout)["sentences"] == 20
    bad = tmp_path / "bad.tsv"
    bad.write_text("no tab here\n")
    error = run_evaluate(tiny_model_dir, "--target", "de", "--tsv", str(bad))
    assert error.returncode == 2 and "line 1 has no TAB" in error.stderr


def test_corpus_is_normalised_filtered_deduplicated_and_split_by_english(data_dir):
    corpus = load_corpus(data_dir)
    assert corpus.train and corpus.valid
    assert not any("\u202f" in e.target_text for e in corpus.train)  # French spaces normalised
    train_english = {e.source_text for e in corpus.train}
    # the synthetic Multi30k val repeats lines of its train; the Tatoeba split must not overlap
    tatoeba_valid = {e.source_text for e in corpus.valid} - set(tiny_corpus(400, 1)[-30:])
    assert tatoeba_valid and not train_english & tatoeba_valid
    pairs = [
        ("Hi.", "Hallo!"),
        ("Hi.", "Hallo!"),
        ("", "Leer"),
        ("Short.", "x" * 400),
        ("Hi.", "Grüß Gott!"),
    ]
    assert clean_pairs("de", pairs) == [
        Example("de", "Hi.", "Hallo!"),
        Example("de", "Hi.", "Grüß Gott!"),
    ]
    assert not keep_pair("a", "a very very very very long translation of one letter")
    assert in_validation("Hi.", 0.5) == in_validation("Hi.", 0.5)


@pytest.mark.parametrize("bucket", [0, 8])
def test_token_batches_respect_the_budget_and_cover_every_example(bucket):
    lengths = [(n % 17 + 2, n % 13 + 3) for n in range(500)]
    batches = token_batches(lengths, max_tokens=200, seed=3, bucket=bucket)
    assert sorted(i for b in batches for i in b) == list(range(500))
    widths = [padded_width(max(max(lengths[i]) for i in b), bucket) for b in batches]
    assert all(len(b) * width <= 200 for b, width in zip(batches, widths))
    again = token_batches(lengths, max_tokens=200, seed=3, bucket=bucket)
    assert [list(b) for b in batches] == [list(b) for b in again]
    pairs = FlatPairs.from_lists([([4, 9, 3], [7, 8, 3]), ([4, 3], [3])])
    source, target_in, target_out, n_tokens = collate(pairs, [0, 1])
    assert n_tokens == 4
    assert target_in.tolist() == [[2, 7, 8], [2, 0, 0]] and target_out.tolist() == [
        [7, 8, 3],
        [3, 0, 0],
    ]
    assert source.tolist() == [[4, 9, 3], [4, 3, 0]]


def test_noam_schedule_warms_up_then_decays():
    peak = noam_lr(4000, 512, 4000)
    assert noam_lr(2000, 512, 4000) == pytest.approx(peak / 2)
    assert noam_lr(16000, 512, 4000) == pytest.approx(peak / 2)
    assert peak == pytest.approx(512**-0.5 * 4000**-0.5)


def test_flags_override_presets():
    config = parse_args(["--preset", "full", "--max-steps", "7", "--no-compile"])
    assert (config.preset, config.max_steps, config.compile, config.max_tokens) == (
        "full",
        7,
        False,
        25000,
    )
    assert parse_args(["--dry-run"]).preset == "dry-run"


def test_continued_schedule_warms_up_to_where_the_paper_schedule_left_off():
    config = parse_args(["--dry-run", "--warmup", "100", "--init-warmup", "50", "--lr-scale", "1"])
    before = 1000
    assert continued_lr(25, 64, config, before) == 0.5 * noam_lr(before + 25, 64, 100, 1.0)
    assert continued_lr(50, 64, config, before) == noam_lr(before + 50, 64, 100, 1.0)
    assert continued_lr(400, 64, config, before) < continued_lr(50, 64, config, before)


def test_cooldown_holds_the_rate_then_falls_linearly_to_zero_at_the_last_step():
    assert cooldown(100, max_steps=1000, cooldown_steps=0) == 1.0  # off: the paper's schedule
    assert cooldown(100, max_steps=1000, cooldown_steps=400) == 1.0
    assert cooldown(600, max_steps=1000, cooldown_steps=400) == 1.0
    assert cooldown(800, max_steps=1000, cooldown_steps=400) == 0.5
    assert cooldown(1000, max_steps=1000, cooldown_steps=400) == 0.0


def test_trainer_rate_is_the_schedule_times_the_cooldown(data_dir, tmp_path):
    flags = ["--data-dir", str(data_dir), "--out", str(tmp_path / "run")]
    flags += ["--max-steps", "40", "--cooldown-steps", "20", "--warmup", "10", "--lr-scale", "1"]
    trainer = Trainer(parse_args(["--dry-run", *flags]))
    d_model = trainer.model_config.d_model
    assert trainer.learning_rate(9) == noam_lr(10, d_model, 10, 1.0)
    assert trainer.learning_rate(29) == pytest.approx(0.5 * noam_lr(30, d_model, 10, 1.0))
    assert trainer.learning_rate(39) == 0.0


def test_truecase_trains_on_what_translation_reads_and_a_continuation_keeps_it(
    data_dir, tmp_path, tiny_model_dir
):
    flags = ["--dry-run", "--data-dir", str(data_dir), "--max-steps", "1"]  # built, not run
    trainer = Trainer(parse_args([*flags, "--out", str(tmp_path / "first"), "--truecase"]))
    tokenizer = trainer.tokenizer
    assert tokenizer.truecaser is not None and trainer.run_dir.truecase_file.is_file()
    examples = [Example("de", text, "Ein Satz.") for text in ("The dog runs.", "A man. The end.")]
    sources = [source for source, _ in encode_examples(tokenizer, examples, max_len=96)]
    assert sources == [tokenizer.encode_source(e.source_text, "de") for e in examples]
    assert sources[0] != tokenizer.source_input(tokenizer.encode("The dog runs."), "de")

    starting = ModelDir(tmp_path / "truecasing")  # a trained model whose vocabulary truecases
    starting.write(Translator.load(tiny_model_dir).model, ModelDir(tiny_model_dir).tokenizer_file)
    trainer.run_dir.truecase_file.replace(starting.truecase_file)
    flags += ["--init-from", str(starting.path), "--out", str(tmp_path / "second")]
    continued = Trainer(parse_args(flags))  # no --truecase: the vocabulary brings its truecaser
    assert continued.run_dir.truecase_file.read_bytes() == starting.truecase_file.read_bytes()


@pytest.mark.slow
def test_init_from_starts_at_the_given_model_and_keeps_its_vocabulary(data_dir, tmp_path):
    first = run_train(data_dir, tmp_path / "first", "--max-steps", "10")
    assert first.wait(timeout=300) == 0
    shipped = tmp_path / "first" / "model"
    # one step (zero is refused), at the first step of --init-warmup's ramp: the continued
    # run's final model is the initial model, moved by no more than one tiny Adam step
    flags = ("--init-from", str(shipped), "--max-steps", "1", "--d-model", "64")
    continued = run_train(data_dir, tmp_path / "second", *flags)
    output, _ = continued.communicate(timeout=300)
    assert continued.returncode == 0, output
    assert f"initialised from {shipped}" in output
    before, after = Translator.load(shipped), Translator.load(tmp_path / "second" / "model")
    assert after.model.config == before.model.config  # the weights fix the shape, not --d-model
    for (name, a), b in zip(before.model.state_dict().items(), after.model.state_dict().values()):
        torch.testing.assert_close(a, b, atol=1e-3, rtol=0, msg=name)
    assert (tmp_path / "second" / "spm.model").read_bytes() == (shipped / "spm.model").read_bytes()


@pytest.mark.slow
def test_snapshots_are_kept_at_the_asked_steps_and_exported(data_dir, tmp_path):
    run = run_train(data_dir, tmp_path / "run", "--max-steps", "12", "--snapshot-steps", "3,9")
    assert run.wait(timeout=300) == 0
    snapshots = sorted((tmp_path / "run" / "model" / "snapshots").glob("*.pt"))
    assert [path.name for path in snapshots] == ["step_0000003.pt", "step_0000009.pt"]
    assert safe_load(snapshots[1])["metadata"]["step"] == 9
    assert all(v.dtype == torch.float16 for v in safe_load(snapshots[0])["state_dict"].values())


@pytest.mark.slow
def test_a_continued_model_ships_the_whole_history_on_one_step_axis(data_dir, tmp_path):
    first = run_train(data_dir, tmp_path / "first", "--max-steps", "10", "--snapshot-steps", "3")
    assert first.wait(timeout=300) == 0
    earlier = tmp_path / "first" / "model"
    flags = ("--init-from", str(earlier), "--max-steps", "6", "--snapshot-steps", "4")
    continued = run_train(data_dir, tmp_path / "second", *flags)
    output, _ = continued.communicate(timeout=300)
    assert continued.returncode == 0, output
    shipped = tmp_path / "second" / "model"
    snapshots = sorted((shipped / "snapshots").glob("*.pt"))
    # the earlier model's snapshot, the earlier model itself, this run's step 4 counted on from 10
    assert [path.name for path in snapshots] == [f"step_{n:07d}.pt" for n in (3, 10, 14)]
    assert [safe_load(path)["metadata"]["step"] for path in snapshots] == [3, 10, 14]
    origin = safe_load(earlier / "model.pt")["state_dict"]
    for name, weights in safe_load(snapshots[1])["state_dict"].items():
        assert torch.equal(weights, origin[name]), name
    steps = [json.loads(line)["step"] for line in (shipped / "metrics.jsonl").open()]
    assert steps[:2] == [5, 10] and steps[-1] == 16 and steps == sorted(steps)
    assert json.loads((shipped / "card.json").read_text())["training"]["steps"] == 16


def test_the_mixture_weighs_each_corpus(data_dir):
    once = load_corpus(data_dir, mixture={})
    twice = load_corpus(data_dir, mixture={"multi30k": 2})
    thrice = load_corpus(data_dir, mixture={"multi30k": 3})
    added = Counter(twice.train) - Counter(once.train)
    assert added and set(added) <= set(once.train)  # repeats are copies of kept pairs
    assert len(thrice.train) - len(twice.train) == len(twice.train) - len(once.train)
    assert all(example.target in ("de", "fr") for example in added)
    assert len(twice.valid) == len(once.valid)


def test_a_fractional_weight_repeats_a_stable_share_and_a_language_weight_overrides():
    examples = [Example("de", f"Sentence {i}.", f"Satz {i}.") for i in range(1000)]
    half, two_and_half = repeat_by_weight(examples, 0.5), repeat_by_weight(examples, 2.5)
    assert 400 < len(half) < 600 and set(half) <= set(examples)
    assert half == repeat_by_weight(examples, 0.5)  # the same share in every run
    assert Counter(two_and_half) == Counter(examples * 2 + half)
    weights = {"general": 3.0, "general.fr": 6.0}
    assert corpus_weight(weights, "general", "fr") == 6.0
    assert corpus_weight(weights, "general", "de") == 3.0
    assert corpus_weight(weights, "tatoeba", "de") == 1.0


def test_general_pairs_are_read_weighed_and_held_out_by_english_sentence(data_dir):
    general = set(tiny_corpus(400, 7))
    corpus = load_corpus(data_dir)
    trained = [e for e in corpus.train if e.source_text in general]
    held_out = {e.source_text for e in corpus.valid} & general
    assert trained and held_out and not held_out & {e.source_text for e in trained}
    doubled = load_corpus(data_dir, mixture={"general.de": 2})
    assert Counter(e for e in doubled.train if e.source_text in general) == Counter(trained * 2)
    assert not any(
        e.source_text in general for e in load_corpus(data_dir, mixture={"general": 0}).train
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        ("books=2", "a mixture key is one of"),
        ("general.es=1", "a mixture key"),
        ("general=x", "number"),
        ("general=-1", ">= 0"),
        ("general=nan", ">= 0"),
    ],
)
def test_a_bad_mixture_is_refused_with_its_reason(spec, message, capsys):
    with pytest.raises(SystemExit):
        parse_args(["--dry-run", "--mixture", spec])
    assert message in capsys.readouterr().err


def test_dtype_auto_takes_the_faster_and_bf16_only_by_a_margin():
    assert choose_dtype({"bf16": 0.1, "fp32": 1.0}) == "bf16"  # AMX: about 10x
    assert choose_dtype({"bf16": 6.0, "fp32": 0.1}) == "fp32"  # AVX2 emulates bf16
    assert choose_dtype({"bf16": 0.95, "fp32": 1.0}) == "fp32"  # a near tie keeps float32
    assert choose_dtype({"bf16": 0.85, "fp32": 1.0}) == "bf16"


def test_a_decisive_gap_ends_the_timing_after_one_round(monkeypatch):
    clock = [0.0]  # a fake clock that each step moves on by its cost
    monkeypatch.setattr(hardware.time, "perf_counter", lambda: clock[0])
    calls = Counter()

    def step(name: str, cost: float):
        def run():
            calls[name] += 1
            clock[0] += cost

        return run

    emulated = {"bf16": step("bf16", 25.0), "fp32": step("fp32", 1.0)}  # AVX2: bf16 emulated
    assert best_seconds(emulated, decisive=4.0) == {"bf16": 25.0, "fp32": 1.0}
    assert calls == {"bf16": 2, "fp32": 2}  # the warm-up and one timed round
    calls.clear()
    near = {"bf16": step("bf16", 0.9), "fp32": step("fp32", 1.0)}
    assert best_seconds(near, decisive=4.0) == pytest.approx({"bf16": 0.9, "fp32": 1.0})
    assert calls == {"bf16": 4, "fp32": 4}  # a near tie gets every repeat


def test_the_snapshots_kept_are_spread_on_a_log_axis():
    assert log_spaced([100, 300, 1000, 3000, 10000, 12500], keep=5) == [100, 300, 1000, 3000, 10000]
    assert log_spaced([10, 20, 1000, 1100, 5000], keep=3) == [10, 1000, 5000]
    assert log_spaced([3, 10, 14], keep=5) == [3, 10, 14]


@pytest.mark.parametrize(
    "model_bytes, kept",
    [(15_600_000, 5), (18_700_000, 4), (30_000, 5), (60_000_000, 1)],  # 8k, 16k, tiny, too big
)
def test_as_many_snapshots_are_kept_as_fit_beside_the_model_in_the_budget(
    model_bytes, kept, tmp_path
):
    model_dir = ModelDir(tmp_path)
    with model_dir.model_file.open("wb") as file:
        file.truncate(model_bytes)  # a sparse file: only its size matters
    assert snapshots_that_fit(model_dir) == kept
    assert (kept + 1) * model_bytes <= MODEL_FILES_BUDGET or kept == 1


def test_the_length_ladder_keeps_few_widths_and_wastes_little_at_any_length():
    lengths = np.arange(1, 129)
    widths = padded_width(lengths, 8)
    assert sorted(set(widths.tolist())) == [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128]
    assert [padded_width(int(n), 8) for n in lengths] == widths.tolist()  # ints as arrays
    assert (widths >= lengths).all() and (widths - lengths < 8)[:64].all()
    assert (lengths[64:] / widths[64:] > 0.8).all()  # above 8 x 8: a fifth at most
    assert len(set(padded_width(lengths, 4).tolist())) == 16
    assert padded_width(lengths, 0) is lengths and padded_width(17, 0) == 17
