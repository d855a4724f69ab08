"""Re-gathering from the stored snapshot equals a full gather, whatever the change; it falls back when it must."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from planner import service
from planner.config import Settings
from repocontext import encode
from repocontext.gather import gather
from repocontext.regather import Regathered
from repocontext.secrets import RULES_DIGEST
from repocontext.store import RepoContextStore
from tests.conftest import commit_all, git, write_files

CALL_SITES_SLOT = f"call_sites@3+{RULES_DIGEST}"  # the probe cache's slot: version and secret rules

BASE = {
    "pyproject.toml": "[project]\nname = 'app'\ndependencies = ['requests==2.31.0', 'pyyaml==6.0']\n",
    "requirements.txt": "requests==2.31.0\npyyaml==6.0\n",
    "app/__init__.py": "",
    "app/net.py": "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n",
    "app/conf.py": "import yaml\n\n\ndef load(t):\n    return yaml.safe_load(t)\n",
    "tests/test_net.py": "from app.net import fetch\n\n\ndef test_fetch():\n    assert fetch\n",
    "web/package.json": '{"name": "web", "dependencies": {"lodash": "4.17.20"}}\n',
    "web/index.js": "const _ = require('lodash');\n_.merge({}, {});\n",
    "Dockerfile": "FROM python:3.12-slim\nCOPY . /app\nCMD python -m app\n",
}
MODULES = ["requests", "yaml", "lodash", "json", "flask"]


def _normal(data: dict[str, Any]) -> bytes:
    data = orjson.loads(orjson.dumps(data))
    data["meta"]["gathered_at"] = ""
    for run in data["meta"]["probes"].values():
        run["reused"] = False
    return orjson.dumps(data)


def _assert_like_a_full_gather(settings: Settings, repo: Path) -> Regathered | Any:
    result, _ = service.gather_repo(settings, repo, warm=False)
    stored = RepoContextStore(settings.home).load_raw(repo)
    assert stored is not None
    assert _normal(stored) == _normal(gather(repo).model_dump(mode="json"))
    return result


def _edit(repo: Path, rng: random.Random, step: int) -> None:
    """One random change of the kinds a commit makes: modify, add, remove sources and tests, manifests."""
    sources = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.py") if ".git" not in p.parts)
    kind = rng.choice(["modify", "modify", "add", "remove", "test", "manifest"])
    module = rng.choice(MODULES)
    if kind == "modify" and sources:
        path = rng.choice(sources)
        write_files(repo, {path: f"import {module}\n\n\ndef f{step}():\n    return {module}.x{step}()\n"})
    elif kind == "add":
        write_files(repo, {f"app/new{step}.py": f"from {module} import thing\nthing({step})\n"})
    elif kind == "remove" and len(sources) > 3:
        (repo / rng.choice(sources)).unlink()
    elif kind == "test":
        write_files(repo, {f"tests/test_s{step}.py": f"import app.conf\nimport {module}\n\n\ndef test_x():\n"
                                                     f"    app.conf.load('a')\n    {module}.y()\n"})
    else:
        write_files(repo, {"requirements.txt": f"requests==2.{step}.0\npyyaml==6.0\n"})


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_commits_regather_like_a_full_gather(seed: int, make_repo: Callable[..., Path], home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encode, "SPLIT_CHARS", 100)  # small thresholds: split sections and chunks on a small repo
    monkeypatch.setattr(encode, "CHUNK", 2)
    repo = make_repo(BASE)
    settings = Settings.from_env()
    assert not isinstance(service.gather_repo(settings, repo, warm=False)[0], Regathered)  # first: a full gather
    rng = random.Random(seed)
    for step in range(8):
        for _ in range(rng.randint(1, 3)):
            _edit(repo, rng, step)
        if rng.random() < 0.7:
            commit_all(repo, f"step {step}")  # else: uncommitted changes, a dirty snapshot
        assert isinstance(_assert_like_a_full_gather(settings, repo), Regathered)


def test_source_edits_update_split_call_sites_in_place(make_repo: Callable[..., Path], home: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encode, "SPLIT_CHARS", 100)
    monkeypatch.setattr(encode, "CHUNK", 2)
    files = {**BASE, **{f"app/m{i}.py": f"import requests\nrequests.get('{i}')\nrequests.put('{i}')\n"
                        for i in range(6)}}
    repo = make_repo(files)
    settings = Settings.from_env()
    service.gather_repo(settings, repo, warm=False)
    for step, module in enumerate(["yaml", "requests", "lodash", "json", "requests"]):
        write_files(repo, {f"app/m{step}.py": f"import {module}\n{module}.call({step})\n",
                           "app/net.py": f"import requests\nrequests.head('{step}')\n"})
        commit_all(repo, f"edit {step}")
        result = _assert_like_a_full_gather(settings, repo)
        assert isinstance(result, Regathered) and "call_sites" in result.incremental


def test_unchanged_sections_keep_their_parts(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(BASE)
    settings = Settings.from_env()
    store = RepoContextStore(home)
    service.gather_repo(settings, repo, warm=False)
    before = store.load_lazy(repo)
    write_files(repo, {"app/net.py": "import requests\nrequests.post('/x')\n"})
    commit_all(repo, "one source file")
    result, _ = service.gather_repo(settings, repo, warm=False)
    after = store.load_lazy(repo)
    assert isinstance(result, Regathered) and before is not None and after is not None
    for section in ("containers", "dependencies", "conventions", "build"):
        assert after.part_of(section) == before.part_of(section)  # reused by reference: same part
    assert after.part_of("call_sites") != before.part_of("call_sites")
    assert result.changed == {"app/net.py"} and "call_sites" in result.incremental


def test_the_probe_cache_follows_the_change(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(BASE)
    settings = Settings.from_env()
    store = RepoContextStore(home)
    service.gather_repo(settings, repo, warm=False)
    old_sha = git(repo, "rev-parse", "HEAD:app/net.py").strip()
    write_files(repo, {"app/net.py": "import yaml\n"})
    commit_all(repo, "change")
    service.gather_repo(settings, repo, warm=False)
    new_sha = git(repo, "rev-parse", "HEAD:app/net.py").strip()
    cache = store.load_cache(repo)[CALL_SITES_SLOT]
    assert f"app/net.py\0{new_sha}" in cache and f"app/net.py\0{old_sha}" not in cache


def test_a_corrupt_snapshot_is_regathered_in_full(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(BASE)
    settings = Settings.from_env()
    store = RepoContextStore(home)
    service.gather_repo(settings, repo, warm=False)
    for part in (store.repo_dir(repo) / "parts").glob("*.json"):
        part.write_bytes(b"{broken")
    write_files(repo, {"app/net.py": "import yaml\n"})
    commit_all(repo, "change")
    result, _ = service.gather_repo(settings, repo, warm=False)
    assert not isinstance(result, Regathered)
    assert _normal(store.load_raw(repo) or {}) == _normal(gather(repo).model_dump(mode="json"))


@pytest.mark.parametrize(("setting", "value"), [("SCHEMA_VERSION", 999), ("MAX_CHANGED", 1)])
def test_another_model_version_or_too_many_changes_take_the_full_path(
        setting: str, value: int, make_repo: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(BASE)
    settings = Settings.from_env()
    service.gather_repo(settings, repo, warm=False)
    monkeypatch.setattr(f"repocontext.regather.{setting}", value)
    write_files(repo, {"a.py": "import yaml\n", "b.py": "import requests\n"})
    result, _ = service.gather_repo(settings, repo, warm=False)
    assert not isinstance(result, Regathered)
    assert _normal(RepoContextStore(home).load_raw(repo) or {}) == _normal(gather(repo).model_dump(mode="json"))


def test_parts_removed_by_a_concurrent_gather_fall_back_to_a_full_one(make_repo: Callable[..., Path], home: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(BASE)
    settings = Settings.from_env()
    store = RepoContextStore(home)
    service.gather_repo(settings, repo, warm=False)
    carried = store.load_lazy(repo).part_of("containers")["part"]  # type: ignore[union-attr]
    real = store.save_regathered

    def racing(result: Regathered, previous: Any) -> Path:
        (store.repo_dir(repo) / "parts" / f"{carried}.json").unlink()  # another gather's clean-up, just now
        return real(result, previous)

    monkeypatch.setattr(RepoContextStore, "save_regathered", lambda self, r, p: racing(r, p))
    write_files(repo, {"app/net.py": "import yaml\n"})
    result, _ = service.gather_repo(settings, repo, warm=False)
    assert not isinstance(result, Regathered)  # the re-gather refused to point at a missing part
    assert _normal(store.load_raw(repo) or {}) == _normal(gather(repo).model_dump(mode="json"))


def test_a_failed_short_path_runs_in_full_and_says_so_outside_the_snapshot(
        make_repo: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The previous snapshot can vanish under a re-gather (a concurrent gather cleaned it up): the probe runs in
    full, the gather reports why, and the snapshot still equals a full gather's: no note of it is stored."""
    from repocontext.lazyjson import StoreError
    from repocontext.probes.call_sites import CallSitesProbe

    repo = make_repo(BASE)
    settings = Settings.from_env()
    service.gather_repo(settings, repo, warm=False)

    def vanished(*_: Any) -> None:
        raise StoreError("a part of the previous snapshot is gone")

    monkeypatch.setattr(CallSitesProbe, "run_incremental", vanished)
    write_files(repo, {"app/net.py": "import yaml\nyaml.load(1)\n"})
    commit_all(repo, "change")
    result = _assert_like_a_full_gather(settings, repo)
    assert isinstance(result, Regathered)
    assert result.fell_back == {"call_sites": "StoreError"} and "call_sites" not in result.incremental
    assert not [d for d in result.diagnostics if "incremental" in d.message]


