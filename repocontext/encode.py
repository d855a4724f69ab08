"""How a RepoContext becomes stored parts (see parts.py for the layout).

Small sections are one part each. A long list of flat records (the file
index) is stored as columns, which parse several times faster. A section that is a mapping of models and
whose JSON exceeds SPLIT_CHARS is split: one part per member, with each list
field longer than CHUNK items stored as JSON-array chunks. Sizes recorded in
the manifest are lengths of the compact JSON (in characters), so a reader can
size a slice it has not parsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from itertools import accumulate
from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter

from repocontext.model import RepoContext
from repocontext.parts import digest

SPLIT_CHARS = 256 * 1024
CHUNK = 256
COLUMNS_MIN = 512  # a list of flat records at least this long is stored by columns
SUMMARY_FIELDS = ("aliases",)  # answered from the manifest: alias lookups must not read every member

_SECTION_JSON = {name: TypeAdapter(field.annotation) for name, field in RepoContext.model_fields.items()}


@cache
def _field_json(model: type[BaseModel], field: str) -> TypeAdapter[Any]:
    return TypeAdapter(model.model_fields[field].annotation)


def _chars(data: bytes) -> int:
    return len(data) if data.isascii() else len(data.decode())


def _key_chars(key: str) -> int:
    return _chars(orjson.dumps(key))


class Encoded:
    """Manifest entries and part bytes (by digest) for the sections of one snapshot."""

    def __init__(self) -> None:
        self.sections: dict[str, Any] = {}
        self.parts: dict[str, bytes] = {}

    def add_part(self, data: bytes) -> str:
        sha = digest(data)
        self.parts[sha] = data
        return sha


def encode_section(out: Encoded, name: str, value: Any) -> None:
    data = _SECTION_JSON[name].dump_json(value)
    if isinstance(value, list) and len(value) >= COLUMNS_MIN and _flat_rows(value):
        columns = {field: [getattr(row, field) for row in value] for field in type(value[0]).model_fields}
        out.sections[name] = {"part": out.add_part(orjson.dumps(columns)), "columns": len(value),
                              "bytes": _chars(data)}
        return
    if len(data) <= SPLIT_CHARS or not _splittable(value):
        out.sections[name] = {"part": out.add_part(data)}
        return
    members = {key: _encode_member(out, member) for key, member in value.items()}
    sizes = sum(_key_chars(key) + 1 + spec["bytes"] for key, spec in members.items())
    out.sections[name] = {"split": members, "bytes": 2 + sizes + max(len(members) - 1, 0)}


def _flat_rows(value: Any) -> bool:
    """A list of one model whose fields are all plain scalars (str, int, float, bool, None)."""
    if not isinstance(value, list) or not value or not isinstance(value[0], BaseModel):
        return False
    model = type(value[0])
    return _scalar_fields(model) and all(type(row) is model for row in value)


@cache
def _scalar_fields(model: type[BaseModel]) -> bool:
    scalars = {str, int, float, bool, type(None)}
    return all(set(getattr(f.annotation, "__args__", (f.annotation,))) <= scalars for f in model.model_fields.values())


def _splittable(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and all(isinstance(v, BaseModel) for v in value.values())


def _encode_member(out: Encoded, member: BaseModel) -> dict[str, Any]:
    model = type(member)
    long = [f for f in model.model_fields if isinstance(getattr(member, f), list) and len(getattr(member, f)) > CHUNK]
    head = member.model_dump_json(exclude=set(long)).encode()
    lines, lists = [head, b""], {}
    size = _chars(head)
    for field in long:
        values = getattr(member, field)
        adapter = _field_json(model, field)
        chunks = [adapter.dump_json(values[i: i + CHUNK]) for i in range(0, len(values), CHUNK)]
        list_size = 2 + sum(_chars(c) - 2 for c in chunks) + len(chunks) - 1
        at = sum(len(line) + 1 for line in lines[2:])  # where its chunks start, after the layout line
        offsets = list(accumulate((len(c) + 1 for c in chunks), initial=at))  # chunk i: offsets[i]..[i+1]-1
        lists[field] = {"count": len(values), "chunk": CHUNK, "chunks": len(chunks), "bytes": list_size,
                        "offsets": offsets}
        lines += chunks
        size += _key_chars(field) + 1 + list_size + (1 if head != b"{}" or field != long[0] else 0)
    lines[1] = orjson.dumps({"order": list(model.model_fields), "lists": lists})
    spec: dict[str, Any] = {"part": out.add_part(b"\n".join(lines)), "bytes": size}
    summary = {f: getattr(member, f) for f in SUMMARY_FIELDS if f in model.model_fields}
    if summary:
        spec["summary"] = summary
    return spec


def encode(context: RepoContext) -> Encoded:
    out = Encoded()
    for name in RepoContext.model_fields:
        encode_section(out, name, getattr(context, name))
    return out
