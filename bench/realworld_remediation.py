"""bench/realworld.py part 1: vulnerability-remediation on python/pythondotorg, one dispatch per case,
judged by the bench's own OSV reading (see bench/realworld.py's docstring)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from realworld_common import (
    GIT,
    PRODUCED,
    apply_check,
    fmt_s,
    git,
    median,
    patch_sections,
    report_text,
    run_dispatch,
    table,
    target_line,
)
from realworld_osv import affecting, load_records, lowest_unaffected_in_line, normalize, parse_version

REQUIREMENT_FILE = re.compile(r"(^|/)([^/]*requirements[^/]*\.(txt|in)|constraints[^/]*\.txt|Pipfile|pyproject\.toml|"
                              r"setup\.py|setup\.cfg)$", re.IGNORECASE)


def name_pattern(package: str) -> str:
    return r"[-_.]+".join(re.escape(p) for p in re.split(r"[-_.]+", package))


def declaring_files(repo: Path, package: str) -> list[str]:
    """Tracked requirement files with a line pinning or constraining PACKAGE."""
    pattern = re.compile(r"(?im)^[\s\"']*" + name_pattern(package) + r"\s*(\[[^\]]*\])?\s*(===|==|~=|>=|<=|!=|<|>)")
    found = []
    for path in git(repo, "ls-files").stdout.splitlines():
        if REQUIREMENT_FILE.search(path):
            try:
                text = (repo / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if pattern.search(text):
                found.append(path)
    return found


def patched_versions(patch: str, package: str) -> list[str]:
    """Versions the patch's added lines pin PACKAGE to (==, ===, ~=, >=), in order, distinct."""
    pattern = re.compile(r"(?i)^\+(?!\+\+)[\s\"']*" + name_pattern(package)
                         + r"\s*(?:\[[^\]]*\])?\s*(?:===|==|~=|>=)\s*([A-Za-z0-9_.!+-]+)")
    versions: list[str] = []
    for line in (patch or "").splitlines():
        m = pattern.match(line)
        if m and m.group(1) not in versions:
            versions.append(m.group(1))
    return versions


def parse_cases(spec: str | None, count: int) -> list[int]:
    if not spec:
        return list(range(1, count + 1))
    chosen: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        for n in range(int(low), int(high or low) + 1):
            if not 1 <= n <= count:
                raise SystemExit(f"--cases: {n} is not a case number (1..{count})")
            if n not in chosen:
                chosen.append(n)
    return chosen


def _policy_says_allow_major(result: dict[str, Any]) -> bool:
    return any(b.get("kind") == "policy" and "allow_major=true" in (b.get("fix") or "")
               for item in result.get("items") or [] for b in item.get("blockers") or [])


def remediation_case(number: int, case: dict[str, Any], repo: Path, advisories: Path, work: Path,
                     args: argparse.Namespace) -> dict[str, Any]:
    package, current = case["package"], case["from"]
    git(repo, "checkout", "-q", "--force", case["vulnerable_commit"])
    git(repo, "clean", "-q", "-fdx")
    declaring = declaring_files(repo, package)
    home = work / (f"home-{number}" if args.cold else "home")
    command = ["vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
               "--input", f"package={package}"]
    run = run_dispatch(command, home, args.timeout, args.model)
    # As a user would: a fix that crosses a major version is blocked by the task class's policy, naming
    # `--input allow_major=true`; the case is then dispatched again with it, and counted as such.
    allowed_major = _policy_says_allow_major(run.result or {})
    if allowed_major:
        run = run_dispatch([*command, "--input", "allow_major=true"], home, args.timeout, args.model)
    dirty = git(repo, "status", "--porcelain").stdout.strip()
    result = run.result or {}
    items = result.get("items") or []
    item = next((i for i in items if normalize(str((i.get("data") or {}).get("package", ""))) == normalize(package)),
                next((i for i in items if normalize(str(i.get("id", "")).rpartition(":")[2]) == normalize(package)),
                     None))
    data = (item or {}).get("data") or {}
    patch = result.get("patch") or ""
    status = (item or {}).get("status") or result.get("status") or ("timeout" if run.exit_code is None else "no-result")
    blockers = (item or {}).get("blockers") or []
    commands = [b.get("fix") for b in blockers if b.get("kind") == "regenerate" and b.get("fix")] or \
        [b.get("fix") for b in blockers if b.get("fix")]
    named = set(data.get("advisories") or []) | set(re.findall(r"PYSEC-\d+-\d+", report_text(run.result)))
    found = [a for a in case["advisories"] if a in named]

    records = load_records(advisories, package)
    from_patch = patched_versions(patch, package)
    chosen = from_patch or ([str(data["target"])] if data.get("target") else [])
    lowest, line = lowest_unaffected_in_line(records, package, current)
    still = {v: affecting(records, package, v) for v in chosen}
    sections = patch_sections(patch)
    applies, apply_error = (apply_check(repo, patch, work / "case.patch") if patch else (None, ""))
    produced = (bool(patch) and status in PRODUCED) or (status == "needs_regeneration" and bool(commands))
    return {
        "case": number, "package": package, "from": current, "to": case["to"], "file": case["file"],
        "vulnerable_commit": case["vulnerable_commit"], "status": status, "run_status": result.get("status"),
        "exit_code": run.exit_code, "error": (item or {}).get("error") or result.get("error") or run.problem,
        "blockers": blockers, "regenerate_commands": commands, "produced": produced, "allow_major": allowed_major,
        "advisories": case["advisories"], "advisories_found": found,
        "advisories_missing": [a for a in case["advisories"] if a not in named],
        "chosen": chosen, "chosen_from": "patch" if from_patch else ("plan" if chosen else None),
        "lowest_in_line": lowest, "lowest_line": line,
        "is_lowest": bool(chosen) and lowest is not None and all(parse_version(v) == parse_version(lowest)
                                                                   for v in chosen),
        "still_affected_by": {v: ids for v, ids in still.items() if ids},
        "records": len(records), "from_affected_by": affecting(records, package, current),
        "files_edited": sorted(sections), "declaring_files": declaring,
        "declaring_missed": [f for f in declaring if f not in sections] if patch else declaring,
        "case_file_edited": case["file"] in sections, "applies": applies, "apply_error": apply_error,
        "source": (item or {}).get("source"), "recipe": (item or {}).get("recipe"),
        "llm_calls": len(result.get("llm_calls") or []), "seconds": round(run.seconds, 3),
        "tree_modified": dirty or None, "run_id": result.get("run_id"),
    }


