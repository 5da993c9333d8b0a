"""One name per idea, kept: every .py file under core/ is read with `ast` (nothing is imported) and
its names are checked against what they mean in the rest of the package (issue #60):

- ``trace`` is whether to record (a bool): a parameter ``trace`` is annotated ``bool``, and no
  variable named ``trace`` holds what was recorded;
- what was recorded is named for what it is: a parameter annotated ``Intermediates`` is
  ``intermediates``, one annotated ``list[AttentionMaps]`` is ``maps``;
- ``target`` is a target language ("de", "fr"): no parameter ``target`` is annotated as a tensor,
  and no variable ``target`` is assigned a tensor (the decoder's input is ``decoder_input``);
- ``tokens`` (and ``*_tokens``) are pieces, strings (``Translation.output_tokens``), and ``ids``
  (``*_ids``) their ids (``Translation.output_ids``, ``Hypothesis.ids``, ``BeamResult.ids``): no
  parameter, field or function result named ``tokens`` is annotated as ids (``list[int]``,
  ``Sequence[int]``, a ``Tensor`` or ``ndarray``; a bare ``int`` is a count, as in
  ``max_source_tokens``), no variable so named is assigned a tensor or an argmax, topk or tolist,
  and no ``ids`` is annotated ``str``. Left: the model's own ``tokens: Tensor`` parameters
  (``MODEL_TOKENS``: the paper's "input tokens" in core/model's signatures, left alone while
  issue #60's one-forward change is under way there);
- ``score`` is what the paper and sacreBLEU call a score: an attention score q . k / sqrt(d_k)
  (``AttentionMaps.scores``) or a metric's (BLEU, chrF). A log-probability is ``log_prob``: of a
  prefix or an output, summed over its tokens (``Hypothesis.log_prob``, ``Candidate.log_prob``,
  ``Translation.log_prob``), ``token_log_prob(s)`` for one token given those before it; the
  length-normalised value beam search ranks by, log P / lp, is ``normalized``. So core/decoding
  and core/translator.py (which compute no attention and no metric) bind no name with ``score``
  in it, and nowhere in core is such a name annotated ``float`` or ``list[float]``, or assigned
  a log_softmax or a log-probability.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "core").rglob("*.py"))
# a parameter annotated with a name on the left must be named as on the right
NAMED_BY_TYPE = {"Intermediates": "intermediates", "list[AttentionMaps]": "maps"}
# where no name may have "score" in it: no attention scores or metrics are computed there
WITHOUT_SCORES = ("core/decoding/", "core/translator.py")
# the model's (B, T) inputs, named as in its signatures: (file, function)
MODEL_TOKENS = {
    ("core/model/transformer.py", "padding_mask"),
    ("core/model/transformer.py", "token_embedding"),
    ("core/model/transformer.py", "embed"),
    ("core/model/engine.py", "embed"),
}
# what an annotation of ids names (a bare int is a count: max_source_tokens)
ID_TYPES = re.compile(r"\[int\b|\bTensor\b|\bndarray\b")
ID_MAKERS = {"argmax", "topk", "tolist"}  # calls whose result is ids, when named tokens


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


def annotated_names(tree: ast.Module):
    """(function or class, name, annotation) for every annotated parameter, dataclass field and
    function result (named as the function)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                if argument.annotation is not None:
                    yield node.name, argument.arg, ast.unparse(argument.annotation)
            if node.returns is not None:
                yield node.name, node.name, ast.unparse(node.returns)
        elif isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    yield node.name, statement.target.id, ast.unparse(statement.annotation)


