"""Figures that a phone (390 px wide) shows whole: Explain's maps keep their cells wide enough to
read, their numbers inside their cells, and Training dynamics' panels stack instead of standing
side by side. (In Chromium at 390x844: tests/browser/test_browser_phone.py.)"""

import html

import numpy as np

from app.figures.explain import agreement_map, lens_map, tau_text
from app.figures.style import CHARACTER_WIDTH, LABEL_CHARS, PHONE_PLOT_PX
from app.figures.training import training_curves

LENSES = [
    "cross-attention (last layer, mean of heads)",
    "cross-attention (mean of layers and heads)",
    "rollout",
    "norm-based",
    "gradient x input",
    "integrated gradients",
    "occlusion",
]


def lines(label: str) -> list[str]:
    return html.unescape(label).split("<br>")


def test_a_lens_map_wraps_long_lens_names_and_lays_its_scale_under_the_map():
    values = {name: np.linspace(-1, 1, 12) for name in LENSES}
    fig = lens_map(values, [f"▁w{i}" for i in range(12)], "Why?")
    labels = fig.layout.yaxis.ticktext
    assert [" ".join(lines(label)) for label in labels] == LENSES  # every word kept
    assert max(len(line) for label in labels for line in lines(label)) <= LABEL_CHARS
    assert fig.layout.margin.l is None  # the labels' own width, not a fixed 260 px
    assert fig.data[0].colorbar.orientation == "h"  # under the map, not beside it


def test_kendall_numbers_fit_their_cells_on_a_phone():
    assert [tau_text(tau) for tau in (-0.123, 0.77, 0.0, 1.0, -1.0)] == [
        "-.12",
        ".77",
        ".00",
        "1.00",
        "-1.00",
    ]
    agreement = np.full((7, 7), -0.12)
    np.fill_diagonal(agreement, 1.0)
    fig = agreement_map(LENSES, agreement)
    texts = np.asarray(fig.data[0].text)
    assert set(texts.ravel()) == {"-.12", "1.00"}
    widest = fig.data[0].textfont.size * CHARACTER_WIDTH * 4
    assert widest <= PHONE_PLOT_PX / len(LENSES)  # a cell's width on a phone
    assert fig.layout.margin.t > fig.layout.margin.r > 0  # tilted column labels: above, right


def test_training_panels_stack_on_one_step_axis():
    steps = [10, 100, 1000]
    panels = {
        "Entropy (nats), lower = more focused": {"L2 H1": (steps, [3.0, 2.0, 1.0])},
        "Confidence (top weight, not </s>)": {"L2 H1": (steps, [0.1, 0.5, 0.9])},
        "Diagonality, most diagonal head per layer": {"layer 1": (steps, [0.2, 0.4, 0.6])},
    }
    fig = training_curves(panels, mark_step=100, log_steps=True)
    axes = [fig.layout[f"yaxis{n if n > 1 else ''}"] for n in (1, 2, 3)]
    bottoms, tops = zip(*(axis.domain for axis in axes))
    assert tops[2] < bottoms[1] and tops[1] < bottoms[0]  # one above the other, apart
    for n in ("", "2", "3"):
        assert tuple(fig.layout[f"xaxis{n}"].domain) == (0.0, 1.0)  # each as wide as the figure
        assert fig.layout[f"xaxis{n}"].type == "log"
    titles = [annotation.y for annotation in fig.layout.annotations if annotation.text]
    assert len(titles) == 3 and len(set(titles)) == 3  # each title over its own panel
    assert [fig.layout[f"xaxis{n}"].title.text for n in ("", "2", "3")] == [None, None, "step"]
