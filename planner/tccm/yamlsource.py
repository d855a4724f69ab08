"""Strict YAML reading that remembers where every value came from.

PyYAML composes a node tree that carries line numbers; we convert it to plain
Python ourselves so that (a) duplicate keys are an error, (b) anchors and
aliases are refused outright (a TCCM never needs them, and refusing them makes
alias bombs cost nothing), (c) every value's path maps to its line, and (d)
nesting deeper than MAX_DEPTH is an error at the line where it goes too deep
(the conversion below recurses once per level: a file nested hundreds deep
would otherwise end the whole registry in RecursionError).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from repocontext import bounded

# the C composer is ~10x faster; fall back quietly where libyaml is absent
_Loader: type[yaml.CSafeLoader] | type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_BYTES = 512 * 1024  # a TCCM is a few KB; anything this big is a mistake or an attack
MAX_DEPTH = 32  # the deepest real TCCM (a flow's transitions) nests under 10
_LIMITS = bounded.Limits(max_bytes=MAX_BYTES, max_depth=MAX_DEPTH)

Path_ = tuple[str | int, ...]


class YamlProblem(Exception):
    def __init__(self, line: int | None, field: str | None, cause: str) -> None:
        super().__init__(cause)
        self.line, self.field, self.cause = line, field, cause


@dataclass
class Located:
    """A plain-Python document plus the line of every path inside it."""

    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, path: Path_) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        for cut in range(len(path), -1, -1):
            if path[:cut] in self.lines:
                return self.lines[path[:cut]]
        return None


def dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _convert(node: yaml.Node, path: Path_, out: Located, loader: Any) -> Any:
    out.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlProblem(line, dotted(path) or None, "mapping keys must be plain strings")
            key = key_node.value
            if key == "<<":
                raise YamlProblem(line, dotted(path) or None, "merge keys ('<<') are not allowed")
            if key in result:
                where = dotted((*path, key))
                first = out.lines[(*path, key)]
                raise YamlProblem(key_node.start_mark.line + 1, where, f"duplicate key (first defined on line {first})")
            out.lines[(*path, key)] = key_node.start_mark.line + 1
            result[key] = _convert(value_node, (*path, key), out, loader)
            out.lines[(*path, key)] = key_node.start_mark.line + 1
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), out, loader) for i, item in enumerate(node.value)]
    # The safe constructor gives scalars their YAML 1.1 meaning (`1`, `true`, `null`).
    return loader.construct_object(node, deep=True)


def _refuse_aliases(text: str) -> None:
    for event in yaml.parse(text, Loader=_Loader):
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent) or anchor:
            line = event.start_mark.line + 1 if event.start_mark is not None else None  # the parser's events have one
            raise YamlProblem(line, None, "YAML anchors and aliases are not allowed in a TCCM")


def load(text: str) -> Located:
    """Parse one YAML document strictly; raise YamlProblem with a line on any problem."""
    if len(text.encode("utf-8", errors="replace")) > MAX_BYTES:
        raise YamlProblem(None, None, f"file is larger than {MAX_BYTES // 1024} KiB")
    if not text.strip():
        raise YamlProblem(None, None, "file is empty")
    try:
        _refuse_aliases(text)
        documents = list(bounded.compose_all(text, _LIMITS, loader_class=_Loader))
    except bounded.LimitExceeded as exc:
        raise YamlProblem(exc.line, None, exc.cause) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        cause = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise YamlProblem(mark.line + 1 if mark else None, None, f"invalid YAML: {cause}") from None
    except yaml.YAMLError as exc:
        raise YamlProblem(None, None, f"invalid YAML: {exc}") from None
    documents = [d for d in documents if d is not None]
    if not documents:
        raise YamlProblem(None, None, "file is empty")
    if len(documents) > 1:
        raise YamlProblem(documents[1].start_mark.line + 1, None, "a TCCM file holds exactly one YAML document")
    root = documents[0]
    if not isinstance(root, yaml.MappingNode):
        raise YamlProblem(root.start_mark.line + 1, None, "the document must be a mapping of TCCM fields")
    located = Located(data=None)
    loader = _Loader("")
    try:
        located.data = _convert(root, (), located, loader)
    finally:
        loader.dispose()
    return located
