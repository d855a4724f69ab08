"""Debian/Ubuntu, Fedora/RHEL and Alpine package names → Wolfi names, from `data/wolfi-map.yaml`.

`lookup` answers in this order, and says which answered (`Mapping.how`):

1. "override": the user's mapping (`options.mapping.packages`), as given.
2. "table": the data table for the manager's family (apt, rpm, apk). Every Wolfi name in it is
   checked against the vendored Wolfi index (tests, and `wolfi_data check`).
3. A name the table lists as unmapped (Wolfi does not build it) gets no answer: the caller
   reports it, with `why_unmapped` as the reason.
4. "same-name": the name as written is a Wolfi package (or something one provides). For apk that
   is the normal case (Alpine and Wolfi share most names). For apt/rpm it is usually right
   (curl, git) but a coincidence is possible (Debian's `yq` is not Wolfi's), so it is marked for
   the report to say "same name in Wolfi".

The table is read once per process, on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import yaml

from subgraphs.distroless_migration.wolfi_index import DATA, WolfiIndex, vendored

MAP_PATH = DATA / "wolfi-map.yaml"
APT_MANAGERS = frozenset({"apt-get", "apt"})
RPM_MANAGERS = frozenset({"yum", "dnf", "microdnf", "tdnf"})
FAMILIES = ("apt", "rpm", "apk")
How = Literal["override", "table", "same-name"]


@dataclass(frozen=True)
class Mapping:
    names: list[str]  # Wolfi names to install; empty: not needed on Wolfi
    how: How


@dataclass(frozen=True)
class Table:
    maps: dict[str, dict[str, list[str]]]  # family → source name → Wolfi names
    groups: dict[str, list[str]]  # rpm group (lower case) → Wolfi names
    unmapped: dict[str, dict[str, str]]  # family → source name → why Wolfi has none


def family(manager: str) -> str | None:
    """'apt' | 'rpm' | 'apk' for a package manager command, else None."""
    if manager in APT_MANAGERS:
        return "apt"
    if manager in RPM_MANAGERS:
        return "rpm"
    return "apk" if manager == "apk" else None


def _names(section: str, source: Any, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{MAP_PATH.name}: {section}.{source}: expected a list of Wolfi names, got {value!r}")
    return list(value)


def _section(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"{MAP_PATH.name}: `{key}` must be a mapping")
    return value


def parse(raw: Any) -> Table:
    """The table from the loaded YAML document (checked for shape, not against the index)."""
    if not isinstance(raw, dict):
        raise ValueError(f"{MAP_PATH.name}: expected a mapping at the top")
    maps = {f: {str(k): _names(f, k, v) for k, v in _section(raw, f).items()} for f in FAMILIES}
    groups = {str(k).lower(): _names("rpm-groups", k, v) for k, v in _section(raw, "rpm-groups").items()}
    unmapped_raw = _section(raw, "unmapped")
    unmapped = {f: {str(k): str(v) for k, v in (unmapped_raw.get(f) or {}).items()} for f in FAMILIES}
    return Table(maps, groups, unmapped)


@cache
def table() -> Table:
    """The shipped table (read once per process)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when built with libyaml
    with MAP_PATH.open(encoding="utf-8") as handle:
        return parse(yaml.load(handle, Loader=loader))


def _from_table(name: str, fam: str, data: Table) -> list[str] | None:
    found = data.maps[fam].get(name)
    if found is None and fam == "rpm":
        found = data.groups.get(name.lower())
    return found


def lookup(name: str, manager: str, overrides: dict[str, list[str]]) -> Mapping | None:
    """Wolfi names for `name` as installed by `manager`, and where they came from; None: no mapping."""
    if name in overrides:
        return Mapping(list(overrides[name]), "override")
    fam = family(manager)
    if fam is None:
        return None
    data = table()
    found = _from_table(name, fam, data)
    if found is not None:
        return Mapping(list(found), "table")
    if name in data.unmapped[fam] or not vendored().has(name):
        return None
    return Mapping([name], "same-name")


def why_unmapped(name: str, manager: str) -> str | None:
    """The table's reason Wolfi has no package for `name`, when it lists one."""
    fam = family(manager)
    return table().unmapped[fam].get(name) if fam else None


def source_names(data: Table | None = None) -> dict[str, int]:
    """How many source names the table maps (or knows to be unmapped), per family."""
    data = data or table()
    counts = {f: len(data.maps[f]) + len(data.unmapped[f]) for f in FAMILIES}
    counts["rpm"] += len(data.groups)
    return counts


def problems(index: WolfiIndex, data: Table | None = None) -> list[str]:
    """Every way the table disagrees with `index` (empty when it is consistent)."""
    data = data or table()
    found: list[str] = []
    entries = [(f, src, names) for f in FAMILIES for src, names in data.maps[f].items()]
    entries += [("rpm-groups", src, names) for src, names in data.groups.items()]
    for section, src, names in entries:
        found += [f"{section}: {src} → {n}: not in the Wolfi index" for n in names if not index.has(n)]
    for fam in FAMILIES:
        both = sorted(data.unmapped[fam].keys() & data.maps[fam].keys())
        found += [f"{fam}: {src} is both mapped and unmapped" for src in both]
    # An Alpine name Wolfi has needs no entry; listing it as unmapped would hide a real package.
    found += [f"apk: {src} is listed as unmapped but the Wolfi index has it"
              for src in sorted(data.unmapped["apk"]) if index.has(src)]
    return found
