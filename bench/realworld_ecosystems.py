"""bench/realworld.py part 3: vulnerability-remediation in every ecosystem beyond PyPI, one dispatch per case.

Cases: bench/cases/<ecosystem>.json, each {"tarball", "lockfile", "package", "from", "to", "allow_major",
"advisories", optional "advisories_dir" (relative to the repo root; default ../shared/advisories/<ecosystem>),
optional "rewind" [{"file", "old", "new"}] and "capped_by", optional "history" (where the rewound version is
read from, or "rewound" when no earlier lock of the project could be read)}: a locked package of a real tree
(../shared/corpus/<tarball>) that real advisories affect. Each tarball is unpacked and committed once; per case
the tree is forced clean, its "rewind" edits (exact text, each found exactly once; a tree whose published locks
are clean is taken back to the state before a real security bump) are committed, and

    python -m planner dispatch vulnerability-remediation --repo TREE --advisories DIR --input package=NAME
        [--input allow_major=true] --json

runs. Judged apart from the tool, by this file's own reading of the OSV records (univers orderings, ECOSYSTEM
and SEMVER ranges, `versions` lists):
- affected: some record affects `from` (the bench's reading); the run must not say "nothing to do"
  (no_changes / not_affected for an affected package is a *false nothing-to-do*; not_evaluated, which says
  what it could not read, is counted apart: not right, not false);
- right: the run's target (item data.target) is the lowest version the records name above `from` that no
  record affects, same major first;
- applies: `git apply --check` of the patch on the clean tree (no patch: "-");
- regeneration named: a needs_regeneration item names a command (its blockers' fix);
- capped (case "capped_by": PARENT): the fix lies outside what PARENT allows, so the case is right when the run
  names PARENT (a blocked or needs_regeneration item whose hints or blockers say it) and no command that cannot
  reach the target (`cargo update -p NAME --precise`, `bundle lock --update NAME`, … for the package itself).
Prints a table per ecosystem and a summary row per ecosystem: right/wrong/false-nothing-to-do/applies.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realworld_common import CORPUS, PRODUCED, ROOT, apply_check, git, run_dispatch, table, unpack

CASES = ROOT / "bench" / "cases"
NOTHING = ("no_changes", "not_affected", "skipped")  # not_evaluated says it could not look: honest, not right
_CLASSES = {"crates.io": "SemverVersion", "npm": "SemverVersion", "RubyGems": "RubygemsVersion",
            "Packagist": "ComposerVersion", "Maven": "MavenVersion", "NuGet": "NugetVersion",
            "Go": "GolangVersion"}


def version(ecosystem: str, text: str) -> Any:
    from univers import versions

    try:
        return getattr(versions, _CLASSES[ecosystem])(str(text).strip().removeprefix("v")
                                                      if ecosystem in ("crates.io", "npm") else str(text).strip())
    except (ValueError, TypeError, AttributeError, versions.InvalidVersion):  # skipped, as osv-scanner does
        return None


def same_name(ecosystem: str, a: str, b: str) -> bool:
    return a.lower() == b.lower() if ecosystem in ("NuGet", "Packagist") else a == b


def _entries(record: dict[str, Any], ecosystem: str, package: str) -> Iterator[dict[str, Any]]:
    if record.get("withdrawn"):
        return
    for affected in record.get("affected") or []:
        pkg = affected.get("package") or {}
        if pkg.get("ecosystem") == ecosystem and same_name(ecosystem, str(pkg.get("name", "")), package):
            yield affected


def _range_affects(ecosystem: str, events: list[dict[str, Any]], v: Any) -> bool:
    """Events read as written, in pairs: each `introduced` opens an interval that the next `fixed` (exclusive) or
    `last_affected` (inclusive) closes. A pair whose end is not above its start is empty: RubySec and
    FriendsOfPHP records converted to OSV write e.g. introduced 3.1, fixed 3.1.0.rc6 for "patched from
    3.1.0.rc6", which the advisory's own patched_versions say affects nothing (ruby agrees)."""
    zero = version(ecosystem, "0.0.0") if ecosystem in ("crates.io", "npm") else version(ecosystem, "0")
    start: Any = None
    for e in events:
        if "introduced" in e:
            start = zero if str(e["introduced"]) == "0" else version(ecosystem, e["introduced"])
            continue
        end_key = "fixed" if "fixed" in e else "last_affected" if "last_affected" in e else None
        end = version(ecosystem, e[end_key]) if end_key else None
        if start is None or end is None:
            continue
        if start < end and start <= v and (v < end if end_key == "fixed" else v <= end):
            return True
        start = None
    return start is not None and start <= v  # an interval never closed


