"""A deck: a lecture as a list of prepared views, in a small TOML file a lecturer keeps beside
the app (decks/), so that a presentation clicker steps through the lecture one view per click
with no mouse at the lectern. No Streamlit here: app/deck_controls.py opens a deck's steps.

A step names a page and the settings it opens with, by the names the address bar gives them
(``?kind=cross&layer=6`` is ``kind = "cross"``, ``layer = 6``), so that what a lecturer sees in
the URL is what the deck file says. Only the settings a page reads can be named; one the step
leaves out is the page's default, so that a step opens the same view whichever came before it.
The sidebar's settings (the sentence, the target language...) hold for every step that does not
name them: the deck's ``[settings]`` table sets them for all steps at once.

    title = "Attention Is All You Need"

    [settings]
    text = "The animal didn't cross the street because it was too tired."
    present = true

    [[step]]
    title = "Cross-attention"
    page = "attention"
    kind = "cross"
    layer = 6
    head = "avg"

A deck is checked whole against the model it will show (its layers, heads, target languages and
training snapshots), and every problem is named by its step and setting: a lecture must not stop
at step 14 on a layer the model does not have.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from app.display import ATTENTION_KINDS
from app.figures.positional import PE_ORDERS
from app.story import STEPS as STORY_STEPS
from core.inspection import INTERVENTIONS, KINDS, Head

SHIPPED_FOLDER = Path(__file__).resolve().parent.parent / "decks"
FOLDER_ENV = "ATTENTION_LAB_DECKS"  # a lecturer's own folder of decks, instead of decks/


def decks_folder() -> Path:
    """Where decks are read: $ATTENTION_LAB_DECKS, else the decks/ shipped beside the app."""
    return Path(os.environ.get(FOLDER_ENV) or SHIPPED_FOLDER)


SUFFIX = ".toml"
# The attention page's tabs, by their labels (the URL's ?view=)
ATTENTION_VIEWS = ("One head", "All layers and heads")
# What a step may say besides its settings
TITLE, PAGE = "title", "page"


class DeckError(ValueError):
    """A deck that cannot be shown, with every problem found, each naming its step and setting
    in plain words for the lecturer."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class ModelShape:
    """What of the model a deck's settings must fit: layers per kind of attention, heads per
    layer, the languages it translates into and the training steps of its snapshots."""

    layers: Mapping[str, int]
    heads: int
    targets: tuple[str, ...]
    snapshots: tuple[int, ...] = ()

    @classmethod
    def of(
        cls,
        encoder_layers: int,
        decoder_layers: int,
        heads: int,
        targets: Sequence[str],
        snapshots: Sequence[int] = (),
    ) -> ModelShape:
        """The shape of a model of ``encoder_layers`` and ``decoder_layers`` layers: the decoder's
        layers hold both its self-attention and its cross-attention."""
        layers = {"encoder": encoder_layers, "decoder": decoder_layers, "cross": decoder_layers}
        return cls(layers, heads, tuple(targets), tuple(snapshots))


def quoted(value: Any) -> str:
    """A value as the deck file writes it, for messages."""
    return toml_value(value) if isinstance(value, (str, bool, int, float, list)) else repr(value)


def spelled(options: Sequence) -> str:
    """The options a setting allows, for a message: a run of whole numbers as its ends."""
    whole = len(options) > 2 and all(isinstance(option, int) for option in options)
    if whole and list(options) == list(range(options[0], options[-1] + 1)):
        return f"{options[0]} to {options[-1]}"
    return ", ".join(quoted(option) for option in options)


class Setting:
    """One setting a page reads, as a deck may name it: the TOML type it takes (a whole number,
    text, true or false...) and the values it allows, which may depend on the model and on the
    step's other settings (a layer on the kind of attention)."""

    kinds: ClassVar[tuple[type, ...]] = (str,)  # the TOML types it takes
    described: ClassVar[str] = "text"  # what the value must be, for a message

    def problem(self, value: Any, step: Mapping[str, Any], shape: ModelShape) -> str | None:
        """What is wrong with ``value`` in a step with settings ``step``, or None."""
        if isinstance(value, bool) != (bool in self.kinds) or not isinstance(value, self.kinds):
            return f"{quoted(value)} is not {self.described}"
        options = self.options(step, shape)
        if options is None:
            return self.checked(value)
        items = value if isinstance(value, list) else [value]
        outside = [item for item in items if item not in options]
        if not options:
            return f"{quoted(value)} cannot be shown: this model offers none"
        return self.outside(outside[0], options) if outside else None

    def outside(self, value: Any, options: Sequence) -> str:
        """The message for ``value``, which is not one of ``options``."""
        return f"{quoted(value)} is not one of {spelled(options)}"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence | None:
        """The values allowed in this step on this model; None: any of the type's values."""
        return None

    def checked(self, value: Any) -> str | None:
        """What is wrong with a value of the right type, when no list of options bounds it."""
        return None


