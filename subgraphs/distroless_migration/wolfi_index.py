"""The Wolfi package index: which names `apk add` can install on a Chainguard `-dev` image.

The vendored copy (`data/wolfi-packages.tsv`: name and provides of every package Wolfi
builds) is the only source of Wolfi names: the mapping table is checked against it and an
Alpine name is accepted only if it is in it. It is read once per process, on first use.

Refreshing it and checking the mapping against it: `python -m subgraphs.distroless_migration.wolfi_data`.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

DATA = Path(__file__).parent / "data"
INDEX_PATH = DATA / "wolfi-packages.tsv"
SOURCE = "wolfi-dev/os at 8190a16 (2026-08-22), package recipes under Apache-2.0"
HEADER = ("# Wolfi package names and what each also provides (apk virtuals), one package a line.\n"
          "# Source: {source}; extracted columns only (name, provides).\n"
          "# Regenerate: python -m subgraphs.distroless_migration.wolfi_data refresh PATH\n")


@dataclass(frozen=True)
class WolfiIndex:
    packages: dict[str, tuple[str, ...]]  # package name → the other names it provides (apk virtuals)
    installable: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = set(self.packages).union(*self.packages.values())
        object.__setattr__(self, "installable", frozenset(names))

    def has(self, name: str) -> bool:
        """`apk add name` resolves: a package, or something a package provides (`python3`)."""
        return name in self.installable


def _real(provides: str) -> tuple[str, ...]:
    # Recipes can provide templated names (`gcc-${{vars.major-version}}`) that the snapshot did not
    # expand: they are not installable as written, so they never count.
    return tuple(sorted({p.strip() for p in provides.split(",") if p.strip() and "${{" not in p}))


def parse(lines: Iterable[str]) -> WolfiIndex:
    """An index from TSV lines with a header row naming at least `name` and `provides`."""
    rows = csv.DictReader((line for line in lines if not line.startswith("#")), delimiter="\t",
                          quoting=csv.QUOTE_NONE)
    if rows.fieldnames is None or not {"name", "provides"} <= set(rows.fieldnames):
        raise ValueError("a Wolfi index needs a header row with `name` and `provides` columns")
    packages: dict[str, tuple[str, ...]] = {}
    for row in rows:
        name = (row["name"] or "").strip()
        if name:
            packages[name] = tuple(sorted(set(packages.get(name, ())) | set(_real(row["provides"] or ""))))
    return WolfiIndex(packages)


def read(path: Path) -> WolfiIndex:
    with path.open(encoding="utf-8", newline="") as handle:
        return parse(handle)


@cache
def vendored() -> WolfiIndex:
    """The index shipped with the package (read once per process)."""
    return read(INDEX_PATH)


def render(index: WolfiIndex, source: str = SOURCE) -> str:
    lines = [HEADER.format(source=source), "name\tprovides\n"]
    # No trailing tab where nothing is provided: the file stays free of trailing whitespace.
    lines += ["\t".join([name, ",".join(provides)] if provides else [name]) + "\n"
              for name, provides in sorted(index.packages.items())]
    return "".join(lines)


def refresh(path: Path, target: Path = INDEX_PATH) -> WolfiIndex:
    """Rewrite the vendored index from a full export (`packages.tsv`)."""
    index = read(path)
    target.write_text(render(index), encoding="utf-8")
    vendored.cache_clear()
    return index


def diff(ours: WolfiIndex, theirs: WolfiIndex) -> list[str]:
    """What differs between two indexes, one line each (empty when they agree)."""
    gone = sorted(ours.packages.keys() - theirs.packages.keys())
    new = sorted(theirs.packages.keys() - ours.packages.keys())
    moved = sorted(n for n in ours.packages.keys() & theirs.packages.keys() if ours.packages[n] != theirs.packages[n])
    return ([f"only in the vendored index: {n}" for n in gone] + [f"missing from the vendored index: {n}" for n in new]
            + [f"provides differ for {n}: {ours.packages[n]} vs {theirs.packages[n]}" for n in moved])
