"""Rust `use` declarations, `extern crate` and crate-qualified paths, through tree-sitter.

Imports: every path a `use` tree names (`use a::{b, c::{self, D as E}}` is three:
`a::b`, `a::c`, `a::c::D`), `use a::*` (recorded, binds nothing) and `extern crate x`.
Uses: paths whose first segment is a name a `use` bound (`E::new` →
`a::c::D::new`) or is itself a crate name written in code (`serde_json::to_string`:
a 2018-edition crate is in scope without `use`), and bare uses of a bound name
(`to_string(x)`, a type `Value`), also inside macro arguments (`println!("{}",
serde_json::to_string(&v)?)`, where tree-sitter keeps tokens only). The site's module is the path's first segment,
the crate name as code writes it (`serde_json` for the `serde-json`-style crate
`serde_json`, `regex_automata` for `regex-automata`); which locked crate that is
is decided later (`callsites.packages`). Left out: `crate::`, `self::`, `super::`
paths (the crate's own), and paths from `std`, `core`, `alloc`. Not tracked:
renamed dependencies (`foo = { package = "bar" }`: the dependency records name
only `bar`), scoping (a local named like an import still counts), and method
calls through values (`re.is_match(...)`: types are not inferred).
"""

from __future__ import annotations

import re

from repocontext.callsites import treesitter as ts
from repocontext.callsites.common import FileScan, RawSite
from repocontext.callsites.namerefs import dotted, inside, pos, word_nodes

LOCAL_ROOTS = frozenset({"crate", "self", "super", "Self"})
STD_ROOTS = frozenset({"std", "core", "alloc", "proc_macro", "test"})
# Found by text, each hit asked of the tree (as the JS scanner does): a query walked every node of the file,
# a third of the scan's time again.
_IMPORT_WORDS = re.compile(rb"(?<![A-Za-z0-9_])(?:use|extern)(?![A-Za-z0-9_])")
_PATH_ROOTS = re.compile(rb"(?<![A-Za-z0-9_:])[A-Za-z_][A-Za-z0-9_]*(?=\s*::)")
_SCOPED = frozenset({"scoped_identifier", "scoped_type_identifier"})
_CRATE_LIKE = re.compile(r"[a-z][a-z0-9_]*")

_Use = tuple[str, str | None, "ts.Node"]  # (full path, local name bound or None, node giving the position)


def warm() -> None:
    """Load the grammar and compile the queries every file uses (before workers fork: see the probe)."""
    ts.parser("rust")


def _join(prefix: str, rest: str) -> str:
    return f"{prefix}::{rest}" if prefix else rest


def _use_tree(node: ts.Node, prefix: str) -> list[_Use]:
    """The paths one `use` tree names, each with the name it binds (None for `*`)."""
    kind = node.type
    if kind == "use_list":
        return [found for child in node.named_children for found in _use_tree(child, prefix)]
    if kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        inner = _join(prefix, dotted(path).lstrip(":")) if path is not None else prefix
        items = node.child_by_field_name("list")
        return _use_tree(items, inner) if items is not None else []
    if kind == "use_as_clause":
        path, alias = node.child_by_field_name("path"), node.child_by_field_name("alias")
        full = _join(prefix, dotted(path).lstrip(":"))
        name = ts.text(alias)
        return [(full, None if name == "_" else name, node)]
    if kind == "use_wildcard":
        path = node.named_children[0] if node.named_children else None
        return [(_join(prefix, dotted(path).lstrip(":")), None, node)] if path is not None else []
    if kind == "self":
        return [(prefix, prefix.rpartition("::")[2], node)] if prefix else []
    if kind in ("identifier", "scoped_identifier", "crate", "super"):
        full = _join(prefix, dotted(node).lstrip(":"))
        return [(full, full.rpartition("::")[2], node)]
    return []


def _chain(root: ts.Node) -> str:
    """The `::a::b` after a path's first segment, as far as the path goes."""
    if root.parent is not None and root.parent.type == "token_tree":
        return _token_chain(root)
    parts: list[str] = []
    node, parent = root, root.parent
    while parent is not None and parent.type in _SCOPED and parent.child_by_field_name("path") == node:
        name = parent.child_by_field_name("name")
        if name is None:
            break
        parts.append(ts.text(name))
        node, parent = parent, parent.parent
    return "".join("::" + p for p in parts)


