"""Figures for slides: the caption that travels with every chart's export, the export settings
(projector resolution), and the attention weights as JSON for those who redraw them.

Pure functions, no Streamlit: app/ui.py builds a :class:`Caption` from the sidebar's settings and
what the page knows (kind, layer, head, step), and draws the chart with it.

The caption is drawn inside the figure, as the subtitle under its title, on screen and in every
export alike: plotly's camera (and the "Figure for slides" button, which presses it) exports
exactly the figure, so a caption that is part of it cannot be lost on the way to a slide.
"""

from __future__ import annotations

import itertools
import json
import re
import textwrap
import unicodedata
from dataclasses import asdict, dataclass, fields

import numpy as np
import plotly.graph_objects as go

from app.display import ATTENTION_KINDS
from app.figures.text import plot_text
from core import LANGUAGES, LabelledAttention

SOURCE_LANGUAGE = "English"
# A caption's and a title's lines fit the narrowest chart the app draws, a phone's (about 350
# px for text on a 390 px wide screen), where app/narrow.py draws them smaller (10 px: about
# 4.4 px a character; a 12 px bold title: about 5.5), and a chart in one of two columns on a
# laptop (about 400 px) at their own sizes (12 px: 5.2 px a character).
CAPTION_CHARS = 76
WIDE_COLUMNS = 3  # see columns()
TITLE_CHARS = 60
# A projector's chart is at least 1120 px wide (1280x720 less the page's margins): 80 characters
# of its 20 px title fit on one line, and a title of one line leaves the map its height.
PRESENTATION_TITLE_CHARS = 80
CAPTION_FONT_PX = 12
CAPTION_LINE_PX = 16  # a caption line's height at CAPTION_FONT_PX
TITLE_LINE_PX = 21  # a title line's height (the chart theme's 16 px)
TITLE_PAD_PX = 8  # above the title
# Plotly sets the baseline of a one-line title 0.7 em below its anchor, but the last line of a
# title of several lines 0.35 em above it, the lines before it PLOTLY_LINE_EM apart above that
# (measured in Chromium): a title of n lines is moved down by (n - 1) * 1.3 + 1.05 em, or its
# first line is cut off above the chart (the Heads lab's, issue #57).
PLOTLY_LINE_EM = 1.3
MULTILINE_DROP_EM = 0.7 + 0.35
TITLE_FONT_PX = 16  # the chart theme's; presentation mode's 20 px is under TITLE_FONT_PX * scale
CAPTION_GAP_PX = 10  # between the title and the caption
DEFAULT_HEIGHT = 450  # plotly's, for figures that set none
# The export: a 1280 x 720 layout (16:9) drawn at 1.5x, so the PNG is 1920 x 1080 and its text
# is 1.5x the size it has on screen, readable from the back of a lecture hall.
EXPORT_WIDTH, EXPORT_HEIGHT, EXPORT_SCALE = 1280, 720, 1.5
JSON_FORMAT = "attention-lab/attention/1"
NOT_IN_CLASS_NAMES = re.compile(r"[^A-Za-z0-9_-]")  # Streamlit's st-key-<key> turns these to "-"


@dataclass(frozen=True)
class Caption:
    """What a figure shows, for its caption: the sentence, its translation and the model always;
    the rest where the chart has it (layer and head count from 1, head "avg" for the average)."""

    sentence: str
    translation: str
    target: str  # language code, "de"
    model: str
    kind: str | None = None  # a key of ATTENTION_KINDS
    layer: int | None = None
    head: int | str | None = None
    training_step: int | None = None  # a snapshot's step, not the final model
    search_step: int | None = None  # a beam search step
    word: str | None = None  # the word the chart is about (the Heads lab's focus)
    heads_changed: tuple[str, ...] = ()  # heads switched off or changed, "enc L5 H5"
    change: str | None = None  # what was done to them: "switched off (output 0)"
    computed_on: str | None = None  # when not the sentence: "200 validation sentences"


def model_name(card: dict, directory: str) -> str:
    """The model as the Model page names it: its card's name, else its directory's."""
    return str(card.get("name") or directory)