def affects(record: dict[str, Any], ecosystem: str, package: str, text: str) -> bool:
    v = version(ecosystem, text)
    if v is None:
        return False
    for affected in _entries(record, ecosystem, package):
        if any(version(ecosystem, x) == v for x in affected.get("versions") or []):
            return True
        if any(r.get("type") in ("ECOSYSTEM", "SEMVER") and _range_affects(ecosystem, r.get("events") or [], v)
               for r in affected.get("ranges") or []):
            return True
    return False


def lowest_unaffected(records: list[dict[str, Any]], ecosystem: str, package: str, current: str) -> str | None:
    """The lowest version named by the records above `current` that none affects, current major first."""
    base = version(ecosystem, current)
    named: dict[Any, str] = {}
    for record in records:
        for affected in _entries(record, ecosystem, package):
            for r in affected.get("ranges") or []:
                for e in r.get("events") or []:
                    for key in ("fixed", "introduced"):
                        if key in e and str(e[key]) != "0" and (v := version(ecosystem, e[key])) is not None:
                            named.setdefault(v, str(e[key]))
    above = sorted(v for v in named if base is not None and v > base)
    good = [v for v in above if not any(affects(r, ecosystem, package, named[v]) for r in records)]
    major = str(current).lstrip("v").split(".")[0]
    same = [v for v in good if named[v].lstrip("v").split(".")[0] == major]
    pick = (same or good or [None])[0]
    return named[pick] if pick is not None else None


