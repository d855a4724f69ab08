"""`files_of: KEY` entries: the repository files that a RepoContext slice's records name.

A record names a file through its `file`, `path` or `script` field, or a
`files` list of "path:line" strings (a finding's declarations). Files come in
record order (a mapping's children by sorted key), each once, with the lines
that named it, so provenance can say "via dependencies.django →
requirements/common.txt:12". An absolute path names a file in an image
(/usr/local/bin/run.sh), not in the repository, and is not a candidate; a
relative path that is not a file of the repository is reported, not read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from repocontext.lazyjson import is_list

_FIELDS = ("file", "path", "script")


@dataclass
class Named:
    path: str
    lines: list[int] = field(default_factory=list)

    def via(self, key: str) -> str:
        shown = ",".join(str(n) for n in self.lines)
        return f"via {key} → {self.path}" + (f":{shown}" if shown else "")


def _is_record(value: Mapping[str, Any]) -> bool:
    return any(isinstance(value.get(f), str) for f in _FIELDS) or is_list(value.get("files"))


def records(value: Any) -> Iterator[Mapping[str, Any]]:
    """The records in a resolved slice: a record itself, a list of them, or mappings of those."""
    if isinstance(value, Mapping):
        if _is_record(value):
            yield value
            return
        for key in sorted(value):
            yield from records(value[key])
    elif is_list(value):
        for child in value:
            yield from records(child)


def _split(text: str) -> tuple[str, int | None]:
    path, _, line = text.rpartition(":")
    return (path, int(line)) if path and line.isdigit() else (text, None)


def _mentions(record: Mapping[str, Any]) -> Iterator[tuple[str, int | None]]:
    line = record.get("line")
    line = line if isinstance(line, int) and not isinstance(line, bool) else None
    for name in _FIELDS:
        value = record.get(name)
        if isinstance(value, str) and value:
            yield value, line if name == "file" else None
    files = record.get("files")
    if is_list(files):
        for text in files:
            if isinstance(text, str) and text:
                yield _split(text)


def named_files(value: Any) -> list[Named]:
    """Every path the slice's records name, in record order, each once with the lines naming it."""
    found: dict[str, Named] = {}
    for record in records(value):
        for path, line in _mentions(record):
            if path.startswith("/"):
                continue
            named = found.setdefault(path.removeprefix("./"), Named(path.removeprefix("./")))
            if line is not None and line not in named.lines:
                named.lines.append(line)
    for named in found.values():
        named.lines.sort()
    return list(found.values())
