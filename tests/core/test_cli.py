"""The command lines: a bad flag is a usage error before any work, a bad sentence is reported on
its line while the others go on, and the exit status says whether anything failed."""

import argparse
import gzip
import io
import json
import subprocess
import sys
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from unittest import mock

import pytest
import torch

from core.cli import finite_float, non_negative_int, positive_int
from core.device import resolve_device
from core.translate import main as translate
from core.translator import Translator
from train.shipping.evaluate import main as evaluate


def run(main, *args, stdin=b""):
    """main(args) in this process, as its command line runs it: (exit status, stdout, stderr)."""
    stdin_stream = io.TextIOWrapper(io.BytesIO(stdin))
    with mock.patch.object(sys, "stdin", stdin_stream), redirect_streams() as (out, err):
        try:
            status = main(list(args))
        except SystemExit as exit:  # argparse's usage errors
            status = exit.code
    return status, out.getvalue(), err.getvalue()


@contextmanager
def redirect_streams():
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        yield out, err


def test_translate_reports_a_bad_line_and_translates_the_others(tiny_model_dir):
    stdin = b"The dog runs.\nThe cat \xff sleeps.\n\nA man reads.\n"
    status, out, err = run(
        translate, "--model", str(tiny_model_dir), "--beam-size", "1", stdin=stdin
    )
    assert status == 1
    outputs = out.split("\n")
    assert len(outputs) == 5 and outputs[1:3] == ["", ""]  # one output line per input line
    errors = err.splitlines()
    assert errors[0] == "error: line 2: not valid UTF-8 (byte 9)"
    assert errors[1].startswith("error: line 3: ") and len(errors) == 2


def test_translate_reports_an_undecodable_argument(tiny_model_dir):
    # how Python hands over a command-line argument that is not UTF-8: the byte 0xff as U+DCFF
    args = ["--model", str(tiny_model_dir), "--beam-size", "1", "The dog.", "bad \udcff byte"]
    status, out, err = run(translate, *args)
    assert status == 1 and out.count("\n") == 2
    assert err == "error: argument 2: not valid UTF-8 (byte 5)\n"


def test_translate_exits_zero_when_every_sentence_translates(tiny_model_dir):
    status, out, err = run(translate, "--model", str(tiny_model_dir), "--beam-size", "1", "A dog.")
    assert status == 0 and err == "" and out.count("\n") == 1


def test_split_sentences_translates_each_sentence_of_a_line_on_its_own(tiny_model_dir):
    flags = ["--model", str(tiny_model_dir), "--beam-size", "1", "--split-sentences"]
    status, out, err = run(translate, *flags, stdin=b"It rains.  We stay.\n\n")
    translator = Translator.load(tiny_model_dir)
    rains, stay = (translator.translate(text, "de", 1).text for text in ("It rains.", "We stay."))
    assert out.split("\n")[:2] == [f"{rains}  {stay}", ""]
    assert status == 1 and err.startswith("error: line 2: ")  # nothing to translate, as without


@pytest.mark.slow
def test_the_command_line_exits_with_the_status_of_main(tiny_model_dir):
    command = [sys.executable, "-m", "core.translate", "--model", str(tiny_model_dir), ""]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.startswith("error: argument 1: ")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--beam-size", "0", "argument --beam-size: must be at least 1, got 0"),
        ("--beam-size", "-3", "argument --beam-size: must be at least 1, got -3"),
        ("--beam-size", "2.5", "argument --beam-size: not a whole number: '2.5'"),
        ("--alpha", "nan", "argument --alpha/--length-penalty: must be finite, got 'nan'"),
        ("--length-penalty", "inf", "argument --alpha/--length-penalty: must be finite, got 'inf'"),
    ],
)
@pytest.mark.parametrize("main", [translate, evaluate], ids=["translate", "evaluate"])
def test_bad_flag_values_are_usage_errors(main, flag, value, message):
    status, _, err = run(main, "--target", "de", f"{flag}={value}", "x")
    assert status == 2 and message in err