def caption_lines(caption: Caption, compact: bool = False) -> list[str]:
    """The caption as plain text lines of at most CAPTION_CHARS: the sentence, the translation,
    then the model and what the chart shows, joined by " · "; ``compact``, only the last (on a
    projector, whose banner shows the sentence and its translation above every figure)."""
    language = LANGUAGES.get(caption.target, caption.target)
    details = [f"model {caption.model}"]
    if caption.kind is not None:
        details.append(ATTENTION_KINDS[caption.kind])
    if caption.layer is not None:
        details.append(f"layer {caption.layer}")
    if caption.head is not None:
        details.append("average of the heads" if caption.head == "avg" else f"head {caption.head}")
    if caption.word is not None:
        details.append(f"word “{caption.word}”")
    if caption.training_step is not None:
        details.append(f"training step {caption.training_step:,}")
    if caption.search_step is not None:
        details.append(f"search step {caption.search_step}")
    if caption.heads_changed:
        details.append(f"heads {caption.change or 'changed'}: {', '.join(caption.heads_changed)}")
    if caption.computed_on is not None:
        details.append(f"computed on {caption.computed_on}")
    if compact:
        return packed(details, CAPTION_CHARS)
    paragraphs = [f"{SOURCE_LANGUAGE}: {caption.sentence}", f"{language}: {caption.translation}"]
    return [
        *(line for paragraph in paragraphs for line in wrapped(paragraph, CAPTION_CHARS)),
        *packed(details, CAPTION_CHARS),
    ]


def columns(text: str) -> int:
    """How many average characters' widths ``text`` takes: a wide character (Chinese, Japanese,
    Korean; the replacement character "\ufffd" of an undecodable byte) is drawn about 1 em wide,
    2.3 Latin characters of the chart font (Chromium, 10 px: "\ufffd" 10.3 px, Latin 4.4 px), so it
    counts WIDE_COLUMNS, rounded up so that a line is never too long."""
    return sum(
        WIDE_COLUMNS
        if character == "\ufffd" or unicodedata.east_asian_width(character) in "WF"
        else 1
        for character in text
    )


