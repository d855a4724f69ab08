"""YAML lockfiles (pnpm-lock.yaml, Yarn Berry's yarn.lock) as plain data plus the line of each key.

The document is composed, not loaded: every scalar stays the string it is
written as (`version: 1.10` is "1.10", not the float 1.1, and `5.4` stays a
lockfileVersion string), and each mapping key's start mark gives its line,
which `yaml.safe_load` throws away. libyaml's composer is used when present:
these files reach megabytes in large monorepos. It is composed through
`repocontext.bounded`, which refuses alias bombs and deep nesting first.
"""

from __future__ import annotations

from typing import Any

import yaml

from repocontext import bounded
from repocontext.deps.common import Issue

KeyPath = tuple[str, ...]


def _plain(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], depth: int) -> Any:
    """The node as str / list / dict; keys up to `depth` levels deep get their 1-based line recorded."""
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue  # complex keys do not occur in lockfiles
            key = str(key_node.value)
            if len(path) < depth:
                lines.setdefault((*path, key), key_node.start_mark.line + 1)
            out[key] = _plain(value_node, (*path, key), lines, depth)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_plain(item, path, lines, depth) for item in node.value]
    return str(node.value) if node.value is not None else ""


def load_yaml(path: str, text: str, depth: int = 2) -> tuple[dict[str, Any], dict[KeyPath, int]] | Issue:
    """The top-level mapping and its key lines (up to `depth` keys deep), or the syntax error as an Issue."""
    try:
        root = bounded.compose(text)  # an alias bomb would otherwise explode in _plain
    except bounded.LimitExceeded as exc:
        return Issue(bounded.describe(exc), path, exc.line, "error")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return Issue(f"invalid YAML: {problem}", path, mark.line + 1 if mark else None, "error")
    if root is None:
        return {}, {}
    lines: dict[KeyPath, int] = {}
    data = _plain(root, (), lines, depth)  # bounded: no alias cycle, limited depth and expansion
    if not isinstance(data, dict):
        return Issue("top level is not a mapping", path, 1, "error")
    return data, lines
