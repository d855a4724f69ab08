"""Wolfi packages: which names exist, what a Debian/RPM/Alpine name is called on Wolfi, what each is for.

The Wolfi index (`data/wolfi-packages.tsv`: name and provides of every package Wolfi builds) is the only
source of Wolfi names: the name table is checked against it and an Alpine name is accepted only if it is
in it. The name table (`data/wolfi-map.yaml`) maps Debian/Ubuntu, Fedora/RHEL and Alpine names. Both are
read once per process, on first use.

`lookup` answers in this order, and says which answered (`Mapping.how`):

1. "override": the user's mapping (`options.mapping.packages`), as given.
2. "table": the data table for the manager's family (apt, rpm, apk). Every Wolfi name in it is
   checked against the vendored Wolfi index (tests, and `python -m … wolfi check`).
3. A name the table lists as unmapped (Wolfi does not build it) gets no answer: the caller
   reports it, with `why_unmapped` as the reason.
4. "same-name": the name as written is a Wolfi package (or something one provides). For apk that
   is the normal case (Alpine and Wolfi share most names). For apt/rpm it is usually right
   (curl, git) but a coincidence is possible (Debian's `yq` is not Wolfi's), so it is marked for
   the report to say "same name in Wolfi".

`wolfi_names` is the strict answer the rewriter uses: the user's override, else the table, else (Alpine
only) the name itself when Wolfi has a package of that name. An apt/rpm name that merely exists in Wolfi
with the same spelling is not accepted there, because the result carries no mark for the report to say
so; `lookup` returns it as `how="same-name"` for callers that report it.

Roles decide whether a final stage can drop its package manager: packages provided by
every Chainguard image, build-only packages (toolchains and headers), and -dev packages
whose shared library a native extension links, copied into the runtime from the builder.

Maintaining the data (`main`):

    python -m subgraphs.distroless_migration.wolfi refresh PATH   # rewrite data/wolfi-packages.tsv
    python -m subgraphs.distroless_migration.wolfi check [PATH]   # table vs index (and index vs PATH)

PATH is a full export of the wolfi-dev/os recipes (columns name, origin, version, provides,
description), such as /work/shared/wolfi/packages.tsv. `check` prints one line per problem and
exits 1 when there is any: a mapped Wolfi name the index lacks, a name both mapped and unmapped,
an Alpine name listed as unmapped that Wolfi has, and (with PATH) any difference between the
vendored index and the export. Importing the package loads no migration code (its __init__ imports
`migrate` on first use), so running this module does not load it twice.
"""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

from subgraphs.distroless_migration.images import DATA, everywhere

INDEX_PATH = DATA / "wolfi-packages.tsv"
SOURCE = "wolfi-dev/os at 8190a16 (2026-08-22), package recipes under Apache-2.0"
HEADER = ("# Wolfi package names and what each also provides (apk virtuals), one package a line.\n"
          "# Source: {source}; extracted columns only (name, provides).\n"
          "# Regenerate: python -m subgraphs.distroless_migration.wolfi refresh PATH\n")


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


def parse_index(lines: Iterable[str]) -> WolfiIndex:
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
        return parse_index(handle)


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


def parse_table(raw: Any) -> Table:
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
        return parse_table(yaml.load(handle, Loader=loader))


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


