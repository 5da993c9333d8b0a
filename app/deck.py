"""A deck: a lecture as a list of prepared views, in a small TOML file a lecturer keeps beside
the app (decks/), so that a presentation clicker steps through the lecture one view per click
with no mouse at the lectern. No Streamlit here: app/deck_controls.py opens a deck's steps.

A step names a page and the settings it opens with, by the names the address bar gives them
(``?kind=cross&layer=6`` is ``kind = "cross"``, ``layer = 6``), so that what a lecturer sees in
the URL is what the deck file says. Only the settings a page reads can be named (each page's are
declared in app/page_settings.py, which also draws their widgets); one the step
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

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.page_settings import PAGES, SIDEBAR, ModelShape, quoted, settings_of, toml_value

SHIPPED_FOLDER = Path(__file__).resolve().parent.parent / "decks"
FOLDER_ENV = "ATTENTION_LAB_DECKS"  # a lecturer's own folder of decks, instead of decks/


def decks_folder() -> Path:
    """Where decks are read: $ATTENTION_LAB_DECKS, else the decks/ shipped beside the app."""
    return Path(os.environ.get(FOLDER_ENV) or SHIPPED_FOLDER)


SUFFIX = ".toml"
# What a step may say besides its settings
TITLE, PAGE = "title", "page"


class DeckError(ValueError):
    """A deck that cannot be shown, with every problem found, each naming its step and setting
    in plain words for the lecturer."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


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
