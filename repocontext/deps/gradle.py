"""build.gradle / build.gradle.kts: dependencies declared in a Gradle build script, read line by line.

Read, never run: a build script is a program, so only the shapes nearly every script uses are read:
- string coordinates: `implementation 'g:a:v'`, `implementation("g:a:v")`, `testImplementation "g:a:$v"`,
  `api(platform("g:a:v"))`, `classpath "g:a:v"` (a `@aar` or `:classifier` suffix is dropped);
- map notation: `implementation group: 'g', name: 'a', version: 'v'` (and Kotlin's `group = "g", ...`);
- version variables in the same file (`ext.v = "1.2"`, `ext { v = '1.2' }`, `def v = ...`, `val v = ...`),
  recorded at the variable's line (the one edit), and at the dependency's line too with `$v` as written and
  no version (one finding, at the line to edit);
- version-catalog accessors: `implementation(libs.okhttp)`, `libs.bundles.x`, resolved through
  `gradle/libs.versions.toml` of the nearest folder above that has one; the catalog's own records carry the
  version and the line to edit, these (without a version) say where the library is used.
A dependency in a `constraints { }` block is kind "constraint" (it pins a version wherever the package comes
in, never direct). Test configurations (testImplementation, androidTestImplementation, kaptTest...) and build
checks (checkstyle) are dev. Plugins (`id 'x' version 'y'`) are not Maven coordinates and are not recorded.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

from repocontext.deps.common import Issue, Parsed
from repocontext.deps.gradle_catalog import Library, accessor, dev_configuration, libraries
from repocontext.model import Dependency

Texts = Mapping[str, str | None]
ECOSYSTEM = "Maven"
BUILD_FILES = ("build.gradle", "build.gradle.kts")
_CONFIG = r"(?P<config>[A-Za-z_][A-Za-z0-9_]*)"
_WRAP = r"(?:\s*\(\s*|\s+)(?:(?:enforcedPlatform|platform|testFixtures)\s*\(\s*)?"
_COORD = re.compile(_CONFIG + _WRAP + r"""(?P<q>["'])(?P<group>[\w.\-]+):(?P<artifact>[\w.\-]+)"""
                    r"""(?::(?P<version>[^"':@\s]+))?(?::[^"'@\s]+)?(?:@\w+)?(?P=q)""")
_MAP = re.compile(_CONFIG + r"""\s*\(?\s*group\s*[:=]\s*["'](?P<group>[\w.\-]+)["']\s*,\s*name\s*[:=]\s*"""
                  r"""["'](?P<artifact>[\w.\-]+)["'](?:\s*,\s*version\s*[:=]\s*["'](?P<version>[^"']+)["'])?""")
_CATALOG = re.compile(_CONFIG + _WRAP + r"libs\.(?P<alias>[A-Za-z0-9_.]+)")
_VARIABLE = re.compile(r"""^\s*(?:ext\.|project\.ext\.|def\s+|val\s+|var\s+|(?:private\s+)?const\s+val\s+)?"""
                       r"""(?P<name>[A-Za-z_]\w*)\s*(?::\s*String\s*)?=\s*["'](?P<value>[^"'$]+)["']\s*$""")
_EXTRA = re.compile(r"""^\s*(?:extra|ext)\s*(?:\[\s*["'](?P<a>\w+)["']\s*\]\s*=|\.set\(\s*["'](?P<b>\w+)["']\s*,)"""
                    r"""\s*["'](?P<value>[^"'$]+)["']""")
_REFERENCE = re.compile(r"^\$\{?(?:project\.)?(?:ext\.)?(?P<name>[A-Za-z_]\w*)\}?$")
# Words before a quoted coordinate that are not configurations (plugin ids, settings, protobuf's `artifact =`
# names a tool to download, not a dependency of the build's code).
_NOT_CONFIGS = frozenset({"id", "alias", "apply", "version", "include", "includeBuild", "group", "name",
                          "artifact", "from", "plugin", "println", "exclude", "module", "because", "set"})
_LAST_WORD = re.compile(r"(\w+)\s*(?:\(\s*\))?\s*$")


def _strip_comment(line: str) -> str:
    """The line without a `//` comment (outside quotes, roughly: a URL's `://` is kept)."""
    at = line.find("//")
    while at >= 0:
        if at == 0 or line[at - 1] != ":":
            return line[:at]
        at = line.find("//", at + 2)
    return line


def variables(text: str) -> dict[str, tuple[str, int]]:
    """name → (value, line) of the string variables a script assigns (the first assignment wins)."""
    found: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw)
        match = _VARIABLE.match(line) or _EXTRA.match(line)
        if match:
            name = match.groupdict().get("name") or match.group("a") or match.group("b")
            found.setdefault(name, (match.group("value"), number))
    return found


def _blocks(text: str) -> list[tuple[bool, bool]]:
    """Per line: (inside a `constraints { }` block, inside `buildscript { }`), by counting braces; a block is
    named by the word before its `{`."""
    stack: list[str] = []
    flags: list[tuple[bool, bool]] = []
    for raw in text.splitlines():
        line = _strip_comment(raw)
        seen = set(stack)
        for at, char in enumerate(line):
            if char == "{":
                word = _LAST_WORD.search(line[:at])
                stack.append(word.group(1) if word else "")
                seen.add(stack[-1])
            elif char == "}" and stack:
                stack.pop()
        flags.append(("constraints" in seen, "buildscript" in seen))
    return flags


