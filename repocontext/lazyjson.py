"""Read-only JSON values parsed on demand: a stored section's members and their long lists.

A bundle shows the first few thousand tokens of `call_sites.requests`; in a
large repository that group holds tens of thousands of sites. These views let
the reader parse only the chunks it actually shows, while behaving as plain
JSON to everyone else (Mapping / Sequence protocols, `plain()` for a copy,
`json_size()` for the length of the compact JSON without building it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeGuard, overload

import orjson

from repocontext.parallel import gc_paused


class StoreError(RuntimeError):
    """A stored snapshot that cannot be read or written; the message says what to do."""


_NOT_CONTAINERS = frozenset({str, int, float, bool, type(None)})


def is_list(value: Any) -> TypeGuard[Sequence[Any]]:
    """A JSON array: a list or any other Sequence (a stored view) but a string. Plain types are checked
    first: the renderer asks this of every member it shows."""
    kind = type(value)
    if kind is list:
        return True
    if kind in _NOT_CONTAINERS or kind is dict:
        return False
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """A JSON object: a dict or any other Mapping (a stored view)."""
    kind = type(value)
    return kind is dict or (kind not in _NOT_CONTAINERS and isinstance(value, Mapping))


def parse(data: bytes, where: str) -> Any:
    try:
        with gc_paused():  # many small objects: collections while parsing are wasted work
            return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise StoreError(f"RepoContext part {where} is unreadable ({exc}); re-run `planner gather`") from exc


class _StoredList(Sequence[Any]):
    """A read-only stored JSON array of known length and compact-JSON size; items are made by `_item`."""

    def __init__(self, count: int, size: int) -> None:
        self._count, self._size = count, size

    def _item(self, index: int) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def _items(self, start: int, stop: int) -> list[Any]:
        return [self._item(i) for i in range(start, stop)]

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._count)
            if step == 1:
                return self._items(start, max(start, stop))
            return [self._item(i) for i in range(start, stop, step)]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return self._item(index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # unhashable, as a list is

    def json_size(self) -> int:
        return self._size


class ChunkedList(_StoredList):
    """A JSON array stored as JSON-array chunks of `chunk` items each; a chunk is parsed on first use."""

    def __init__(self, fetch: Callable[[int], bytes], chunks: int, count: int, chunk: int, size: int,
                 where: str) -> None:
        super().__init__(count, size)
        self._fetch = fetch  # chunk index → its bytes (read from the part only when needed)
        self._chunks, self._chunk, self._where = chunks, chunk, where
        self._parsed: dict[int, list[Any]] = {}

    def _part(self, index: int) -> list[Any]:
        found = self._parsed.get(index)
        if found is None:
            found = self._parsed[index] = parse(self._fetch(index), self._where)
        return found

    def _item(self, index: int) -> Any:
        return self._part(index // self._chunk)[index % self._chunk]

    def _items(self, start: int, stop: int) -> list[Any]:
        """A slice chunk by chunk (a re-gather splices the 25,000 sites of one module this way)."""
        out: list[Any] = []
        while start < stop:
            chunk, offset = divmod(start, self._chunk)
            taken = self._part(chunk)[offset: offset + stop - start]
            out += taken
            start += len(taken)
        return out

    def __iter__(self) -> Iterator[Any]:
        for index in range(self._chunks):
            yield from self._part(index)


class LazyMember(Mapping[str, Any]):
    """One member of a split section (one call-site group): small fields up front, long lists chunked.

    `summary` holds fields known from the manifest (its `aliases`), answered without reading the part.
    """

    def __init__(self, load: Callable[[], tuple[dict[str, Any], dict[str, ChunkedList], list[str]]],
                 size: int, summary: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
        self.spec = spec  # its manifest entry, so a writer can keep the stored part as it is
        self._load = load
        self._size = size
        self._summary = summary
        self._fields: dict[str, Any] | None = None
        self._order: list[str] = []

    def _ensure(self) -> dict[str, Any]:
        if self._fields is None:
            head, lists, order = self._load()
            self._fields = {**head, **lists}
            self._order = [name for name in order if name in self._fields]
        return self._fields

    def __getitem__(self, key: str) -> Any:
        if self._fields is None and key in self._summary:
            return self._summary[key]
        return self._ensure()[key]

    def __iter__(self) -> Iterator[str]:
        self._ensure()
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._ensure())

    def json_size(self) -> int:
        return self._size


class LazySection(Mapping[str, Any]):
    """A split section: member name → LazyMember, in stored order."""

    def __init__(self, members: dict[str, LazyMember], size: int) -> None:
        self._members = members
        self._size = size

    def __getitem__(self, key: str) -> Any:
        return self._members[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def json_size(self) -> int:
        return self._size


class Columns(_StoredList):
    """A list of flat records stored column by column (the file index: 10,000 rows parse 4x faster so).

    Rows are built on access; `column(name)` hands out a whole column without building any row."""

    def __init__(self, columns: dict[str, list[Any]], count: int, size: int) -> None:
        super().__init__(count, size)
        self._columns = columns

    def column(self, name: str) -> list[Any]:
        return self._columns[name]

    def _item(self, index: int) -> dict[str, Any]:
        return {name: values[index] for name, values in self._columns.items()}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        names = list(self._columns)
        return (dict(zip(names, row, strict=True)) for row in zip(*self._columns.values(), strict=True))


LAZY = (ChunkedList, LazyMember, LazySection, Columns)


def plain(value: Any) -> Any:
    """A plain dict/list copy of a value that may hold lazy parts at any depth (plain values as they are)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    with gc_paused():
        return orjson.loads(orjson.dumps(value, default=orjson_default))


def orjson_default(value: Any) -> Any:
    """For orjson's `default=`: lazy views serialise as the JSON they stand for."""
    if isinstance(value, ChunkedList | Columns):
        return list(value)
    if isinstance(value, LazyMember | LazySection):
        return dict(value.items())
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
