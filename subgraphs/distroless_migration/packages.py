"""Package names → Wolfi package names, and what each Wolfi package is for.

The names come from data (`wolfi_map.py`: `data/wolfi-map.yaml`, checked against the vendored
Wolfi index `data/wolfi-packages.tsv`), never from memory. `wolfi_names` is the strict answer
the rewriter uses: the user's override, else the table, else (Alpine only) the name itself when
Wolfi has a package of that name. An apt/rpm name that merely exists in Wolfi with the same
spelling is not accepted here, because the result carries no mark for the report to say so;
`wolfi_map.lookup` returns it as `how="same-name"` for callers that report it.

Roles decide whether a final stage can drop its package manager: packages provided by
every Chainguard image, build-only packages (toolchains and headers), and -dev packages
whose shared library a native extension links, copied into the runtime from the builder.
"""

from __future__ import annotations

import re

from subgraphs.distroless_migration.catalog import everywhere
from subgraphs.distroless_migration.wolfi_map import APT_MANAGERS as APT_MANAGERS
from subgraphs.distroless_migration.wolfi_map import RPM_MANAGERS as RPM_MANAGERS
from subgraphs.distroless_migration.wolfi_map import lookup

# What every image of the catalog data has (catalog.py: ca-certificates-bundle, wolfi-baselayout), and
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
