"""Bounded parsing of what a repository (or a task-class file) brings: YAML, JSON and TOML with limits.

Every parse of untrusted text goes through here, so one hostile file costs a
bounded amount of time and memory and becomes a `LimitExceeded` (a ValueError
naming the cause, and a line where there is one) instead of a hung gather:

- size: text over `Limits.max_bytes` is refused before it is parsed;
- nesting: a document deeper than `Limits.max_depth` is refused (callers walk
  documents recursively; Python's own limit would end them with RecursionError);
- aliases (YAML): a "billion laughs" document is tiny once composed (an alias
  is the same node again) but explodes in whoever walks it. The composed graph
  is measured as if every alias were expanded, and refused beyond
  `Limits.max_alias_nodes` extra nodes; an alias that contains itself is refused.

libyaml's composer (the C loader) stays the parser: measuring the node graph
costs ~2% of composing it. Text with no anchor at all (the common case: a
cheap regex says so) cannot hold an alias, so it gets the plain walk without
the per-node memo that the alias-aware walk needs; should the regex ever miss
an anchor, the plain walk meets more nodes than the text can write and hands
over to the alias-aware one. There is no XML here: no probe parses XML (if
one ever does, use defusedxml, which refuses entity expansion).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yaml.nodes import Node


@cache
def _loader() -> Any:
    """libyaml's safe loader (~10x faster than PyYAML's, and it caps nesting at 1,000). PyYAML is imported
    here, on first use: its import is ~12 ms of a bare start, and a small repository may hold no YAML."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _node_types() -> tuple[type, type, type]:
    """PyYAML's (MappingNode, ScalarNode, SequenceNode), for the walks below: fetched once, not once per node."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    return MappingNode, ScalarNode, SequenceNode


@dataclass(frozen=True, slots=True)
class Limits:
    # The largest text any reader hands over: a regenerated lockfile read back for checking (planner.bundle.view
    # reads up to 4 MB); probes read at most 2 MB (repocontext.probe.MAX_READ_BYTES).
    max_bytes: int = 4_000_000
    max_depth: int = 200  # real manifests and lockfiles nest < 20 deep
    max_alias_nodes: int = 200_000  # nodes that aliases may add beyond the document's own
    max_documents: int = 500  # YAML documents in one stream


DEFAULT = Limits()

# An anchor is `&name` where a node may start: at the start, after blanks, or after a flow indicator or `-`, `?`,
# `:`; libyaml (and PyYAML) accept only [0-9A-Za-z_-] in its name. Anything the regex misses libyaml
# would not read as an anchor either; a false hit (`a &b` in a shell line) only costs the alias-aware walk.
_ANCHOR = re.compile(r"(?:^|[\s\ufeff\[\]{},:?!-])&[0-9A-Za-z_-]")


class LimitExceeded(ValueError):
    """A document over a limit: `cause` says which, `line` (1-based) where, when known."""

    def __init__(self, cause: str, line: int | None = None) -> None:
        super().__init__(cause)
        self.cause, self.line = cause, line


def check_size(text: str | bytes, limits: Limits = DEFAULT) -> None:
    if len(text) > limits.max_bytes:  # a str's length counts characters, at most its UTF-8 bytes: never stricter
        raise LimitExceeded(f"file is larger than {limits.max_bytes:,} bytes")


def has_anchor(text: str | bytes) -> bool:
    if isinstance(text, bytes):
        return b"&" in text and _ANCHOR.search(text.decode("utf-8", errors="replace")) is not None
    return "&" in text and _ANCHOR.search(text) is not None


# YAML ------------------------------------------------------------------------------------------------------


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


def _children(node: Node, mapping: type, sequence: type) -> list[Node]:
    if isinstance(node, mapping):
        return [part for pair in node.value for part in pair]
    if isinstance(node, sequence):
        return list(node.value)
    return []


def _check_tree(root: Node, limits: Limits, budget: int) -> bool:
    """Depth of a graph believed to hold no alias (each node once): level by level over the collections only,
    which keeps this walk at a few percent of libyaml's composing time. False, at once, when it meets more
    nodes than `budget` (more than the text could write without aliases): the caller then measures the graph."""
    mapping, scalar, sequence = _node_types()

    level, depth = [root], 1
    while level:
        if depth > limits.max_depth:
            raise LimitExceeded(f"nests deeper than {limits.max_depth} levels", _line(level[0]))
        below: list[Node] = []
        for node in level:
            if node.__class__ is mapping:
                below += [part for pair in node.value for part in pair if part.__class__ is not scalar]
            elif node.__class__ is sequence:
                below += [item for item in node.value if item.__class__ is not scalar]
            else:
                continue
            if len(below) > budget:
                return False
        budget -= len(below)
        level, depth = below, depth + 1
    return True


def _check_graph(root: Node, limits: Limits) -> None:
    """Size and depth of the document with every alias expanded, in time linear in its distinct nodes: each
    node's (expanded size, height) is computed once, post-order, and reused wherever an alias points at it."""
    mapping, scalar, sequence = _node_types()
    done: dict[int, tuple[int, int]] = {}
    open_: set[int] = set()
    distinct = 0
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            parts = [done[id(child)] for child in _children(node, mapping, sequence)]
            height = 1 + max((p[1] for p in parts), default=0) if parts or node.__class__ is not scalar else 0
            done[key] = (1 + sum(p[0] for p in parts), height)
            open_.discard(key)
            distinct += 1
            if done[key][1] > limits.max_depth:
                raise LimitExceeded(f"nests deeper than {limits.max_depth} levels", _line(node))
            if done[key][0] - distinct > limits.max_alias_nodes:
                raise LimitExceeded(f"YAML aliases expand to more than {limits.max_alias_nodes:,} extra nodes"
                                    " (an alias bomb?)", _line(node))
            continue
        if key in done:
            continue
        if key in open_:
            raise LimitExceeded("a YAML alias refers to a node that contains it", _line(node))
        open_.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node, mapping, sequence))