class Text(Setting):
    def checked(self, value: Any) -> str | None:
        return None if value.strip() else "the text is empty"


class Flag(Setting):
    kinds: ClassVar[tuple[type, ...]] = (bool,)
    described: ClassVar[str] = "true or false"


@dataclass(frozen=True)
class Choice(Setting):
    """One of a fixed list of options (a kind of attention, a tab...)."""

    allowed: tuple = ()

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return self.allowed


@dataclass(frozen=True)
class Whole(Setting):
    """A whole number from ``low`` to ``high`` (None: no bound above)."""

    low: int = 0
    high: int | None = None
    kinds: ClassVar[tuple[type, ...]] = (int,)
    described: ClassVar[str] = "a whole number"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence | None:
        return None if self.high is None else range(self.low, self.high + 1)

    def checked(self, value: Any) -> str | None:
        return None if value >= self.low else f"{value} is below {self.low}"


@dataclass(frozen=True)
class Tenths(Setting):
    """A number from ``low`` to ``high`` in steps of 0.1, as the sidebar's sliders take it."""

    low: float = 0.0
    high: float = 1.0
    kinds: ClassVar[tuple[type, ...]] = (int, float)
    described: ClassVar[str] = "a number"

    def checked(self, value: Any) -> str | None:
        if not self.low <= value <= self.high or abs(value * 10 - round(value * 10)) > 1e-9:
            return f"{quoted(value)} is not a multiple of 0.1 from {self.low} to {self.high}"
        return None


class Language(Setting):
    described: ClassVar[str] = "a language code"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return shape.targets


@dataclass(frozen=True)
class Layer(Setting):
    """A layer counted from 1, of the kind of attention the step's setting ``kind_key`` names
    (the page's default kind ``kind`` when it names none), or always of ``kind``."""

    kind: str = "encoder"
    kind_key: str | None = None
    kinds: ClassVar[tuple[type, ...]] = (int,)
    described: ClassVar[str] = "a layer number"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence | None:
        kind = step.get(self.kind_key, self.kind) if self.kind_key else self.kind
        if kind not in shape.layers:
            return None  # the kind itself is reported
        return range(1, shape.layers[kind] + 1)


@dataclass(frozen=True)
class HeadNumber(Setting):
    """A head counted from 1, or "avg" (the mean of the heads) where the page offers it."""

    average: bool = False
    kinds: ClassVar[tuple[type, ...]] = (int, str)
    described: ClassVar[str] = "a head number"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return [*(["avg"] if self.average else []), *range(1, shape.heads + 1)]


class Snapshot(Setting):
    """A training step at which the model keeps a snapshot."""

    kinds: ClassVar[tuple[type, ...]] = (int,)
    described: ClassVar[str] = "a training step"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return shape.snapshots


class HeadNames(Setting):
    """Heads named as the Heads lab names them ("enc L5 H5"), a list."""

    kinds: ClassVar[tuple[type, ...]] = (list,)
    described: ClassVar[str] = 'a list of heads such as ["enc L5 H5"]'

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return [
            Head(kind, layer, head).name
            for kind in KINDS
            for layer in range(shape.layers[kind])
            for head in range(shape.heads)
        ]

    def outside(self, value: Any, options: Sequence) -> str:
        return (
            f"{quoted(value)} is not a head of this model ({quoted(options[0])} to "
            f"{quoted(options[-1])})"
        )