def _token_chain(first: ts.Node) -> str:
    """`::a::b` after an identifier among a macro's tokens (`::` and identifier tokens, in turn)."""
    parts: list[str] = []
    node = first.next_sibling
    while node is not None and node.type == "::":
        name = node.next_sibling
        if name is None or name.type != "identifier":
            break
        parts.append(ts.text(name))
        node = name.next_sibling
    return "".join("::" + p for p in parts)


def _in_tokens(node: ts.Node) -> bool:
    """An identifier among a macro's tokens that begins a path (followed by `::`, not after `::` or `.`)."""
    before, after = node.prev_sibling, node.next_sibling
    return after is not None and after.type == "::" and (before is None or before.type not in ("::", "."))


def _imports(root: ts.Node, data: bytes) -> list[ts.Node]:
    """The `use` trees and `extern crate` names of the file, in document order."""
    found = []
    for hit in _IMPORT_WORDS.finditer(data):
        node = root.descendant_for_byte_range(*hit.span())
        parent = node.parent if node is not None else None
        if node is None or parent is None or node.type not in ("use", "extern") or node.start_byte != hit.start():
            continue  # in a comment, a string or a longer name
        if parent.type == "use_declaration":
            argument = parent.child_by_field_name("argument")
        elif parent.type == "extern_crate_declaration":
            argument = parent.child_by_field_name("name")
        else:
            continue
        if argument is not None:
            found.append(argument)
    return found


def _roots(root: ts.Node, data: bytes) -> list[ts.Node]:
    """The first segments of the file's `a::b` paths (identifiers that are a scoped path's `path`)."""
    found = []
    for hit in _PATH_ROOTS.finditer(data):
        start, end = hit.span()
        node = root.descendant_for_byte_range(start, end)
        if node is None or node.type != "identifier" or node.start_byte != start or node.end_byte != end:
            continue
        parent = node.parent
        if parent is None:
            continue
        scoped = parent.type in _SCOPED and parent.child_by_field_name("path") == node
        if scoped or (parent.type == "token_tree" and _in_tokens(node)):
            found.append(node)
    return found


def _kept(path: str) -> bool:
    root = path.partition("::")[0]
    return bool(root) and root not in LOCAL_ROOTS and root not in STD_ROOTS


def scan_rust(text: str) -> FileScan:
    """Imports and crate-qualified uses in one Rust file."""
    scan = FileScan()
    data = text.encode("utf-8")
    root = ts.parser("rust").parse(data).root_node
    bound: dict[str, str] = {}
    unkept: set[str] = set()  # names bound to std or crate-local paths (`use std::fs;` then `fs::read`)
    for node in _imports(root, data):
        uses = [(ts.text(node), ts.text(node), node)] if node.parent is not None and \
            node.parent.type == "extern_crate_declaration" else _use_tree(node, "")
        for path, name, where in uses:
            if not _kept(path):
                unkept.update([name] if name else [])
                continue
            scan.imports.append(path)
            scan.sites.append(RawSite(path.partition("::")[0], path, *pos(where), "import"))
            if name is not None:
                bound[name] = path
    seen: set[int] = set()
    for ident in _roots(root, data):
        seen.add(ident.start_byte)
        name = ts.text(ident)
        base = bound.get(name) or (name if _CRATE_LIKE.fullmatch(name) and _kept(name) and name not in unkept
                                   else None)
        if base is None or inside(ident, ("use_declaration",)):
            continue
        symbol = base + _chain(ident)
        scan.sites.append(RawSite(base.partition("::")[0], symbol, *pos(ident), "use"))
    for ident in word_nodes(root, data, bound, ("identifier", "type_identifier")):
        parent = ident.parent
        if ident.start_byte in seen or parent is None or inside(ident, ("use_declaration",)):
            continue
        if parent.type in _SCOPED or parent.child_by_field_name("name") == ident:
            continue  # a member of another path, or a declaration named like the import
        if parent.type == "token_tree" and ident.prev_sibling is not None and ident.prev_sibling.type in ("::", "."):
            continue  # the same among a macro's tokens
        path = bound[ts.text(ident)]
        scan.sites.append(RawSite(path.partition("::")[0], path, *pos(ident), "use"))
    scan.sites.sort(key=lambda s: (s.line, s.col, s.kind, s.symbol))
    scan.partial_line = ts.first_error_line(root)
    return scan
