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
from typing import Any, get_args

import orjson
from pydantic import BaseModel, TypeAdapter

from repocontext import sections
from repocontext.lazyjson import LAZY, LazyMember, plain
from repocontext.model import RepoContext
from repocontext.parts import LazyContext, digest

SPLIT_CHARS = 256 * 1024
CHUNK = 256
COLUMNS_MIN = 512  # a list of flat records at least this long is stored by columns
SUMMARY_FIELDS = ("aliases",)  # answered from the manifest: alias lookups must not read every member

@cache
def _field_json(model: type[BaseModel], field: str) -> TypeAdapter[Any]:
    annotation = model.model_fields[field].annotation
    assert annotation is not None  # every field of a model declared with annotations has one
    return TypeAdapter(annotation)


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
    data = sections.dump_json(name, value)
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
    chunks = {}
    for field in long:
        values, adapter = getattr(member, field), _field_json(model, field)
        chunks[field] = (len(values), [adapter.dump_json(values[i: i + CHUNK]) for i in range(0, len(values), CHUNK)])
    summary = {f: getattr(member, f) for f in SUMMARY_FIELDS if f in model.model_fields}
    head = member.model_dump_json(exclude=set(long)).encode()
    return _member_part(out, head, chunks, list(model.model_fields), summary)


def encode_plain_member(out: Encoded, member: Mapping[str, Any]) -> dict[str, Any]:
    """A member given as plain JSON (already validated), stored exactly as `_encode_member` stores its model."""
    long = [f for f, v in member.items() if isinstance(v, list) and len(v) > CHUNK]
    chunks = {f: (len(member[f]), [orjson.dumps(member[f][i: i + CHUNK]) for i in range(0, len(member[f]), CHUNK)])
              for f in long}
    summary = {f: member[f] for f in SUMMARY_FIELDS if f in member}
    head = orjson.dumps({f: v for f, v in member.items() if f not in chunks})
    return _member_part(out, head, chunks, list(member), summary)


def _member_part(out: Encoded, head: bytes, chunks: Mapping[str, tuple[int, list[bytes]]], order: list[str],
                 summary: Mapping[str, Any]) -> dict[str, Any]:
    """The part bytes (head line, layout line, chunk lines) and the manifest entry of one member."""
    lines, lists = [head, b""], {}
    size = _chars(head)
    for position, (field, (count, parts)) in enumerate(chunks.items()):
        list_size = 2 + sum(_chars(c) - 2 for c in parts) + len(parts) - 1
        at = sum(len(line) + 1 for line in lines[2:])  # where its chunks start, after the layout line
        offsets = list(accumulate((len(c) + 1 for c in parts), initial=at))  # chunk i: offsets[i]..[i+1]-1
        lists[field] = {"count": count, "chunk": CHUNK, "chunks": len(parts), "bytes": list_size, "offsets": offsets}
        lines += parts
        size += _key_chars(field) + 1 + list_size + (1 if head != b"{}" or position else 0)
    lines[1] = orjson.dumps({"order": order, "lists": lists})
    spec: dict[str, Any] = {"part": out.add_part(b"\n".join(lines)), "bytes": size}
    if summary:
        spec["summary"] = dict(summary)
    return spec


def encode(context: RepoContext) -> Encoded:
    out = Encoded()
    for name in RepoContext.model_fields:
        encode_section(out, name, getattr(context, name))
    return out


def encode_carried(out: Encoded, name: str, value: Any, previous: LazyContext, changed: set[str]) -> None:
    """A section of a re-gather: kept as stored when it is the previous snapshot's own object, stored
    member by member when it mixes kept and updated members, else validated and stored like any other."""
    if value is not None and value is previous.loaded(name):  # carried over by reference, never parsed here
        out.sections[name] = previous.part_of(name)
        return
    if isinstance(value, Mapping) and any(isinstance(v, LazyMember) for v in value.values()):
        model = _member_model(name)
        members = {}
        for key, member in value.items():
            if isinstance(member, LazyMember):
                members[key] = member.spec
            else:
                member = {k: plain(v) if isinstance(v, LAZY) else v for k, v in member.items()}
                _validate_new(model, member, changed)
                members[key] = encode_plain_member(out, member)
        sizes = sum(_key_chars(key) + 1 + spec["bytes"] for key, spec in members.items())
        out.sections[name] = {"split": members, "bytes": 2 + sizes + max(len(members) - 1, 0)}
        return
    encode_section(out, name, sections.validate(name, plain(value)))


@cache
def _member_model(section: str) -> TypeAdapter[Any]:
    return TypeAdapter(get_args(RepoContext.model_fields[section].annotation)[1])  # dict[str, the member's model]


def _validate_new(adapter: TypeAdapter[Any], member: Mapping[str, Any], changed: set[str]) -> None:
    """Validate an updated member, but of its per-file records only those of changed files: the others
    come from the previous snapshot, validated when it was made (validating 25,000 sites again costs 50 ms)."""
    def fresh(value: Any) -> Any:
        if isinstance(value, list) and value and all(isinstance(x, Mapping) and "file" in x for x in value[:1]):
            return [x for x in value if not (isinstance(x, Mapping) and "file" in x) or x["file"] in changed]
        return value
    adapter.validate_python({key: fresh(value) for key, value in member.items()})
