"""Validating and dumping one RepoContext section, with its TypeAdapter built on first use.

A section that holds its empty default (no Dockerfile, no findings, no tests: most of a small repository's
snapshot) is validated and dumped without an adapter: building one builds the schemas of every model the
section can hold (a Dockerfile's are a dozen): several milliseconds of a small repository's gather.
The result and the bytes are those the adapter gives: an empty list or dict, or a model whose fields all
hold their None, [] or {} default (a model with custom serialization always goes through its adapter).
"""

from __future__ import annotations

from functools import cache
from typing import Any, get_args, get_origin

import orjson
from pydantic import BaseModel, TypeAdapter

from repocontext.model import Dependency, RepoContext, sparse_dump


@cache
def adapter(section: str) -> TypeAdapter[Any]:
    annotation = RepoContext.model_fields[section].annotation
    assert annotation is not None  # every field of a model declared with annotations has one
    return TypeAdapter(annotation)


def build_all() -> None:
    """Build every model's schema and every section's adapter now, as before defer_build: the daemon does
    before it forks, so the commands it runs pay for none of them."""
    for model in _models(RepoContext):
        model.model_rebuild()
    for section in RepoContext.model_fields:
        adapter(section)


def _models(model: type[BaseModel]) -> set[type[BaseModel]]:
    """`model` and every model its fields can hold."""
    found = {model}
    for field in model.model_fields.values():
        for inner in _types(field.annotation):
            if isinstance(inner, type) and issubclass(inner, BaseModel) and inner not in found:
                found |= _models(inner)
    return found


def _types(annotation: Any) -> list[Any]:
    return [annotation, *(t for arg in get_args(annotation) for t in _types(arg))]


def _empty(value: Any) -> bool:
    return value is None or (type(value) in (list, dict) and not value)


@cache
def _empty_model(section: str) -> tuple[type[BaseModel], dict[str, Any]] | None:
    """The section's model and its fields' defaults, when it is a model whose every field defaults to None,
    [] or {} and that serializes field by field; else None."""
    model = RepoContext.model_fields[section].annotation
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    if model.__pydantic_decorators__.model_serializers or model.model_computed_fields:
        return None
    fields = model.model_fields
    defaults = {name: field.get_default(call_default_factory=True) for name, field in fields.items()}
    plain = all(_empty(value) and fields[name].exclude_if is None for name, value in defaults.items())
    return (model, defaults) if plain else None


def validate(section: str, value: Any) -> Any:
    """`adapter(section).validate_python(value)`."""
    kind = type(value)
    if kind in (list, dict) and not value and get_origin(RepoContext.model_fields[section].annotation) is kind:
        return kind()
    empty = _empty_model(section)
    if empty is not None and isinstance(value, dict) and value == empty[1]:
        return empty[0].model_construct(**{name: None if v is None else type(v)() for name, v in value.items()})
    return adapter(section).validate_python(value)


def dump_json(section: str, value: Any) -> bytes:
    """`adapter(section).dump_json(value)`."""
    if type(value) in (list, dict) and not value:
        return b"[]" if type(value) is list else b"{}"
    empty = _empty_model(section)
    if empty is not None and type(value) is empty[0] and all(_empty(getattr(value, name)) for name in empty[1]):
        return orjson.dumps({name: getattr(value, name) for name in empty[1]})
    if section == "dependencies" and _all_records(value):
        # The adapter calls Dependency's None-dropping serializer once per record in Python (most of a
        # lockfile-heavy snapshot's save); sparse_dump is that serializer's output, and orjson writes the JSON
        # pydantic writes (compact, UTF-8, the same escapes): tests/test_sections_dump.py compares the bytes.
        try:
            return orjson.dumps({name: [sparse_dump(record) for record in records] for name, records in value.items()})
        except orjson.JSONEncodeError:  # a lone surrogate: the adapter says what is wrong
            pass
    return adapter(section).dump_json(value)


def _all_records(value: Any) -> bool:
    """A name → list of Dependency mapping whose records are exactly Dependency with plain str keys."""
    return type(value) is dict and all(
        type(name) is str and type(records) is list and all(type(record) is Dependency for record in records)
        for name, records in value.items())