KIND = Choice(tuple(ATTENTION_KINDS))
# The sidebar's settings, which hold on every page: app/state.py's Settings
SIDEBAR: dict[str, Setting] = {
    "text": Text(),
    "to": Language(),
    "beam": Whole(low=1, high=8),
    "alpha": Tenths(low=0.0, high=2.0),
    "present": Flag(),
}
# Each page (its file under app/views/) and the settings it reads besides the sidebar's, by the
# widget keys it gives them (and the URL's parameters)
PAGES: dict[str, dict[str, Setting]] = {
    "story": {"story": Whole(low=0, high=len(STORY_STEPS) - 1)},
    "translate": {"snapshot": Snapshot()},
    "tokenization": {},
    "embeddings": {"peorder": Choice(tuple(PE_ORDERS))},
    "attention": {
        "kind": KIND,
        "view": Choice(ATTENTION_VIEWS),
        "layer": Layer(kind_key="kind"),
        "head": HeadNumber(average=True),
        "words": Flag(),
        "snapshot": Snapshot(),
        # the row followed through scaled dot-product attention (One query, step by step): a
        # piece's row of the map, counted from 0 as its hover counts them; the sentence decides
        # which rows there are, so a row past its last is left unpicked on the page
        "query": Whole(low=0),
    },
    "masking": {
        "other": Text(),
        "player": Layer(kind="encoder"),
        "phead": HeadNumber(),
        "mkind": KIND,
        "mlayer": Layer(kind="decoder", kind_key="mkind"),
        "mhead": HeadNumber(),
        "scaled": Flag(),
    },
    "beam_search": {
        "step": Whole(low=0),
        "xlayer": Layer(kind="cross"),
        "xhead": HeadNumber(average=True),
    },
    "compare": {
        "compare_kind": KIND,
        "a_layer": Layer(kind="cross", kind_key="compare_kind"),
        "a_head": HeadNumber(average=True),
        "b_layer": Layer(kind="cross", kind_key="compare_kind"),
        "b_head": HeadNumber(average=True),
        "language_layer": Layer(kind="cross"),
        "language_head": HeadNumber(average=True),
    },
    "head_lab": {
        "kind": KIND,
        "how": Choice(tuple(INTERVENTIONS)),
        "off": HeadNames(),
    },
    "explain": {},
    "coverage": {},
    "logit_lens": {
        "lens_sublayers": Flag(),
        # the output position picked, counted from 0 as the map's hover counts them; a position
        # past the translation's last is left unpicked on the page
        "lens_position": Whole(low=0),
        "lens_layer": Layer(kind="decoder"),
    },
    "training": {
        "snapshot": Snapshot(),
        "kind": KIND,
        "layer": Layer(kind_key="kind"),
        "head": HeadNumber(),
    },
    "model": {},
}


@dataclass(frozen=True)
class Step:
    """One view of a deck: a page and the settings it opens with (the sidebar's that the deck
    sets, and the page's own)."""

    page: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""


@dataclass(frozen=True)
class Deck:
    title: str
    steps: tuple[Step, ...]


def settings_of(page: str) -> dict[str, Setting]:
    """Every setting a step on ``page`` may name: the sidebar's and the page's."""
    return {**SIDEBAR, **PAGES[page]}


def step_problems(number: int, table: Any, shape: ModelShape) -> list[str]:
    """What is wrong with step ``number`` (from 1), given as the TOML table ``table``."""
    if not isinstance(table, dict):
        return [f"Step {number}: write it as a [[step]] table."]
    page = table.get(PAGE)
    if page not in PAGES:
        return [
            f"Step {number}: page {quoted(page) if PAGE in table else '(missing)'} is not a "
            f"page; the pages are {', '.join(PAGES)}."
        ]
    where = f"Step {number} ({page})"
    problems = []
    if not isinstance(table.get(TITLE, ""), str):
        problems.append(f"{where}, title: write it as text in quotes.")
    known = settings_of(page)
    for key, value in table.items():
        if key in (TITLE, PAGE):
            continue
        if key not in known:
            problems.append(
                f"{where}: the {page} page reads no setting {quoted(key)}; it reads "
                f"{', '.join(known)}."
            )
            continue
        problem = known[key].problem(value, table, shape)
        if problem:
            problems.append(f"{where}, {key}: {problem}.")
    return problems


def sidebar_problems(table: Any, shape: ModelShape) -> list[str]:
    """What is wrong with the deck's [settings] table (the sidebar's settings of every step)."""
    if not isinstance(table, dict):
        return ["[settings]: write it as a table of the sidebar's settings."]
    problems = []
    for key, value in table.items():
        if key not in SIDEBAR:
            problems.append(
                f"[settings]: {quoted(key)} is not a sidebar setting; they are "
                f"{', '.join(SIDEBAR)} (a page's settings go in its steps)."
            )
        elif problem := SIDEBAR[key].problem(value, table, shape):
            problems.append(f"[settings], {key}: {problem}.")
    return problems


