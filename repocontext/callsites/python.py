"""Python imports and their uses, from one `ast` visitor pass per file.

Recorded: every import (`import a.b as c`, `from a import b as c`,
`from a.b import *` as symbol "a.b.*", relative imports resolved against the
file's package — or kept relative, ".mod.name", for the caller to resolve),
and every load of an imported name, as the longest attribute
chain rooted at it, qualified by what was imported: `y.safe_load` after
`import yaml as y` is "yaml.safe_load".

Scoping, kept cheap: uses are held per scope and resolved when the scope
closes. A function (or lambda) that binds a name locally (parameter,
assignment, `for`/`with`/`except` target, nested def) shadows a module-level
import of that name in its whole body, as Python does; `global`/`nonlocal`
undo that. Module-level rebinding does not shadow (`try: import yaml except
ImportError: yaml = None` keeps `yaml` an import). Class bodies shadow only
their own statements. Comprehension targets count as locals of the enclosing
function. Not tracked: names brought in by star imports, `__import__`,
`importlib.import_module`, and values passed around after assignment.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable
from typing import Any

from repocontext.callsites.common import FileScan, RawSite, resolve_scan

_Pending = tuple[str, str, int, int]  # (name, ".attr.chain", line, col)

# Fields that never hold child nodes worth visiting (names, flags, expression contexts).
_SCALAR_FIELDS = frozenset({"ctx", "id", "attr", "arg", "kind", "type_comment", "conversion", "is_async", "level"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}


class _Scope:
    __slots__ = ("declared", "imports", "is_class", "locals", "pending")

    def __init__(self, is_class: bool = False) -> None:
        self.is_class = is_class
        self.imports: dict[str, tuple[str, str]] = {}  # bound name → (qualified name, module)
        self.locals: set[str] = set()
        self.declared: set[str] = set()  # global / nonlocal
        self.pending: list[_Pending] = []


class _Scanner:
    def __init__(self) -> None:
        self.scan = FileScan()
        self.stack: list[_Scope] = [_Scope()]
        self.dispatch: dict[type, Callable[[Any], None]] = {
            ast.Name: self._name, ast.Attribute: self._attribute, ast.Import: self._import,
            ast.ImportFrom: self._import_from, ast.FunctionDef: self._function,
            ast.AsyncFunctionDef: self._function, ast.Lambda: self._lambda, ast.ClassDef: self._class,
            ast.Global: self._declare, ast.Nonlocal: self._declare, ast.ExceptHandler: self._except,
            ast.MatchAs: self._match_name, ast.MatchStar: self._match_name,
        }

    # traversal ---------------------------------------------------------
    def visit(self, node: ast.AST) -> None:
        """Dispatch by exact class; everything else just descends (the hot path, kept lean)."""
        cls = node.__class__
        if cls is ast.Name:
            self._name(node)  # type: ignore[arg-type]  # `cls is ast.Name`: an exact-class test, for speed
            return
        handler = self.dispatch.get(cls)
        if handler is not None:
            handler(node)
            return
        fields = _CHILD_FIELDS.get(cls)
        if fields is None:
            fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _SCALAR_FIELDS)
        for name in fields:
            value = getattr(node, name)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def visit_all(self, nodes: list[Any]) -> None:
        for node in nodes:
            if node is not None:
                self.visit(node)

    def _bind_local(self, name: str) -> None:
        if len(self.stack) > 1:  # module-level rebinding never shadows an import
            self.stack[-1].locals.add(name)

    # names and chains --------------------------------------------------
    def _name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.stack[-1].pending.append((node.id, "", node.lineno, node.col_offset))
        else:
            self._bind_local(node.id)

    def _attribute(self, node: ast.Attribute) -> None:
        parts: list[str] = []
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            parts.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name):
            rest = "." + ".".join(reversed(parts))
            self.stack[-1].pending.append((base.id, rest, base.lineno, base.col_offset))
        else:
            self.visit(base)

    # imports -----------------------------------------------------------
    def _record_import(self, bound: str | None, qualified: str, module: str, alias: ast.alias) -> None:
        self.scan.sites.append(RawSite(module, qualified, alias.lineno, alias.col_offset, "import"))
        if bound is not None:
            self.stack[-1].imports[bound] = (qualified, module)

    def _import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.scan.imports.append(alias.name)
            if alias.asname:
                self._record_import(alias.asname, alias.name, alias.name, alias)
            else:  # `import a.b` binds `a`
                top = alias.name.partition(".")[0]
                self.scan.sites.append(RawSite(alias.name, alias.name, alias.lineno, alias.col_offset, "import"))
                self.stack[-1].imports[top] = (top, alias.name)

    def _import_from(self, node: ast.ImportFrom) -> None:
        # Relative imports stay relative here: ".x" (from . import x), "..up.x" (from ..up import x).
        base = "." * node.level + (node.module or "")
        if not base:
            return
        prefix = base if base.endswith(".") else base + "."
        self.scan.imports.append(base)
        for alias in node.names:
            if alias.name == "*":
                self._record_import(None, f"{prefix}*", base, alias)
            else:
                self._record_import(alias.asname or alias.name, f"{prefix}{alias.name}", base, alias)

    # scopes ------------------------------------------------------------
    def _enter(self, scope: _Scope, body: list[Any]) -> None:
        self.stack.append(scope)
        self.visit_all(body)
        self.stack.pop()
        self._close(scope, next(s for s in reversed(self.stack) if not s.is_class))

    def _close(self, scope: _Scope, outer: _Scope | None) -> None:
        """Resolve a closing scope's uses; unresolved ones move out (past class bodies, as in Python)."""
        shadow = scope.locals - scope.declared
        for item in scope.pending:
            found = scope.imports.get(item[0])
            if found is not None:
                self._emit(found, item)
            elif outer is not None and item[0] not in shadow:
                outer.pending.append(item)

    def _emit(self, found: tuple[str, str], item: _Pending) -> None:
        qualified, module = found
        self.scan.sites.append(RawSite(module, qualified + item[1], item[2], item[3], "use"))

    def _function_scope(self, args: ast.arguments) -> _Scope:
        scope = _Scope()
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        scope.locals.update(a.arg for a in every if a is not None)
        return scope

    def _signature(self, args: ast.arguments) -> None:
        """Defaults and annotations are evaluated in the enclosing scope."""
        self.visit_all([*args.defaults, *args.kw_defaults])
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        self.visit_all([a.annotation for a in every if a is not None])

    def _function(self, node: ast.FunctionDef) -> None:
        self.visit_all(node.decorator_list)
        self._signature(node.args)
        self.visit_all([node.returns])
        self._bind_local(node.name)
        self._enter(self._function_scope(node.args), node.body)

    def _lambda(self, node: ast.Lambda) -> None:
        self._signature(node.args)
        self._enter(self._function_scope(node.args), [node.body])

    def _class(self, node: ast.ClassDef) -> None:
        self.visit_all([*node.decorator_list, *node.bases, *node.keywords])
        if any(_terminal(base).endswith("TestCase") for base in node.bases):
            self.scan.test_case = True
        self._bind_local(node.name)
        self._enter(_Scope(is_class=True), node.body)

    def _declare(self, node: ast.Global) -> None:
        self.stack[-1].declared.update(node.names)

    def _except(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind_local(node.name)
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def _match_name(self, node: ast.MatchAs) -> None:
        if node.name:
            self._bind_local(node.name)
        for child in ast.iter_child_nodes(node):
            self.visit(child)


def _terminal(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def scan_python(text: str, package: str | None = None) -> FileScan:
    """Imports and uses in one Python file.

    With `package`, relative imports are resolved against it (and dropped when
    they climb out of it); without, they are left relative for `resolve_scan`.

    A file without the word "import" has nothing to record and is not parsed.
    """
    if "import" not in text:
        return FileScan()
    try:
        with warnings.catch_warnings():  # invalid escapes etc. are the repository's business, not ours
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except SyntaxError as exc:
        return FileScan(error=f"syntax error: {exc.msg}", error_line=exc.lineno)
    except (ValueError, RecursionError, MemoryError) as exc:
        return FileScan(error=f"cannot parse: {exc.__class__.__name__}")
    scanner = _Scanner()
    try:
        scanner.visit_all(tree.body)
    except RecursionError:
        return FileScan(error="cannot scan: nesting too deep")
    scanner._close(scanner.stack[0], None)
    scanner.scan.sites.sort(key=lambda s: (s.line, s.col, s.kind, s.symbol))
    return scanner.scan if package is None else resolve_scan(scanner.scan, package)