def load_records(folder: Path, ecosystem: str) -> list[dict[str, Any]]:
    records = []
    for path in sorted(folder.rglob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if any((a.get("package") or {}).get("ecosystem") == ecosystem for a in record.get("affected") or []):
            records.append(record)
    return records


def rewound(text: str, edits: list[dict[str, str]], file: str) -> str:
    """`text` (the tree's `file`) with the case's rewind edits for that file; each old text must occur once."""
    for edit in (e for e in edits if e["file"] == file):
        if text.count(edit["old"]) != 1:
            raise ValueError(f"rewind of {file}: {edit['old'][:60]!r} occurs {text.count(edit['old'])} times")
        text = text.replace(edit["old"], edit["new"])
    return text


def rewind(tree: Path, edits: list[dict[str, str]]) -> None:
    """Commit the rewind edits on the clean tree (undone by the next case's forced checkout of `base`)."""
    for file in sorted({e["file"] for e in edits}):
        path = tree / file
        path.write_text(rewound(path.read_text(encoding="utf-8"), edits, file), encoding="utf-8")
    git(tree, "add", "--", *sorted({e["file"] for e in edits}))
    git(tree, "commit", "-q", "-m", "rewind to the state before a security bump")


def _said(item: dict[str, Any]) -> str:
    """What an item tells the user (blockers, plan notes, regeneration commands), one text to search; not its
    data, whose dependency paths name every parent whether or not the run points at it."""
    return json.dumps({k: item.get(k) for k in ("error", "blockers", "plan_data", "notes")})


def named_commands(item: dict[str, Any]) -> list[str]:
    """The commands an item tells the user to run: its blockers' fixes and its plan's regeneration commands."""
    regenerate = (item.get("plan_data") or {}).get("regenerate") or []
    return sorted({str(b["fix"]) for b in item.get("blockers") or [] if b.get("fix")}
                  | {str(r["command"]) for r in regenerate if isinstance(r, dict) and r.get("command")})


def capped_right(item: dict[str, Any], status: str, package: str, parent: str) -> bool:
    """A capped fix is right when the run names the parent and names no command on the package itself."""
    if status not in ("blocked", "needs_regeneration"):
        return False
    said = _said(item)
    commands = named_commands(item)
    unreachable = [c for c in commands if package.lower() in c.lower() and parent.lower() not in c.lower()]
    return parent.lower() in said.lower() and not unreachable


def run_case(ecosystem: str, case: dict[str, Any], tree: Path, advisories: Path, records: list[dict[str, Any]],
             work: Path, args: argparse.Namespace) -> dict[str, Any]:
    git(tree, "checkout", "-q", "--force", "base")
    git(tree, "clean", "-q", "-fdx")
    if case.get("rewind"):
        git(tree, "checkout", "-q", "-B", "case", "base")
        rewind(tree, case["rewind"])
    package, current = case["package"], case["from"]
    command = ["vulnerability-remediation", "--repo", str(tree), "--advisories", str(advisories),
               "--input", f"package={package}"]
    if case.get("allow_major"):
        command += ["--input", "allow_major=true"]
    run = run_dispatch(command, work / "home", args.timeout, None)
    result = run.result or {}
    items = [i for i in result.get("items") or []
             if same_name(ecosystem, str((i.get("data") or {}).get("package", "")), package)]
    item = items[0] if items else {}
    status = item.get("status") or result.get("status") or run.problem or "no-result"
    target = (item.get("data") or {}).get("target")
    mine = [r for r in records if any(True for _ in _entries(r, ecosystem, package))]
    affected = [str(r.get("id")) for r in mine if affects(r, ecosystem, package, current)]
    expected = lowest_unaffected(mine, ecosystem, package, current)
    patch = result.get("patch") or ""
    applies = apply_check(tree, patch, work / "case.patch")[0] if patch else None
    commands = [b.get("fix") for b in item.get("blockers") or [] if b.get("fix")]
    parent = case.get("capped_by")
    right = capped_right(item, status, package, parent) if parent else bool(target) and target == expected
    return {"ecosystem": ecosystem, "package": package, "from": current, "status": status, "target": target,
            "expected": expected, "case_to": case.get("to"), "affected_by": affected,
            "false_nothing": bool(affected) and status in NOTHING, "right": right, "capped_by": parent,
            "applies": applies, "regenerate": commands if status == "needs_regeneration" else [],
            "commands": named_commands(item),
            "produced": status in PRODUCED, "seconds": round(run.seconds, 2)}


def ecosystems(corpus: Path, work: Path, args: argparse.Namespace) -> dict[str, Any] | None:
    files = sorted(CASES.glob("*.json")) if CASES.is_dir() else []
    if not files:
        print("ecosystems: skipped — no bench/cases/*.json")
        return None
    figures: dict[str, Any] = {}
    trees: dict[str, Path] = {}
    for path in files:
        ecosystem = path.stem
        cases = json.loads(path.read_text(encoding="utf-8"))
        results = []
        print(f"\n== vulnerability-remediation: {ecosystem}, {len(cases)} cases ==")
        for case in cases:
            archive = corpus / case["tarball"]
            folder = case.get("advisories_dir")
            advisories = (ROOT / folder) if folder else corpus.parent / "advisories" / ecosystem
            if not archive.is_file() or not advisories.is_dir():
                print(f"  {case['package']}: skipped — {archive if not archive.is_file() else advisories} is absent")
                continue
            if case["tarball"] not in trees:
                trees[case["tarball"]] = unpack(archive, work / case["tarball"].split(".")[0], case["tarball"])
                git(trees[case["tarball"]], "branch", "-f", "base", "HEAD")
            records = load_records(advisories, ecosystem)
            results.append(run_case(ecosystem, case, trees[case["tarball"]], advisories, records, work, args))
            r = results[-1]
            print(f"  {r['package']:<36} {r['from']:<12} {r['status']:<18} {r['target'] or '-':<12} "
                  f"{'right' if r['right'] else 'WRONG'} {r['seconds']:.2f} s", flush=True)
        figures[ecosystem] = results
    rows = []
    for ecosystem, results in figures.items():
        patched = [r for r in results if r["applies"] is not None]
        rows.append([ecosystem, len(results), sum(r["right"] for r in results),
                     sum(not r["right"] for r in results), sum(r["false_nothing"] for r in results),
                     sum(r["status"] == "not_evaluated" for r in results),
                     f"{sum(bool(r['applies']) for r in patched)}/{len(patched)}",
                     sum(bool(r["regenerate"]) for r in results)])
    print()
    print(table(["ecosystem", "cases", "right", "wrong", "false nothing-to-do", "not evaluated", "patches apply",
                 "regen named"],
                rows))
    for results in figures.values():
        for r in results:
            if not r["right"] or r["false_nothing"] or r["applies"] is False:
                print(f"  {r['ecosystem']} {r['package']} {r['from']}: {r['status']}, target {r['target']}, "
                      f"expected {r['expected']} (case says {r['case_to']}), applies {r['applies']}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-ecosystems-"))
    try:
        figures = ecosystems(args.corpus.resolve(), work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json and figures is not None:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
