"""Ruby `require`s and constant uses, through tree-sitter.

Imports: `require 'x'` / `require "x/y"` with a plain string (not
`require_relative`, not an interpolated string): the site's module is the
require path. Uses: constant paths of two or more parts, or a constant with a
method called on it (`Nokogiri::HTML(...)`, `Nokogiri::XML::Document.parse`,
`JSON.parse`, `< ActiveRecord::Base`): the site's module is the first constant,
and the symbol the whole path (`Nokogiri::XML::Document.parse`). Ruby binds no
names at `require` and a Rails app requires its gems through Bundler, so every
such constant path is recorded, whether or not the file requires anything;
which gem (if any) a require path or constant belongs to is a guess made later
from the locked gems' names (`callsites.packages`). Not tracked: constants
reopened or defined by the repository itself under a gem's name, `include`d
modules' methods, and calls on instances.
"""

from __future__ import annotations

import re

from repocontext.callsites import treesitter as ts
from repocontext.callsites.common import FileScan, RawSite
from repocontext.callsites.namerefs import pos

# Found by text, each hit asked of the tree (as the JS scanner does): queries walked every node of the file,
# a third of the scan's time again. A recorded path's first constant is always followed by `::` or `.`.
_REQUIRE_WORD = re.compile(rb"(?<![A-Za-z0-9_.:])require(?![A-Za-z0-9_?!])")
_PATH_ROOTS = re.compile(rb"(?<![A-Za-z0-9_])[A-Z][A-Za-z0-9_]*(?=\s*(?:::|&?\.[A-Za-z_]))")
# Where a constant is the name being defined, not a use.
_DEFINITIONS = frozenset({"class", "module"})


def warm() -> None:
    """Load the grammar and compile the queries every file uses (before workers fork: see the probe)."""
    ts.parser("ruby")


def _string(node: ts.Node) -> str | None:
    """A string literal's value when it is plain text (no interpolation)."""
    parts = node.named_children
    if len(parts) == 1 and parts[0].type == "string_content":
        return ts.text(parts[0])
    return None


def _chain(first: ts.Node) -> tuple[str, int] | None:
    """The constant path rooted at `first` (`A::B::C`, `A.meth`, `A::B.meth`) and its number of parts; None
    when `first` is not a path's root (a definition's name, or the inner part of a longer path)."""
    parent = first.parent
    if parent is not None and parent.type in _DEFINITIONS and parent.child_by_field_name("name") == first:
        return None
    if parent is not None and parent.type == "scope_resolution" and parent.child_by_field_name("name") == first \
            and parent.child_by_field_name("scope") is not None:
        return None
    text, count, node = ts.text(first), 1, first
    if parent is not None and parent.type == "scope_resolution" and parent.child_by_field_name("name") == first:
        node, parent = parent, parent.parent  # `::Foo`, rooted at the top level
    while parent is not None and parent.type == "scope_resolution" and parent.child_by_field_name("scope") == node:
        name = parent.child_by_field_name("name")
        if name is None or name.type != "constant":
            break
        text, count = f"{text}::{ts.text(name)}", count + 1
        node, parent = parent, parent.parent
    if parent is not None and parent.type in _DEFINITIONS and parent.child_by_field_name("name") == node:
        return None  # `module Foo::Bar`: defines (or reopens) it
    if parent is not None and parent.type == "call" and parent.child_by_field_name("receiver") == node:
        method = parent.child_by_field_name("method")
        if method is not None:
            separator = "::" if method.type == "constant" else "."
            text, count = f"{text}{separator}{ts.text(method)}", count + 1
    return text, count


def _requires(root: ts.Node, data: bytes) -> list[tuple[ts.Node, str]]:
    """(call, path) of each `require 'path'` without a receiver, in document order."""
    found = []
    for hit in _REQUIRE_WORD.finditer(data):
        node = root.descendant_for_byte_range(*hit.span())
        call = node.parent if node is not None and node.type == "identifier" else None
        if call is None or call.type != "call" or call.child_by_field_name("method") != node:
            continue
        arguments = call.child_by_field_name("arguments")
        first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
        path = _string(first) if first is not None and first.type == "string" else None
        if path is not None and call.child_by_field_name("receiver") is None:
            found.append((call, path))
    return found


def _constants(root: ts.Node, data: bytes) -> list[ts.Node]:
    """Constants followed by `::` or `.`: the candidates for a constant path's first part."""
    found = []
    for hit in _PATH_ROOTS.finditer(data):
        start, end = hit.span()
        node = root.descendant_for_byte_range(start, end)
        if node is not None and node.type == "constant" and node.start_byte == start and node.end_byte == end:
            found.append(node)
    return found


def scan_ruby(text: str) -> FileScan:
    """Requires and constant-path uses in one Ruby file."""
    scan = FileScan()
    data = text.encode("utf-8")
    root = ts.parser("ruby").parse(data).root_node
    for call, path in _requires(root, data):
        scan.imports.append(path)
        scan.sites.append(RawSite(path, path, *pos(call), "import"))
    for constant in _constants(root, data):
        chain = _chain(constant)
        if chain is not None and chain[1] > 1:
            scan.sites.append(RawSite(ts.text(constant), chain[0], *pos(constant), "use"))
    scan.sites.sort(key=lambda s: (s.line, s.col, s.kind, s.symbol))
    scan.partial_line = ts.first_error_line(root)
    return scan