def wrapped(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns (:func:`columns`), broken at spaces, a word
    wider than a line broken inside; [""] for empty text."""
    lines: list[str] = []
    for word in text.split():
        while columns(word) > width:  # the longest start of the word that fits a line
            starts = itertools.accumulate(columns(character) for character in word)
            cut = max(1, sum(1 for width_so_far in starts if width_so_far <= width))
            lines.append(word[:cut])
            word = word[cut:]
        if lines and columns(lines[-1]) + 1 + columns(word) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines or [""]


def packed(details: list[str], width: int) -> list[str]:
    """``details`` joined by " · " into lines of at most ``width``, broken between details, so
    that "search step 5" never ends one line with "search step" (a detail longer than a line is
    wrapped by words)."""
    lines: list[str] = []
    for detail in details:
        if lines and columns(f"{lines[-1]} · {detail}") <= width:
            lines[-1] += f" · {detail}"
            continue
        if lines:
            lines[-1] += " ·"
        lines += wrapped(detail, width)
    return lines


def add_caption(
    fig: go.Figure, caption: Caption, compact: bool = False, font_px: float = CAPTION_FONT_PX
) -> None:
    """Draws ``caption`` into ``fig`` as the subtitle under its title (``compact``: see
    :func:`caption_lines`) at ``font_px`` (presentation mode's is larger, its title too, in
    proportion), wraps a long title (at TITLE_CHARS; compact, at PRESENTATION_TITLE_CHARS), and
    makes the figure that much taller so that the plot keeps its size. A figure that fixes its
    top margin (heatmaps, whose column labels sit on top) gets that height added to it;
    otherwise the title's automargin makes room. Its colour is app.figures.style.legible's."""
    lines = caption_lines(caption, compact)
    scale = font_px / CAPTION_FONT_PX
    layout = fig.layout
    # broken between words only: the title is markup already (&lt;), which a break could split
    title = textwrap.wrap(
        layout.title.text or "",
        PRESENTATION_TITLE_CHARS if compact else TITLE_CHARS,
        break_on_hyphens=False,
        break_long_words=False,
    ) or [""]
    lines_above = len(title) - 1
    shift = lines_above and round(
        (lines_above * PLOTLY_LINE_EM + MULTILINE_DROP_EM) * TITLE_FONT_PX * scale
    )
    extra = scale * (len(lines) * CAPTION_LINE_PX + (len(title) - 1) * TITLE_LINE_PX) + shift
    extra = round(extra + CAPTION_GAP_PX)
    # The title set whole, keeping what else the figure's title has (its font, its place): a
    # tenth of the time of Figure.update_layout, whose merging took 5-9 ms on every chart of
    # every run. The subtitle and the padding are the caption's own: no figure sets them.
    layout.title = {
        **layout.title.to_plotly_json(),
        "text": "<br>".join(title),
        "subtitle": {
            "text": "<br>".join(plot_text(line) for line in lines),
            "font": {"size": font_px},
        },
        "automargin": True,
        "yref": "container",
        "y": 1,
        "yanchor": "top",
        "pad": {"t": TITLE_PAD_PX + shift},
    }
    layout.height = (layout.height or DEFAULT_HEIGHT) + extra
    if layout.margin.t is not None:
        layout.margin.t += extra


def export_options(name: str, image_format: str) -> dict:
    """Plotly's toImageButtonOptions: ``attention-lab-<name>.png`` at 1920 x 1080, or .svg."""
    return {
        "format": image_format,
        "filename": f"attention-lab-{name}",
        "width": EXPORT_WIDTH,
        "height": EXPORT_HEIGHT,
        "scale": EXPORT_SCALE,
    }


def export_button(name: str, image_format: str) -> str:
    """HTML for a "Figure for slides" button under the chart whose key is ``chart-<name>``: it
    presses the chart's own camera button (plotly's export, with :func:`export_options`). Only
    the chart's name, reduced to the class name Streamlit gives its element, goes into it."""
    element = NOT_IN_CLASS_NAMES.sub("-", f"chart-{name}".strip())
    size = "1920×1080 PNG" if image_format == "png" else image_format.upper()
    return f"""<button type="button" class="slides-export" data-chart="{element}"
    style="font-size: 0.85rem; padding: 0.2rem 0.7rem; border: 1px solid #bbb;
    border-radius: 0.4rem; background: transparent; color: inherit; cursor: pointer;"
    title="Downloads this chart with its caption (sentence, translation, model), for a slide"
>⬇ Figure for slides ({size})</button>
<script>
(() => {{
  const button = document.currentScript.previousElementSibling;
  button.addEventListener("click", () => {{
    const chart = document.querySelector(`.st-key-${{button.dataset.chart}} .js-plotly-plot`);
    chart?.querySelector(".modebar-btn[data-title^='Download plot']")?.click();
  }});
}})();
</script>"""


def attention_json(attention: LabelledAttention, caption: Caption) -> str:
    """One kind of attention with its labels and caption as JSON: ``weights`` nested lists
    [layer][head][query][key] (every layer and head, each value exactly as computed),
    ``query_labels``, ``key_labels``, and the caption's fields (``layer`` and ``head``: the one on
    screen, counted from 1). :func:`read_attention_json` reads it back."""
    document = {
        "format": JSON_FORMAT,
        **asdict(caption),
        "shape": list(attention.weights.shape),
        "dtype": str(attention.weights.dtype),
        "query_labels": list(attention.query_labels),
        "key_labels": list(attention.key_labels),
        "weights": attention.weights.tolist(),
    }
    return json.dumps(document, ensure_ascii=False)


def read_attention_json(text: str) -> tuple[LabelledAttention, Caption]:
    """The attention and caption of :func:`attention_json`'s output, the weights in the dtype
    they were computed in (JSON numbers hold float32 and float64 values exactly)."""
    document = json.loads(text)
    if document.get("format") != JSON_FORMAT:
        raise ValueError(f"not an Attention Lab attention file ({JSON_FORMAT})")
    weights = np.asarray(document["weights"], dtype=document["dtype"]).reshape(document["shape"])
    values = {field.name: document[field.name] for field in fields(Caption)}
    values["heads_changed"] = tuple(values["heads_changed"])
    attention = LabelledAttention(weights, document["query_labels"], document["key_labels"])
    return attention, Caption(**values)
