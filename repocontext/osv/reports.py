"""Turning parsed documents into OSV record dicts: plain records and scanner reports.

Recognised shapes (by their top-level keys, not by file name):
- an OSV record: a mapping with `id`;
- a list of OSV records, or an osv.dev query answer `{"vulns": [...]}`;
- osv-scanner JSON: `results[].packages[].vulnerabilities[]` hold full OSV records;
- pip-audit JSON: `{"dependencies": [{"name", "version", "vulns": [...]}]}` (or the
  bare list of such entries), converted to OSV-like records: the package is affected
  at the reported version and fixed at each of `fix_versions`.
"""

from __future__ import annotations

from typing import Any

from repocontext.osv.schema import LoadIssue

Record = dict[str, Any]


def records_from_document(doc: Any, source: str) -> tuple[list[Record], list[LoadIssue]]:
    """The OSV record dicts a parsed document holds, and what in it was unusable."""
    if isinstance(doc, dict):
        if isinstance(doc.get("results"), list):
            return _from_osv_scanner(doc["results"], source)
        if isinstance(doc.get("dependencies"), list):
            return _from_pip_audit(doc["dependencies"], source)
        if isinstance(doc.get("vulns"), list) and "id" not in doc:
            return _from_list(doc["vulns"], source)
        if "id" in doc:
            return [doc], []
    if isinstance(doc, list):
        if doc and all(isinstance(item, dict) and "vulns" in item for item in doc):
            return _from_pip_audit(doc, source)
        return _from_list(doc, source)
    return [], [LoadIssue(source=source, reason="not an OSV record or a known scanner report")]


def _from_list(items: list[Any], source: str) -> tuple[list[Record], list[LoadIssue]]:
    records = [item for item in items if isinstance(item, dict)]
    issues = [] if len(records) == len(items) else [
        LoadIssue(source=source, reason=f"{len(items) - len(records)} list entries are not OSV records")
    ]
    return records, issues


def _from_osv_scanner(results: list[Any], source: str) -> tuple[list[Record], list[LoadIssue]]:
    seen: dict[str, Record] = {}
    bad = 0
    for result in results:
        packages = result.get("packages") if isinstance(result, dict) else None
        for package in packages if isinstance(packages, list) else []:
            vulns = package.get("vulnerabilities") if isinstance(package, dict) else None
            for vuln in vulns if isinstance(vulns, list) else []:
                if isinstance(vuln, dict) and isinstance(vuln.get("id"), str):
                    seen.setdefault(vuln["id"], vuln)  # one record per id: the same vuln repeats per package
                else:
                    bad += 1
    issues = [LoadIssue(source=source, reason=f"{bad} osv-scanner vulnerabilities lack an id")] if bad else []
    return list(seen.values()), issues


def _from_pip_audit(dependencies: list[Any], source: str) -> tuple[list[Record], list[LoadIssue]]:
    by_id: dict[str, Record] = {}
    issues: list[LoadIssue] = []
    for dep in dependencies:
        if not isinstance(dep, dict) or not dep.get("vulns"):
            continue  # clean or skipped dependency
        name, version = dep.get("name"), dep.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            issues.append(LoadIssue(source=source, reason=f"pip-audit dependency without name/version: {dep!r:.80}"))
            continue
        for vuln in dep["vulns"]:
            if not isinstance(vuln, dict) or not isinstance(vuln.get("id"), str):
                issues.append(LoadIssue(source=source, reason=f"pip-audit vulnerability without id for {name}"))
                continue
            record = by_id.setdefault(vuln["id"], _pip_audit_record(vuln))
            record["affected"].append(_pip_audit_affected(name, version, vuln.get("fix_versions") or []))
    return list(by_id.values()), issues


def _pip_audit_record(vuln: Record) -> Record:
    aliases = vuln.get("aliases") or []
    return {
        "id": vuln["id"],
        "aliases": [a for a in aliases if isinstance(a, str)],
        "details": vuln.get("description") if isinstance(vuln.get("description"), str) else None,
        "affected": [],
        "database_specific": {"source": "pip-audit"},
    }


def _pip_audit_affected(name: str, version: str, fix_versions: list[Any]) -> Record:
    fixes = [str(v) for v in fix_versions if isinstance(v, (str, int, float))]
    affected: Record = {"package": {"ecosystem": "PyPI", "name": name}, "versions": [version], "ranges": []}
    if fixes:
        # Only the reported version is known affected; each fix closes the interval it falls in.
        events = [{"introduced": version}, *({"fixed": fix} for fix in fixes)]
        affected["ranges"] = [{"type": "ECOSYSTEM", "events": events}]
    return affected
