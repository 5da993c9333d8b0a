"""Layers and heads are shown 1-based and indexed 0-based, converted in one place
(app/numbering.py): its conversions both ways, their fit to the pages' settings, and a rule, read
with `ast` from every .py file under app/ (nothing is imported), that no other code subtracts 1
from a layer or a head, or adds 1 to one, by hand (issue #60)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from app.numbering import index_of, index_or_every, shown_of
from app.page_settings import PAGES, HeadNumber, Layer, ModelShape

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "app" / "numbering.py"
FILES = sorted(path for path in (ROOT / "app").rglob("*.py") if path != HOME)


def test_a_shown_number_is_one_more_than_its_index():
    assert [index_of(shown) for shown in (1, 2, 6)] == [0, 1, 5]
    assert index_of(np.int64(3)) == 2  # a number read from an array
    assert type(index_of(np.int64(3))) is int


def test_an_index_is_shown_as_one_more():
    assert [shown_of(index) for index in (0, 1, 5)] == [1, 2, 6]
    assert shown_of(np.int64(2)) == 3  # an index read from an array (argmax, unravel_index)
    assert type(shown_of(np.int64(2))) is int


@pytest.mark.parametrize("index", [0, 1, 5, 47])
def test_showing_an_index_and_reading_it_back_is_the_same_index(index):
    assert index_of(shown_of(index)) == index
    assert shown_of(index_of(index + 1)) == index + 1


@pytest.mark.parametrize("wrong", [-1, True, False, "avg", "3", 2.0, None])
def test_what_is_not_counted_from_0_is_a_bug_not_a_shown_number(wrong):
    """An index of -1 (numpy's last) shown as "layer 0", or a label shown as a number, would
    mislead silently: the mirror of what index_of refuses."""
    with pytest.raises(ValueError, match="counted from 0"):
        shown_of(wrong)


@pytest.mark.parametrize("every", ["avg", "all", "mean"])
def test_a_choice_of_every_layer_or_head_has_no_index(every):
    assert index_or_every(every) is None
    assert index_or_every(4) == 3


@pytest.mark.parametrize("wrong", [0, -1, True, "avg", "3", 2.0, None])
def test_what_is_not_counted_from_1_is_a_bug_not_an_index(wrong):
    """A 0 or a string reaching a tensor would pick the wrong row silently (-1 is the last, None a
    new axis): the pickers only offer numbers from 1, so anything else is refused loudly."""
    with pytest.raises(ValueError, match="counted from 1"):
        index_of(wrong)


def test_every_layer_and_head_a_page_offers_has_its_index():
    """The pickers' options, on a model of 2 encoder and 3 decoder layers of 4 heads, map onto
    the tensors' indexes 0..n-1, and what they offer beside numbers means every one."""
    shape = ModelShape.of(2, 3, 4, ("de",))
    pickers = [
        setting
        for page in PAGES.values()
        for setting in page.settings.values()
        if isinstance(setting, (Layer, HeadNumber))
    ]
    assert len(pickers) >= 10  # every page's layers and heads, not an empty registry
    for setting, kind in ((setting, kind) for setting in pickers for kind in shape.layers):
        options = list(setting.options({getattr(setting, "kind_key", None): kind}, shape))
        numbers = [option for option in options if isinstance(option, int)]
        count = shape.heads if isinstance(setting, HeadNumber) else shape.layers[kind]
        if isinstance(setting, Layer) and setting.kind_key is None:
            count = shape.layers[setting.kind]
        assert [index_of(number) for number in numbers] == list(range(count))
        others = [option for option in options if option not in numbers]
        assert all(index_or_every(option) is None for option in others)


def counted(node: ast.expr) -> str:
    """The name a layer or head goes by in an expression: ``layer``, ``best.head``, ``n``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def names_layers_or_heads(name: str) -> bool:
    return any(word in name.lower() for word in ("layer", "head"))


def is_layer_or_head(node: ast.expr, counters: frozenset[str] = frozenset()) -> bool:
    """A layer or a head, not a count of them: ``heads - 1`` is the last head's index, and
    ``range(1, heads + 1)`` counts. A short name is one only as a loop's counter (``counters``)."""
    name = counted(node)
    return name in counters or (names_layers_or_heads(name) and not name.lower().endswith("s"))


def counter(loop: ast.For | ast.comprehension) -> str | None:
    """The name a loop counts the layers or heads with: ``h`` in ``for h in range(heads)``."""
    counts = (
        isinstance(loop.target, ast.Name)
        and isinstance(loop.iter, ast.Call)
        and counted(loop.iter.func) == "range"
        and len(loop.iter.args) == 1
        and names_layers_or_heads(counted(loop.iter.args[0]))
    )
    return loop.target.id if counts else None


def counting_scopes(tree: ast.AST) -> list[tuple[ast.AST, frozenset[str]]]:
    """The whole file, with no counters, then each loop or comprehension that counts through the
    layers or heads, with its counter. Outside its loop a short name (``h``, ``i``, ``row``) may
    be anything (a height, a position, a rank) and is left alone."""
    scopes: list[tuple[ast.AST, frozenset[str]]] = [(tree, frozenset())]
    for node in ast.walk(tree):
        loops = [node] if isinstance(node, ast.For) else getattr(node, "generators", [])
        names = frozenset(filter(None, map(counter, loops)))
        if names:
            scopes.append((node, names))
    return scopes


def is_one(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 1 and not isinstance(node.value, bool)


def conversions(scope: ast.AST, counters: frozenset[str]) -> set[tuple[int, int, str]]:
    """Every ``<layer or head> - 1`` or ``+ 1`` (``1 + <layer or head>``, ``-= 1``, ``+= 1``) in
    ``scope``, where it is."""
    found = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.Add)):
            pairs = [(node.left, node.right)]
            if isinstance(node.op, ast.Add):
                pairs.append((node.right, node.left))
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Sub, ast.Add)):
            pairs = [(node.target, node.value)]
        else:
            continue
        if any(is_layer_or_head(number, counters) and is_one(one) for number, one in pairs):
            found.add((node.lineno, node.col_offset, ast.unparse(node)))
    return found