def catalog_of(path: str, texts: Texts) -> str | None:
    """The gradle/libs.versions.toml of the nearest folder at or above the build file's."""
    folder = posixpath.dirname(path)
    while True:
        candidate = posixpath.join(folder, "gradle", "libs.versions.toml") if folder else "gradle/libs.versions.toml"
        if texts.get(candidate) is not None:
            return candidate
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _catalog(path: str, texts: Texts) -> tuple[dict[str, Library], dict[str, list[str]]]:
    """accessor → library, and bundle accessor → its libraries' accessors."""
    where = catalog_of(path, texts)
    text = texts.get(where) if where else None
    if text is None:
        return {}, {}
    found = libraries(text, where or "")
    if not isinstance(found, list):
        return {}, {}
    from repocontext.deps.common import read_toml

    data = read_toml(where or "", text)
    raw = data.get("bundles") if isinstance(data, dict) else None
    bundles: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return ({accessor(lib.alias): lib for lib in found},
            {accessor(k): [accessor(a) for a in v if isinstance(a, str)] for k, v in bundles.items()
             if isinstance(v, list)})


def parse_gradle(path: str, text: str, texts: Texts | None = None) -> Parsed:
    """The records of one build script; `texts` holds the repository's version catalog, if any."""
    texts = texts or {}
    result = Parsed()
    names = variables(text)
    catalog, bundles = _catalog(path, texts)
    for number, (raw, (constrained, buildscript)) in enumerate(zip(text.splitlines(), _blocks(text), strict=True),
                                                                 start=1):
        line = _strip_comment(raw)
        if "libs." not in line and ":" not in line:
            continue
        for match in (*_COORD.finditer(line), *_MAP.finditer(line)):
            config = match.group("config")
            if config in _NOT_CONFIGS:
                continue
            name = f"{match.group('group')}:{match.group('artifact')}"
            dev = dev_configuration(config) or buildscript
            _coordinate(result, path, number, name, match.group("version"), names, config, dev, constrained)
        for match in _CATALOG.finditer(line):
            _accessor(result, path, number, match, catalog, bundles, constrained or buildscript)
    unversioned = sum(1 for d in result.deps if d.constraint is None)
    if unversioned:
        result.issues.append(Issue(
            f"{unversioned} dependencies have no version in this build script (a platform, BOM or plugin such as "
            "Spring's dependency management sets it): their versions are unknown here, so no advisory is matched "
            "against them", path, None, "info"))
    return result


def _coordinate(result: Parsed, path: str, line: int, name: str, written: str | None,
                names: Mapping[str, tuple[str, int]], config: str, dev: bool, constrained: bool) -> None:
    kind = "constraint" if constrained else "manifest"
    if written is None:  # a platform or the Spring dependency-management plugin sets it
        result.deps.append(_record(name, None, None, path, line, config, dev, kind))
        return
    reference = _REFERENCE.match(written) if "$" in written else None
    if reference is not None and reference.group("name") in names:
        value, at = names[reference.group("name")]
        result.deps.append(_record(name, _exact(value), value, path, at, "variables", dev, kind))
        result.deps.append(_record(name, None, written, path, line, config, dev, kind))  # the version: above
        return
    result.deps.append(_record(name, None if "$" in written else _exact(written), written, path, line, config,
                               dev, kind))


def _accessor(result: Parsed, path: str, line: int, match: re.Match[str], catalog: Mapping[str, Library],
              bundles: Mapping[str, list[str]], dev_block: bool) -> None:
    config, alias = match.group("config"), match.group("alias").rstrip(".")
    if config in _NOT_CONFIGS or alias.startswith(("plugins.", "versions.")):
        return
    wanted = bundles.get(alias.removeprefix("bundles."), []) if alias.startswith("bundles.") else [alias]
    for one in wanted:
        library = catalog.get(one)
        if library is None:
            continue
        # no version here: the catalog's record, at the line that holds it, carries it (one finding, one edit)
        result.deps.append(_record(library.name, None, f"libs.{one}", path, line, config,
                                   dev_configuration(config) or dev_block, "manifest"))


def _record(name: str, version: str | None, constraint: str | None, path: str, line: int, section: str, dev: bool,
            kind: str) -> Dependency:
    constrained = kind == "constraint"
    return Dependency(ecosystem=ECOSYSTEM, name=name, version=version, constraint=constraint, direct=not constrained,
                      dev=dev, file=path, line=line, section=section,
                      kind="constraint" if constrained else "manifest")


def _exact(version: str) -> str | None:
    """The version a plain requirement resolves to; None for a range or a dynamic version (`1.+`)."""
    if any(c in version for c in "[](),+$") or version.startswith("latest."):
        return None
    return version


def catalog_usage(root: str, texts: Texts) -> dict[str, set[str]]:
    """accessor → the configurations that name `libs.<accessor>` in the build files under `root`."""
    used: dict[str, set[str]] = {}
    prefix = f"{root}/" if root else ""
    for path, text in sorted(texts.items()):
        if text is None or posixpath.basename(path) not in BUILD_FILES or not path.startswith(prefix):
            continue
        for raw in text.splitlines():
            for match in _CATALOG.finditer(_strip_comment(raw)):
                used.setdefault(match.group("alias").rstrip("."), set()).add(match.group("config"))
    return used
