"""Resolving a TCCM `key:` selector against a RepoContext (as plain JSON).

A key is dotted segments. A name segment picks a child of a mapping: exactly,
then by normalised name (PEP 503 style: case and -_. runs ignored), then by a
child whose `aliases` list names it (so any CVE/GHSA alias finds an advisory,
and a distribution name finds the module it provides). A `[field=value]`
segment keeps the children whose field equals value (or contains it, for a
list field). `${inputs.NAME}` is replaced by the run's input; when the run has
no such input, that segment stops narrowing (it matches every child), which is
recorded as a note so the widening is visible in provenance.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.tccm.entry import input_refs, split_key
from repocontext.lazyjson import is_list

_NORMALISE = re.compile(r"[-_.]+")
_WILDCARD = object()


def normalise(name: str) -> str:
    return _NORMALISE.sub("-", name).lower()


@dataclass
class Resolved:
    key: str  # the key with inputs substituted ("*" where widened)
    value: Any
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.value not in (None, {}, [], "")


def _substitute(segment: str, inputs: Mapping[str, str], notes: list[str]) -> str | object:
    refs = input_refs(segment)
    if not refs:
        return segment
    missing = [r for r in refs if not inputs.get(r)]
    if missing:
        for name in missing:
            note = f"inputs.{name} not given: not narrowed"
            if note not in notes:
                notes.append(note)
        return _WILDCARD
    for name in refs:
        segment = segment.replace(f"${{inputs.{name}}}", inputs[name])
    return segment


def _matches(value: Any, wanted: str) -> bool:
    if is_list(value):
        return any(_matches(v, wanted) for v in value)
    return value is not None and (str(value) == wanted or normalise(str(value)) == normalise(wanted))


def _pick(node: Any, name: str) -> Any:
    if isinstance(node, Mapping):
        if name in node:
            return node[name]
        wanted = normalise(name)
        for key in sorted(node):
            if normalise(key) == wanted:
                return node[key]
        hits = {k: v for k, v in sorted(node.items()) if isinstance(v, Mapping) and _matches(v.get("aliases"), name)}
        return hits or None
    return None


def _filter(node: Any, field_name: str, wanted: str) -> Any:
    if isinstance(node, Mapping):
        return {k: v for k, v in node.items() if isinstance(v, Mapping) and _matches(v.get(field_name), wanted)}
    if is_list(node):
        return [v for v in node if isinstance(v, Mapping) and _matches(v.get(field_name), wanted)]
    return None


def _walk(node: Any, segments: list[Any]) -> Any:
    if not segments or node is None:
        return node
    head, rest = segments[0], segments[1:]
    if head is _WILDCARD:
        if isinstance(node, Mapping):
            children = {k: _walk(v, rest) for k, v in node.items()}
            return {k: v for k, v in children.items() if v not in (None, {}, [])}
        if is_list(node):
            return [c for c in (_walk(v, rest) for v in node) if c not in (None, {}, [])]
        return None
    if isinstance(head, tuple):
        field_name, wanted = head
        return _walk(_filter(node, field_name, wanted), rest)
    return _walk(_pick(node, head), rest)


def resolve(context: Mapping[str, Any], key: str, inputs: Mapping[str, str]) -> Resolved:
    notes: list[str] = []
    parsed: list[Any] = []
    shown: list[str] = []
    for raw in split_key(key):
        if raw.startswith("["):
            field_name, _, value = raw[1:-1].partition("=")
            value_sub = _substitute(value, inputs, notes)
            if value_sub is _WILDCARD:
                shown.append(f"[{field_name}=*]")
                continue  # an unscoped filter keeps everything
            parsed.append((field_name, value_sub))
            shown.append(f"[{field_name}={value_sub}]")
        else:
            sub = _substitute(raw, inputs, notes)
            parsed.append(sub)
            shown.append("*" if sub is _WILDCARD else str(sub))
    display = ".".join(shown).replace(".[", "[")
    return Resolved(key=display, value=_walk(context, parsed), notes=notes)
