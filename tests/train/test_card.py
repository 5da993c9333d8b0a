"""The model card: written into the run unless asked to ship, recipe read from the run itself."""

import json
from dataclasses import astuple
from pathlib import Path

import pytest
import torch

from core import PAPER_DECODING
from core.translator import Translator
from tests.train.test_train import data_dir, run_train  # noqa: F401  (data_dir is a fixture)
from train.data import sources
from train.loop import lineage
from train.loop.final_model import describe_hardware
from train.loop.run_folder import RunDir
from train.shipping import card, card_md
from train.shipping.card_sections.leakage import leakage_section
from train.shipping.card_sections.tables import equal_minutes_table, percent
from train.shipping.card_sections.term_test import term_test_section


@pytest.mark.slow
def test_card_stays_in_the_run_without_export_and_ships_snapshots_with_it(data_dir, tmp_path):  # noqa: F811
    run = tmp_path / "run"
    flags = (
        "--max-steps",
        "6",
        "--snapshot-steps",
        "2",
        "--dropout",
        "0.2",
        "--copy-fraction",
        "0.3",
    )
    assert run_train(data_dir, run, *flags).wait(timeout=300) == 0
    notes = tmp_path / "notes.md"
    notes.write_text("Shape chosen by a test.")
    base = ["--run", str(run), "--data-dir", str(data_dir), "--limit", "3", "--threads", "1"]
    assert card.main([*base, "--valid-sentences", "3", "--notes", str(notes)]) == 0
    written = json.loads((run / "model" / "card.json").read_text())
    assert written["training"]["recipe"]["dropout"] == 0.2  # from the run, not hard-coded
    assert written["snapshots"] == [{"file": "snapshots/step_0000002.pt", "step": 2}]
    # measured, not bounded by 1 here: on a CPU without AMX, bf16 matmuls (the "peak") can be
    # slower than the float32 steps the run took
    assert written["training"]["mfu"] > 0 and written["training"]["peak_tflops"] > 0
    markdown = (run / "model" / "card.md").read_text()
    assert "dropout 0.2" in markdown and "Shape chosen by a test." in markdown
    assert "for 30% of the pairs that carry a name or number unchanged, a copy" in markdown
    assert "joined" not in markdown and "subword" not in markdown  # not asked for
    assert not (tmp_path / "shipped").exists()

    assert card.main([*base, "--valid-sentences", "3", "--export", str(tmp_path / "shipped")]) == 0
    shipped = tmp_path / "shipped"
    assert (shipped / "snapshots" / "step_0000002.pt").is_file()
    assert json.loads((shipped / "card.json").read_text())["name"] == "shipped"


def test_tokens_seen_weighs_each_window_by_its_time_across_continued_runs():
    first_run = [
        {"step": 20, "elapsed_s": 10.0, "tokens_per_s": 1000},
        {"step": 40, "elapsed_s": 30.0, "tokens_per_s": 3000},
        {"step": 40, "val_loss": 2.0},
    ]
    origin = lineage.Origin(Path("earlier"), steps=40, seconds=30.0)
    continued = [lineage.shifted({"step": 20, "elapsed_s": 5.0, "tokens_per_s": 2000}, origin)]
    tokens, seconds = card.tokens_seen(first_run + continued)  # as ship_history writes them
    assert seconds == 35.0
    assert tokens == 10 * 1000 + 20 * 3000 + 5 * 2000  # not the mean rate x seconds (70,000)
    # the continued run's own part (its MFU: the earlier runs may have had another machine)
    assert card.tokens_seen(first_run + continued, after_step=40) == (5 * 2000, 5.0)


def test_a_validation_between_log_lines_is_at_the_minutes_of_the_line_before():
    history = [
        {"step": 20, "elapsed_s": 60.0, "tokens_per_s": 1000},
        {"step": 25, "val_loss": 2.0},  # the last step of a run that a later one continued
        {"step": 40, "elapsed_s": 150.0, "tokens_per_s": 1000},
        {"step": 45, "val_loss": 1.5},  # the final step
    ]
    assert card.minutes_at(history, 25, final_step=45, final_seconds=180.0) == 1.0
    assert card.minutes_at(history, 45, final_step=45, final_seconds=180.0) == 3.0
    assert card.minutes_at(history, 10, final_step=45, final_seconds=180.0) == 0.0


