"""The README's commands work as written: the first installs only the core and runs the main job, the
second is what .ci/run runs, and the task class it shows validates, previews and dispatches."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, re.DOTALL)


def _planner(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PLANNER_DAEMON": "off"}, timeout=300)


def test_the_two_commands(home: Path) -> None:
    first, second = [line for line in _blocks("sh")[0].splitlines() if line and not line.startswith("#")]
    assert "pip install -e . &&" in first and "[dev]" not in first  # the core only, to use the tool
    planner = shlex.split(first.rpartition("&& ")[2])
    assert planner[0] == "planner"
    done = _planner(*planner[1:], "--json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "succeeded"
    test_command = second.rpartition("&& ")[2]
    assert test_command == "python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == test_command and "pip install" in "\n".join(ci) and "'.[dev]'" in "\n".join(ci)
    assert len(README.splitlines()) <= 250


def test_the_task_class_it_shows(make_repo: Callable[..., Path], home: Path, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    text = _blocks("yaml")[0]
    name = yaml.safe_load(text)["task_class"]
    folder = tmp_path / "my-classes"
    folder.mkdir()
    (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    monkeypatch.setenv("PLANNER_TASK_CLASS_PATH", str(folder))
    repo = make_repo({"README.md": "# old\n", "docs/style.md": "Titles are short.\n"})
    assert _planner("task-classes", "validate", str(folder)).returncode == 0
    shown = _planner("bundle", name, "--repo", str(repo), "-i", "title=Widget", "--text")
    assert shown.returncode == 0, shown.stderr
    assert "# old" in shown.stdout
    refused = _planner("dispatch", name, "--repo", str(repo), "-i", "titel=Widget")
    assert refused.returncode == 2 and "did you mean 'title'" in refused.stderr
    done = _planner("dispatch", name, "--repo", str(repo), "-i", "title=Widget", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "succeeded" and "-# old\n+# Widget\n" in result["patch"]


def test_its_anchored_globs_change_only_the_root_readme(make_repo: Callable[..., Path], home: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    text = _blocks("yaml")[0]
    assert "files: [/README.md]" in text and "paths: [/README.md]" in text
    name = yaml.safe_load(text)["task_class"]
    folder = tmp_path / "anchored-classes"
    folder.mkdir()
    (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    monkeypatch.setenv("PLANNER_TASK_CLASS_PATH", str(folder))
    repo = make_repo({"README.md": "# old\n", "docs/README.md": "# docs\n", "pkg/sub/README.md": "# sub\n"})
    done = _planner("dispatch", name, "--repo", str(repo), "-i", "title=Widget", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "succeeded"
    changed = re.findall(r"^diff --git a/(\S+) ", result["patch"], re.MULTILINE)
    assert changed == ["README.md"], result["patch"]  # the two READMEs in subfolders are left alone
    assert "-# old\n+# Widget\n" in result["patch"]
    # an unanchored README.md still matches at any depth
    (folder / f"{name}.yaml").write_text(text.replace("/README.md", "README.md"), encoding="utf-8")
    anywhere = json.loads(_planner("dispatch", name, "--repo", str(repo), "-i", "title=Widget", "--json").stdout)
    assert sorted(re.findall(r"^diff --git a/(\S+) ", anywhere["patch"], re.MULTILINE)) == [
        "README.md", "docs/README.md", "pkg/sub/README.md"]


def _planner_lines() -> list[list[str]]:
    """Every `planner ...` command line of the README's shell blocks, as words (comments dropped)."""
    found = []
    for block in _blocks("sh"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["planner"]:
                found.append(words[1:])
    return found


# Served until stopped: their tests start them as servers (test_server_auth.py, test_mcp.py, the UI's).
SERVERS = (["ui"], ["mcp"])


def test_every_planner_command_it_shows_runs_as_written(make_repo: Callable[..., Path], home: Path,
                                                        tmp_path: Path) -> None:
    """The walk-through and the fleet commands in order, ids taken from what the earlier ones printed;
    `~/src` is a folder of repositories in a home of the test's, `advisories/` the bundled advisories."""
    import shutil

    user = tmp_path / "user"
    (user / "src").mkdir(parents=True)
    shutil.copytree(ROOT / "examples" / "advisories", tmp_path / "advisories")
    for name in ("shop", "other"):
        shop = ROOT / "examples" / "shop"
        clone = make_repo({p.relative_to(shop).as_posix(): p.read_bytes() for p in shop.rglob("*")
                           if p.is_file() and "__pycache__" not in p.parts}, name=f"src-{name}")
        shutil.move(str(clone), user / "src" / name)
    env = {**os.environ, "PLANNER_DAEMON": "off", "HOME": str(user)}
    ids: dict[str, str] = {}
    ran = []
    for words in _planner_lines():
        if words[:1] in SERVERS or "my-classes/" in words or words[-3:] == ["-i", "title=Widget", "--text"] or \
                ("readme-title" in words):
            continue  # the class it shows: test_the_task_class_it_shows runs those in a repository of its own
        argv = [ids.get(w, os.path.expanduser(w).replace(os.path.expanduser("~"), str(user))) for w in words]
        cwd = tmp_path if "portfolio" in words else ROOT
        done = subprocess.run([sys.executable, "-m", "planner", *argv], capture_output=True, text=True, cwd=cwd,
                              env=env, timeout=300)
        assert done.returncode == 0, f"planner {' '.join(words)}: {done.stderr}"
        said = done.stdout + done.stderr
        for placeholder, pattern in (("RUN_ID", r"\b(\d{8}-\d{6}-[0-9a-f]{6})\b"), ("PORTFOLIO_ID", r"\b(pf-\S+?)\b")):
            found = re.search(pattern, said)
            if found and placeholder not in ids:
                ids[placeholder] = found.group(1)
        ran.append(words[0])
    assert {"task-classes", "dispatch", "runs", "provenance", "portfolio"} <= set(ran)
    assert {"RUN_ID", "PORTFOLIO_ID"} <= set(ids)