def remediation(corpus: Path, advisories: Path, work: Path, args: argparse.Namespace) -> dict[str, Any] | None:
    bundle, cases_file = corpus / "pythondotorg.bundle", corpus / "pythondotorg-cases.json"
    if not bundle.is_file() or not cases_file.is_file() or not advisories.is_dir():
        missing = [str(p) for p in (bundle, cases_file, advisories) if not p.exists()]
        print(f"remediation: skipped — missing {', '.join(missing)}")
        return None
    cases = json.loads(cases_file.read_text(encoding="utf-8"))
    numbers = parse_cases(args.cases, len(cases))
    repo = work / "pythondotorg"
    subprocess.run([*GIT, "clone", "-q", str(bundle), str(repo)], check=True, capture_output=True)
    print(f"\n== vulnerability-remediation: python/pythondotorg, {len(numbers)} of {len(cases)} cases ==")
    results = []
    for n in numbers:
        results.append(remediation_case(n, cases[n - 1], repo, advisories, work, args))
        r = results[-1]
        print(f"  case {n:>2} {r['package']:<22} {r['status']:<18} {r['seconds']:.2f} s", flush=True)
    rows = []
    for r in results:
        chosen = ",".join(r["chosen"]) + ("*" if r["chosen_from"] == "plan" else "") if r["chosen"] else None
        affected = ("yes " + str(sum(len(v) for v in r["still_affected_by"].values()))) if r["still_affected_by"] \
            else ("no" if r["chosen"] else None)
        rows.append([r["case"], r["package"], r["from"], r["status"],
                     f"{len(r['advisories_found'])}/{len(r['advisories'])}", chosen,
                     f"{r['lowest_in_line'] or '-'} ({r['lowest_line']})",
                     ("yes" if r["is_lowest"] else "no") if r["chosen"] else None, r["to"], affected,
                     ",".join(r["files_edited"]) or None,
                     None if r["applies"] is None else ("yes" if r["applies"] else "no"),
                     r["source"] or None, f"{r['seconds']:.2f}"])
    print()
    print(table(["#", "package", "from", "status", "adv", "chosen", "lowest unaffected (line)", "=lowest", "to",
                 "affected", "files edited", "applies", "source", "s"], rows))
    print("  (chosen: the version the patch pins; * = the item's planned target, no patch. affected: how many "
          "advisories still affect the chosen version)")
    details = []
    for r in results:
        notes = []
        if r["error"]:
            notes.append(f"error: {r['error']}")
        if r["status"] == "no_changes" and r["from_affected_by"]:
            notes.append(f"no_changes, but {len(r['from_affected_by'])} pypa record(s) affect {r['from']}")
        if r["advisories_missing"]:
            notes.append(f"advisories not named: {', '.join(r['advisories_missing'])}")
        if r["still_affected_by"]:
            notes += [f"{v} still affected by {', '.join(ids)}" for v, ids in r["still_affected_by"].items()]
        if r["declaring_missed"] and r["files_edited"]:
            notes.append(f"declaring files not edited: {', '.join(r['declaring_missed'])}")
        if r["applies"] is False:
            notes.append(f"patch does not apply: {r['apply_error']}")
        if r["regenerate_commands"]:
            notes.append(f"regenerate: {'; '.join(r['regenerate_commands'])}")
        if r["tree_modified"]:
            notes.append(f"the run modified the work tree: {r['tree_modified'][:200]}")
        if r["llm_calls"]:
            notes.append(f"{r['llm_calls']} LLM call(s)")
        details += [f"  case {r['case']:>2}: {n}" for n in notes]
    if details:
        print("\n".join(["", "details:", *details]))
    return {"cases": results, "totals": remediation_totals(results)}


