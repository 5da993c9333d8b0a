"""The layers point one way: every .py file under core/, app/ and train/ is read with `ast` (nothing
is imported) and its imports are checked against the allowed directions. core is below app and
train, and train below app; inside core, the model and the text sit at the bottom, the files above
them, the labelled attention above those, then the translator, then inspection, which runs the
translator; inspection imports the translator only to run it. The tests
mirror the layers: nothing under tests/core, nor tests/conftest.py (read for every test), imports
streamlit, app or the app's tests."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "app", "train")


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, e.g. "core.inspection.coverage"
    target: str  # the imported module, e.g. "core.translator"
    names: tuple[str, ...]  # the names taken from it (empty for `import x`)
    line: int
    type_checking: bool  # inside `if TYPE_CHECKING:`: a type hint, not run

    def __str__(self) -> str:
        names = f" ({', '.join(self.names)})" if self.names else ""
        return f"{self.source}:{self.line} -> {self.target}{names}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def type_checking_nodes(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside an `if TYPE_CHECKING:` body."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and is_type_checking(node.test):
            for statement in node.body:
                inside.update(id(child) for child in ast.walk(statement))
    return inside


def imports_of(path: Path, tree: ast.Module, roots: tuple[str, ...] = PACKAGES) -> list[Import]:
    """Every import in the file (at the top, in functions, under TYPE_CHECKING), of any module
    under ``roots`` (the project's packages unless told), with relative imports made absolute."""
    source = module_name(path)
    package = source if path.name == "__init__.py" else source.rpartition(".")[0]
    hidden = type_checking_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, module] if module else base)
            targets = [(module, tuple(alias.name for alias in node.names))]
        else:
            continue
        for target, names in targets:
            if target.split(".")[0] in roots:
                found.append(Import(source, target, names, node.lineno, id(node) in hidden))
    return found


def runtime_names(tree: ast.Module) -> set[str]:
    """The names the module uses when it runs: every Name outside annotations (which `from
    __future__ import annotations` leaves unevaluated) and outside `if TYPE_CHECKING:`."""
    skipped = type_checking_nodes(tree)
    for node in ast.walk(tree):
        annotations = []
        if isinstance(node, ast.arg | ast.AnnAssign):
            annotations.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            annotations.append(node.returns)
        for annotation in annotations:
            if annotation is not None:
                skipped.update(id(child) for child in ast.walk(annotation))
    return {
        node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and id(node) not in skipped
    }


def read_project() -> tuple[list[Import], dict[str, set[str]]]:
    imports: list[Import] = []
    used: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            imports += imports_of(path, tree)
            used[module_name(path)] = runtime_names(tree)
    return imports, used


IMPORTS, RUNTIME_NAMES = read_project()


# What a test's imports say about the layer it tests: streamlit, the app, and the tests themselves.
TEST_ROOTS = ("streamlit", "app", "tests")


def read_tests() -> list[Import]:
    """The imports of tests/conftest.py and of every file under tests/core."""
    tests = ROOT / "tests"
    paths = [tests / "conftest.py", *sorted((tests / "core").rglob("*.py"))]
    imports: list[Import] = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        imports += imports_of(path, tree, TEST_ROOTS)
    return imports


TEST_IMPORTS = read_tests()


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


# (the importing package, the packages it must not import): the layers that point one way.
FORBIDDEN = [
    ("core", ("app", "train")),
    ("train", ("app",)),
    ("core.model", ("core.decoding", "core.inspection", "core.translator", "core.text")),
    ("core.text", ("core.model", "core.decoding", "core.inspection", "core.translator")),
    ("core.files", ("core.inspection", "core.translator")),
    # the searches return raw maps; labelling them is the translator's (above both)
    ("core.decoding", ("core.inspection", "core.translator", "core.labelled_attention")),
    # the labels sit below the translator, and inspection (which runs the translator) above it
    ("core.labelled_attention", ("core.inspection", "core.translator", "core.decoding")),
    ("core.translator", ("core.inspection",)),
]


# The same for the tests: the core's tests, and the conftest every test reads, know nothing of
# the app.
FORBIDDEN_IN_TESTS = [
    ("tests.core", ("streamlit", "app", "tests.app")),
    ("tests.conftest", ("streamlit", "app", "tests.app")),
]


