"""setup.py: literal `install_requires`, `tests_require` and `extras_require` of setup() calls, read with ast.

setup.py is parsed, never executed. A value is read when it is a literal: a
list or tuple of strings, a string of lines, `a + b` of those, or a name bound
once at module level to such a literal (and never mutated). Anything else
(a function call, a comprehension, `**kwargs`) is reported as a diagnostic:
its requirements are unknown without running the file.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator

from repocontext.deps.common import Issue, Parsed, is_dev_name, pep508

_LISTS = {"install_requires": False, "tests_require": True}
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "pop", "remove", "clear"})

Strings = list[tuple[str, int]]  # (requirement, 1-based line)


def parse_setup_py(path: str, text: str) -> Parsed:
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" and the like are the repo's business
            warnings.simplefilter("ignore")  # (DeprecationWarning before Python 3.12)
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        line = exc.lineno if isinstance(exc, SyntaxError) else None
        return Parsed(issues=[Issue(f"setup.py is not valid Python 3, its requirements are not read: {exc}",
                                    path, line)])
    literals = _module_literals(tree)
    result = Parsed()
    for call in _setup_calls(tree):
        for keyword in call.keywords:
            _keyword(result, path, keyword, literals)
    return result


def _setup_calls(tree: ast.Module) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == "setup") or (
                    isinstance(func, ast.Attribute) and func.attr == "setup"):
                yield node


def _keyword(result: Parsed, path: str, keyword: ast.keyword, literals: dict[str, ast.expr]) -> None:
    if keyword.arg is None:
        result.issues.append(Issue("setup(**…): requirements passed through ** are not read (setup.py is never "
                                   "run)", path, keyword.value.lineno, "info"))
    elif keyword.arg in _LISTS:
        _record(result, path, keyword.arg, keyword.value, literals, keyword.arg, _LISTS[keyword.arg])
    elif keyword.arg == "extras_require":
        value = _resolve(keyword.value, literals)
        if not isinstance(value, ast.Dict):
            result.issues.append(_not_literal(path, "extras_require", keyword.value))
            return
        for key, items in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                result.issues.append(_not_literal(path, "extras_require", key or items))
                continue
            extra = key.value.split(":")[0]  # `"test:python_version<'3'"`: the extra name, then a marker
            _record(result, path, f"extras_require.{extra}", items, literals, "extras_require", is_dev_name(extra))


def _record(result: Parsed, path: str, section: str, node: ast.expr, literals: dict[str, ast.expr], what: str,
            dev: bool) -> None:
    strings = _strings(node, literals, depth=0)
    if strings is None:
        result.issues.append(_not_literal(path, what, node))
        return
    for requirement, line in strings:
        result.add(pep508(path, line, requirement, dev, section))


def _not_literal(path: str, what: str, node: ast.expr) -> Issue:
    return Issue(f"{what} is not a literal (setup.py is never run, so its requirements are unknown): "
                 f"{ast.unparse(node)[:80]}", path, node.lineno)


def _resolve(node: ast.expr, literals: dict[str, ast.expr]) -> ast.expr:
    return literals.get(node.id, node) if isinstance(node, ast.Name) else node


def _strings(node: ast.expr, literals: dict[str, ast.expr], depth: int) -> Strings | None:
    """The requirement strings of a literal value with their lines, or None when it is not a literal."""
    if depth > 8:
        return None
    node = _resolve(node, literals)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        lines = node.value.splitlines()
        return [(text.strip(), node.lineno + i) for i, text in enumerate(lines)
                if text.strip() and not text.strip().startswith("#")]
    if isinstance(node, ast.List | ast.Tuple):
        out: Strings = []
        for element in node.elts:
            found = _strings(element, literals, depth + 1) if not isinstance(element, ast.Starred) else None
            if found is None:
                return None
            out.extend(found)
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _strings(node.left, literals, depth + 1), _strings(node.right, literals, depth + 1)
        return None if left is None or right is None else left + right
    return None


def _module_literals(tree: ast.Module) -> dict[str, ast.expr]:
    """Names bound exactly once in the whole file, by a plain module-level assignment, and never mutated."""
    values: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            values[statement.targets[0].id] = statement.value
    stores: dict[str, int] = {}
    changed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1  # loops, `with … as`, nested scopes count too
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            changed.add(node.target.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                and isinstance(node.func.value, ast.Name):
            changed.add(node.func.value.id)
    return {name: value for name, value in values.items() if stores.get(name) == 1 and name not in changed}
