"""Edited secret rules take effect on the next gather in the same home: nothing kept from a snapshot made
under the old rules is trusted (which files were clean, which were denied)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_regather_in_one_home_applies_edited_secret_rules(tmp_path: Path, home: Path,
                                                            make_repo: Callable[..., Path]) -> None:
    copy = tmp_path / "checkout"  # a copy of the checkout, so its shipped rules can be edited
    for package in ("planner", "repocontext", "subgraphs", "task-class-contexts"):
        shutil.copytree(ROOT / package, copy / package)
    env = {**os.environ, "PLANNER_DAEMON": "off", "PLANNER_HOME": str(home),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(copy), os.environ.get("PYTHONPATH", "")]))}
    repo = make_repo({"app.py": "print('hi')\n", "canary.txt": "plain text\n", "notes.md": "token: CANARY-123\n"})

    def gather() -> dict:
        done = subprocess.run([sys.executable, "-m", "planner", "gather", str(repo), "--json"], cwd=copy,
                              capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    before = gather()
    assert sorted(d["path"] for d in before["denied"]) == []
    rules = copy / "repocontext" / "secret_rules.yaml"
    text = rules.read_text()
    rules.write_text(text.replace("files:\n", "files:\n  canary: 'canary\\.txt'\n", 1))
    (copy / "repocontext" / "secret_rules.json").unlink()  # the digest-checked copy would be stale anyway
    after = gather()
    assert sorted(d["path"] for d in after["denied"]) == ["canary.txt"]
    assert "canary.txt" not in {f["path"] for f in after["files"]}
