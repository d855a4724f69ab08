"""Benchmark: the main job on the real corpus, whole-process through the CLI (issues #10 §5, #11 §6).

Every dispatch is `python -m planner dispatch ... --json` run as a child process with the
planner of the checkout this script lives in (cwd and PYTHONPATH = the repo root), timed from
process start to exit. One fresh temporary PLANNER_HOME serves the whole bench run (`--cold`: a
fresh one per dispatch), and every other PLANNER_* variable is removed from the child's
environment (no model unless `--model`), so nothing leaks in from the caller or between runs.
The corpus is read from ../shared/corpus beside the repo root (`--corpus`); the bench exits 0
with a reason when it is absent. It always exits 0: missed targets are printed as MISSED.

1. vulnerability-remediation on python/pythondotorg (pythondotorg.bundle + pythondotorg-cases.json):
   the bundle is cloned once; per case the clone is forced clean onto `vulnerable_commit` and
   `dispatch vulnerability-remediation --advisories ADV --input package=PACKAGE --json` runs.
   Judged independently of the tool, from the pypa OSV records of the package (all of them,
   not only the case's advisories; withdrawn records skipped):
   - advisories found: the case's ids named by the package's item (`data.advisories`) or the run's report;
   - version chosen: the version the patch pins for the package (`+name==X` lines); with no
     patch, the item's planned `data.target`, marked `*`;
   - still affected: some record affects the chosen version (ECOSYSTEM ranges: introduced /
     fixed / last_affected events, and the record's `versions` list);
   - lowest unaffected in the release line (`lowest_unaffected_in_line`): among the versions
     the records name (event versions and `versions` lists; pre/dev releases only when `from`
     is one), the lowest version greater than `from` that no record affects, looked for in
     `from`'s major.minor line first, then its major line, then any;
   - files edited: the patch's files; declaring files: the clean checkout's requirement files
     (requirements*.txt/.in, constraints*.txt, Pipfile, pyproject.toml, setup.py/.cfg) with a
     line pinning or constraining the package (name followed by a version operator);
   - applies: `git apply --check` of the patch in the clean checkout at the vulnerable commit.
   A case "produces" when its item is succeeded/needs_regeneration with a non-empty patch, or
   needs_regeneration with a blocker that names a command (`fix`). "Recipe path, no LLM":
   the item's source is `recipe` and the run made no LLM call.
2. distroless-migration on docker/awesome-compose (awesome-compose.tar.gz): unpacked, `git init`,
   one commit, one `dispatch distroless-migration --json`. Per Dockerfile (each tracked Dockerfile,
   and each work item): status, FROM images old → new (the recipe's structured result in the
   item's `plan_data.migration`, else the patch's -FROM/+FROM lines), OS packages mapped /
   not needed / unmapped (plan data), shell-free or the final stage's blockers (file:line), and
   whether that Dockerfile's section of the patch applies (`git apply --check --include=PATH`).
   Dropped packages (succeeded items only): the bench parses the original Dockerfile's install
   commands itself (apt-get/apt/aptitude install, apk add, yum/dnf/microdnf install, zypper
   install; RUN continuations and heredocs; variables and local files are skipped) and, for
   every package, requires that the tool's plan data maps it to names that all appear in an
   `apk add` of the new Dockerfile (the patched file; the plan's new_text when the section does
   not apply), or maps it to nothing with a note, or that some note of the item names it as not
   needed / provided; a package kept by name in a new `apk add` is fine. Anything else (unmapped
   in a succeeded item, or not accounted for at all) is dropped.
   An item is "migrated" when it is succeeded/needs_regeneration and the patch has its section,
   "blocked" when it is blocked with at least one blocker, each naming a file and a message.

Run: python bench/realworld.py [--cases 1,3-5] [--only remediation|distroless] [--json FILE] [--keep]
     [--cold] [--model PROVIDER:NAME] [--timeout S] [--corpus DIR] [--advisories DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"]
PRODUCED = ("succeeded", "needs_regeneration")


# ---------------------------------------------------------------- OSV records (pure; tested)

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


# ---------------------------------------------------------------- processes, git, patches

@dataclass
class Dispatched:
    seconds: float
    exit_code: int | None
    result: dict[str, Any] | None  # the parsed --json output; None when there was none
    stderr: str
    stdout: str

    @property
    def problem(self) -> str | None:
        if self.exit_code is None:
            return "timed out"
        if self.result is None:
            tail = (self.stderr or self.stdout).strip().splitlines()[-3:]
            return f"no JSON result (exit {self.exit_code}): {' | '.join(tail)}"
        return None


def run_dispatch(args: list[str], home: Path, timeout: float, model: str | None) -> Dispatched:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANNER_")}
    env["PLANNER_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    command = [sys.executable, "-m", "planner", "dispatch", *args, "--json", *(["--model", model] if model else [])]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        return Dispatched(time.perf_counter() - started, None, None, str(exc.stderr or ""), str(exc.stdout or ""))
    seconds = time.perf_counter() - started
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        result = None
    return Dispatched(seconds, done.returncode, result if isinstance(result, dict) else None, done.stderr, done.stdout)


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GIT, "-C", str(repo), *args], capture_output=True, text=True, check=check)


def patch_sections(patch: str) -> dict[str, str]:
    """The patch split per file (the b/ path of each `diff --git` header)."""
    sections: dict[str, str] = {}
    for chunk in re.split(r"(?m)^(?=diff --git )", patch or ""):
        if not chunk.startswith("diff --git "):
            continue
        header = chunk.splitlines()[0]
        target = re.search(r" b/(.+)$", header)
        plus = re.search(r"(?m)^\+\+\+ b/(.+)$", chunk)
        path = (plus or target).group(1).strip() if (plus or target) else header
        sections[path] = chunk if chunk.endswith("\n") else chunk + "\n"
    return sections


def apply_check(repo: Path, patch: str, scratch: Path, include: str | None = None) -> tuple[bool, str]:
    """`git apply --check` of PATCH in REPO (optionally only the section for INCLUDE)."""
    scratch.write_text(patch, encoding="utf-8")
    done = git(repo, "apply", "--check", *([f"--include={include}"] if include else []), str(scratch), check=False)
    return done.returncode == 0, done.stderr.strip().replace("\n", " | ")


def report_text(result: dict[str, Any] | None) -> str:
    path = (result or {}).get("report_path")
    try:
        return Path(path).read_text(encoding="utf-8") if path else ""
    except OSError:
        return ""


# ---------------------------------------------------------------- output

def table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[str(c) for c in headers], *[["-" if c is None else str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def target_line(label: str, value: str, target: str, met: bool) -> str:
    return f"  {label:<46} {value:<22} target {target:<22} {'ok' if met else 'MISSED'}"


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def fmt_s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


# ---------------------------------------------------------------- 1. remediation

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


# ---------------------------------------------------------------- 2. distroless

MANAGERS = {"apt-get": "install", "apt": "install", "aptitude": "install", "apk": "add", "yum": "install",
            "dnf": "install", "microdnf": "install", "zypper": "install"}
OPTION_ARGS = {"-o", "--option", "-t", "--target-release", "--virtual", "-X", "--repository", "--repositories-file",
               "-p", "--root", "-c", "--config", "--installroot", "--releasever", "--setopt", "--enablerepo",
               "--disablerepo"}


def is_dockerfile(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name == "dockerfile" or name.startswith("dockerfile.") or name.endswith(".dockerfile")


def run_scripts(text: str) -> list[tuple[int, str]]:
    """(line, shell script) of every RUN instruction: continuations joined, heredoc bodies included,
    exec form joined with spaces, RUN flags (--mount=…) removed."""
    lines, scripts, i = text.splitlines(), [], 0
    while i < len(lines):
        if not lines[i].strip() or lines[i].lstrip().startswith("#"):
            i += 1
            continue
        start, parts = i, []
        while i < len(lines):
            line = lines[i]
            i += 1
            if parts and line.lstrip().startswith("#"):
                continue
            if line.rstrip().endswith("\\"):
                parts.append(line.rstrip()[:-1])
                continue
            parts.append(line)
            break
        logical = " ".join(parts)
        m = re.match(r"\s*RUN\s+(.*)$", logical, re.IGNORECASE | re.DOTALL)
        if not m:
            continue
        body = re.sub(r"^(\s*--[\w-]+(=\S*)?\s+)+", "", m.group(1))
        if body.lstrip().startswith("["):
            with contextlib.suppress(json.JSONDecodeError, TypeError):
                body = " ".join(json.loads(body))
        for tag in re.findall(r"<<-?\s*[\"']?(\w+)[\"']?", body):
            heredoc = []
            while i < len(lines) and lines[i].strip() != tag:
                heredoc.append(lines[i])
                i += 1
            i += 1
            body += "\n" + "\n".join(heredoc)
        scripts.append((start + 1, body))
    return scripts


def installed_packages(text: str, managers: Iterable[str] = tuple(MANAGERS)) -> list[tuple[int, str, str]]:
    """(line, manager, package) for each package an install command of MANAGERS names; version pins
    and :arch stripped; variables, options and local files / URLs skipped."""
    wanted, found = set(managers), []
    for line, script in run_scripts(text):
        script = script.replace("\\\n", " ")
        for segment in re.split(r"&&|\|\||;|\||\n", script):
            try:
                words = shlex.split(segment, comments=True)
            except ValueError:
                words = segment.split()
            while words and (words[0] in ("sudo", "env", "command") or re.match(r"^\w+=", words[0])):
                words = words[1:]
            if not words or words[0] not in wanted:
                continue
            manager, sub = words[0], MANAGERS[words[0]]
            if manager == "zypper":
                rest = words[1:]
                idx = next((k for k, w in enumerate(rest) if w in ("install", "in")), None)
            else:
                rest = words[1:]
                idx = next((k for k, w in enumerate(rest) if w == sub), None)
            if idx is None:
                continue
            skip = False
            for word in rest[idx + 1:]:
                if skip:
                    skip = False
                    continue
                if word.startswith("-"):
                    skip = word in OPTION_ARGS
                    continue
                if "$" in word or "/" in word or word.endswith((".deb", ".rpm", ".apk")):
                    continue
                name = re.split(r"[=<>~]", word, maxsplit=1)[0].split(":", 1)[0]
                if name:
                    found.append((line, manager, name))
    return found


def from_lines(section: str) -> tuple[list[str], list[str]]:
    old = [m.group(1) for m in re.finditer(r"(?im)^-\s*FROM\s+(?:--\S+\s+)*(\S+)", section)]
    new = [m.group(1) for m in re.finditer(r"(?im)^\+\s*FROM\s+(?:--\S+\s+)*(\S+)", section)]
    return old, new


def dropped_packages(original: str, new_text: str, migration: dict[str, Any], notes: list[str]) -> list[str]:
    """Packages the original installs that the migrated Dockerfile neither installs (as mapped) nor
    explains as not needed; see the module docstring."""
    new_apk = {p for _, _, p in installed_packages(new_text, ("apk",))}
    changes = migration.get("packages") or []
    unmapped = {u.get("name"): u.get("reason", "") for u in migration.get("unmapped") or []}
    texts = [*notes, *(migration.get("notes") or []), *((migration.get("runtime") or {}).get("notes") or [])]
    dropped = []
    for _, _, package in installed_packages(original):
        mine = [c for c in changes if re.split(r"[=<>~]", str(c.get("old", "")), maxsplit=1)[0] == package]
        explained = any(package in t and re.search(r"not needed|provided|not required", t, re.I) for t in texts)
        problem = None
        for change in mine:
            names = change.get("new") or []
            missing = [n for n in names if n not in new_apk]
            if missing:
                problem = f"{package}: mapped to {', '.join(names)} but {', '.join(missing)} is in no new apk add"
            elif not names and not change.get("note") and not explained:
                problem = f"{package}: mapped to nothing, with no note"
        if not mine and package not in new_apk and not explained:
            problem = f"{package}: unmapped ({unmapped[package]})" if package in unmapped else \
                f"{package}: in no new apk add and not in the plan data"
        if problem and problem not in dropped:
            dropped.append(problem)
    return dropped


def unpack(archive: Path, dest: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    entries = [p for p in dest.iterdir() if not p.name.startswith(".")]
    root = entries[0] if len(entries) == 1 and entries[0].is_dir() else dest
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(root)], check=True, capture_output=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "awesome-compose")
    return root


def distroless(corpus: Path, work: Path, args: argparse.Namespace) -> dict[str, Any] | None:
    archive = corpus / "awesome-compose.tar.gz"
    if not archive.is_file():
        print(f"distroless: skipped — missing {archive}")
        return None
    (work / "compose").mkdir()
    repo = unpack(archive, work / "compose")
    dockerfiles = [p for p in git(repo, "ls-files").stdout.splitlines() if is_dockerfile(p)]
    print(f"\n== distroless-migration: docker/awesome-compose, {len(dockerfiles)} Dockerfiles ==")
    home = work / ("home-distroless" if args.cold else "home")
    run = run_dispatch(["distroless-migration", "--repo", str(repo)], home, args.timeout, args.model)
    result = run.result or {}
    dirty = git(repo, "status", "--porcelain").stdout.strip()
    items = result.get("items") or []
    patch = result.get("patch") or ""
    sections = patch_sections(patch)
    whole_applies, whole_error = apply_check(repo, patch, work / "compose.patch") if patch else (None, "")
    checks = {path: apply_check(repo, patch, work / "compose.patch", include=path) for path in sections}
    new_texts: dict[str, str] = {}
    for path, (ok, _) in checks.items():  # apply each section that applies to read the file the user would get
        if ok:
            (work / "section.patch").write_text(sections[path], encoding="utf-8")
            if git(repo, "apply", str(work / "section.patch"), check=False).returncode == 0 and (repo / path).is_file():
                new_texts[path] = (repo / path).read_text(encoding="utf-8", errors="replace")
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-q", "-fdx")

    by_path = {str((i.get("data") or {}).get("path") or i.get("id")): i for i in items}
    rows, records = [], []
    for path in sorted(set(dockerfiles) | set(by_path)):
        item = by_path.get(path)
        status = item.get("status") if item else "no item"
        migration = ((item or {}).get("plan_data") or {}).get("migration") or {}
        stages = [f"{s.get('old_image')} → {s.get('new_image')}" for s in migration.get("stages") or []
                  if s.get("old_image") and s.get("old_image") != s.get("new_image")]
        if not stages and path in sections:
            old, new = from_lines(sections[path])
            stages = [f"{o} → {n}" for o, n in zip(old, new, strict=False)]
        packages = migration.get("packages") or []
        mapped = [f"{p.get('old')}→{'+'.join(p.get('new') or [])}" for p in packages if p.get("new")]
        not_needed = [str(p.get("old")) for p in packages if not p.get("new")]
        unmapped = [str(u.get("name")) for u in migration.get("unmapped") or []]
        runtime = migration.get("runtime") or {}
        item_blockers = [b for b in (item or {}).get("blockers") or []]
        shell_blockers = [f"{b.get('file')}:{b.get('line')}" for b in runtime.get("blockers") or []]
        shell = "shell-free" if runtime.get("shell_free") else (
            f"shell, {len(shell_blockers) or 'no'} blocker(s)" if runtime else None)
        migrated = status in PRODUCED and path in sections
        blocked = status == "blocked" and bool(item_blockers) and all(b.get("file") and b.get("message")
                                                                      for b in item_blockers)
        applies = checks.get(path)
        dropped: list[str] = []
        original = (repo / path).read_text(encoding="utf-8", errors="replace") if (repo / path).is_file() else ""
        if status in PRODUCED:
            new_text = new_texts.get(path) or migration.get("new_text") or original
            dropped = dropped_packages(original, new_text, migration, list((item or {}).get("notes") or []))
        record = {"path": path, "status": status, "source": (item or {}).get("source"), "from": stages,
                  "installs": [p for _, _, p in installed_packages(original)], "mapped": mapped,
                  "not_needed": not_needed, "unmapped": unmapped, "shell_free": runtime.get("shell_free"),
                  "shell_blockers": shell_blockers,
                  "blockers": [f"{b.get('kind')} {b.get('file')}:{b.get('line')} {b.get('message')}"
                               for b in item_blockers],
                  "in_patch": path in sections, "applies": None if applies is None else applies[0],
                  "apply_error": applies[1] if applies and not applies[0] else "", "migrated": migrated,
                  "blocked": blocked, "dropped": dropped, "error": (item or {}).get("error")}
        records.append(record)
        rows.append([path, status, "; ".join(stages) or None,
                     f"{len(mapped)}/{len(not_needed)}/{len(unmapped)}" if migration else None,
                     shell, None if applies is None else ("yes" if applies[0] else "no"),
                     len(dropped) if status in PRODUCED else None])
    print()
    print(table(["Dockerfile", "status", "FROM old → new", "pkgs map/none/unmap", "final stage", "applies",
                 "dropped"], rows))
    details = []
    for r in records:
        notes = []
        if r["error"]:
            notes.append(f"error: {r['error']}")
        notes += [f"blocker: {b}" for b in r["blockers"]]
        if r["shell_blockers"]:
            notes.append(f"final stage keeps a shell; blockers at {', '.join(r['shell_blockers'])}")
        if r["mapped"] or r["not_needed"] or r["unmapped"]:
            notes.append(f"packages: mapped {', '.join(r['mapped']) or '-'}; not needed "
                         f"{', '.join(r['not_needed']) or '-'}; unmapped {', '.join(r['unmapped']) or '-'}")
        notes += [f"dropped: {d}" for d in r["dropped"]]
        if r["applies"] is False:
            notes.append(f"section does not apply: {r['apply_error']}")
        if r["status"] in PRODUCED and not r["in_patch"]:
            notes.append("succeeded but the patch has no section for it")
        details += [f"  {r['path']}: {n}" for n in notes]
    others = sorted(set(sections) - {r["path"] for r in records})
    if others:
        details.append(f"  patch also edits: {', '.join(others)}")
    if dirty:
        details.append(f"  the run modified the work tree: {dirty[:200]}")
    if details:
        print("\n".join(["", "details:", *details]))

    expected = len(dockerfiles)
    completed = run.result is not None and not result.get("error") and bool(items)
    totals = {
        "run_status": result.get("status"), "exit_code": run.exit_code,
        "run_error": result.get("error") or run.problem, "completed": completed,
        "dockerfiles": expected, "items": len(items), "migrated": sum(r["migrated"] for r in records),
        "blocked": sum(r["blocked"] for r in records),
        "neither": sum(not (r["migrated"] or r["blocked"]) for r in records),
        "succeeded_with_dropped": sum(bool(r["dropped"]) for r in records),
        "dropped_packages": sum(len(r["dropped"]) for r in records),
        "sections": len(sections), "sections_apply": sum(bool(ok) for ok, _ in checks.values()),
        "patch_applies": whole_applies, "patch_apply_error": whole_error,
        "seconds": round(run.seconds, 3), "llm_calls": len(result.get("llm_calls") or []),
        "statuses": {s: sum(r["status"] == s for r in records) for s in sorted({r["status"] for r in records})},
        "run_id": result.get("run_id"),
    }
    t = totals
    print(f"\ndistroless totals (run {t['run_id'] or '-'}: status {t['run_status']}, exit {t['exit_code']}; "
          f"per Dockerfile: {', '.join(f'{k} {v}' for k, v in t['statuses'].items())}):")
    if t["run_error"]:
        print(f"  run error: {t['run_error']}")
    print(target_line("run completes (a result with items, no error)", "yes" if completed else "no", "completes",
                      completed))
    print(target_line("work items", f"{t['items']}/{expected}", f"{expected}/{expected}", t["items"] == expected))
    both = t["migrated"] + t["blocked"]
    print(target_line("migrated (with a patch) or blocked (named)",
                      f"{both}/{expected} ({t['migrated']} + {t['blocked']})", f"{expected}/{expected}",
                      expected > 0 and both == expected and t["neither"] == 0))
    print(target_line("neither migrated nor blocked (failures)", str(t["neither"]), "0", t["neither"] == 0))
    succeeded = sum(r["status"] in PRODUCED for r in records)
    print(target_line("succeeded items that dropped a package", f"{t['succeeded_with_dropped']}/{succeeded} "
                      f"({t['dropped_packages']} pkgs)", "0 (of >0 succeeded)",
                      succeeded > 0 and t["succeeded_with_dropped"] == 0))
    print(target_line("patch sections that apply", f"{t['sections_apply']}/{t['sections']}",
                      "100 % (of >0 sections)", t["sections"] > 0 and t["sections_apply"] == t["sections"]))
    print(target_line("whole-run seconds", f"{t['seconds']:.2f}" + ("" if completed else " (not completed)"),
                      "≤ 10 s, completed", completed and t["seconds"] <= 10))
    return {"dockerfiles": records, "totals": totals}


# ---------------------------------------------------------------- main

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", help="remediation cases to run, 1-based: 1,3,5-7 (default: all)")
    parser.add_argument("--only", choices=("remediation", "distroless"))
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs (clones, PLANNER_HOME, patches)")
    parser.add_argument("--cold", action="store_true", help="a fresh PLANNER_HOME for every dispatch")
    parser.add_argument("--model", help="pass --model to dispatch (default: none; PLANNER_MODEL is not passed on)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per dispatch before it counts as failed")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--advisories", type=Path, help="pypa OSV records (default: CORPUS/../advisories/pypa)")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    advisories = (args.advisories or corpus.parent / "advisories" / "pypa").resolve()
    if not corpus.is_dir():
        print(f"realworld: skipped — the corpus folder {corpus} is absent (expected ../shared/corpus beside the repo)")
        return
    work = Path(tempfile.mkdtemp(prefix="bench-realworld-"))
    print(f"planner: {ROOT} ({sys.executable} -m planner); PLANNER_HOME: fresh under {work} "
          f"({'one per dispatch' if args.cold else 'one for this bench run'}); model: {args.model or 'none'}")
    figures: dict[str, Any] = {"planner": str(ROOT), "corpus": str(corpus), "advisories": str(advisories),
                               "cold": args.cold, "model": args.model}
    try:
        if args.only in (None, "remediation"):
            figures["remediation"] = remediation(corpus, advisories, work, args)
        if args.only in (None, "distroless"):
            figures["distroless"] = distroless(corpus, work, args)
    finally:
        if args.keep:
            print(f"\nkept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str) + "\n", encoding="utf-8")
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    main()