def test_a_study_run_too_short_for_a_throughput_shows_a_dash():
    curve = [{"minutes": 0.0, "step": 4, "val_bleu": 1.0, "val_loss": 5.0}]
    study = [
        {"pieces": 480, "parameters": 1000, "tokens_per_second": None, "curve": curve},
        {"pieces": 960, "parameters": 2000, "tokens_per_second": 12345, "curve": curve},
    ]
    _header, _rule, short, timed = equal_minutes_table(study, "pieces", "pieces")
    assert short.split(" | ")[2] == "-"
    assert timed.split(" | ")[2] == "12,345"


def test_the_last_mark_of_a_study_is_a_minute_its_runs_reached():
    def run(width: int, end: float) -> dict:
        points = [(0.5, 5.0, 1.0), (end, 3.0, 10.0)]  # (minutes, loss, BLEU)
        curve = [
            {"minutes": m, "step": 1, "val_loss": loss, "val_bleu": b} for m, loss, b in points
        ]
        return {"d_model": width, "parameters": 1, "tokens_per_second": 1, "curve": curve}

    header, _rule, *rows = equal_minutes_table([run(192, 70.02), run(256, 70.0)], "d_model", "w")
    assert header.endswith("| 70 min |")  # not 71, which neither run reached
    assert all(row.endswith(" / 3.00 |") for row in rows)


def test_the_training_section_says_whether_the_source_is_truecased(tmp_path):
    model_dir = RunDir(tmp_path).model_dir
    model_dir.write_card({"training": {"steps": 1}})
    assert card.training_summary(tmp_path)["truecase"] is False
    model_dir.truecase_file.write_text("the (2/3) The (1)\n")
    training = card.training_summary(tmp_path)
    assert training["truecase"] is True
    assert any("truecased" in line for line in card_md.training_section(training))
    assert not any("truecased" in line for line in card_md.training_section({"truecase": False}))


def test_the_mfu_line_names_whose_throughput_it_divides():
    measured = {"mfu": 0.12, "peak_tflops": 0.11, "dtype": "fp32"}
    (line,) = [x for x in card_md.training_section(measured) if "utilisation" in x]
    assert "of the mean throughput: 12.0% of the machine's measured fp32 matmul peak" in line
    own = {**measured, "run_tokens_per_second": 1825}  # cards from now on: the last run alone
    (line,) = [x for x in card_md.training_section(own) if "utilisation" in x]
    assert "of the last run (1,825 target tokens/s): 12.0%" in line


def test_a_continued_run_names_its_hardware_as_the_last_runs_alone():
    first = {"steps": 100, "seconds": 600, "hardware": "CPU, 2 threads"}
    (line,) = [x for x in card_md.training_section(first) if "minutes" in x]
    assert line.endswith("10 minutes of training steps; on CPU, 2 threads")
    continued = {**first, "steps": 150, "steps_before": 100, "hardware": "CPU, 1 thread"}
    (line,) = [x for x in card_md.training_section(continued) if "minutes" in x]
    assert line.endswith("10 minutes of training steps; the last 50 steps on CPU, 1 thread")


def test_the_hardware_says_thread_for_one_and_threads_for_more():
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert describe_hardware(torch.device("cpu"), 1) == "CPU, 1 thread"
        torch.set_num_threads(2)
        assert describe_hardware(torch.device("cpu"), 1) == "CPU, 2 threads"
    finally:
        torch.set_num_threads(threads)


@pytest.mark.slow  # 16 beam-4 translations on the shipped model
def test_the_shipped_model_still_writes_its_cards_examples():
    """The card's examples were decoded when the model was exported; today's code must give the
    same texts (a refactor of the model, the search or the tokenizer that changes one fails)."""
    translator = Translator.load()
    examples = translator.card["examples"]
    decoded = [
        translator.translate(e["source"], e["target"], *astuple(PAPER_DECODING)).text
        for e in examples
    ]
    assert decoded == [e["translation"] for e in examples] and len(examples) >= 12


SHIPPED = Path(__file__).resolve().parents[2] / "pretrained" / "en-de-fr"


