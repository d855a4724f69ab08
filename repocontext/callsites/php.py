"""PHP `use` imports and class / function references, through tree-sitter; Composer autoload prefixes.

Imports: every `use` clause (`use A\\B;`, `use A\\{B, C as D};`, `use function
A\\f;`): the site's module and symbol are the fully qualified name. Uses: a
class or function named where PHP resolves it (a static call `B::make()`, a
class constant `B::X`, `new B`, a type, `extends` / `implements`, `instanceof`, a
`use function` call): resolved through the file's imports (`D` → `A\\C`) or
written fully qualified (`\\A\\B`); the symbol adds the member (`A\\B::make`).
Names neither imported nor fully qualified resolve to the file's own namespace
(or PHP's global classes and functions) and are left out.

Which Composer package a name belongs to is decided later (`callsites.packages`)
by the PSR-4 and PSR-0 namespace prefixes of composer.lock's `autoload` maps,
read here by `autoload_prefixes`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from repocontext.callsites import treesitter as ts
from repocontext.callsites.common import FileScan, RawSite
from repocontext.callsites.namerefs import pos, word_nodes

# Found by text, each hit asked of the tree (as the JS scanner does): queries walked every node of the file,
# half of the scan's time again.
_USE_WORD = re.compile(rb"(?<![A-Za-z0-9_$\\])use(?![A-Za-z0-9_])", re.IGNORECASE)
_LEADING_SLASH = re.compile(rb"(?<![A-Za-z0-9_\\])\\(?=[A-Za-z_])")
# Where a class name is a reference PHP resolves: parent type → the field it must be in ("" any child).
_CLASS_PLACES = {"scoped_call_expression": "scope", "scoped_property_access_expression": "scope",
                 "class_constant_access_expression": "", "object_creation_expression": "", "named_type": "",
                 "base_clause": "", "class_interface_clause": "", "binary_expression": "right"}


def warm() -> None:
    """Load the grammar (before workers fork: see the probe)."""
    ts.parser("php")


def _name(node: ts.Node | None) -> str:
    return "".join(ts.text(node).split()).lstrip("\\")


def _clauses(declaration: ts.Node) -> list[tuple[str, str, str, ts.Node]]:
    """(kind "class" | "function" | "const", fully qualified name, alias, node) of each clause of one `use`."""
    kind = "class"
    for child in declaration.children:
        if child.type in ("function", "const"):
            kind = child.type
    prefix = ""
    body: ts.Node | None = None
    for child in declaration.named_children:
        if child.type == "namespace_name":
            prefix = _name(child)
        elif child.type == "namespace_use_group":
            body = child
    clauses = (body or declaration).named_children
    found = []
    for clause in clauses:
        if clause.type != "namespace_use_clause":
            continue
        target = next((c for c in clause.named_children if c.type in ("name", "qualified_name")), None)
        if target is None:
            continue
        alias = clause.child_by_field_name("alias")
        full = _name(target) if not prefix else f"{prefix}\\{_name(target)}"
        clause_kind = next((c.type for c in clause.children if c.type in ("function", "const")), kind)
        found.append((clause_kind, full, ts.text(alias) if alias is not None else full.rpartition("\\")[2], clause))
    return found


def _resolve(written: str, imported: Mapping[str, str]) -> str | None:
    """The fully qualified name a class name in code stands for, or None when it is the file's own namespace."""
    if written.startswith("\\"):
        return written.lstrip("\\")
    head, _, rest = written.partition("\\")
    base = imported.get(head.lower())
    if base is None:
        return None
    return f"{base}\\{rest}" if rest else base


def _declarations(root: ts.Node, data: bytes) -> Iterator[ts.Node]:
    """The file's `use` declarations of namespaces (not a class body's trait `use`)."""
    for hit in _USE_WORD.finditer(data):
        node = root.descendant_for_byte_range(*hit.span())
        parent = node.parent if node is not None else None
        if parent is not None and parent.type == "namespace_use_declaration" and node is not None \
                and node.start_byte == hit.start():
            yield parent


def _reference(node: ts.Node) -> ts.Node:
    """The whole name (`A\\B\\C`) a name's first part or leading backslash begins."""
    parent = node.parent
    if node.type == "name" and parent is not None and parent.type == "namespace_name":
        node, parent = parent, parent.parent
    if parent is not None and parent.type == "qualified_name" and parent.start_byte == node.start_byte:
        return parent
    return node


