"""Whether ast-grep accepts an ast-grep rule, asked of the `ast-grep` binary itself: the TCCM loader checks
every rule of a class's `recipes:` at validation (planner/tccm/recipemerge.py), and the recipe engine
(planner/recipes/astgrep.py) runs the same binary."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

TIMEOUT_S = 120


class AstGrepError(RuntimeError):
    """ast-grep could not run the rules (missing binary, a bad rule, a fix that never settles)."""


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
