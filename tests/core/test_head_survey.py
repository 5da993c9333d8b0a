"""heads.json: the head survey on a validation sample. The stored means are the means of each
sentence's own statistics and importance, every point of the pruning curve is the score of a
direct run with those heads off, the file round-trips, a damaged file is a CheckpointError, and the
command's dry run writes a file the app can load. The survey of four sentences (``surveyed``) is
made in tests/conftest.py; tests/app/test_head_lab_survey.py checks that the Heads lab draws it."""

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from core import CheckpointError
from core.files.checkpoint import TEMPORARY_SUFFIX, save_model
from core.files.model_dir import HEADS_FILE, MODEL_FILE, ModelDir
from core.inspection.ablation import KINDS, all_heads, head_importance, intervened_translator
from core.inspection.head_statistics import role_attention, statistics_per_head
from core.inspection.head_survey import (
    load_survey,
    pruning_counts,
    read_survey,
    save_survey,
    survey_to_json,
)
from core.model.transformer import Transformer
from core.scoring import score_translations
from tests.conftest import ALPHA, BEAM, TINY, plain_translations
from tests.training import write_tiny_data
from train.data.corpora import load_corpus
from train.shipping.head_survey import main, validation_sample

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread: on a busy machine two threads wait on each other for tiny matrices."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def scores_by_target(hypotheses, pairs):
    """{"de": {"bleu", "chrf"}, ...} by core.scoring, the model card's scorer."""
    scores = {}
    for target in ("de", "fr"):
        chosen = [i for i, p in enumerate(pairs) if p.target == target]
        got = score_translations(
            [hypotheses[i] for i in chosen], [pairs[i].reference for i in chosen]
        )
        scores[target] = {"bleu": got["bleu"], "chrf": got["chrf"]}
    return scores