def bound_names(tree: ast.Module):
    """Every name the code binds: functions, parameters, fields, assignments (to a name or an
    attribute), loop and comprehension variables, keyword arguments."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            yield node.attr
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg


def calls(value: ast.expr | None) -> set[str]:
    """The names of the functions and methods ``value`` calls: torch.full(...) gives "full"."""
    nodes = ast.walk(value) if value is not None else ()
    return {
        node.func.attr if isinstance(node.func, ast.Attribute) else ast.unparse(node.func)
        for node in nodes
        if isinstance(node, ast.Call)
    }


def reads_log_probabilities(value: ast.expr | None) -> bool:
    """A log_softmax, or a name or attribute with log_prob in it (log_probs, h.log_prob)."""
    nodes = list(ast.walk(value)) if value is not None else []
    named = [node.id for node in nodes if isinstance(node, ast.Name)]
    named += [node.attr for node in nodes if isinstance(node, ast.Attribute)]
    return "log_softmax" in calls(value) or any("log_prob" in name for name in named)


def is_tokens(name: str) -> bool:
    return name == "tokens" or name.endswith("_tokens")


def is_ids(name: str) -> bool:
    return name == "ids" or name.endswith("_ids")


def misnamed(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    where = path.relative_to(root)
    return [
        f"{where}: {problem}"
        for rule in (misnamed_recordings, misnamed_ids, misnamed_log_probabilities)
        for problem in rule(tree, where.as_posix())
    ]


def misnamed_recordings(tree: ast.Module, where: str) -> list[str]:
    """trace, what was recorded, and target."""
    found = []
    for function, name, annotation in parameters(tree):
        if name == "trace" and annotation != "bool":
            found.append(f"{function}({name}: {annotation}): trace is a bool")
        expected = NAMED_BY_TYPE.get(annotation)
        if expected and name != expected:
            found.append(f"{function}({name}: {annotation}): name it {expected}")
        if name == "target" and "Tensor" in annotation:
            found.append(f"{function}(target: {annotation}): target is a language")
    for name, value in assigned_names(tree):
        if name == "trace":
            found.append("trace = ...: trace is a bool, name what was recorded")
        if name == "target" and is_tensor_call(value):
            found.append("target = torch...: target is a language")
    return found


def misnamed_ids(tree: ast.Module, where: str) -> list[str]:
    """tokens are pieces, ids are ids."""
    found = []
    for owner, name, annotation in annotated_names(tree):
        model_input = (where, owner) in MODEL_TOKENS
        if is_tokens(name) and ID_TYPES.search(annotation) and not model_input:
            found.append(f"{owner}: {name}: {annotation}: name ids ids, tokens are pieces")
        if is_ids(name) and re.search(r"\bstr\b", annotation):
            found.append(f"{owner}: {name}: {annotation}: name pieces tokens, ids are ints")
    for name, value in assigned_names(tree):
        if is_tokens(name) and (is_tensor_call(value) or calls(value) & ID_MAKERS):
            found.append(f"{name} = ...: name ids ids, tokens are pieces")
    return found


def misnamed_log_probabilities(tree: ast.Module, where: str) -> list[str]:
    """A score is an attention score or a metric; a log-probability is log_prob."""
    found = [
        f"{owner}: {name}: {annotation}: a log-probability is log_prob"
        for owner, name, annotation in annotated_names(tree)
        if "score" in name and annotation.removesuffix(" | None") in ("float", "list[float]")
    ]
    found += [
        f"{name} = ...: a log-probability is log_prob"
        for name, value in assigned_names(tree)
        if "score" in name and reads_log_probabilities(value)
    ]
    if where.startswith(WITHOUT_SCORES):
        scored = sorted({name for name in bound_names(tree) if "score" in name})
        found += [f"{name}: no score here, a log-probability is log_prob" for name in scored]
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


def test_the_ids_rules_see_what_they_forbid(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "class Hypothesis:\n"
        "    tokens: list[int]\n"  # a field of ids
        "    source_ids: list[str]\n"  # a field of pieces
        "    output_tokens: list[str]\n"  # right
        "def h(decoder_tokens: Tensor, ids: Sequence[int]) -> None:\n"  # the first
        "    tokens = torch.full((1, 1), 0)\n"
        "    top_tokens = log_probs.topk(4).indices\n"
        "    source_tokens = tokenizer.pieces(ids)\n"  # right
        "def last_tokens(self) -> list[int]: pass\n"
    )
    found = misnamed(sample, tmp_path)
    expected = [
        "Hypothesis: tokens: list[int]",
        "Hypothesis: source_ids: list[str]",
        "h: decoder_tokens: Tensor",
        "last_tokens: last_tokens: list[int]",
        ": tokens = ...",
        ": top_tokens = ...",
    ]
    assert len(found) == len(expected), found
    assert all(any(case in problem for problem in found) for case in expected), found


def test_the_log_probability_rules_see_what_they_forbid(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "class Candidate:\n"
        "    score: float\n"  # a log-probability
        "    scores: np.ndarray\n"  # attention scores: right
        "def rank(scores: Tensor) -> None:\n"
        "    scores = logits.log_softmax(-1)\n"
        "    total_score = sum(h.log_prob for h in live)\n"
        "    bleu = score_translations(outputs, references)\n"  # right
    )
    found = misnamed(sample, tmp_path)
    assert len(found) == 3, found  # score: float, and the two assignments
    decoding = tmp_path / "core" / "decoding" / "search.py"
    decoding.parent.mkdir(parents=True)
    decoding.write_text(sample.read_text())
    found = misnamed(decoding, tmp_path)
    # the three, and every name with score bound in decoding: score, scores, total_score
    assert len(found) == 6, found


def test_core_keeps_one_name_per_idea():
    assert len(FILES) > 30  # the package was found
    found = [problem for path in FILES for problem in misnamed(path)]
    assert not found, "\n".join(found)