def by_hand(path: Path, root: Path = ROOT) -> list[str]:
    """Every layer or head converted by hand in ``path``, in reading order."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set().union(*(conversions(*scope) for scope in counting_scopes(tree)))
    return [f"{path.relative_to(root)}:{line}: {text}" for line, _, text in sorted(found)]


def test_the_rule_sees_what_it_forbids(tmp_path):
    """The rule finds its own cases: a check that cannot fail would pass the app silently."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "attention_map(attention, layer - 1, None if head == 'avg' else head - 1)\n"
        "values = parts.heads[best.layer - 1, chosen_head - 1]\n"
        "xlayer -= 1\n"
        "last = len(steps) - 1\n"  # not a layer or a head
        "late = decoder_layers - 2\n"  # not a conversion
        "first, last = 0, heads - 1\n"  # a count's last index
        "shown = head + 1\n"
        'label = f"L{found.layer + 1} H{1 + found.head}"\n'
        'ticks = [f"head {h + 1}" for h in range(heads)]\n'
        "for layer_index in range(shape.layers):\n"
        "    next_layer = layer_index + 1\n"
        "numbers = range(1, n_layers + 1)\n"  # a count: the numbers shown, not an index
        'rows = [f"row {row + 1}" for row in range(len(queries))]\n'  # a position
        "h = height + 1\n"  # a short name not counting heads
        "wider = h + 1\n"
        "done += 1\n"
    )
    found = by_hand(sample, tmp_path)
    assert [line.split(": ", 1)[1] for line in found] == [
        "layer - 1",
        "head - 1",
        "best.layer - 1",
        "chosen_head - 1",
        "xlayer -= 1",
        "head + 1",
        "found.layer + 1",
        "1 + found.head",
        "h + 1",
        "layer_index + 1",
    ]


def test_no_view_counts_layers_or_heads_by_hand():
    assert any(path.parent.name == "views" for path in FILES)
    found = [line for path in FILES for line in by_hand(path)]
    assert not found, (
        "index layers and heads with app.numbering.index_of, show them with shown_of:\n"
        + "\n".join(found)
    )
