"""`--verify`: run the repo's test command against the patched tree, in a throwaway copy.

The user's work tree is never touched: the repository is copied to a temp
dir (without .git), the patched files are written there, and the test command
runs there with a timeout. Output is kept short and scrubbed of secrets.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from planner.patch.diff import to_bytes
from repocontext.secrets import redact

IGNORED = shutil.ignore_patterns(".git", ".planner", "__pycache__", ".venv", ".tox", ".pytest_cache")
PYTEST = ("pytest", "python -m pytest", "python3 -m pytest")


def _command(command: str, tests: list[str]) -> list[str]:
    argv = shlex.split(command)
    if tests and command.strip().startswith(PYTEST):
        argv += tests  # run only the tests that cover the changed call sites
    return argv


def run(repo: Path, files: dict[str, str], command: str, tests: list[str], timeout: float = 600) -> dict[str, Any]:
    argv = _command(command, tests)
    with tempfile.TemporaryDirectory(prefix="planner-verify-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(repo, copy, symlinks=True, ignore=IGNORED)
        for rel, text in files.items():
            (copy / rel).write_bytes(to_bytes(text))  # the exact bytes: no newline or encoding change
        started = time.monotonic()
        try:
            proc = subprocess.run(argv, cwd=copy, capture_output=True, text=True, timeout=timeout, check=False)
            code, output = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            code, output = -1, f"timed out after {timeout:.0f}s\n{exc.stdout or ''}"
        except OSError as exc:
            code, output = -1, f"cannot run {argv[0]!r}: {exc.strerror}"
    return {"command": shlex.join(argv), "tests": tests, "exit_code": code, "passed": code == 0,
            "seconds": round(time.monotonic() - started, 2), "output_tail": redact(output[-4000:])}
