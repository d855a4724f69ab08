"""Attacks from hostile inputs (issue 23), played end to end against the real `planner` CLI, with figures.

Each attack is one function: it builds what an attacker brings (a repository, a task-class file) in a
scratch folder, runs `python -m planner ...` as a child process in a fresh PLANNER_HOME, and returns a Row:
wall time, CPU time (user + system, from the child's own rusage, so other load on the machine does not
count), peak resident memory, exit code and what came out. A child past --timeout is killed (its whole
process group) and shown as "killed".

    python bench/attacks.py [--timeout S] [--memory-mb N] [--only NAME ...] [--source TREE]

--source runs another checkout of the planner (e.g. one unpacked with `git archive REV`) to measure the
figures before a change. --memory-mb caps the child's address space (RLIMIT_AS), as a worker would.

To add an attack: write `def attack_<name>(work: Path, run: Runner) -> Row` and list it in ATTACKS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"]


@dataclass
class Row:
    attack: str
    wall_s: float
    cpu_s: float
    peak_mb: float
    exit_code: int | None  # None: killed at the timeout
    outcome: str


@dataclass
class Runner:
    """Runs `python -m planner ARGS` in a fresh home, with a timeout and an optional memory cap."""

    source: Path
    timeout: float
    memory_mb: int | None

    def __call__(self, attack: str, work: Path, *args: str, env: dict[str, str] | None = None,
                 outcome: Callable[[int | None, str, str], str] | None = None) -> Row:
        home = Path(tempfile.mkdtemp(prefix="home-", dir=work))
        full_env = {**os.environ, "PLANNER_HOME": str(home), "PYTHONPATH": str(self.source), **(env or {})}
        out, err = work / f"{attack}.out", work / f"{attack}.err"
        started = time.monotonic()
        with out.open("w") as stdout, err.open("w") as stderr:
            child = subprocess.Popen([sys.executable, "-m", "planner", *args], stdout=stdout, stderr=stderr,
                                     env=full_env, cwd=work, start_new_session=True, preexec_fn=self._limit)
            killer = threading.Timer(self.timeout, os.killpg, (child.pid, signal.SIGKILL))
            killer.start()
            _, status, usage = os.wait4(child.pid, 0)
            killer.cancel()
        wall = time.monotonic() - started
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL and wall >= self.timeout
        code = None if killed else os.waitstatus_to_exitcode(status)
        text, errors = out.read_text(errors="replace"), err.read_text(errors="replace")
        said = "killed at the timeout" if code is None else (outcome or _last_line)(code, text, errors)
        return Row(attack, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code, said)

    def _limit(self) -> None:
        if self.memory_mb:
            cap = self.memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _last_line(code: int, stdout: str, stderr: str) -> str:
    lines = (stderr.strip() or stdout.strip()).splitlines()
    return lines[-1][:100] if lines else f"exit {code}"


def _status(code: int, stdout: str, stderr: str) -> str:
    """The outcome of a dispatch: its `status:` line."""
    found = [line.strip() for line in stderr.splitlines() if line.strip().startswith("status:")]
    return found[0].split("  ")[0] if found else _last_line(code, stdout, stderr)


def _about(path: str) -> Callable[[int | None, str, str], str]:
    """The outcome of a `gather --json`: the diagnostic naming `path`, or why there is none."""
    def outcome(code: int | None, stdout: str, stderr: str) -> str:
        try:
            context = json.loads(stdout)
        except ValueError:
            return _last_line(code or 0, stdout, stderr)
        said = [d["message"] for d in context.get("diagnostics", []) if d.get("file") == path]
        return f"{path}: {said[0]}"[:100] if said else f"no diagnostic names {path}"
    return outcome


def repository(work: Path, name: str, files: dict[str, str]) -> Path:
    repo = work / name
    repo.mkdir()
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    subprocess.run([*GIT, "init", "-q", str(repo)], check=True)
    subprocess.run([*GIT, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-qm", "attack"], check=True)
    return repo


def alias_bomb(levels: int = 10, width: int = 9, indent: str = "") -> str:
    """YAML's "billion laughs": width**levels strings once every alias is expanded, ~600 bytes as written."""
    lines = [f'{indent}a0: &a0 [{", ".join(["lol"] * width)}]']
    lines += [f"{indent}a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


COMPOSE_BOMB = "x-bomb:\n" + alias_bomb(indent="  ") + "services:\n  web:\n    image: nginx\n    environment: *a9\n"
PNPM_BOMB = ("lockfileVersion: '6.0'\n" + alias_bomb() + "dependencies:\n  left-pad:\n    specifier: 1.3.0\n"
             "    version: 1.3.0\npackages:\n  /left-pad@1.3.0:\n    resolution: {integrity: sha512-x}\n"
             "    dependencies: *a9\n")
ADVISORY = ("id: BOMB-1\nmodified: 2024-01-01T00:00:00Z\naffected:\n- package: {ecosystem: PyPI, name: requests}\n"
            "  ranges:\n  - type: ECOSYSTEM\n    events: [{introduced: '0'}, {fixed: '2.31.0'}]\n")
PLAIN = {"requirements.txt": "requests==2.30.0\n", "Dockerfile": "FROM python:3.11-slim\nCMD [\"python\"]\n"}


# ---------------------------------------------------------------- attacks


def attack_compose_bomb_gather(work: Path, run: Runner) -> Row:
    repo = repository(work, "compose-bomb", {**PLAIN, "docker-compose.yml": COMPOSE_BOMB})
    return run("compose bomb: gather", work, "gather", str(repo), "--json", outcome=_about("docker-compose.yml"))


def attack_pnpm_bomb_gather(work: Path, run: Runner) -> Row:
    repo = repository(work, "pnpm-bomb", {**PLAIN, "package.json": '{"dependencies": {"left-pad": "1.3.0"}}',
                                          "pnpm-lock.yaml": PNPM_BOMB})
    return run("pnpm bomb: gather", work, "gather", str(repo), "--json", outcome=_about("pnpm-lock.yaml"))


def attack_compose_bomb_dispatch(work: Path, run: Runner) -> Row:
    repo = repository(work, "compose-bomb-dispatch", {**PLAIN, "docker-compose.yml": COMPOSE_BOMB})
    return run("compose bomb: dispatch", work, "dispatch", "distroless-migration", "--repo", str(repo),
               outcome=_status)


def attack_deep_json_gather(work: Path, run: Runner) -> Row:
    deep = '{"name": "deep", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    repo = repository(work, "deep-json", {**PLAIN, "package.json": deep})
    return run("100,000-deep package.json: gather", work, "gather", str(repo), "--json",
               outcome=_about("package.json"))


def attack_advisory_bomb(work: Path, run: Runner) -> Row:
    """An alias bomb among the OSV advisories a gather is given (a mirror someone else controls)."""
    advisories = work / "advisories"
    advisories.mkdir()
    (advisories / "bomb.yaml").write_text(ADVISORY + alias_bomb() + "database_specific: {laughs: *a9}\n")
    repo = repository(work, "advisory-victim", PLAIN)
    return run("advisory bomb: gather --advisories", work, "gather", str(repo), "--advisories", str(advisories),
               "--json", env={"PLANNER_ADVISORY_INDEX": str(work / "index")}, outcome=_issue)


def _issue(code: int | None, stdout: str, stderr: str) -> str:
    """The outcome of a gather with advisories: the vulnerabilities probe's first warning."""
    try:
        said = [d["message"] for d in json.loads(stdout)["diagnostics"] if d["level"] != "info"]
    except (ValueError, KeyError):
        return _last_line(code or 0, stdout, stderr)
    return said[0][-100:] if said else "no diagnostic"


def attack_deep_tccm(work: Path, run: Runner) -> Row:
    """A task-class file nested 900 deep (under libyaml's own cap of 1,000) on the task-class path: the other
    classes must still dispatch."""
    classes = work / "task-classes"
    classes.mkdir()
    (classes / "deep.yaml").write_text("task_class: deep\nversion: 1\ndescription: d\nbudget: "
                                       + "[" * 900 + "]" * 900 + "\n")
    repo = repository(work, "tccm-victim", PLAIN)
    return run("900-deep TCCM: dispatch another class", work, "dispatch", "distroless-migration", "--repo",
               str(repo), env={"PLANNER_TASK_CLASS_PATH": str(classes)}, outcome=_status)


def attack_deep_tccm_validate(work: Path, run: Runner) -> Row:
    classes = work / "task-classes-validate"
    classes.mkdir()
    (classes / "deep.yaml").write_text("task_class: deep\nversion: 1\ndescription: d\nbudget: "
                                       + "[" * 900 + "]" * 900 + "\n")
    return run("900-deep TCCM: validate", work, "task-classes", "validate",
               env={"PLANNER_TASK_CLASS_PATH": str(classes)})


ATTACKS: dict[str, Callable[[Path, Runner], Row]] = {
    "compose-bomb": attack_compose_bomb_gather,
    "pnpm-bomb": attack_pnpm_bomb_gather,
    "compose-bomb-dispatch": attack_compose_bomb_dispatch,
    "deep-json": attack_deep_json_gather,
    "advisory-bomb": attack_advisory_bomb,
    "deep-tccm": attack_deep_tccm,
    "deep-tccm-validate": attack_deep_tccm_validate,
}


def _more() -> dict[str, Callable[[Path, Runner], Row]]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from attacks_misuse import MORE  # concurrency, modes, Host header, ignored inputs
    from attacks_sandbox import MORE as SANDBOX  # a repository's own programs reaching the operator

    return {**MORE, **SANDBOX}


def print_table(rows: list[Row]) -> None:
    header = f"{'attack':<38} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} {'exit':>5}  outcome"
    print(header)
    print("-" * len(header))
    for row in rows:
        code = "kill" if row.exit_code is None else str(row.exit_code)
        print(f"{row.attack:<38} {row.wall_s:7.2f} {row.cpu_s:7.2f} {row.peak_mb:8.0f} {code:>5}  {row.outcome}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a child is killed")
    parser.add_argument("--memory-mb", type=int, default=None, help="cap each child's address space")
    parser.add_argument("--only", nargs="*", help="run these attacks only (names as printed by --list)")
    parser.add_argument("--list", action="store_true", help="name every attack and exit")
    parser.add_argument("--source", type=Path, default=ROOT, help="the planner checkout to run")
    args = parser.parse_args()
    ATTACKS.update(_more())
    if args.list or any(name not in ATTACKS for name in args.only or ()):
        print("attacks: " + ", ".join(ATTACKS))
        sys.exit(0 if args.list else 2)
    run = Runner(source=args.source.resolve(), timeout=args.timeout, memory_mb=args.memory_mb)
    rows = []
    with tempfile.TemporaryDirectory(prefix="attacks-") as scratch:
        for name in args.only or ATTACKS:
            work = Path(scratch) / name
            work.mkdir()
            rows.append(ATTACKS[name](work, run))
    print_table(rows)


if __name__ == "__main__":
    main()
