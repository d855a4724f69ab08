"""bench/realworld.py's own, independent OSV judgement: which pypa records affect a version
(ECOSYSTEM ranges and `versions` lists) and the lowest unaffected version in a release line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version


def normalize(name: str) -> str:
    """PEP 503 name normalization."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_version(text: Any) -> Version | None:
    try:
        return Version(str(text))
    except InvalidVersion:
        return None


def _pypi_affected(record: dict[str, Any], package: str) -> Iterator[dict[str, Any]]:
    if record.get("withdrawn"):
        return
    for affected in record.get("affected") or []:
        pkg = affected.get("package") or {}
        if pkg.get("ecosystem") == "PyPI" and normalize(str(pkg.get("name", ""))) == normalize(package):
            yield affected


def _range_affects(events: list[dict[str, Any]], version: Version) -> bool:
    """OSV ECOSYSTEM range: affected from the latest `introduced` ≤ version until a later `fixed`
    (exclusive) or `last_affected` (inclusive). Unparseable event versions are skipped."""
    introduced = [v for e in events if "introduced" in e
                  for v in [Version("0") if str(e["introduced"]) == "0" else parse_version(e["introduced"])]
                  if v is not None and v <= version]
    if not introduced:
        return False
    start = max(introduced)
    for event in events:
        if "fixed" in event:
            fixed = parse_version(event["fixed"])
            if fixed is not None and start < fixed <= version:
                return False
        if "last_affected" in event:
            last = parse_version(event["last_affected"])
            if last is not None and start <= last < version:
                return False
    return True


def record_affects(record: dict[str, Any], package: str, version: str | Version) -> bool:
    """Whether one OSV record affects PACKAGE at VERSION (ECOSYSTEM ranges or the `versions` list)."""
    v = version if isinstance(version, Version) else parse_version(version)
    if v is None:
        return False
    for affected in _pypi_affected(record, package):
        if any(parse_version(x) == v for x in affected.get("versions") or []):
            return True
        for rng in affected.get("ranges") or []:
            if rng.get("type") == "ECOSYSTEM" and _range_affects(rng.get("events") or [], v):
                return True
    return False


def affecting(records: Iterable[dict[str, Any]], package: str, version: str) -> list[str]:
    """The ids of the records that affect PACKAGE at VERSION."""
    return sorted(str(r.get("id")) for r in records if record_affects(r, package, version))


def named_versions(records: Iterable[dict[str, Any]], package: str) -> dict[Version, str]:
    """Every version the records name for PACKAGE (events and `versions` lists), as written."""
    named: dict[Version, str] = {}
    for record in records:
        for affected in _pypi_affected(record, package):
            texts = [str(x) for x in affected.get("versions") or []]
            for rng in affected.get("ranges") or []:
                if rng.get("type") == "ECOSYSTEM":
                    texts += [str(e[k]) for e in rng.get("events") or []
                              for k in ("introduced", "fixed", "last_affected") if k in e]
            for text in texts:
                v = parse_version(text)
                if v is not None and text != "0":
                    named.setdefault(v, text)
    return named


def lowest_unaffected_in_line(records: list[dict[str, Any]], package: str,
                              current: str) -> tuple[str | None, str]:
    """(version, line) — the lowest version named by the records that is greater than CURRENT and
    that no record affects, looked for in CURRENT's major.minor line, then its major line, then
    any (line = "major.minor", "major" or "any"); (None, "none") when there is none.
    Pre-releases and dev releases count only when CURRENT is one."""
    base = parse_version(current)
    if base is None:
        return None, "none"
    names = named_versions(records, package)
    candidates = sorted(v for v in names
                        if v > base and (base.is_prerelease or not (v.is_prerelease or v.is_devrelease)))
    unaffected = [v for v in candidates if not any(record_affects(r, package, v) for r in records)]
    lines = (("major.minor", lambda v: v.release[:2] == base.release[:2]),
             ("major", lambda v: v.release[:1] == base.release[:1]), ("any", lambda v: True))
    for line, same in lines:
        found = [v for v in unaffected if same(v)]
        if found:
            return names[found[0]], line
    return None, "none"


def load_records(advisories: Path, package: str) -> list[dict[str, Any]]:
    """The OSV records (YAML or JSON) under ADVISORIES/vulns/<dir> for PACKAGE, where <dir>
    normalizes to the package's name; only records with a PyPI entry for it are kept."""
    import yaml

    vulns = advisories / "vulns" if (advisories / "vulns").is_dir() else advisories
    records: list[dict[str, Any]] = []
    if not vulns.is_dir():
        return records
    for folder in sorted(p for p in vulns.iterdir() if p.is_dir() and normalize(p.name) == normalize(package)):
        for path in sorted(folder.iterdir()):
            if path.suffix in (".yaml", ".yml"):
                record = yaml.safe_load(path.read_text(encoding="utf-8"))
            elif path.suffix == ".json":
                record = json.loads(path.read_text(encoding="utf-8"))
            else:
                continue
            if isinstance(record, dict) and any(True for _ in _pypi_affected(record, package)):
                records.append(record)
    return records