def test_the_mixture_line_names_a_dictionary_only_when_the_run_trained_on_it():
    shipped = "tatoeba=1,multi30k=6,general=3,general.fr=2"
    expected = "tatoeba 1, multi30k 6, general 3 (en-fr 2)"
    assert card_md.mixture_text({"mixture": shipped}) == expected
    assert sources.trained_named_corpora({"mixture": shipped}) == []
    recipe = {"mixture": shipped + ",ding-sentences=1,ding-terms=0.05"}
    line = card_md.mixture_text(recipe)
    assert line.startswith("tatoeba 1, multi30k 6, general 3 (en-fr 2), ding-sentences 1, ")
    assert line.endswith("ding-terms 0.05; the term test's held-out terms left out")
    assert "freedict" not in line
    named = sources.trained_named_corpora(recipe)
    assert [d["pairs"] for d in named] == [21478, 357405]
    assert {d["license"] for d in named} == {"GPL-2+"}


def test_the_term_test_and_leakage_sections_show_the_record_with_its_command():
    term_test = {
        "command": "python -m train.studies.term_test --model m",
        "held_out": "500 of ding-terms, 200 of freedict-terms",
        "seed": 51,
        "carrier": "The word is {}.",
        "carrier_translations": {"de": "Das Wort ist", "fr": "Le mot est"},
        "beam_size": 4,
        "alpha": 0.6,
        "results": [
            {
                "dictionary": "freedict-terms",
                "pair": "en-fr",
                "terms": 200,
                "alone": 0.21,
                "carrier": 0.195,
                "unseen_terms": 45,
                "unseen_alone": 0.0444,
                "unseen_carrier": 0.0222,
                "carrier_frame_kept": 0.96,
            }
        ],
    }
    section = "\n".join(term_test_section(term_test))
    assert "| freedict-terms | en-fr | 200 | 21.0% | 19.5% | 45 | 4.4% | 2.2% | 96.0% |" in section
    assert percent(None) == "-"  # a dictionary whose terms the sentences all show
    assert "(500 of ding-terms, 200 of freedict-terms, drawn at random" in section
    assert (
        '"The word is X."' in section and "`python -m train.studies.term_test --model m`" in section
    )
    assert "FreeDict" in section and "GPL-2+" in section and "Ding" not in section
    counts = {"sentences": 1012, "sentences_with_leak": 7, "words": 9, "most_frequent": ["und 2"]}
    leakage = {
        "command": "python -m train.studies.leakage",
        "test_set": "FLORES-200 devtest",
        "beam_size": 4,
        "alpha": 0.6,
        "results": [
            {
                "pair": "en-fr",
                "words_of": "de",
                "translations": counts,
                "references": {**counts, "sentences_with_leak": 1, "words": 1},
            }
        ],
    }
    section = "\n".join(leakage_section(leakage))
    assert "| en-fr | de | 7 of 1012 | 9 | und 2 | 1 of 1012 | 1 |" in section
    assert term_test_section(None) == leakage_section(None) == []


def test_the_shipped_card_md_is_what_the_card_code_makes_of_its_card_json():
    shipped = json.loads((SHIPPED / "card.json").read_text())
    assert card_md.card_markdown(shipped) == (SHIPPED / "card.md").read_text()


def test_the_models_terms_follow_from_its_datas_licences():
    data = [
        {"name": "Tatoeba English-French (release)", "license": "CC-BY 2.0 FR"},
        {"name": "Multi30k task 1 (en-de)", "license": "research use"},
        {"name": "MLQE-PE", "license": "CC0"},
    ]
    terms = card_md.model_terms(data)
    assert "use for research only (Multi30k task 1)" in terms
    assert "attribution, as above (Tatoeba English-French)" in terms
    assert "MLQE" not in terms and "share-alike" not in terms  # CC0 asks nothing


def test_the_card_says_how_long_sentences_were_read():
    from train.shipping.card_md import long_sentences_note

    scores = [
        {"set": "FLORES-200 devtest", "pair": "en-de", "sentences": 1012, "long_sentences": 23,
         "cut_sentences": 0, "source_budget": 64},
        {"set": "FLORES-200 devtest", "pair": "en-fr", "sentences": 1012, "long_sentences": 23,
         "cut_sentences": 1, "source_budget": 64},
        {"set": "Multi30k", "pair": "en-de", "sentences": 1000, "long_sentences": 0,
         "cut_sentences": 0, "source_budget": 64},
    ]  # fmt: skip
    assert long_sentences_note(scores)[1] == (
        "Sentences over the model's 64 source pieces are translated clause by clause "
        "(core/text/clauses.py), none cut silently: FLORES-200 devtest en-de 23 of 1012; "
        "FLORES-200 devtest en-fr 23 of 1012 (1 still cut)."
    )
    assert long_sentences_note([{"set": "old card", "sentences": 5}]) == []
