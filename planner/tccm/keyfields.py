"""A TCCM key's field names checked against the RepoContext model, so a typo (`[symbl=…]`, `tests.by_modul`)
is a validation error at file:line instead of an entry that silently loads nothing."""

from __future__ import annotations

import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from repocontext.model import RepoContext


def _plain(annotation: Any) -> Any:
    """`X | None` → X (the model's optional fields)."""
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else Any
    return annotation


def _element(annotation: Any) -> Any:
    """What a list or a mapping holds; Any when it is neither."""
    origin = get_origin(annotation)
    if origin in (list, tuple):
        return _plain(get_args(annotation)[0])
    if origin is dict:
        return _plain(get_args(annotation)[1])
    return Any


def _fields(model: type[BaseModel]) -> list[str]:
    return sorted(model.model_fields)


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def check(segments: list[str]) -> str | None:
    """The problem with a key's field names (segments as split_key gives them), or None. Segments the model
    cannot vouch for (a mapping's keys, ${inputs.…}, values typed Any) are accepted."""
    current: Any = RepoContext
    shown: list[str] = []
    for segment in segments:
        if segment.startswith("["):
            name = segment[1:-1].partition("=")[0]
            held = _element(current)
            if _is_model(held) and name not in held.model_fields:
                return (f"unknown field {name!r} in filter {segment} of {'.'.join(shown)} "
                        f"(its records have: {', '.join(_fields(held))})")
            shown[-1:] = [f"{shown[-1]}{segment}"] if shown else [segment]
            continue
        shown.append(segment)
        if _is_model(current):
            if segment not in current.model_fields:
                return f"unknown field {segment!r} in {'.'.join(shown)} (known: {', '.join(_fields(current))})"
            current = _plain(current.model_fields[segment].annotation)
        elif get_origin(current) is dict:
            current = _element(current)  # any key of the mapping (a package name, ${inputs.package})
        else:
            return None  # a list index, or a value the model types loosely: nothing more to check
    return None
