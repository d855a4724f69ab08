"""Shared helpers of bench/realworld.py: the repo root and corpus paths, `planner dispatch` as a child
process, git and patch helpers, the output table and target lines, and the awesome-compose unpacking."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"]
PRODUCED = ("succeeded", "needs_regeneration")


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


# ---------------------------------------------------------------- corpus archives

def committed(target: Path, message: str) -> Path:
    """`target` as a git repository with everything in it committed."""
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(target)], check=True, capture_output=True)
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", message)
    return target


def unpack(archive: Path, dest: Path, message: str = "awesome-compose") -> Path:
    """The archive's tree (its one top folder, if it has one) unpacked below `dest` and committed."""
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    entries = [p for p in dest.iterdir() if not p.name.startswith(".")]
    return committed(entries[0] if len(entries) == 1 and entries[0].is_dir() else dest, message)
