"""ast-grep recipes: the rules go to the `ast-grep` binary (from the ast-grep-cli package) unchanged.

The binary, not the Python bindings, because the bindings cannot apply `fix:` with `transform:` or
`rewriters:`; one process per round covers every file. Each round asks for the matches as JSON (with
each fix already rendered by ast-grep), applies the non-overlapping ones, and goes again until nothing
changes, so a fix that uncovers another match (nested calls) is applied too.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from planner.patch.diff import to_bytes
from planner.tccm.astgrep_rules import TIMEOUT_S, AstGrepError, binary

MAX_ROUNDS = 25  # a rule whose fix matches itself again would loop forever; this says so instead


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
