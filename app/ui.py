"""Streamlit pieces every page uses: the shared sidebar, charts with PNG/SVG export, tables, and
pickers whose values live in the URL (a copied link reproduces the view).

User text is only ever shown through st.text, st.code, tables and plotly labels (escaped), never
through markdown or HTML."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app import access, narrow, notices, presentation, slides, snapshot_cache, state
from app.display import piece_text
from app.figures.style import PRESENTATION_TEXT_PX, legible
from app.figures.summary import describe
from app.figures.summary import table as summary_table
from app.page_settings import SIDEBAR, SNAPSHOT
from app.state import DEFAULTS, EXAMPLES, settings
from core import PREDICTS, CheckpointError, InputError, LabelledAttention
from core.files import ModelDir
from core.inspection import SnapshotView

# The banner's text, English and translation each: about four lines of a half-width column on a
# laptop, so that every page's title stays near the top (the sidebar holds the whole text).
BANNER_CHARS = 280
BANNER_LINES = 4
ELLIPSIS = " …"


def decoder_rows(attention: LabelledAttention) -> str:
    """How to read the rows of a decoder or cross-attention map (markdown), with the map's own
    first row for example: core labels it "<s> → ▁Das", it reads <s> and predicts ▁Das."""
    first = piece_text(attention.query_labels[0])
    read, predicted = first.split(PREDICTS, 1)
    return (
        f"A decoder row is the position that reads a piece and predicts the next: {_code(first)} "
        f"reads {_code(read)} and predicts {_code(predicted)}, and the last row predicts `</s>`."
    )


def _code(text: str) -> str:
    """``text`` as a markdown code span, shown literally whatever backticks it holds."""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if "`" in text else f"{fence}{text}{fence}"


def shortened(text: str, max_chars: int = BANNER_CHARS, max_lines: int = BANNER_LINES) -> str:
    """``text`` itself when it has at most ``max_lines`` lines and ``max_chars`` characters, else
    as much of it as fits, cut after a word where one ends in the second half, and ELLIPSIS."""
    if len(text) <= max_chars and len(text.splitlines()) <= max_lines:
        return text
    kept = "\n".join(text.splitlines()[:max_lines])[: max_chars - len(ELLIPSIS)]
    space = kept.rfind(" ")
    if space > len(kept) // 2:
        kept = kept[:space]
    return kept.rstrip() + ELLIPSIS


def _use_example() -> None:
    st.session_state.text = st.session_state.example
    st.session_state.example = None


def sidebar() -> None:
    """The controls shared by every page, and the page's style (narrow screens; presentation
    mode)."""
    with st.sidebar:
        if "text" not in st.session_state and "text" not in st.query_params:
            st.session_state.text = DEFAULTS.text  # no value=: the examples set it
        st.text_area(
            SIDEBAR["text"].label,
            key="text",
            bind="query-params",
            height=110,
            help=SIDEBAR["text"].help,
        )
        st.caption(notices.WHAT_IT_READS)
        notices.show()
        st.button(
            "Translate",
            type="primary",
            help="Typing, then Ctrl+Enter or a click outside, does too.",
        )
        st.pills("Classic examples", EXAMPLES, key="example", on_change=_use_example)
        languages = state.languages()
        to = DEFAULTS.to if DEFAULTS.to in languages else None  # None: the model's first
        pick(SIDEBAR["to"].label, list(languages), "to", to, languages.get)
        beam, alpha, present = SIDEBAR["beam"], SIDEBAR["alpha"], SIDEBAR["present"]
        st.slider(
            beam.label,
            beam.low,
            beam.high,
            value=DEFAULTS.beam,
            key="beam",
            bind="query-params",
            help=beam.help,
        )
        st.slider(
            alpha.label,
            alpha.low,
            alpha.high,
            value=DEFAULTS.alpha,
            step=0.1,
            key="alpha",
            bind="query-params",
            help=alpha.help,
        )
        st.divider()
        st.toggle(
            present.label,
            value=DEFAULTS.present,
            key="present",
            bind="query-params",
            help=present.help,
        )
        pick(
            "Save charts as",
            ["png", "svg"],
            "img",
            DEFAULTS.img,
            str.upper,
            help="The camera icon above each chart, and the Figure for slides button under it, "
            "download it in this format, with its caption.",
        )
        if len(state.model_choices()) > 1:  # $ATTENTION_LAB_MODEL names another model
            pick(
                "Model",
                list(state.model_choices()),
                state.MODEL_KEY,
                help="The models of $ATTENTION_LAB_MODEL (this lab's or MarianMT directories) "
                "and the shipped one.",
            )
        st.caption("The address bar holds this view: copy it to share exactly what is on screen.")
    narrow.style()
    access.install()
    if settings().present:
        st.set_page_config(initial_sidebar_state="collapsed")
        st.html(presentation.CSS)


def sentence_banner() -> None:
    """The sentence and its translation above the page, so that they stay in view with the
    sidebar collapsed (a projector, a phone), each shortened to a few lines (the sidebar holds the
    whole text). Bad input or a missing model: nothing here, the page itself says what is wrong."""
    try:
        request = state.current()
        analysis = state.cached_analysis(request)
    except (InputError, CheckpointError):
        return
    result = analysis.result
    language = state.languages().get(request.target, request.target)
    if analysis.read.sentences > 1:  # what every page but Translate draws
        language += ", the whole text read as one sequence"
    source, target = st.container(key="sentence-banner").columns(2)
    source.caption("English")
    source.text(shortened(request.text))
    target.caption(language)
    target.text(shortened(result.text))


def _translation_and_model(path: str) -> tuple[str, str]:
    """The translation of the request on screen and the name of the model at ``path``, for
    captions (the analysis is shared, not copied: reading it is cheap)."""
    try:
        translation = state.cached_analysis(state.current()).result.text
        card = state.load_translator(path).card
    except (InputError, CheckpointError):
        return "", Path(path).name
    return translation, slides.model_name(card, Path(path).name)


def sentence_caption(**details: Any) -> slides.Caption:
    """The caption of a chart about the sentence on screen: its sentence, translation and model,
    with ``details``, the other fields of slides.Caption that the page knows (kind, layer, head,
    training_step, search_step, word, heads_changed, change, computed_on)."""
    s = settings()
    translation, model = _translation_and_model(str(state.model_dir()))
    return slides.Caption(s.text, translation, s.to, model, **details)


def chart(
    fig: go.Figure,
    name: str,
    on_select: Callable[[list[dict]], None] | None = None,
    caption: slides.Caption | None = None,
) -> None:
    """A plotly chart with its caption drawn in (``caption``, else :func:`sentence_caption`),
    whose camera button, and the "Figure for slides" button under it, save
    ``attention-lab-<name>`` as a 1920 x 1080 PNG or as SVG. With ``on_select``, clicking a point
    selects it (selection_mode "points"), and before the rerun that follows, on_select gets the
    selected points as Streamlit reports them (dicts with curve_number, point_index, x, y,
    customdata, ...; an empty list when a click deselects)."""
    s = settings()
    beside_the_scale(fig)
    title, summary = describe(fig)  # read out for the chart by app/access.py's script
    own = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}  # e.g. narrow's min_width
    fig.layout.meta = own | {"name": title, "summary": summary}
    text_px = PRESENTATION_TEXT_PX if s.present else slides.CAPTION_FONT_PX
    slides.add_caption(fig, caption or sentence_caption(), compact=s.present, font_px=text_px)
    legible(fig, st.context.theme.type, PRESENTATION_TEXT_PX if s.present else None)
    height = "content"
    if s.present:
        st.html(presentation.fit(fig, name))
        height = "stretch"
    elif (window := narrow.scrolled(fig, name)) is not None:  # a map on a phone
        st.html(window)
    key = f"chart-{name}"
    selection: dict[str, Any] = {}
    if on_select is not None:
        selection = {
            "on_select": lambda: on_select(list(st.session_state[key].selection.points)),
            "selection_mode": "points",
        }
    st.plotly_chart(
        fig,
        key=key,
        height=height,
        config={
            "displaylogo": False,
            "toImageButtonOptions": slides.export_options(name, s.img),
        },
        **selection,
    )
    if not s.present:  # a projected view shows figures, not export buttons
        st.html(slides.export_button(name, s.img), unsafe_allow_javascript=True)
        in_words(fig, name, summary)


def in_words(fig: go.Figure, name: str, summary: str) -> None:
    """Under a map or a bar chart, a switch that shows its numbers as a table and its summary as
    text to copy (the alt text of its export): what a screen reader reads instead of the
    picture."""
    if not any(trace.type in ("heatmap", "bar") for trace in fig.data):
        return
    if st.toggle(
        "Table view",
        key=f"table-{name}",
        help="The chart's numbers as a table, and its summary in words (alt text for its export).",
    ):
        st.code(summary, language=None, wrap_lines=True)
        st.dataframe(summary_table(fig), hide_index=True)  # built only when asked for


def beside_the_scale(fig: go.Figure) -> None:
    """An upright colour scale's title turned along its bar, right of its numbers: on top of the
    bar, the title and the top number (1) ran into each other."""
    for trace in fig.data:
        bar = getattr(trace, "colorbar", None)
        upright = bar is not None and bar.orientation in (None, "v")
        if upright and bar.title.text and bar.title.side is None:
            bar.title.side = "right"


def attention_download(attention: LabelledAttention, caption: slides.Caption, name: str) -> None:
    """A button that downloads ``attention`` with its labels and caption as JSON
    (slides.attention_json), written only when clicked."""
    st.download_button(
        "Download the attention weights (JSON)",
        lambda: slides.attention_json(attention, caption),
        file_name=f"attention-lab-{name}.json",
        mime="application/json",
        key=f"json-{name}",
        on_click="ignore",
        help="Every layer and head of this kind, with the row and column labels and the caption, "
        "for redrawing the figures elsewhere.",
    )


def table(rows: Sequence[dict], formats: dict[str, str] | None = None, **kwargs: Any) -> None:
    """Rows of dicts as a dataframe, their text as the figures show it (pieces with ·, see
    piece_text); ``formats`` maps a column to a printf format."""
    shown = [
        {
            name: piece_text(value) if isinstance(value, str) else value
            for name, value in row.items()
        }
        for row in rows
    ]
    config = {name: st.column_config.NumberColumn(format=f) for name, f in (formats or {}).items()}
    st.dataframe(shown, hide_index=True, column_config=config, **kwargs)


def chosen(options: Sequence, key: str, default: Any) -> Any:
    """The option of the picker ``key`` as it stands, without drawing it: its state, else its
    code in the URL (str(option)), else ``default``."""
    if st.session_state.get(key) in options:
        return st.session_state[key]
    codes = {str(option): option for option in options}
    return codes.get(st.query_params.get(key), default)


def pick(
    label: str,
    options: Sequence,
    key: str,
    default: Any = None,
    format_func: Callable[[Any], str] = str,
    help: str | None = None,
    in_presentation: bool = False,
) -> Any:
    """One of a few options as a segmented control, kept in the URL under ``key`` as its code,
    str(option) (``?to=fr``, not the label shown). A code that is not an option (another
    sentence, another model, a mistyped link) falls back to the default, which the URL omits.
    Presentation mode hides a page's pickers, except those ``in_presentation`` (a layer, a head:
    what a lecturer changes while presenting), which it draws compact."""
    options = list(options)
    default = options[0] if default is None else default
    if st.session_state.get(key) not in options:
        st.session_state[key] = chosen(options, key, default)
    with st.container(key=f"{presentation.KEPT}{key}") if in_presentation else nullcontext():
        value = st.segmented_control(
            label, options, format_func=format_func, key=key, required=True, help=help
        )
    if value == default:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = str(value)
    return value


def on_demand(
    label: str, key: str, scope: Hashable, done: bool = False, help: str | None = None
) -> bool:
    """Whether to show work too costly to do on every rerun (a lecture hall asks for many new
    sentences at once): True when it is ``done`` already (in any session), or once its button,
    ``label``, was pressed for this ``scope`` (what the work depends on: the sentence, its
    settings...). Shown, it lives in the URL as ``?<key>=true``, so that a copied link shows it
    too; another scope (a new sentence) shows the button again."""
    seen = f"{key}_scope"
    if st.session_state.get(seen, scope) != scope:
        st.query_params.pop(key, None)  # asked for what was on screen before
    st.session_state[seen] = scope
    if done or st.query_params.get(key) == "true":
        st.query_params[key] = "true"
        return True
    st.button(label, key=f"{key}_ask", on_click=_ask, args=(key,), help=help)
    return False


def _ask(key: str) -> None:
    st.query_params[key] = "true"


def playable(view: Callable[[], None], playing: bool, interval_s: float) -> None:
    """Draw ``view``; while ``playing``, as a fragment that reruns alone every ``interval_s``
    seconds. Only then: a session keeps its fragments until its next run, and with them the
    page that defined them (see :func:`step_through`)."""
    if playing:
        st.fragment(view, run_every=interval_s)()
    else:
        view()


def use_pair(pairs: dict[str, tuple[str, str]]) -> None:
    """The callback of the bundled minimal pairs (pills ``bundled``): the chosen pair's first
    sentence becomes the sentence, its second the second sentence (``pair``)."""
    st.session_state.text, st.session_state.pair = pairs[st.session_state.bundled]
    st.session_state.bundled = None


def step_buttons(key: str, options: Sequence, buttons: dict[str, str]) -> DeltaGenerator:
    """A ◀ and a ▶ button (``buttons``: their widget keys and labels, back first) that move
    ``st.session_state[key]`` through ``options``; returns the column beside them, for the
    slider that shows the value."""
    *columns, slider = st.columns([1.3, 1.3, 7], vertical_alignment="bottom")
    for column, (button_key, label), delta in zip(columns, buttons.items(), (-1, 1)):
        column.button(
            label,
            key=button_key,
            on_click=step_through,
            args=(key, options, delta),
            width="stretch",
        )
    return slider


def step_through(key: str, options: Sequence, delta: int) -> None:
    """Move ``st.session_state[key]`` by ``delta`` places through ``options``, staying within them
    (from the first option when it holds none of them): the callback of every ◀ / ▶ button.

    Pages give widgets this and functions of other modules (or a list's ``__getitem__``, a
    dict's ``get`` as format_func), never functions of their own: a session keeps its widgets'
    callbacks and format functions until its next run, and a function a page defines keeps the
    whole page alive with it (its analysis, snapshot views and figures), outside every cache's
    bound, for as long as a student's tab stays open (tests/app/test_app.py checks every page)."""
    current = st.session_state.get(key)
    index = options.index(current) if current in options else 0
    st.session_state[key] = options[min(max(index + delta, 0), len(options) - 1)]


def snapshot_picker() -> SnapshotView | None:
    """For a model with snapshots, a training-step slider (the same one, in the URL, as on the
    Training dynamics page): None at the final step, else that snapshot on the sentence."""
    found = ModelDir(state.model_dir()).snapshots()
    if not found:
        return None
    steps = [snapshot.step for snapshot in found]
    if st.session_state.get("snapshot", steps[-1]) not in steps:  # a step of another model
        del st.session_state["snapshot"]
    step = st.select_slider(
        SNAPSHOT.label,
        steps,
        value=SNAPSHOT.default_of(steps),
        key="snapshot",
        bind="query-params",
        format_func="{:,}".format,
        help=SNAPSHOT.help,
    )
    if step == steps[-1]:
        return None
    view = snapshot_cache.snapshot_view(state.current(), found[steps.index(step)])
    st.caption(
        f"The model after {step:,} training steps: it reads the final model's translation (teacher "
        "forcing), so the maps keep their rows and columns."
    )
    return view