def test_a_damaged_probe_cache_is_started_afresh(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(BASE)
    settings = Settings.from_env()
    store = RepoContextStore(home)
    service.gather_repo(settings, repo, warm=False)
    (store.repo_dir(repo) / "probe-cache.sqlite").write_bytes(b"not a database" * 100)
    write_files(repo, {"app/net.py": "import yaml\n"})
    commit_all(repo, "change")
    _assert_like_a_full_gather(settings, repo)
    assert CALL_SITES_SLOT in store.load_cache(repo)  # rebuilt, and used again next time
    write_files(repo, {"app/conf.py": "import requests\n"})
    assert "call_sites" in _assert_like_a_full_gather(settings, repo).incremental


def test_concurrent_gathers_leave_a_whole_snapshot(make_repo: Callable[..., Path], home: Path) -> None:
    """Hooks of quick successive commits gather at once: the lock and the part check keep every snapshot whole."""
    repo = make_repo(BASE)
    settings = Settings.from_env()
    service.gather_repo(settings, repo, warm=False)
    env = {**os.environ, "PLANNER_HOME": str(home), "PLANNER_REDIS_URL": "off"}
    for round_ in range(3):
        write_files(repo, {f"app/n{round_}.py": "import requests\n", "app/net.py": f"import yaml\nyaml.a({round_})\n"})
        commit_all(repo, f"round {round_}")
        runs = [subprocess.Popen([sys.executable, "-m", "planner", "gather", str(repo)], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(4)]
        errors = [run.communicate(timeout=120)[1] for run in runs]
        assert all(run.returncode == 0 for run in runs), errors
        assert _normal(RepoContextStore(home).load_raw(repo) or {}) == _normal(gather(repo).model_dump(mode="json"))


def test_a_directory_outside_git_regathers_like_a_full_gather(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "plain"
    write_files(root, {k: v for k, v in BASE.items()})
    settings = Settings.from_env()
    service.gather_repo(settings, root, warm=False)
    write_files(root, {"app/net.py": "import yaml\nyaml.load('x')\n", "app/extra.py": "import requests\n"})
    assert isinstance(_assert_like_a_full_gather(settings, root), Regathered)


def test_a_syntax_error_in_a_changed_js_file_is_reported_like_a_full_gather(make_repo: Callable[..., Path],
                                                                           home: Path) -> None:
    repo = make_repo(BASE)
    settings = Settings.from_env()
    service.gather_repo(settings, repo, warm=False)
    write_files(repo, {"web/index.js": "const _ = require('lodash');\n_.merge({}, {});\nfunction (((( {\n"})
    commit_all(repo, "broken js")
    result = _assert_like_a_full_gather(settings, repo)
    assert isinstance(result, Regathered) and "call_sites" in result.incremental
    assert [(d.file, d.line) for d in result.diagnostics if d.probe == "call_sites"] == [("web/index.js", 3)]
    write_files(repo, {"web/index.js": "const _ = require('lodash');\n_.merge({}, {});\n"})
    commit_all(repo, "fixed")
    fixed = _assert_like_a_full_gather(settings, repo)
    assert not [d for d in fixed.diagnostics if d.probe == "call_sites"]
