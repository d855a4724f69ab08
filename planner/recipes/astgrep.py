"""ast-grep recipes: the rules go to the `ast-grep` binary (from the ast-grep-cli package) unchanged.

The binary, not the Python bindings, because the bindings cannot apply `fix:` with `transform:` or
`rewriters:`; one process per round covers every file. Each round asks for the matches as JSON (with
each fix already rendered by ast-grep), applies the non-overlapping ones, and goes again until nothing
changes, so a fix that uncovers another match (nested calls) is applied too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from planner.patch.diff import to_bytes

MAX_ROUNDS = 25  # a rule whose fix matches itself again would loop forever; this says so instead
TIMEOUT_S = 120


class AstGrepError(RuntimeError):
    """ast-grep could not run the rules (missing binary, a bad rule, a fix that never settles)."""


@dataclass
class Found:
    """One match: where, which rule, and what it becomes (None for a rule without `fix`)."""

    file: str
    line: int
    rule: str
    text: str
    replacement: str | None
    start: int = 0  # byte offsets in the file as it was when matched
    end: int = 0
    message: str = ""  # the rule's own `message:`, as ast-grep rendered it for this match


@dataclass
class Outcome:
    texts: dict[str, str]
    applied: list[Found] = field(default_factory=list)  # fixes made, across rounds
    findings: list[Found] = field(default_factory=list)  # matches of rules without a fix (last round)
    rounds: int = 0


def binary() -> str:
    """The ast-grep installed with the planner (beside the running interpreter: the ast-grep-cli package's),
    else `ast-grep` on PATH; never `sg`, which on Debian is the switch-group command."""
    beside = Path(sys.executable).parent / "ast-grep"
    found = str(beside) if beside.is_file() and os.access(beside, os.X_OK) else shutil.which("ast-grep")
    if found is None:
        raise AstGrepError("the ast-grep binary is not installed (pip install ast-grep-cli)")
    return found


_FRAME = re.compile(r"^\s*(-->|\||\d+\s*\||\^+\s*$)")  # ast-grep's code frame under a cause: not the message
_AT = re.compile(r"^error: line \d+ column \d+: |\s+at line \d+, column \d+$")


def _causes(stderr: str) -> list[str]:
    """ast-grep's whole chain of causes (each `╰▻` line with the lines that continue it), without its code
    frames and with the positions cut: they count lines in the rule as dumped, not in the TCCM."""
    causes: list[str] = []
    current: list[str] | None = None
    for line in stderr.splitlines():
        stripped = line.strip()
        if stripped.startswith("╰▻"):
            current = [stripped.removeprefix("╰▻").strip()]
            causes.append("")
        elif current is None or not stripped or _FRAME.match(line):
            continue
        else:
            current.append(stripped)
        if current is not None:
            causes[-1] = _AT.sub("", " ".join(current)).strip()
    seen: list[str] = []
    for cause in causes:
        if cause and cause not in seen:
            seen.append(cause)
    return seen


@lru_cache(maxsize=256)
def _rule_problem(text: str) -> str | None:
    with tempfile.TemporaryDirectory(prefix="planner-ast-grep-check-") as scratch:
        (Path(scratch) / "rule.yml").write_text(text, encoding="utf-8")
        (Path(scratch) / "empty").mkdir()
        done = subprocess.run([binary(), "scan", "--rule", "rule.yml", "--json=compact", "empty"], cwd=scratch,
                              capture_output=True, timeout=TIMEOUT_S, check=False)
    if done.returncode in (0, 1):
        return None
    causes = _causes(done.stderr.decode("utf-8", "replace"))
    whole = "".join(c if not i else (" " if causes[i - 1][-1] in ".:" else ": ") + c for i, c in enumerate(causes))
    return "ast-grep refuses the rule: " + (whole or f"exit {done.returncode}")


def rule_problem(rule: dict[str, Any]) -> str | None:
    """Why ast-grep refuses a rule (unknown language, a misspelt rule key, a bad regex), asked of ast-grep
    itself on an empty folder, in ast-grep's whole words; None when it accepts it, when it holds ${inputs.*}
    (known only at run time), or when the binary is missing (the run then says so)."""
    text = yaml.safe_dump(rule, sort_keys=True)
    if "${inputs." in text:
        return None
    try:
        binary()
    except AstGrepError:
        return None
    problem = _rule_problem(text)
    if problem is not None and "untagged enum SgLang" in problem:
        problem += f" (language {rule.get('language')!r} is not one ast-grep knows)"
    return problem


def scan(rules: list[dict[str, Any]], folder: Path) -> list[Found]:
    """Every match of `rules` in the files under `folder` (ast-grep's own file/language choice)."""
    rule_file = folder.parent / "rules.yml"
    rule_file.write_text("\n---\n".join(yaml.safe_dump(r, sort_keys=False) for r in rules), encoding="utf-8")
    argv = [binary(), "scan", "--rule", str(rule_file), "--json=compact", "--no-ignore", "hidden",
            "--no-ignore", "vcs", "--no-ignore", "dot", "--threads", "1", "--color", "never", "."]
    try:
        done = subprocess.run(argv, cwd=folder, capture_output=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise AstGrepError(f"ast-grep did not finish in {TIMEOUT_S} s") from None
    if done.returncode not in (0, 1) or not done.stdout.strip():
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise AstGrepError("ast-grep refused the rules: " + (" ".join(why[-3:]) or f"exit {done.returncode}"))
    found = []
    for m in json.loads(done.stdout):
        offsets = m.get("replacementOffsets") or m["range"]["byteOffset"]
        found.append(Found(file=m["file"].removeprefix("./"), line=m["range"]["start"]["line"] + 1,
                           rule=m.get("ruleId") or "", text=m["text"], replacement=m.get("replacement"),
                           start=offsets["start"], end=offsets["end"], message=m.get("message") or ""))
    return sorted(found, key=lambda f: (f.file, f.start, f.end, f.rule))


def _apply(data: bytes, fixes: list[Found]) -> tuple[bytes, list[Found]]:
    """Apply non-overlapping fixes (first by position wins; the others are retried next round)."""
    taken: list[Found] = []
    last_end = -1
    for fix in fixes:
        if fix.start >= last_end and to_bytes(fix.replacement or "") != data[fix.start:fix.end]:
            taken.append(fix)
            last_end = max(fix.end, fix.start + 1)
    for fix in reversed(taken):
        data = data[:fix.start] + to_bytes(fix.replacement or "") + data[fix.end:]
    return data, taken


def run(rules: list[dict[str, Any]], texts: dict[str, str]) -> Outcome:
    """Apply `rules` to the files (path → text) until nothing changes; the texts are never written back
    to the repository, only to a scratch folder ast-grep reads."""
    outcome = Outcome(texts=dict(texts))
    if not texts:
        return outcome
    with tempfile.TemporaryDirectory(prefix="planner-ast-grep-") as scratch:
        folder = Path(scratch) / "repo"
        for path, text in texts.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(to_bytes(text))
        for outcome.rounds in range(1, MAX_ROUNDS + 1):
            found = scan(rules, folder)
            outcome.findings = [f for f in found if f.replacement is None]
            changed = _round(folder, [f for f in found if f.replacement is not None], outcome)
            if not changed:
                return outcome
        raise AstGrepError(f"the fixes still change files after {MAX_ROUNDS} rounds (a fix that matches its "
                           "own rule again?)")
    return outcome


def _round(folder: Path, fixes: list[Found], outcome: Outcome) -> bool:
    by_file: dict[str, list[Found]] = {}
    for fix in fixes:
        by_file.setdefault(fix.file, []).append(fix)
    changed = False
    for path, mine in sorted(by_file.items()):
        if path not in outcome.texts:
            continue  # never a file we did not hand over
        data, taken = _apply((folder / path).read_bytes(), mine)
        if taken:
            changed = True
            (folder / path).write_bytes(data)
            outcome.texts[path] = data.decode("utf-8", "surrogateescape")
            outcome.applied += taken
    return changed