def _place(ref: ts.Node) -> tuple[str, ts.Node | None] | None:
    """("class", member node or None) or ("function", None) where `ref` is a reference PHP resolves; else None."""
    parent = ref.parent
    if parent is None:
        return None
    if parent.type == "function_call_expression":
        return ("function", None) if parent.child_by_field_name("function") == ref else None
    field = _CLASS_PLACES.get(parent.type)
    if field is None or (field and parent.child_by_field_name(field) != ref):
        return None
    if parent.type == "binary_expression" and ts.text(parent.child_by_field_name("operator")) != "instanceof":
        return None
    if parent.type == "scoped_call_expression":
        return "class", parent.child_by_field_name("name")
    if parent.type == "class_constant_access_expression":
        children = parent.named_children
        return ("class", children[1]) if len(children) == 2 and children[0] == ref else None
    return "class", None


def _references(root: ts.Node, data: bytes, names: set[str]) -> Iterator[tuple[ts.Node, str, ts.Node | None]]:
    """(name node, "class" | "function", member) of every imported-name or fully qualified reference."""
    starts = list(word_nodes(root, data, names, ("name",), ignore_case=True))  # PHP names ignore case
    for hit in _LEADING_SLASH.finditer(data):
        node = root.descendant_for_byte_range(hit.start(), hit.end())
        if node is not None and node.start_byte == hit.start() and node.parent is not None \
                and node.parent.type == "qualified_name":
            starts.append(node.parent)
    seen: set[int] = set()
    for start in sorted(starts, key=lambda n: n.start_byte):
        ref = _reference(start) if start.type == "name" else start
        if ref.start_byte in seen:
            continue
        seen.add(ref.start_byte)
        place = _place(ref)
        if place is not None:
            yield ref, place[0], place[1]


def scan_php(text: str) -> FileScan:
    """`use` imports and resolved class / function references in one PHP file."""
    scan = FileScan()
    data = text.encode("utf-8")
    root = ts.parser("php").parse(data).root_node
    # alias, lower case (PHP class and function names ignore case) → fully qualified name
    classes: dict[str, str] = {}
    functions: dict[str, str] = {}
    for declaration in _declarations(root, data):
        for kind, full, alias, node in _clauses(declaration):
            scan.imports.append(full)
            scan.sites.append(RawSite(full, full, *pos(node), "import"))
            if kind == "class":
                classes[alias.lower()] = full
            elif kind == "function":
                functions[alias.lower()] = full
    for node, kind, member in _references(root, data, {*classes, *functions}):
        written = "".join(ts.text(node).split())
        if kind == "function":
            target = written.lstrip("\\") if written.startswith("\\") else functions.get(written.lower())
        else:
            target = _resolve(written, classes)
        if target is not None:
            symbol = f"{target}::{ts.text(member)}" if member is not None else target
            scan.sites.append(RawSite(target, symbol, *pos(node), "use"))
    scan.sites.sort(key=lambda s: (s.line, s.col, s.kind, s.symbol))
    scan.partial_line = ts.first_error_line(root)
    return scan


def autoload_prefixes(lock: Any) -> list[tuple[str, str]]:
    """(namespace prefix, package name) of every PSR-4 and PSR-0 `autoload` entry of composer.lock's
    packages (both `packages` and `packages-dev`), sorted; an empty prefix (a fallback directory) names
    nothing and is left out. PSR-0 prefixes may end in `_` (old `Vendor_Class` names) or name no separator."""
    found: set[tuple[str, str]] = set()
    if not isinstance(lock, Mapping):
        return []
    for section in ("packages", "packages-dev"):
        packages = lock.get(section)
        for package in packages if isinstance(packages, list) else ():
            if not isinstance(package, Mapping) or not isinstance(package.get("name"), str):
                continue
            autoload = package.get("autoload")
            for standard in ("psr-4", "psr-0"):
                prefixes = autoload.get(standard) if isinstance(autoload, Mapping) else None
                for prefix in prefixes if isinstance(prefixes, Mapping) else ():
                    clean = str(prefix).lstrip("\\")
                    if clean:
                        found.add((clean, package["name"]))
    return sorted(found)
