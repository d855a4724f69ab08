"""A small fleet of real git repositories for portfolio tests: copies of examples/shop (vulnerable pins)
and clean ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import commit_all, git, run_cli

ROOT = Path(__file__).resolve().parent.parent
ADVISORIES = ROOT / "examples" / "advisories"


def make_fleet(base: Path, vulnerable: int, clean: int = 0, padding: int = 0) -> Path:
    """`vulnerable` copies of examples/shop and `clean` repos with nothing to fix, under base/fleet."""
    fleet = base / "fleet"
    fleet.mkdir()
    for i in range(vulnerable):
        repo = fleet / f"shop{i}"
        shutil.copytree(ROOT / "examples" / "shop", repo)
        for n in range(padding):  # more files to gather: a run lasts long enough to be killed mid-way
            (repo / "pad" / f"m{n // 100}").mkdir(parents=True, exist_ok=True)
            (repo / "pad" / f"m{n // 100}" / f"f{n}.py").write_text(f"VALUE_{n} = {n}\n")
        git(repo, "init", "-q", "-b", "main")
        commit_all(repo, "initial")
    for i in range(clean):
        repo = fleet / f"clean{i}"
        repo.mkdir()
        (repo / "requirements.txt").write_text("requests==2.31.0\n")
        git(repo, "init", "-q", "-b", "main")
        commit_all(repo, "initial")
    return fleet


def portfolio_json(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict, str]:
    proc = run_cli("portfolio", *args, "--json", env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}, proc.stderr


def branches(repo: Path) -> list[str]:
    return [b.strip() for b in git(repo, "branch", "--list", "planner/*", "--format=%(refname:short)").splitlines()]