def parse(text: str, shape: ModelShape) -> Deck:
    """The deck written in ``text`` (TOML), checked against a model of ``shape``. Raises
    DeckError naming every problem, each by its step and setting."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise DeckError([f"The file is not valid TOML: {error}."]) from error
    common = document.get("settings", {})
    tables = document.get("step", [])
    problems = [
        f"{quoted(key)} is not part of a deck; it holds title, [settings] and [[step]] tables."
        for key in document
        if key not in ("title", "settings", "step")
    ]
    if not isinstance(document.get("title", ""), str):
        problems.append("title: write it as text in quotes.")
    problems += sidebar_problems(common, shape)
    if not isinstance(tables, list) or not tables:
        problems.append('The deck has no steps: add one with [[step]] and page = "...".')
        tables = []
    for number, table in enumerate(tables, start=1):
        problems += step_problems(number, table, shape)
    if problems:
        raise DeckError(problems)
    return Deck(
        document.get("title", ""),
        tuple(step_of({**common, **table}) for table in tables),
    )


def step_of(table: Mapping[str, Any]) -> Step:
    """A checked step table as a Step, its settings in the order the page lists them."""
    page = table[PAGE]
    alpha = table.get("alpha")
    values = {**table, **({"alpha": float(alpha)} if alpha is not None else {})}
    settings = {key: values[key] for key in settings_of(page) if key in values}
    return Step(page, settings, table.get(TITLE, ""))


def locate(name: str, folder: Path | None = None) -> Path:
    """Where the deck ``name`` is: a file of ``folder`` (default :func:`decks_folder`; ``paper``
    is decks/paper.toml), and nowhere else. The name may come from a link anyone can type, and a
    deck's problems quote its values: a path would let a link show pieces of any TOML file the
    server can read (its .streamlit/secrets.toml)."""
    folder = folder or decks_folder()
    stem = name.removesuffix(SUFFIX)
    if not stem or any(part in stem for part in ("/", "\\", "..")) or stem.startswith("."):
        raise DeckError(
            [f"{quoted(name)} is not a deck's name: a deck is a {SUFFIX} file of {folder.name}/."]
        )
    return folder / f"{stem}{SUFFIX}"


def names(folder: Path | None = None) -> list[str]:
    """The decks kept in ``folder`` (default :func:`decks_folder`), by name."""
    folder = folder or decks_folder()
    return sorted(path.stem for path in folder.glob(f"*{SUFFIX}"))


def read(name: str, folder: Path | None = None) -> str:
    """The text of the deck ``name`` (see :func:`locate`); DeckError when there is none."""
    folder = folder or decks_folder()
    try:
        return locate(name, folder).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        known = ", ".join(names(folder)) or "none"
        raise DeckError(
            [
                f"No deck {quoted(name)} can be read ({type(error).__name__}); "
                f"{folder.name}/ holds {known}."
            ]
        ) from error


def toml_value(value: Any) -> str:
    """A setting's value as TOML: JSON writes strings, numbers, true/false and lists the way
    TOML reads them."""
    return json.dumps(value, ensure_ascii=False)


def step_toml(step: Step) -> str:
    """``step`` as a [[step]] table to append to a deck file."""
    lines = ["[[step]]"]
    if step.title:
        lines.append(f"{TITLE} = {toml_value(step.title)}")
    lines.append(f"{PAGE} = {toml_value(step.page)}")
    lines += [f"{key} = {toml_value(value)}" for key, value in step.settings.items()]
    return "\n".join(lines) + "\n"


def with_step(deck_text: str, step: Step) -> str:
    """A deck file's text with ``step`` appended (its comments and layout kept)."""
    return f"{deck_text.rstrip()}\n\n{step_toml(step)}"


def current_step(page: str, values: Mapping[str, Any], title: str = "") -> Step:
    """The step that shows ``page`` with the settings ``values`` (the app's current ones, by
    key): the sidebar's and the page's, each that is set."""
    settings = {key: values[key] for key in settings_of(page) if values.get(key) is not None}
    return Step(page, settings, title)
