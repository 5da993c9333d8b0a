"""train/studies/lens_study.py: the settled layers summed up for the card, and the card's
section."""

import numpy as np

from train.shipping.card_sections.lens import lens_study_section
from train.studies.lens_study import summary


def test_the_summary_leaves_out_positions_the_last_layer_does_not_rank_first():
    layers = np.array([2, 3, 3, -1, 6])  # -1: the search chose a piece ranked lower
    found = summary(layers, n_layers=6)
    assert found["positions"] == 5
    assert found["last_layer_ranks_choice_first"] == 0.8
    assert found["mean_layer"] == 3.5
    assert found["settled_by_layer"] == [0.0, 0.0, 0.25, 0.75, 0.75, 0.75, 1.0]


def test_the_section_names_the_command_and_a_row_per_language():
    record = {
        "corpus": "multi30k test_2016_flickr",
        "sentences": 2,
        "seed": 58,
        "decoder_layers": 2,
        "results": {
            "de": summary(np.array([1, 2]), 2),
            "fr": summary(np.array([2, 2]), 2),
        },
        "command": "python -m train.studies.lens_study --card pretrained/en-de-fr",
    }
    lines = lens_study_section(record)
    assert "`python -m train.studies.lens_study --card pretrained/en-de-fr`" in lines[2]
    assert lines[-2] == "| de | 2 | 100.0% | 1.50 | 0% | 50% | 100% |"
    assert lines[-1].startswith("| fr | 2 |")
    assert lens_study_section(None) == []
