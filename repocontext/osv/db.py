"""An in-memory advisory database: lookup by package and by id or any alias."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from repocontext.osv.evaluate import Evaluation, evaluate
from repocontext.osv.schema import Advisory, LoadIssue
from repocontext.osv.versions import ecosystem_key, normalize_name


class AdvisoryDB:
    """Advisories keyed by id. When two sources carry the same id, the later `modified` wins
    (ties keep the first loaded), so a full OSV record beats a pip-audit stub."""

    def __init__(self) -> None:
        self._by_id: dict[str, Advisory] = {}
        self._sources: dict[str, str] = {}
        self.issues: list[LoadIssue] = []
        self._by_package: dict[tuple[str, str], list[str]] | None = None
        self._by_name: dict[str, list[str]] | None = None

    def add(self, advisory: Advisory, source: str = "") -> None:
        old = self._by_id.get(advisory.id)
        if old is not None and _timestamp(advisory.modified) <= _timestamp(old.modified):
            return
        self._by_id[advisory.id] = advisory
        self._sources[advisory.id] = source
        self._by_package = self._by_name = None  # rebuilt on the next lookup

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[Advisory]:
        return iter([self._by_id[i] for i in sorted(self._by_id)])

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.find(name))

    def source(self, advisory_id: str) -> str | None:
        """Where an advisory was loaded from (a file path, or "archive.zip!member")."""
        return self._sources.get(advisory_id)

    def find(self, name: str) -> list[Advisory]:
        """Every advisory whose id or alias is `name` (case-insensitive), sorted by id."""
        if self._by_name is None:
            self._build()
        assert self._by_name is not None
        return [self._by_id[i] for i in self._by_name.get(name.strip().casefold(), [])]

    def get(self, name: str) -> Advisory | None:
        """The advisory with this id, else the first (by id) that has it as an alias."""
        exact = self._by_id.get(name.strip())
        if exact is not None:
            return exact
        found = self.find(name)
        return found[0] if found else None

    def for_package(self, ecosystem: str, name: str) -> list[Advisory]:
        """Advisories naming the package (withdrawn ones included), sorted by id."""
        if self._by_package is None:
            self._build()
        assert self._by_package is not None
        key = (ecosystem_key(ecosystem), normalize_name(ecosystem, name))
        return [self._by_id[i] for i in self._by_package.get(key, [])]

    def evaluate(self, ecosystem: str, name: str, version: str) -> list[Evaluation]:
        """The evaluation of every advisory naming the package, affected or not, sorted by id."""
        results = (evaluate(a, ecosystem, name, version) for a in self.for_package(ecosystem, name))
        return [r for r in results if r is not None]

    def affecting(self, ecosystem: str, name: str, version: str) -> list[Evaluation]:
        return [r for r in self.evaluate(ecosystem, name, version) if r.affected]

    def ecosystems(self) -> dict[str, int]:
        """Advisories per ecosystem (casefolded, as looked up): what a run says it was checked against."""
        counts: dict[str, int] = {}
        for advisory in self._by_id.values():
            for ecosystem in dict.fromkeys(eco for eco, _ in package_keys(advisory)):
                counts[ecosystem] = counts.get(ecosystem, 0) + 1
        return dict(sorted(counts.items()))

    def _build(self) -> None:
        by_package: dict[tuple[str, str], list[str]] = {}
        by_name: dict[str, list[str]] = {}
        for advisory_id in sorted(self._by_id):
            advisory = self._by_id[advisory_id]
            for name in lookup_names(advisory):
                by_name.setdefault(name, []).append(advisory_id)
            for key in package_keys(advisory):
                by_package.setdefault(key, []).append(advisory_id)
        self._by_package, self._by_name = by_package, by_name


def lookup_names(advisory: Advisory) -> list[str]:
    """The id and aliases an advisory is found by (`find`), normalised, each once."""
    return list(dict.fromkeys(n.strip().casefold() for n in advisory.ids))


def package_keys(advisory: Advisory) -> list[tuple[str, str]]:
    """The (ecosystem, package) keys an advisory names (`for_package`), normalised, each once."""
    keys = ((ecosystem_key(e.package.ecosystem), normalize_name(e.package.ecosystem, e.package.name))
            for e in advisory.affected if e.package is not None and e.package.name)
    return list(dict.fromkeys(keys))


def _timestamp(value: str | None) -> tuple[int, datetime | str]:
    """RFC 3339 timestamps compare as instants; anything else sorts before them, by text."""
    if not value:
        return (0, "")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return (0, value)
    if parsed.tzinfo is None:
        return (0, value)
    return (1, parsed)
