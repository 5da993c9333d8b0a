"""train/ has no import circle: every .py file under train/ is read with `ast` (nothing is
imported), each of its imports of another train module is an edge (at the top, in functions and
under TYPE_CHECKING alike: a circle through a type hint is still a circle for the reader), and the
graph must sort topologically. The training loop's parts take its state and return values: none of
them imports the Trainer, which only its entry point (train/__main__.py) does.

train/'s folders point one way: data (corpora to batches) at the bottom, the loop (the run) above
it, shipping (scores, card, export) above the loop, the studies (which measure a shipped model and
write their record into its card) at the top. Only the two commands, train/__main__.py and
train/gpu_run.py, sit beside the folders."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter

import pytest

from tests.core.test_import_directions import ROOT, Import, imports_of, module_name, violations

TRAIN = ROOT / "train"
# The modules that may import the Trainer: its own, and the command that runs it.
TRAINER_USERS = {"train.loop.trainer", "train.__main__"}
# (a folder, the folders it must not import): each folder uses only those below it.
FOLDERS_BELOW = {
    "train.data": (),
    "train.loop": ("train.data",),
    "train.shipping": ("train.data", "train.loop"),
    "train.studies": ("train.data", "train.loop", "train.shipping"),
}
FORBIDDEN = [
    (folder, tuple(other for other in FOLDERS_BELOW if other != folder and other not in below))
    for folder, below in FOLDERS_BELOW.items()
]
# What sits at the top of train/, beside the folders: the package and its two commands.
TOP_LEVEL = {"__init__.py", "__main__.py", "gpu_run.py"}


def train_modules() -> set[str]:
    return {module_name(path) for path in TRAIN.rglob("*.py")}


def read_train() -> list[Import]:
    found: list[Import] = []
    for path in sorted(TRAIN.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found += imports_of(path, tree, ("train",))
    return found


def import_graph(imports: list[Import], modules: set[str]) -> dict[str, set[str]]:
    """Each module's imported modules among ``modules``: `from train.loop import checkpoints` is
    an edge to train.loop.checkpoints, `from train.loop.config import TrainConfig` one to
    train.loop.config."""
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for item in imports:
        named = {f"{item.target}.{name}" for name in item.names} & modules
        graph[item.source] |= named or ({item.target} & modules)
    return graph


def import_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of the graph (its first module repeated at its end), or [] when there is none."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        return error.args[1]
    return []


IMPORTS = read_train()
MODULES = train_modules()


def test_train_is_read():
    """The reading finds the loop's parts and their imports: a test that sees nothing would pass
    anything."""
    graph = import_graph(IMPORTS, MODULES)
    assert {
        "train.loop.trainer",
        "train.loop.checkpoints",
        "train.loop.epoch",
        "train.loop.state",
    } <= MODULES
    assert {"train.loop.checkpoints", "train.loop.epoch", "train.loop.state"} <= graph[
        "train.loop.trainer"
    ]
    assert "train.loop.trainer" in graph["train.__main__"]


def test_the_cycle_finder_finds_a_circle_through_a_type_hint_and_a_function():
    """Made-up modules: a imports b at its top, b imports c in a function, c imports a under
    TYPE_CHECKING. Each kind of import is an edge, and the circle is found; without c's hint,
    none is."""
    sources = {
        "a": "from train.b import f\n",
        "b": "def g():\n    from train import c\n",
        "c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from train.a import A\n",
    }
    imports = [
        item
        for name, text in sources.items()
        for item in imports_of(TRAIN / f"{name}.py", ast.parse(text), ("train",))
    ]
    modules = {f"train.{name}" for name in sources}
    graph = import_graph(imports, modules)
    assert graph == {"train.a": {"train.b"}, "train.b": {"train.c"}, "train.c": {"train.a"}}
    cycle = import_cycle(graph)
    assert cycle[0] == cycle[-1] and set(cycle) == modules
    assert import_cycle({**graph, "train.c": set()}) == []


def test_train_has_no_import_circle():
    assert import_cycle(import_graph(IMPORTS, MODULES)) == []


def test_only_the_entry_point_imports_the_trainer():
    """The loop's parts take a state and arguments, not the Trainer (not even as a type hint)."""
    users = {str(item) for item in IMPORTS if item.target == "train.loop.trainer"}
    users |= {
        str(item) for item in IMPORTS if item.target == "train.loop" and "trainer" in item.names
    }
    assert {u for u in users if u.split(":")[0] not in TRAINER_USERS} == set()


def test_each_module_sits_in_a_folder_but_the_commands():
    """A new module goes into the folder of its concern, not beside the commands."""
    assert {path.name for path in TRAIN.glob("*.py")} == TOP_LEVEL
    assert {path.name for path in TRAIN.iterdir() if path.is_dir()} - {"__pycache__"} == {
        folder.removeprefix("train.") for folder in FOLDERS_BELOW
    }


def test_each_folder_uses_those_below_it():
    """The edges the next test forbids are read where they exist: the layers are not empty."""
    edges = {
        (folder, target)
        for item in IMPORTS
        for folder in FOLDERS_BELOW
        for target in FOLDERS_BELOW[folder]
        if item.source.startswith(folder + ".") and item.target.startswith(target)
    }
    assert {
        ("train.loop", "train.data"),
        ("train.shipping", "train.loop"),
        ("train.studies", "train.shipping"),
    } <= edges


@pytest.mark.parametrize(("folder", "forbidden"), FORBIDDEN)
def test_no_folder_imports_one_above_it(folder, forbidden):
    assert violations(IMPORTS, folder, forbidden) == []


def test_no_folder_imports_the_commands():
    """The commands run the folders; nothing in a folder runs a command."""
    commands = {"train.__main__", "train.gpu_run"}
    assert [str(item) for item in IMPORTS if item.target in commands] == []
