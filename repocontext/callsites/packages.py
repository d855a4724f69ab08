"""Which locked package a Rust, Ruby, PHP, Java/Kotlin or C# module reference belongs to.

The call-site groups of these languages are keyed by the package name the
dependency records use (a crate, a gem, a Composer package, a Maven
`groupId:artifactId`, a NuGet id), so an advisory's package finds its group.
Only references that map onto a package of the repository's dependency records
(or, for PHP, of composer.lock's autoload maps) are kept: the languages' own
libraries and the repository's own modules are left out, except packages it
declares by a local path only (`path:` sources: a workspace's own crates), which
are kept as first-party groups. How sure each mapping is,
is said by the group's `via` (the `VIA` text of its language); all but Rust's
and PHP's are guesses from names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

# Scanner language → the ecosystem of the dependency records it is matched against.
ECOSYSTEMS = {"rust": "crates.io", "ruby": "RubyGems", "php": "Packagist", "jvm": "Maven", "csharp": "NuGet"}
VIA = {
    "rust": "crate name: the path's first segment is a locked crate's name with '-' written '_'",
    "ruby": "guess: the require path or constant path, with case, '-', '_', '/' and '::' ignored, names a locked gem",
    "php": "composer.lock autoload: the longest PSR-4 / PSR-0 namespace prefix of a locked package",
    "jvm": "guess: a Maven group id is a package prefix of the import, or one segment off with the artifact's "
           "name there (longest wins, then the artifact whose name words appear in the package; a tie names none)",
    "csharp": "guess: a NuGet package id is the longest prefix of the namespace (case-insensitive)",
}
_FOLD = re.compile(r"[-_/:.]")
# Java packages whose Maven group id is neither a prefix nor one segment off with the artifact's name in the
# package (the rules of `PackageIndex._maven`): well-known artifacts only.
MAVEN_PACKAGES = {"com.google.common.truth": "com.google.truth:truth", "com.google.common": "com.google.guava:guava",
                  "com.google.gson": "com.google.code.gson:gson",
                  "org.apache.commons.lang3": "org.apache.commons:commons-lang3"}  # longest first


def fold(name: str) -> str:
    """A gem name, require path or constant path compared without case or separators."""
    return _FOLD.sub("", name).lower()


def reference(language: str, symbol: str) -> str:
    """What a site of `language` is matched by, from its symbol alone (so a stored site, which keeps no module,
    classifies the same again): Rust the crate segment, Ruby the constant path (`Rack::Test` of
    `Rack::Test.new`) or require path, PHP the class name, Java/Kotlin and C# the whole dotted name."""
    if language == "rust":
        return symbol.partition("::")[0]
    if language == "ruby":
        return symbol.partition(".")[0] if symbol[:1].isupper() else symbol
    return symbol.partition("::")[0] if language == "php" else symbol