def violations(imports: list[Import], package: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        str(item)
        for item in imports
        if within(item.source, package) and any(within(item.target, f) for f in forbidden)
    ]


def test_the_project_is_read():
    """The reading finds the imports it checks: a test that sees nothing would pass anything."""
    sources = {item.source for item in IMPORTS}
    assert {
        "core.translator",
        "core.model.transformer",
        "app.state",
        "train.loop.trainer",
    } <= sources
    assert any(item.target == "core.model.config" for item in IMPORTS)


@pytest.mark.parametrize(("package", "forbidden"), FORBIDDEN, ids=[p for p, _ in FORBIDDEN])
def test_no_import_points_up(package, forbidden):
    assert violations(IMPORTS, package, forbidden) == []


def test_the_tests_are_read():
    """The reading of the tests finds their imports, and would find streamlit and app in a test of
    the core wherever they are imported: a test that sees nothing would pass anything."""
    sources = {item.source for item in TEST_IMPORTS}
    assert {"tests.core.test_engine", "tests.core.test_snapshots"} <= sources
    assert any(item.target == "tests.conftest" for item in TEST_IMPORTS)
    tree = ast.parse(
        "import streamlit as st\n"
        "from streamlit.testing.v1 import AppTest\n"
        "from tests.app.apptest import MAIN\n"
        "def test_state():\n"
        "    from app import state\n"
    )
    found = imports_of(ROOT / "tests" / "core" / "test_example.py", tree, TEST_ROOTS)
    assert violations(found, "tests.core", FORBIDDEN_IN_TESTS[0][1]) == [
        "tests.core.test_example:1 -> streamlit",
        "tests.core.test_example:2 -> streamlit.testing.v1 (AppTest)",
        "tests.core.test_example:3 -> tests.app.apptest (MAIN)",
        "tests.core.test_example:5 -> app (state)",
    ]


@pytest.mark.parametrize(
    ("package", "forbidden"), FORBIDDEN_IN_TESTS, ids=[p for p, _ in FORBIDDEN_IN_TESTS]
)
def test_no_core_test_imports_streamlit_or_the_app(package, forbidden):
    """A test of the core runs without the app: it imports neither streamlit nor app, nor a helper
    of the app's tests (tests/app), which would import them for it."""
    assert violations(TEST_IMPORTS, package, forbidden) == []


# The app's doors into core: core's face and its packages' faces, each re-exporting what the app
# may use; the modules behind them can move without the app knowing.
APP_DOORS = {"core", "core.inspection", "core.text", "core.files", "core.model"}


def test_the_app_enters_core_through_its_doors_only():
    entered = {item.target for item in IMPORTS if within(item.source, "app")}
    entered = {target for target in entered if within(target, "core")}
    assert "core" in entered and len(APP_DOORS) <= 5
    assert entered <= APP_DOORS, sorted(entered - APP_DOORS)


def test_input_error_comes_from_core_errors():
    """Inside core, InputError is taken from the module that defines it, not from one above."""
    wrong = [
        str(item)
        for item in IMPORTS
        if within(item.source, "core") and "InputError" in item.names
        if item.target != "core.errors"
    ]
    assert wrong == []


def test_inspection_imports_the_translator_only_to_run_it():
    """An inspection module imports core.translator when it runs only if it uses the Translator
    class when it runs (builds or loads one); for a type hint, `if TYPE_CHECKING:` is enough."""
    wrong = [
        str(item)
        for item in IMPORTS
        if within(item.source, "core.inspection") and within(item.target, "core.translator")
        if not item.type_checking
        if "Translator" not in item.names or "Translator" not in RUNTIME_NAMES[item.source]
    ]
    assert wrong == []


def test_a_type_hint_is_not_a_use():
    """The names read as used when the module runs leave out annotations and TYPE_CHECKING."""
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from core.translator import Translation\n"
        "def f(t: Translator, r: Translation) -> Translator:\n"
        "    x: Translation = r\n"
        "    return Translator.load(x)\n"
    )
    assert "Translator" in runtime_names(tree)
    assert "Translation" not in runtime_names(tree)
    assert "Translator" not in runtime_names(ast.parse("def f(t: Translator) -> Translator: ..."))
