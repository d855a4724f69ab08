"""`--verify`: run the repo's test command against the patched tree, in a throwaway copy, in the sandbox.

The user's work tree is never touched: the repository is copied (without .git), the patched files are
written there, and the test command runs in the sandbox (planner/sandbox.py) with a timeout: the copy is
the only writable path, with no network, no home, no keys and no sockets, so a hostile `conftest.py` reads
and reaches nothing of the operator's. Output is kept short and scrubbed of secrets.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from planner import sandbox
from planner.patch.diff import to_bytes
from repocontext.secrets import redact

IGNORED = shutil.ignore_patterns(".git", ".planner", "__pycache__", ".venv", ".tox", ".pytest_cache")
PYTEST = ("pytest", "python -m pytest", "python3 -m pytest")
QUIET = {"NO_COLOR": "1", "PIP_NO_INDEX": "1", "PYTHONDONTWRITEBYTECODE": "1", "CARGO_NET_RETRY": "0"}
# What cargo, Maven, Gradle, Go, npm, Bundler and dotnet print when a download fails: the sandbox has no network,
# so a suite whose dependencies are not in the repository stops before any test ran. That is "not run", never
# "FAILED" (a fix is not blamed for it) and never "passed".
OFFLINE = re.compile(
    r"resolve host|temporary failure in name resolution|name or service not known|ENOTFOUND|EAI_AGAIN|"
    r"UnknownHostException|network is unreachable|dial tcp|spurious network error|failed to download|"
    r"could not transfer artifact|could not GET|unable to load the service index|NU1301|"
    r"could not (?:fetch|reach|find gem)|Downloading https?://", re.IGNORECASE)
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Maven colours its log
MISSING = re.compile(r"^(?:.*: )?(?P<what>\S+): (?:No such file or directory|not found)$", re.MULTILINE)


def _command(command: str, tests: list[str]) -> list[str]:
    argv = shlex.split(command)
    if tests and command.strip().startswith(PYTEST):
        argv += tests  # run only the tests that cover the changed call sites
    return argv


def _write(copy: Path, rel: str, text: str) -> None:
    target = copy / rel
    if target.is_symlink() or not target.resolve().is_relative_to(copy.resolve()):
        raise ValueError(f"{rel} is a link or leaves the repository")
    target.write_bytes(to_bytes(text))  # the exact bytes: no newline or encoding change


def run(repo: Path, files: dict[str, str], command: str, tests: list[str], timeout: float = 600) -> dict[str, Any]:
    argv = _command(command, tests)
    result = {"command": shlex.join(argv), "tests": tests, "exit_code": -1, "passed": False, "seconds": 0.0,
              "isolation": sandbox.isolation()}
    try:
        sandbox.check_available()
    except sandbox.SandboxUnavailable as exc:
        return {**result, "output_tail": str(exc), "refused": True}
    if "/" not in argv[0] and shutil.which(argv[0]) is None:  # `dotnet test` with no dotnet: not a test failure
        return {**result, "passed": None, "output_tail": "", "reason": f"{argv[0]} is not installed"}
    if "/" in argv[0] and not (repo / argv[0]).is_file():  # vendor/bin/phpunit before `composer install`
        return {**result, "passed": None, "output_tail": "",
                "reason": f"not run: {argv[0]} is not in the repository (install its dependencies first)"}
    with sandbox.workspace("verify") as scratch:
        copy = scratch / "repo"
        sandbox.copy_tree(repo, copy, IGNORED)
        try:
            for rel, text in files.items():
                _write(copy, rel, text)
        except ValueError as exc:
            return {**result, "output_tail": f"not run: {exc}"}
        done = sandbox.run(sandbox.Step(argv, copy, timeout=timeout, env=QUIET))
    output = f"timed out after {timeout:.0f}s\n{done.output}" if done.timed_out else done.output
    code = -1 if done.exit_code is None else done.exit_code
    ran = {**result, "exit_code": code, "passed": code == 0, "seconds": round(done.seconds, 2),
           "output_tail": redact(output[-4000:])}
    why = None if code == 0 or done.timed_out else unrunnable(argv, code, done.output)
    return {**ran, "passed": None, "reason": why} if why else ran


def unrunnable(argv: list[str], code: int, output: str) -> str | None:
    """Why a failed command never reached the tests (a download with no network, a program not in the copy);
    None when it ran them and they failed."""
    offline = OFFLINE.search(output)
    if offline:
        line = ANSI.sub("", output[output.rfind("\n", 0, offline.start()) + 1:].partition("\n")[0]).strip()
        return (f"not run: `{shlex.join(argv)}` needed the network to fetch dependencies and the sandbox has none "
                f"(vendor them, or run the tests yourself): {redact(line[:200])}")
    missing = MISSING.search(output) if code in (126, 127) else None
    if missing:
        return f"not run: {missing['what']} is not in the repository (install its dependencies first)"
    return None