def test_stored_means_are_the_means_of_each_sentences_own_statistics_and_importance(
    translator, pairs, surveyed
):
    per_sentence = {kind: [] for kind in KINDS}
    importance = {kind: [] for kind in KINDS}
    for pair in pairs:
        result = translator.translate(pair.source, pair.target, BEAM, ALPHA, trace=True)
        for kind in KINDS:
            attention = role_attention(result.attention, result.word_attention, kind)
            statistics = statistics_per_head(
                attention.weights, attention.key_labels, kind != "cross"
            )
            per_sentence[kind].append(statistics)
            importance[kind].append(head_importance(translator, result, kind))
    for kind in KINDS:
        assert set(surveyed.statistics[kind]) == set(per_sentence[kind][0])
        for name, stored in surveyed.statistics[kind].items():
            direct = np.mean([statistics[name] for statistics in per_sentence[kind]], axis=0)
            np.testing.assert_allclose(stored, direct, rtol=1e-6, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(
            surveyed.importance[kind], np.mean(importance[kind], axis=0), rtol=1e-5, atol=1e-6
        )
        assert surveyed.importance[kind].shape == (2, TINY.n_heads)


def test_the_pruning_curve_starts_at_the_plain_translator(translator, pairs, surveyed):
    hypotheses = plain_translations(translator, pairs)
    direct = score_translations(hypotheses, [p.reference for p in pairs])
    first = surveyed.pruning[0]
    assert first.heads_off == 0
    assert (first.bleu, first.chrf) == (direct["bleu"], direct["chrf"]) == (100.0, 100.0)
    assert first.by_target == scores_by_target(hypotheses, pairs)
    assert surveyed.bleu_signature == direct["signature"]
    assert surveyed.chrf_signature == direct["chrf_signature"]


def test_a_point_with_k_heads_off_is_a_direct_run_without_the_k_least_important(
    translator, pairs, surveyed
):
    point = surveyed.pruning[1]
    assert point.heads_off == 4
    heads = surveyed.heads_off(point)
    ranked = sorted(
        all_heads(translator),
        key=lambda h: float(surveyed.importance[h.kind][h.layer, h.head]),
    )
    assert heads == ranked[:4]
    hypotheses = plain_translations(intervened_translator(translator, heads), pairs)
    assert hypotheses != [p.reference for p in pairs]  # the heads off change the output
    direct = score_translations(hypotheses, [p.reference for p in pairs])
    assert (point.bleu, point.chrf) == (direct["bleu"], direct["chrf"])
    assert point.chrf < 100
    assert point.by_target == scores_by_target(hypotheses, pairs)


def test_the_order_lists_every_head_once_least_important_first(translator, surveyed):
    order = surveyed.pruning_order
    assert sorted(order) == sorted(all_heads(translator)) and len(order) == 24
    scores = [surveyed.importance[h.kind][h.layer, h.head] for h in order]
    assert scores == sorted(scores)
    assert [p.heads_off for p in surveyed.pruning] == [0, 4, 24]
    assert surveyed.heads_off(surveyed.pruning[-1]) == order
    assert pruning_counts(144) == [0, 6, 12, 24, 48, 72, 96, 120, 144]
    assert pruning_counts(24) == [0, 1, 2, 4, 8, 12, 16, 20, 24]
    assert surveyed.sentences == 4 and surveyed.targets == {"de": 2, "fr": 2}


def test_the_file_round_trips_and_is_written_atomically(surveyed, tmp_path):
    save_survey(tmp_path / HEADS_FILE, surveyed)
    loaded = load_survey(tmp_path)
    assert list(tmp_path.iterdir()) == [tmp_path / HEADS_FILE]  # no temporary file left
    assert (tmp_path / HEADS_FILE).stat().st_mode & 0o777 == 0o644  # readable by the app
    for name in ("model_sha256", "computed_at", "seconds", "sentences", "targets", "sample"):
        assert getattr(loaded, name) == getattr(surveyed, name), name
    assert loaded.sample_sha256 == surveyed.sample_sha256
    assert (loaded.beam_size, loaded.alpha) == (BEAM, ALPHA)
    assert loaded.pruning == surveyed.pruning and loaded.pruning_order == surveyed.pruning_order
    assert loaded.bleu_signature == surveyed.bleu_signature
    for kind in KINDS:
        np.testing.assert_array_equal(loaded.importance[kind], surveyed.importance[kind])
        for name, values in surveyed.statistics[kind].items():
            np.testing.assert_array_equal(loaded.statistics[kind][name], values)
    assert load_survey(tmp_path / "elsewhere") is None  # no file: nothing computed yet


def test_a_file_from_before_alpha_had_its_name_reads_its_length_penalty(surveyed, tmp_path):
    save_survey(tmp_path / HEADS_FILE, surveyed)
    written = json.loads((tmp_path / HEADS_FILE).read_text())
    written["length_penalty"] = written.pop("alpha")
    (tmp_path / HEADS_FILE).write_text(json.dumps(written))
    assert load_survey(tmp_path).alpha == ALPHA


def test_a_failed_write_keeps_the_previous_file(surveyed, tmp_path, monkeypatch):
    path = tmp_path / HEADS_FILE
    save_survey(path, surveyed)
    before = path.read_bytes()

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        save_survey(path, surveyed)
    assert path.read_bytes() == before
    assert not list(tmp_path.glob(f"*{TEMPORARY_SUFFIX}"))


def test_is_current_turns_false_when_model_pt_changes(surveyed, tiny_model_dir, tmp_path):
    model_dir = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model_dir)
    assert ModelDir(model_dir).is_current(surveyed.model_sha256)
    torch.manual_seed(123)
    save_model(Transformer(TINY), model_dir / MODEL_FILE)  # retrained: same shape, new weights
    assert not ModelDir(model_dir).is_current(surveyed.model_sha256)
    (model_dir / MODEL_FILE).unlink()
    assert not ModelDir(model_dir).is_current(surveyed.model_sha256)


def drop(path):
    def mutate(obj):
        *parents, last = path
        for key in parents:
            obj = obj[key]
        del obj[last]

    return mutate


def put(path, value):
    def mutate(obj):
        *parents, last = path
        for key in parents:
            obj = obj[key]
        obj[last] = value

    return mutate


DAMAGE = {
    "wrong format": put(["format"], "attention-lab/1"),
    "no sha256": drop(["model_sha256"]),
    "short sha256": put(["model_sha256"], "abc"),
    "sentences as text": put(["sentences"], "4"),
    "no cross kind": drop(["kinds", "cross"]),
    "ragged table": put(["kinds", "encoder", "importance"], [[1.0, 2.0], [3.0]]),
    "table of text": put(["kinds", "decoder", "statistics", "entropy"], [["a", "b"]]),
    "tables of two shapes": put(["kinds", "cross", "statistics", "entropy"], [[0.5]]),
    "a head missing from the order": lambda obj: obj["pruning"]["order"].pop(),
    "a head that is no head": put(["pruning", "order", 0], "enc L1"),
    "more heads off than heads": put(["pruning", "points", 0, "heads_off"], 25),
    "bleu as text": put(["pruning", "points", 1, "bleu"], "high"),
    "points not a list of objects": put(["pruning", "points"], [1, 2]),
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_wrong_shape_is_a_checkpoint_error_naming_the_file(surveyed, tmp_path, damage):
    obj = copy.deepcopy(survey_to_json(surveyed))
    damage(obj)
    path = tmp_path / HEADS_FILE
    path.write_text(json.dumps(obj))
    with pytest.raises(CheckpointError, match=str(path)):
        read_survey(path)


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe garbage \x00", b"[1, 2, 3]", b"null"],
    ids=["empty", "garbage", "a list", "null"],
)
def test_garbage_is_a_checkpoint_error(tmp_path, content):
    (tmp_path / HEADS_FILE).write_bytes(content)
    with pytest.raises(CheckpointError, match="not a readable head survey"):
        load_survey(tmp_path)


