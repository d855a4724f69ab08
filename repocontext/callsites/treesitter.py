"""Tree-sitter parsers and queries, built once per process: JavaScript, TypeScript, Go, Rust, Ruby, PHP, Java,
Kotlin and C#.

The grammars come from the `tree-sitter-<language>` wheels (compiled, no
download at run time), each imported only when a file of its language is parsed.
"""

from __future__ import annotations

import importlib
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tree_sitter
    from tree_sitter import Node


def __getattr__(name: str) -> Any:
    # tree_sitter is imported when a parser is first asked for: a repository without JS or Go never needs it
    # (~2 ms of a small gather's start-up); `Node` stays reachable for code that names it at run time.
    if name == "Node":
        return _binding().Node
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _binding() -> Any:
    return importlib.import_module("tree_sitter")


@cache
def language(name: str) -> tree_sitter.Language:
    """`name` is "javascript", "typescript", "tsx", "go", "rust", "ruby", "php", "java", "kotlin" or "c_sharp"."""
    # A grammar is imported only when a file of its language is parsed: most commands never parse one.
    module, function = {
        "javascript": ("tree_sitter_javascript", "language"),
        "typescript": ("tree_sitter_typescript", "language_typescript"),
        "tsx": ("tree_sitter_typescript", "language_tsx"),
        "go": ("tree_sitter_go", "language"),
        "rust": ("tree_sitter_rust", "language"),
        "ruby": ("tree_sitter_ruby", "language"),
        "php": ("tree_sitter_php", "language_php"),  # PHP with its HTML around `<?php`: what a .php file holds
        "java": ("tree_sitter_java", "language"),
        "kotlin": ("tree_sitter_kotlin", "language"),
        "c_sharp": ("tree_sitter_c_sharp", "language"),
    }[name]
    return _binding().Language(getattr(importlib.import_module(module), function)())


@cache
def parser(name: str) -> tree_sitter.Parser:
    return _binding().Parser(language(name))


@lru_cache(maxsize=64)
def query(name: str, source: str) -> tree_sitter.Query:
    return _binding().Query(language(name), source)


def parse(name: str, text: str) -> tree_sitter.Tree:
    return parser(name).parse(text.encode("utf-8"))


def captures(name: str, source: str, node: Node) -> dict[str, list[Node]]:
    """Captures of a (cached) query under `node`, each list in document order."""
    found = _binding().QueryCursor(query(name, source)).captures(node)
    return {key: sorted(nodes, key=lambda n: n.start_byte) for key, nodes in found.items()}


def matches(name: str, source: str, node: Node) -> list[tuple[int, dict[str, list[Node]]]]:
    return _binding().QueryCursor(query(name, source)).matches(node)


def text(node: Node | None) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None and node.text is not None else ""


def string_value(node: Node | None) -> str | None:
    """The value of a plain string literal node ('x', "x", `x` without substitutions)."""
    raw = text(node)
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"`" and "${" not in raw:
        return raw[1:-1]
    return None


def first_error_line(node: Node) -> int | None:
    """The 1-based line of the first syntax error tree-sitter recovered from under `node`, or None.

    tree-sitter always yields a tree; without this a file it could not fully parse would lose call sites
    silently."""
    if not node.has_error:
        return None
    while not (node.is_error or node.is_missing):
        child = next((c for c in node.children if c.has_error or c.is_error or c.is_missing), None)
        if child is None:
            break
        node = child
    return int(node.start_point[0]) + 1