# What every image of the catalog data has (images.py: ca-certificates-bundle, wolfi-baselayout), and
# ca-certificates, installed for that bundle. Not tzdata: most Chainguard images lack it (static has it).
PROVIDED_EVERYWHERE = everywhere() | {"ca-certificates"}
BUILD_ONLY = frozenset({
    "build-base", "gcc", "make", "cmake", "autoconf", "automake", "libtool", "pkgconf", "git", "curl", "wget",
    "gnupg", "unzip", "zip", "xz", "bzip2", "patch", "glibc-dev", "linux-headers", "python-3-dev", "py3-pip",
    "py3-setuptools", "py3-wheel", "py3-virtualenv", "openssl-dev", "zlib-dev", "libffi-dev", "npm", "go",
    "shadow", "bash", "busybox", "gnutar", "gzip", "findutils",
})
# Build tools an application may also run (a web app shelling out to git, a HEALTHCHECK with curl): in a
# final stage one counts as build-only only when a RUN there runs its program, else it is taken to be
# installed for the runtime, which a shell-free image cannot carry (the final stage then keeps -dev).
TOOLS: dict[str, frozenset[str]] = {
    "git": frozenset({"git"}), "curl": frozenset({"curl"}), "wget": frozenset({"wget"}),
    "gnupg": frozenset({"gpg", "gpg2", "gpgv"}), "unzip": frozenset({"unzip"}), "zip": frozenset({"zip"}),
    "xz": frozenset({"xz", "unxz"}), "bzip2": frozenset({"bzip2", "bunzip2"}), "patch": frozenset({"patch"}),
    "gnutar": frozenset({"tar"}), "gzip": frozenset({"gzip", "gunzip"}), "findutils": frozenset({"find", "xargs"}),
}
DATA_PACKAGES: dict[str, str] = {"tzdata": "/usr/share/zoneinfo"}  # data-only packages: their tree is copied
RUNTIME_LIBS: dict[str, list[str]] = {  # -dev package → the shared libraries a build may link against
    "postgresql-dev": ["/usr/lib/libpq.so.*"], "libpq": ["/usr/lib/libpq.so.*"],
    "libxml2-dev": ["/usr/lib/libxml2.so.*"], "libxslt-dev": ["/usr/lib/libxslt.so.*", "/usr/lib/libexslt.so.*"],
    "libjpeg-turbo-dev": ["/usr/lib/libjpeg.so.*"], "mariadb-connector-c-dev": ["/usr/lib/libmariadb.so.*"],
    "yaml-dev": ["/usr/lib/libyaml-0.so.*"],
}

# Packages that install a language runtime: a distro stage installing one moves to that language's image.
_RUNTIMES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"python3(?:\.(\d+))?(?:-(?:dev|devel|pip|venv|minimal|setuptools|wheel|distutils))?\Z"), "python"),
    (re.compile(r"python-3(?:\.(\d+))?\Z"), "python"),
    (re.compile(r"(?:nodejs|npm)\Z"), "node"),
    (re.compile(r"openjdk-(\d+)-(?:jdk|jre)(?:-headless)?\Z"), "jdk"),
    (re.compile(r"java-(\d+)-openjdk(?:-headless|-devel)?\Z"), "jdk"),
    (re.compile(r"(?:golang|golang-go)\Z"), "go"),
]


def wolfi_names(name: str, manager: str, overrides: dict[str, list[str]]) -> list[str] | None:
    """Wolfi names for a package of `manager`; None when no mapping is known (never guessed)."""
    found = lookup(name, manager, overrides)
    if found is None or (found.how == "same-name" and manager != "apk"):
        return None
    return found.names


def runtime_of(name: str) -> tuple[str, str | None] | None:
    """(Chainguard image, version or None) when `name` installs a language runtime, else None."""
    for pattern, image in _RUNTIMES:
        m = pattern.match(name)
        if m:
            version = m.group(1) if m.groups() else None
            if image == "python" and version:
                version = f"3.{version}"
            return image, version
    return None


def role(wolfi: str, build_only: list[str], run_by_build: frozenset[str] = frozenset()) -> str:
    """'provided' | 'build' | 'library' | 'data' | 'runtime' for a Wolfi package installed in a final stage;
    `run_by_build`: the programs that stage's RUN instructions run (see TOOLS)."""
    if wolfi in PROVIDED_EVERYWHERE:
        return "provided"
    if wolfi in DATA_PACKAGES:
        return "data"
    if wolfi in build_only:
        return "build"
    if wolfi in TOOLS:
        return "build" if TOOLS[wolfi] & run_by_build else "runtime"
    if wolfi in BUILD_ONLY:
        return "build"
    if wolfi in RUNTIME_LIBS:
        return "library"
    return "runtime"


USAGE = "usage: python -m subgraphs.distroless_migration.wolfi (refresh PATH | check [PATH])"


def _valid(argv: list[str]) -> bool:
    if not argv or argv[0] not in ("refresh", "check"):
        return False
    return len(argv) == 2 if argv[0] == "refresh" else len(argv) <= 2


def main(argv: list[str]) -> int:
    if not _valid(argv):
        print(USAGE, file=sys.stderr)
        return 2
    if argv[0] == "refresh":
        index = refresh(Path(argv[1]))
        print(f"{INDEX_PATH}: {len(index.packages)} packages")
    found = diff(vendored(), read(Path(argv[1]))) if len(argv) == 2 else []
    found += problems(vendored())
    for line in found:
        print(line)
    print(f"{len(found)} problem(s)" if found else "mapping and index agree")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
