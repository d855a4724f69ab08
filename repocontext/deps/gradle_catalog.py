"""gradle/libs.versions.toml: a Gradle version catalog's libraries, with the line that holds each version.

A library is `alias = "group:artifact:version"`, or a table with `module = "group:artifact"` or
`group`/`name`, and `version = "1.2"`, `version.ref = "key"` or `version = { ref = "key" }` (`[versions]`
entries may be rich: `{ strictly = ..., require = ..., prefer = ... }`, of which the strictest is taken). A
record's line is where its version text is written: the `[versions]` entry for a reference (the one edit moves
every library that shares it), else the library's own line. A library without a version (a BOM manages it)
has no version here.

Only a catalog under a `gradle/` folder is Gradle's default one. Whether a library is dev is read from the
build files of the same build (`libs.<alias>` in a test configuration only); one no build file names is
counted as shipped. Build files name a library by its accessor: the alias with `-`, `_` and `.` as dots.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from repocontext.deps.common import Parsed, read_toml

ECOSYSTEM = "Maven"
_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_-]+)\s*\]")
_KEY = re.compile(r'^\s*(?:"([^"]+)"|([A-Za-z0-9_.-]+?))\s*(?:\.\s*[A-Za-z0-9_-]+\s*)?=')


@dataclass(frozen=True)
class Library:
    alias: str
    name: str  # group:artifact
    version: str | None  # the version written, rich versions reduced to the strictest exact one
    line: int  # where the version text is (the [versions] entry of a reference, else the library's line)
    ref: str | None  # the [versions] key it reads, if any


def accessor(alias: str) -> str:
    """`libs.<accessor>` as build files write it: `androidx-core_ktx` → `androidx.core.ktx`."""
    return re.sub(r"[-_.]", ".", alias)


def _lines(text: str) -> dict[tuple[str, str], int]:
    """(table, key) → line of each top-level key of each table (catalog entries are one line each)."""
    found: dict[tuple[str, str], int] = {}
    table = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(raw)
        if header:
            table = header.group(1)
            continue
        key = _KEY.match(raw)
        if key and table:
            found.setdefault((table, key.group(1) or key.group(2)), number)
    return found


def _rich(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("strictly", "require", "prefer"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


def libraries(text: str, path: str = "gradle/libs.versions.toml") -> list[Library] | Parsed:
    """The catalog's libraries, or a Parsed with the TOML error."""
    data = read_toml(path, text)
    if isinstance(data, Parsed):
        return data
    lines = _lines(text)
    versions, table = _table(data, "versions"), _table(data, "libraries")
    found: list[Library] = []
    for alias, spec in sorted(table.items()):
        own = lines.get(("libraries", alias), 0)
        library = _library(alias, spec, versions, lines, own)
        if library is not None:
            found.append(library)
    return found


def _table(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    found = data.get(name)
    return found if isinstance(found, dict) else {}


def _library(alias: str, spec: Any, versions: Mapping[str, Any], lines: Mapping[tuple[str, str], int],
             own: int) -> Library | None:
    if isinstance(spec, str):
        parts = spec.split(":")
        if len(parts) < 2:
            return None
        return Library(alias, f"{parts[0]}:{parts[1]}", parts[2] if len(parts) > 2 else None, own, None)
    if not isinstance(spec, dict):
        return None
    module = spec.get("module")
    name = module if isinstance(module, str) else (f"{spec.get('group')}:{spec.get('name')}"
                                                     if spec.get("group") and spec.get("name") else None)
    if name is None:
        return None
    version = spec.get("version")
    ref = version.get("ref") if isinstance(version, dict) else spec.get("version.ref")
    if isinstance(ref, str):
        return Library(alias, name, _rich(versions.get(ref)), lines.get(("versions", ref), own), ref)
    return Library(alias, name, _rich(version), own, None)


def is_default_catalog(path: str) -> bool:
    return posixpath.basename(posixpath.dirname(path)) == "gradle"


_DEV_CONFIG = re.compile(r"^(?:test|androidTest|testFixtures|kaptTest|kspTest|kaptAndroidTest|kspAndroidTest)|"
                         r"(?:Test|UnitTest|AndroidTest)(?:Implementation|Api|CompileOnly|RuntimeOnly|"
                         r"AnnotationProcessor)$|^(?:checkstyle|pmd|spotbugs|spotbugsPlugins|detektPlugins|"
                         r"ktlint|lintChecks|jacocoAgent|jacocoAnt|errorprone)$")


def dev_configuration(name: str) -> bool:
    """A configuration only tests or build checks use (testImplementation, androidTestImplementation,
    kaptTest, checkstyle, lintChecks...)."""
    return bool(_DEV_CONFIG.search(name))
