"""Many planner processes on one PLANNER_HOME and one repository never fail each other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from repocontext import parts
from repocontext.store import RepoContextStore

ROOT = Path(__file__).resolve().parents[1]
FILES = {
    "requirements.txt": "requests==2.30.0\nPyYAML==5.3.1\n",
    "app/net.py": "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n",
    "app/conf.py": "import yaml\n\n\ndef load(t):\n    return yaml.load(t)\n",
    "tests/test_net.py": "from app.net import fetch\n\n\ndef test_fetch():\n    assert fetch\n",
}


def test_twenty_dispatches_at_once_on_a_fresh_home_all_succeed(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(FILES)
    env = {**os.environ, "PLANNER_DAEMON": "off"}
    argv = [sys.executable, "-m", "planner", "dispatch", "vulnerability-remediation", "--repo", str(repo),
            "--advisories", str(ROOT / "examples" / "advisories"), "--json"]
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(20)]
    results = [(proc.communicate(timeout=600), proc.returncode) for proc in procs]
    failures = [(code, err[-400:]) for (_, err), code in results if code != 0]
    assert failures == []
    reports = [json.loads(out) for (out, _), _ in results]
    assert {report["status"] for report in reports} == {"succeeded"}
    assert len({report["run_id"] for report in reports}) == 20
    assert len({report["patch"] for report in reports}) == 1  # the same repository state, the same patch


def _snapshot(store: RepoContextStore, repo: Path, marker: str) -> None:
    """Store the repository's snapshot under a different meta, so the manifest (and the meta part) differ."""
    context = store.load(repo)
    assert context is not None
    context.meta.gathered_at = marker
    store.save(context)


def test_an_open_snapshot_keeps_its_parts_through_later_gathers(make_repo: Callable[..., Path], home: Path) -> None:
    from planner.config import Settings
    from planner.service import gather_repo

    repo = make_repo(FILES)
    gather_repo(Settings.from_env(), repo, warm=False)
    store = RepoContextStore(home)
    reader = store.load_lazy(repo)
    assert reader is not None
    for step in range(3):  # three newer snapshots: without the lease, the reader's meta part is collected
        _snapshot(store, repo, f"2026-01-0{step + 1}T00:00:00Z")
    assert reader["meta"]["root"] == str(repo.resolve())  # still readable
    directory = store.repo_dir(repo)
    assert (directory / reader.name).is_file()
    name = reader.name
    del reader  # the lease is dropped: the next write collects it
    _snapshot(store, repo, "2026-02-01T00:00:00Z")
    assert not (directory / name).exists()
    manifests = sorted(path.name for path in directory.glob(f"*{parts.SUFFIX}"))
    assert len(manifests) == 2  # the current one and the one before it