def check_node(root: Node | None, text: str | bytes, limits: Limits = DEFAULT) -> None:
    """Raise LimitExceeded when the composed `root` of `text` is over a limit."""
    _check(root, has_anchor(text), len(text), limits)


def _check(root: Node | None, anchored: bool, size: int, limits: Limits) -> None:
    if root is None:
        return
    # Every node takes at least one character unless an alias repeats it: past that, the regex missed an anchor.
    if anchored or not _check_tree(root, limits, 2 * size + 16):
        _check_graph(root, limits)


def _nodes(text: str | bytes, limits: Limits, loader_class: Any) -> Iterator[tuple[Any, Node]]:
    """(loader, node) for each document of the stream, each node checked before it is handed out."""
    check_size(text, limits)
    anchored = has_anchor(text)  # once per stream, not per document
    loader = (loader_class or _loader())(text)
    try:
        count = 0
        while loader.check_node():
            node = loader.get_node()
            count += 1
            if count > limits.max_documents:
                raise LimitExceeded(f"more than {limits.max_documents} YAML documents", _line(node))
            _check(node, anchored, len(text), limits)
            yield loader, node
    except RecursionError:  # the pure-Python composer (where libyaml is absent) recurses once per level
        raise LimitExceeded("nests too deeply for the YAML parser") from None
    finally:
        loader.dispose()


def compose_all(text: str, limits: Limits = DEFAULT, loader_class: Any = None) -> Iterator[Node]:
    """The documents of a YAML stream as node trees, each checked; at most `limits.max_documents`.
    Raises LimitExceeded or yaml.YAMLError (libyaml's own nesting cap is a ScannerError with a line)."""
    for _, node in _nodes(text, limits, loader_class):
        yield node


def load_all(text: str | bytes, limits: Limits = DEFAULT, loader_class: Any = None) -> Iterator[Any]:
    """Plain Python data for each document, built only after its node graph passed the checks (aliased values
    become shared objects, so what passed the expansion check is what a walk of the data visits)."""
    for loader, node in _nodes(text, limits, loader_class):
        try:
            yield loader.construct_document(node)
        except RecursionError:
            raise LimitExceeded("nests too deeply for the YAML loader") from None


def compose(text: str, limits: Limits = DEFAULT, loader_class: Any = None) -> Node | None:
    """The single document of `text` as a node tree (None when empty), checked."""
    return _single(text, limits, loader_class, build=False)


def load(text: str | bytes, limits: Limits = DEFAULT, loader_class: Any = None) -> Any:
    """The single document of `text` as plain Python data (None when empty), checked before it is built."""
    return _single(text, limits, loader_class, build=True)


def _single(text: str | bytes, limits: Limits, loader_class: Any, build: bool) -> Any:
    check_size(text, limits)
    loader = (loader_class or _loader())(text)
    try:
        node = loader.get_single_node()  # a second document is a ComposerError, as in yaml.load
        if node is None:
            return None
        check_node(node, text, limits)
        return loader.construct_document(node) if build else node
    except RecursionError:
        raise LimitExceeded("nests too deeply for the YAML parser") from None
    finally:
        loader.dispose()


# JSON and TOML ---------------------------------------------------------------------------------------------


def _depth(value: Any, limits: Limits) -> None:
    """Refuse parsed JSON/TOML data nested deeper than the limit (TOML dotted keys nest without recursion in
    the parser, so its data can be deeper than any parser limit). Level by level over the containers only:
    json and tomllib make plain dicts and lists, and this costs a third of what json.loads does."""
    level, depth = [value], 1
    while level:
        if depth > limits.max_depth:
            raise LimitExceeded(f"nests deeper than {limits.max_depth} levels")
        below: list[Any] = []
        for node in level:
            children = node.values() if node.__class__ is dict else node
            below += [child for child in children if child.__class__ is dict or child.__class__ is list]
        level, depth = below, depth + 1


def json_loads(text: str | bytes, limits: Limits = DEFAULT) -> Any:
    """json.loads with a size cap and a depth cap; raises LimitExceeded or json.JSONDecodeError."""
    check_size(text, limits)
    try:
        value = json.loads(text)
    except RecursionError:  # the C decoder stops at Python's recursion limit
        raise LimitExceeded(f"nests deeper than {limits.max_depth} levels") from None
    if isinstance(value, (dict, list)) and _brackets(text) > limits.max_depth:
        _depth(value, limits)
    return value


def _brackets(text: str | bytes) -> int:
    """An upper bound of the nesting depth, cheap (C-speed counts): most files need no walk at all."""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def toml_loads(text: str, limits: Limits = DEFAULT) -> dict[str, Any]:
    """tomllib.loads with a size cap and a depth cap; raises LimitExceeded or tomllib.TOMLDecodeError."""
    import tomllib  # here: most gathers read no TOML (~2 ms of start-up)

    check_size(text, limits)
    try:
        value = tomllib.loads(text)
    except RecursionError:  # nested arrays and inline tables recurse in the parser
        raise LimitExceeded(f"nests deeper than {limits.max_depth} levels") from None
    if text.count(".") + _brackets(text) > limits.max_depth:
        _depth(value, limits)
    return value


def describe(exc: LimitExceeded) -> str:
    """The one-line diagnostic text for a refused file."""
    return f"not parsed: {exc.cause}"