def test_a_truncated_file_is_a_checkpoint_error(surveyed, tmp_path):
    save_survey(tmp_path / HEADS_FILE, surveyed)
    text = (tmp_path / HEADS_FILE).read_bytes()
    (tmp_path / HEADS_FILE).write_bytes(text[: len(text) // 2])
    with pytest.raises(CheckpointError, match="not a readable head survey"):
        load_survey(tmp_path)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_tiny_data(tmp_path_factory.mktemp("data"))


def test_the_sample_is_spread_over_the_validation_split_and_always_the_same(data_dir):
    pairs, description = validation_sample(data_dir, 5)
    assert pairs == validation_sample(data_dir, 5)[0]
    assert [p.target for p in pairs] == ["de"] * 3 + ["fr"] * 2
    valid = load_corpus(data_dir).valid
    german = [(e.source_text, e.target_text) for e in valid if e.target == "de"]
    step = len(german) // 3
    assert [(p.source, p.reference) for p in pairs[:3]] == german[::step][:3]
    assert step > 1  # spread, not the first three
    assert "3 en-de of" in description and "2 en-fr of" in description


@pytest.mark.slow
def test_the_dry_run_writes_a_loadable_survey_and_leaves_the_model_alone(
    data_dir, tiny_model_dir, tmp_path
):
    model_dir = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model_dir)
    (tmp_path / "work").mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "train.shipping.head_survey", "--dry-run"]
    command += ["--model", str(model_dir), "--data-dir", str(data_dir)]
    process = subprocess.run(
        command, cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=600
    )
    assert process.returncode == 0, process.stderr
    assert "Traceback" not in process.stderr and "heads off: BLEU" in process.stdout
    written = read_survey(tmp_path / "work" / "runs" / "head-survey-dry-run" / HEADS_FILE)
    assert written.sentences == 4 and written.targets == {"de": 2, "fr": 2}
    assert [p.heads_off for p in written.pruning] == [0, 12, 24]
    assert ModelDir(model_dir).is_current(written.model_sha256)
    assert not (model_dir / HEADS_FILE).exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--model", "{tmp}/missing"], "no such model directory"),
        (["--data-dir", "{tmp}/no-data"], "no validation pairs"),
        (["--heads-off", "0,99"], "between 0 and 24"),
    ],
)
def test_bad_input_is_a_message_not_a_traceback(
    tiny_model_dir, data_dir, tmp_path, capsys, flags, message
):
    flags = [flag.replace("{tmp}", str(tmp_path)) for flag in flags]
    defaults = ["--model", str(tiny_model_dir), "--data-dir", str(data_dir)]
    output = ["--output", str(tmp_path / "out" / HEADS_FILE), "--quiet"]
    assert main([*defaults, *output, *flags]) == 2  # later flags win
    error = capsys.readouterr().err
    assert error.startswith("error: ") and message in error
    assert not (tmp_path / "out" / HEADS_FILE).exists()


def test_a_beam_size_beyond_the_translators_is_a_usage_error(tiny_model_dir, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--model", str(tiny_model_dir), "--beam-size", "40"])
    assert exit_.value.code == 2
    assert "argument --beam-size: must be at most 16, got 40" in capsys.readouterr().err


def test_the_survey_may_not_overwrite_the_model_it_reads(tiny_model_dir, data_dir, capsys):
    model_file = tiny_model_dir / "model.pt"
    before = model_file.read_bytes()
    flags = ["--model", str(tiny_model_dir), "--data-dir", str(data_dir), "--quiet"]
    assert main([*flags, "--output", str(model_file)]) == 2
    assert "that is an input of this command" in capsys.readouterr().err
    assert model_file.read_bytes() == before


def test_the_survey_says_when_the_device_cannot_be_used(
    tiny_model_dir, data_dir, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    flags = ["--model", str(tiny_model_dir), "--data-dir", str(data_dir), "--device", "cuda"]
    assert main([*flags, "--output", str(tmp_path / HEADS_FILE), "--quiet"]) == 2
    assert capsys.readouterr().err.startswith("error: --device cuda was asked for")
    assert not (tmp_path / HEADS_FILE).exists()


def test_a_bad_flag_value_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--sentences", "0"])
    assert exit_.value.code == 2 and "must be at least 1" in capsys.readouterr().err