@pytest.mark.parametrize(
    ("parse", "text", "expected"),
    [
        (positive_int, "4", 4),
        (non_negative_int, "0", 0),
        (finite_float, "-0.5", -0.5),
        (finite_float, "1e308", 1e308),
    ],
)
def test_good_flag_values_pass(parse, text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize(
    "parse, text", [(non_negative_int, "-1"), (finite_float, "inf"), (finite_float, "many")]
)
def test_bad_flag_values_are_refused(parse, text):
    with pytest.raises(argparse.ArgumentTypeError):
        parse(text)


def run_evaluate(model_dir, *flags):
    return run(evaluate, "--model", str(model_dir), "--target", "de", "--quiet", *flags)


def test_evaluate_refuses_empty_data(tiny_model_dir, tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    assert run_evaluate(tiny_model_dir, "--tsv", str(empty)) == (
        2,
        "",
        f"error: {empty}: no sentences to score\n",
    )
    src, ref = tmp_path / "test.en", tmp_path / "test.de"
    src.write_text("")
    ref.write_text("")
    assert run_evaluate(tiny_model_dir, "--src", str(src), "--ref", str(ref)) == (
        2,
        "",
        f"error: {src}: no sentences to score\n",
    )


def test_evaluate_refuses_an_output_it_cannot_write_before_translating(tiny_model_dir, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("The dog runs.\tDer Hund läuft.\n")
    with mock.patch.object(Translator, "translate_batch") as translate_batch:
        for output in (tmp_path, tmp_path / "missing" / "out.txt"):
            status, out, err = run_evaluate(
                tiny_model_dir, "--tsv", str(pairs), "--output", str(output)
            )
            assert status == 2 and err.startswith("error: ") and str(output) in err and out == ""
    translate_batch.assert_not_called()


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_evaluate_loads_the_model_on_the_device_asked_for(tiny_model_dir, tmp_path, device):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("The dog runs.\tDer Hund läuft.\n")
    flags = ["--tsv", str(pairs), "--beam-size", "1", "--device", device]
    with mock.patch.object(Translator, "load", wraps=Translator.load) as load:
        status, out, err = run_evaluate(tiny_model_dir, *flags)
    assert status == 0 and json.loads(out)["sentences"] == 1, err
    assert load.call_args.args == (str(tiny_model_dir), resolve_device(device))


def test_evaluate_says_when_the_device_cannot_be_used(tiny_model_dir, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("The dog runs.\tDer Hund läuft.\n")
    with mock.patch.object(torch.cuda, "is_available", return_value=False):
        status, out, err = run_evaluate(tiny_model_dir, "--tsv", str(pairs), "--device", "cuda")
    assert (status, out) == (2, "") and err.startswith("error: ") and "no CUDA GPU" in err
    status, out, err = run_evaluate(tiny_model_dir, "--tsv", str(pairs), "--device", "gpu")
    assert status == 2 and "invalid choice: 'gpu'" in err  # argparse's usage error


def test_evaluate_writes_the_translations_to_output(tiny_model_dir, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("The dog runs.\tDer Hund läuft.\nA cat.\tEine Katze.\n")
    output = tmp_path / "out.txt"
    status, out, err = run_evaluate(
        tiny_model_dir, "--tsv", str(pairs), "--output", str(output), "--beam-size", "1"
    )
    assert status == 0 and json.loads(out)["sentences"] == 2, err
    assert len(output.read_text(encoding="utf-8").splitlines()) == 2


def test_evaluate_split_sentences_scores_each_sentence_translated_on_its_own(
    tiny_model_dir, tmp_path
):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("The dog runs. A cat sleeps.\tDer Hund läuft. Eine Katze schläft.\n")
    output = tmp_path / "out.txt"
    flags = ("--tsv", str(pairs), "--output", str(output), "--beam-size", "1", "--split-sentences")
    status, out, err = run_evaluate(tiny_model_dir, *flags)
    assert status == 0 and json.loads(out)["split_sentences"] is True, err
    translator = Translator.load(tiny_model_dir)
    runs, sleeps = (
        translator.translate(text, "de", 1).text for text in ("The dog runs.", "A cat sleeps.")
    )
    assert output.read_text(encoding="utf-8") == f"{runs} {sleeps}\n"


@pytest.mark.parametrize(
    ("test_set", "files"),
    [("multi30k", "multi30k/test_2016_flickr.{}.gz"), ("flores", "flores/devtest.{}.gz")],
)
def test_evaluate_reads_a_standard_test_set_from_the_data_directory(
    tiny_model_dir, tmp_path, test_set, files
):
    sources, references = ["The dog runs.", "A cat sleeps.", "A man reads."], ["a", "b", "c"]
    for language, lines in (("en", sources), ("de", references)):
        path = tmp_path / files.format(language)
        path.parent.mkdir(exist_ok=True)
        with gzip.open(path, "wt", encoding="utf-8") as file:
            file.writelines(line + "\n" for line in lines)
    output = tmp_path / "out.txt"
    flags = ("--test-set", test_set, "--data-dir", str(tmp_path), "--limit", "2")
    status, out, err = run_evaluate(tiny_model_dir, *flags, "--output", str(output))
    assert status == 0 and json.loads(out)["sentences"] == 2, err
    translator = Translator.load(tiny_model_dir)
    assert output.read_text(encoding="utf-8").splitlines() == translator.translate_batch(
        sources[:2], "de"
    )


def test_evaluate_test_set_errors(tiny_model_dir, tmp_path):
    status, _, err = run_evaluate(tiny_model_dir, "--test-set", "flores", "--src", "x.en")
    assert status == 2 and "--test-set replaces --src, --ref and --tsv" in err
    status, out, err = run_evaluate(tiny_model_dir, "--test-set", "flores", "--data-dir", "/no")
    assert status == 2 and out == "" and err.startswith("error: /no/flores/devtest.en.gz")


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--beam-size", "100", "argument --beam-size: must be at most 16, got 100"),
        ("--alpha", "-1", "argument --alpha/--length-penalty: must be between 0 and 5, got -1"),
    ],
)
def test_a_bad_setting_leaves_an_earlier_output_whole(
    tiny_model_dir, tmp_path, flag, value, message
):
    pairs, old = tmp_path / "pairs.tsv", tmp_path / "old.txt"
    pairs.write_text("The dog runs.\tDer Hund läuft.\n")
    old.write_text("last week's translations\n")
    status, _, err = run_evaluate(
        tiny_model_dir, "--tsv", str(pairs), "--output", str(old), flag, value
    )
    assert status == 2 and message in err
    assert old.read_text() == "last week's translations\n"


def test_an_output_that_is_an_input_is_refused(tiny_model_dir, tmp_path):
    src, ref, pairs = tmp_path / "test.en", tmp_path / "test.de", tmp_path / "pairs.tsv"
    src.write_text("The dog runs.\n")
    ref.write_text("Der Hund läuft.\n")
    pairs.write_text("The dog runs.\tDer Hund läuft.\n")
    for data, output in (
        (["--src", str(src), "--ref", str(ref)], ref),
        (["--src", str(src), "--ref", str(ref)], tmp_path / "." / "test.en"),
        (["--tsv", str(pairs)], pairs),
    ):
        before = output.read_text()
        status, out, err = run_evaluate(tiny_model_dir, *data, "--output", str(output))
        assert status == 2 and out == "" and "that is an input of this command" in err
        assert output.read_text() == before


def test_the_output_is_written_whole_or_not_at_all(tiny_model_dir, tmp_path):
    pairs, old = tmp_path / "pairs.tsv", tmp_path / "old.txt"
    pairs.write_text("The dog runs.\tDer Hund läuft.\n")
    old.write_text("last week's translations\n")
    interrupted = mock.patch.object(Translator, "translate_batch", side_effect=KeyboardInterrupt)
    with interrupted, pytest.raises(KeyboardInterrupt):
        run_evaluate(tiny_model_dir, "--tsv", str(pairs), "--output", str(old))
    assert old.read_text() == "last week's translations\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt", "pairs.tsv"]
