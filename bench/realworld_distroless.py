"""bench/realworld.py part 2: distroless-migration on docker/awesome-compose, one dispatch, judged per
Dockerfile, with the bench's own reading of the original install commands (see bench/realworld.py's docstring)."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from realworld_common import PRODUCED, apply_check, git, patch_sections, run_dispatch, table, target_line, unpack
from realworld_dlcheck import failures, migration_ms

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
        for segment in re.split(r"&&|\|\||;|\||\n|(?<!\$)\(|\)", script):
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



TREES = (("awesome-compose", "docker/awesome-compose"), ("robot-shop", "instana/robot-shop"),
         ("example-voting-app", "dockersamples/example-voting-app"))


def distroless(corpus: Path, work: Path, args: argparse.Namespace) -> dict[str, Any] | None:
    """Every corpus tree of TREES that is present, one dispatch each; figures per tree."""
    figures: dict[str, Any] = {}
    for name, title in TREES:
        archive = corpus / f"{name}.tar.gz"
        if not archive.is_file():
            print(f"distroless: {name} skipped — missing {archive}")
            continue
        figures[name] = distroless_tree(archive, title, work / name, args)
    return figures or None


def distroless_tree(archive: Path, title: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    (work / "compose").mkdir(parents=True)
    repo = unpack(archive, work / "compose", title)
    dockerfiles = [p for p in git(repo, "ls-files").stdout.splitlines() if is_dockerfile(p)]
    print(f"\n== distroless-migration: {title}, {len(dockerfiles)} Dockerfiles ==")
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
    in_process = migration_ms(repo, git(repo, "ls-files").stdout.splitlines(), dockerfiles)

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
        broken: list[str] = []
        original = (repo / path).read_text(encoding="utf-8", errors="replace") if (repo / path).is_file() else ""
        if status in PRODUCED:
            new_text = new_texts.get(path) or migration.get("new_text") or original
            dropped = dropped_packages(original, new_text, migration, list((item or {}).get("notes") or []))
            broken = failures(new_text)
        record = {"path": path, "status": status, "source": (item or {}).get("source"), "from": stages,
                  "installs": [p for _, _, p in installed_packages(original)], "mapped": mapped,
                  "not_needed": not_needed, "unmapped": unmapped, "shell_free": runtime.get("shell_free"),
                  "shell_blockers": shell_blockers,
                  "blockers": [f"{b.get('kind')} {b.get('file')}:{b.get('line')} {b.get('message')}"
                               for b in item_blockers],
                  "in_patch": path in sections, "applies": None if applies is None else applies[0],
                  "apply_error": applies[1] if applies and not applies[0] else "", "migrated": migrated,
                  "blocked": blocked, "dropped": dropped, "broken": broken, "error": (item or {}).get("error")}
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
        notes += [f"fails a build check: {b}" for b in r["broken"]]
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
        "succeeded_failing_checks": sum(bool(r["broken"]) for r in records),
        "ms_per_dockerfile": round(1000 * run.seconds / max(1, len(dockerfiles)), 1),
        "migration_ms": in_process,
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
    print(target_line("succeeded items that fail a build check", f"{t['succeeded_failing_checks']}/{succeeded}",
                      "0", t["succeeded_failing_checks"] == 0))
    print(target_line("migrated share", f"{t['migrated']}/{expected}", "≥ 80 %",
                      expected > 0 and t["migrated"] >= 0.8 * expected))
    print(target_line("ms per Dockerfile, migration in process", f"{in_process['mean']} (max {in_process['max']})",
                      "≤ 50 ms", in_process["mean"] <= 50))
    print(target_line("ms per Dockerfile, whole process", f"{t['ms_per_dockerfile']}", "(includes start and gather)",
                      True))
    print(target_line("patch sections that apply", f"{t['sections_apply']}/{t['sections']}",
                      "100 % (of >0 sections)", t["sections"] > 0 and t["sections_apply"] == t["sections"]))
    print(target_line("whole-run seconds", f"{t['seconds']:.2f}" + ("" if completed else " (not completed)"),
                      "≤ 10 s, completed", completed and t["seconds"] <= 10))
    return {"dockerfiles": records, "totals": totals}