def remediation_totals(results: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(results)
    proposed = [r for r in results if r["chosen"]]
    patched = [r for r in results if r["applies"] is not None]
    seconds = [r["seconds"] for r in results]
    totals = {
        "cases": n,
        "produced": sum(r["produced"] for r in results),
        "recipe_no_llm": sum(r["source"] == "recipe" and not r["llm_calls"] for r in results),
        "proposed": len(proposed),
        "proposed_from_patch": sum(r["chosen_from"] == "patch" for r in results),
        "still_affected": sum(bool(r["still_affected_by"]) for r in proposed),
        "lowest_in_line": sum(r["is_lowest"] for r in results),
        "lowest_in_line_patch": sum(r["is_lowest"] and r["chosen_from"] == "patch" for r in results),
        "still_affected_patch": sum(bool(r["still_affected_by"]) and r["chosen_from"] == "patch" for r in results),
        "patches": len(patched), "patches_apply": sum(bool(r["applies"]) for r in patched),
        "all_declaring_edited": sum(bool(r["files_edited"]) and not r["declaring_missed"] for r in patched),
        "all_advisories_found": sum(not r["advisories_missing"] for r in results),
        "seconds_max": max(seconds) if seconds else None, "seconds_median": median(seconds),
        "statuses": {s: sum(r["status"] == s for r in results) for s in sorted({r["status"] for r in results})},
        "allow_major": sum(r["allow_major"] for r in results),
    }
    print(f"\nremediation totals ({n} cases; statuses: "
          f"{', '.join(f'{k} {v}' for k, v in totals['statuses'].items())}):")
    t = totals
    print(target_line("patch, or needs_regeneration naming a command", f"{t['produced']}/{n}", f"{n}/{n}",
                      n > 0 and t["produced"] == n))
    print(target_line("recipe path, no LLM", f"{t['recipe_no_llm']}/{n}", f"{n}/{n}",
                      n > 0 and t["recipe_no_llm"] == n))
    print(target_line("all the case's advisories named", f"{t['all_advisories_found']}/{n}", f"{n}/{n}",
                      n > 0 and t["all_advisories_found"] == n))
    print(target_line("proposed versions still affected",
                      f"{t['still_affected']}/{t['proposed']} ({t['still_affected_patch']}/{t['proposed_from_patch']}"
                      " patch)",
                      "0 (of >0 proposed)", t["proposed"] > 0 and t["still_affected"] == 0))
    print(target_line("proposed = lowest unaffected in its line",
                      f"{t['lowest_in_line']}/{n} ({t['lowest_in_line_patch']} patch)", f"{n}/{n}",
                      n > 0 and t["lowest_in_line"] == n))
    print(target_line("patches that apply (git apply --check)", f"{t['patches_apply']}/{t['patches']} patches",
                      "100 % (of >0 patches)", t["patches"] > 0 and t["patches_apply"] == t["patches"]))
    print(target_line("patches editing every declaring file", f"{t['all_declaring_edited']}/{t['patches']} patches",
                      "100 % (of >0 patches)", t["patches"] > 0 and t["all_declaring_edited"] == t["patches"]))
    print(target_line("seconds per run (max / median)",
                      f"{fmt_s(t['seconds_max'])} / {fmt_s(t['seconds_median'])}", "max ≤ 5 s",
                      t["seconds_max"] is not None and t["seconds_max"] <= 5))
    print(f"  (proposed: {t['proposed']} cases named a version, {t['proposed_from_patch']} of them in a patch, "
          "the rest only as the item's planned target)")
    print(f"  ({t['allow_major']} cases were first blocked by the major-version policy, as the fix crosses a major "
          "version, and were dispatched again with --input allow_major=true, as the blocker says)")
    return totals

