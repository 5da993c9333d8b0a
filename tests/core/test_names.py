"""One name per idea, kept: every .py file under core/ is read with `ast` (nothing is imported) and
its names are checked against what they mean in the rest of the package (issue #60):

- ``trace`` is whether to record (a bool): a parameter ``trace`` is annotated ``bool``, and no
  variable named ``trace`` holds what was recorded;
- what was recorded is named for what it is: a parameter annotated ``Intermediates`` is
  ``intermediates``, one annotated ``list[AttentionMaps]`` is ``maps``;
- ``target`` is a target language ("de", "fr"): no parameter ``target`` is annotated as a tensor,
  and no variable ``target`` is assigned a tensor (the decoder's input is ``decoder_input``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "core").rglob("*.py"))
# a parameter annotated with a name on the left must be named as on the right
NAMED_BY_TYPE = {"Intermediates": "intermediates", "list[AttentionMaps]": "maps"}


def parameters(tree: ast.Module):
    """(function, parameter, annotation text without ``| None``) for every annotated parameter."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                if argument.annotation is not None:
                    annotation = ast.unparse(argument.annotation).removesuffix(" | None")
                    yield node.name, argument.arg, annotation


def assigned_names(tree: ast.Module):
    """(name, value) for every plain name an assignment binds, tuples unpacked (value None)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.value
                elif isinstance(target, ast.Tuple):
                    for element in target.elts:
                        if isinstance(element, ast.Name):
                            yield element.id, None


def is_tensor_call(value: ast.expr | None) -> bool:
    """A call of torch.something(...): torch.tensor, torch.full, torch.cat, ..."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "torch"
    )


def misnamed(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    where = path.relative_to(root)
    found = []
    for function, name, annotation in parameters(tree):
        if name == "trace" and annotation != "bool":
            found.append(f"{where}: {function}({name}: {annotation}): trace is a bool")
        expected = NAMED_BY_TYPE.get(annotation)
        if expected and name != expected:
            found.append(f"{where}: {function}({name}: {annotation}): name it {expected}")
        if name == "target" and "Tensor" in annotation:
            found.append(f"{where}: {function}(target: {annotation}): target is a language")
    for name, value in assigned_names(tree):
        if name == "trace":
            found.append(f"{where}: trace = ...: trace is a bool, name what was recorded")
        if name == "target" and is_tensor_call(value):
            found.append(f"{where}: target = torch...: target is a language")
    return found


def test_the_rules_see_what_they_forbid(tmp_path):
    """Each rule finds its own case: a check that cannot fail would pass the package silently."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(trace: Intermediates | None, x: list[AttentionMaps], target: Tensor): pass\n"
        "def g(trace: bool, intermediates: Intermediates, maps: list[AttentionMaps]):\n"
        "    target = torch.tensor([1])\n"
        "    logits, trace = model(x, trace=True)\n"
    )
    found = misnamed(sample, tmp_path)
    # f: trace (not a bool, and not named for its type), maps, target; g: target and trace bound
    assert len(found) == 6, found


def test_core_keeps_one_name_per_idea():
    assert len(FILES) > 30  # the package was found
    found = [problem for path in FILES for problem in misnamed(path)]
    assert not found, "\n".join(found)