class PackageIndex:
    """The locked package names of the five ecosystems, indexed for matching, each built when first asked."""

    def __init__(self, dependencies: Mapping[str, Any] | None, php_autoload: Iterable[Sequence[str]] = ()) -> None:
        self._dependencies = dependencies or {}
        self._autoload = sorted({(str(prefix), str(name)) for prefix, name in php_autoload})

    def names(self, ecosystem: str) -> list[str]:
        return sorted(self._sources(ecosystem))

    def local(self, ecosystem: str, name: str) -> bool:
        """Whether every record of the package points at a local path (the repository's own package)."""
        sources = self._sources(ecosystem).get(name)
        return bool(sources) and all(isinstance(s, str) and s.startswith("path:") for s in sources or ())

    def _sources(self, ecosystem: str) -> dict[str, list[Any]]:
        """Package name → the `source` of each of its records, for one ecosystem (memoised)."""
        memo = self.__dict__.setdefault("_by_ecosystem", {})
        if ecosystem not in memo:
            found: dict[str, list[Any]] = {}
            for records in self._dependencies.values():
                for record in records if isinstance(records, list) else ():
                    if isinstance(record, Mapping) and record.get("ecosystem") == ecosystem and record.get("name"):
                        found.setdefault(str(record["name"]), []).append(record.get("source"))
            memo[ecosystem] = found
        found_now: dict[str, list[Any]] = memo[ecosystem]
        return found_now

    def match(self, language: str, ident: str) -> str | None:
        """The package `ident` (`reference` of a site's symbol) belongs to, or None."""
        if language == "rust":
            return self._crates.get(ident)
        if language == "ruby":
            return self._ruby(ident)
        if language == "php":
            return self._php(ident)
        if language == "jvm":  # decided by the package alone: asked once per package, not per class or member
            package = ".".join(_package_part(ident.split("."))) or ident
            memo = self.__dict__.setdefault("_by_package", {})
            if package not in memo:
                memo[package] = self._maven(package)
            found: str | None = memo[package]
            return found
        return self._nuget(ident) if language == "csharp" else None

    @cached_property
    def _crates(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for name in reversed(self.names("crates.io")):  # the first name by sort wins a tie
            found[name.replace("-", "_")] = name
        return found

    @cached_property
    def _gems(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for name in reversed(self.names("RubyGems")):
            found[fold(name)] = name
        return found

    def _ruby(self, ident: str) -> str | None:
        """The longest leading run of path or constant segments that names a gem (`rack/test` → rack-test)."""
        parts = ident.split("::") if ident[:1].isupper() else ident.split("/")
        for end in range(len(parts), 0, -1):
            name = self._gems.get(fold("".join(parts[:end])))
            if name is not None:
                return name
        return None

    def _php(self, name: str) -> str | None:
        lowered = name.lower()
        best: tuple[int, str] | None = None
        for prefix, package in self._autoload:
            matched = lowered.startswith(prefix.lower()) or lowered + "\\" == prefix.lower()
            if matched and (best is None or len(prefix) > best[0]):
                best = (len(prefix), package)
        return best[1] if best is not None else None

    @cached_property
    def _maven_names(self) -> frozenset[str]:
        return frozenset(self.names("Maven"))

    @cached_property
    def _artifacts(self) -> list[tuple[list[str], set[str], str]]:
        """(group id's segments, artifact name words, `group:artifact`) of each locked Maven package."""
        found = []
        for name in self.names("Maven"):
            group, _, artifact = name.partition(":")
            words = {w for w in re.split(r"[-_.]", artifact.lower()) if w} | {artifact.lower().replace("-", "")}
            if "bom" in words:
                continue  # a bill of materials holds versions, no code
            found.append((group.split("."), words, name))
        return found

    def _maven(self, path: str) -> str | None:
        """The artifact by its group id as a package prefix of `path`. A group id whose last segment differs
        (`com.fasterxml.jackson.core` for `com.fasterxml.jackson.databind`) counts too, below a whole prefix,
        when the package's segment in its place is one of the artifact's name words; among equals the
        artifact whose name words appear in the package past its domain wins (`jackson-databind` for
        `com.fasterxml.jackson.databind`, `jackson-core` for `com.fasterxml.jackson.core`); a tie left after
        that is too unsure to name one
        (`org.springframework.boot.SpringApplication` among several starters: none). `MAVEN_PACKAGES` names
        a few artifacts these rules cannot find (Guava's `com.google.common`)."""
        segments = path.split(".")
        for package, artifact in MAVEN_PACKAGES.items():
            if (path == package or path.startswith(package + ".")) and artifact in self._maven_names:
                return artifact
        scored: list[tuple[tuple[bool, int, int], str, str]] = []
        for group, words, name in self._artifacts:
            common = 0
            while common < min(len(group), len(segments)) and group[common] == segments[common]:
                common += 1
            whole = common == len(group)
            if common < 2 or not (whole or common == len(group) - 1):
                continue
            hits = sum(1 for segment in _package_part(segments[2:]) if segment in words)
            if whole or (common < len(segments) and segments[common] in words):
                scored.append(((whole, common, hits), ".".join(group), name))
        if not scored:
            return None
        best = max(score for score, _, _ in scored)
        top = {name for score, _, name in scored if score == best}
        return top.pop() if len(top) == 1 else None

    @cached_property
    def _nuget_ids(self) -> list[tuple[str, str]]:
        return sorted(((name.lower(), name) for name in self.names("NuGet")), key=lambda p: (-len(p[0]), p[1]))

    def _nuget(self, namespace: str) -> str | None:
        lowered = namespace.lower()
        for key, name in self._nuget_ids:  # longest first
            if lowered == key or lowered.startswith(key + "."):
                return name
        return None


def _package_part(segments: list[str]) -> list[str]:
    """The package segments of a dotted name: those before the first class name (upper-case initial)."""
    end = next((i for i, segment in enumerate(segments) if segment[:1].isupper()), len(segments))
    return segments[:end]
