"""Gathering real git repositories and storing RepoContexts under PLANNER_HOME."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_all, git, write_files

from planner import service
from planner.bundle.view import open_view
from planner.config import Settings
from planner.errors import EnvironmentProblem, PlannerError
from repocontext.gather import gather
from repocontext.store import RepoContextStore

FILES = {
    "requirements.txt": "requests==2.30.0\n",
    "src/app.py": "import requests\n",
    "web/index.ts": "export const x = 1;\n",
    "Dockerfile": "FROM python:3.11\n",
    "svc/api.Dockerfile": "FROM node:20\n",
    "go.mod": "module example.com/x\n",
    ".env.production": "SECRET=1\n",
    "keys/deploy.pem": "not really\n",
}


def test_file_index_matches_git(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    context = gather(repo)
    by_path = {f.path: f for f in context.files}
    assert sorted(by_path) == ["Dockerfile", "go.mod", "requirements.txt", "src/app.py", "svc/api.Dockerfile",
                               "web/index.ts"]
    assert by_path["src/app.py"].sha == git(repo, "hash-object", "src/app.py").strip()
    assert by_path["src/app.py"].language == "Python" and by_path["svc/api.Dockerfile"].language == "Dockerfile"
    assert [(d.path, d.rule) for d in context.denied] == [(".env.production", "dotenv"), ("keys/deploy.pem", "pem")]
    assert context.meta.commit == git(repo, "rev-parse", "HEAD").strip() and context.meta.dirty is False
    assert [s.file for s in context.build.systems] == ["go.mod", "requirements.txt"]
    assert [m.path for m in context.manifests.manifests] == ["go.mod", "requirements.txt"]
    assert "Python" in context.languages and context.languages["Python"].files == 1


def test_modified_and_untracked_files_are_rehashed(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    write_files(repo, {"src/app.py": "import requests  # changed\n", "src/new.py": "x = 1\n"})
    context = gather(repo)
    by_path = {f.path: f for f in context.files}
    assert context.meta.dirty is True
    assert by_path["src/app.py"].sha == git(repo, "hash-object", "src/app.py").strip()
    assert by_path["src/new.py"].sha == git(repo, "hash-object", "src/new.py").strip()


def test_symlinks_are_not_followed(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("outside secret\n")
    repo = make_repo({"a.txt": "a\n"})
    os.symlink(outside, repo / "link.txt")
    commit_all(repo)
    context = gather(repo)
    assert [f.path for f in context.files] == ["a.txt"]
    assert any(d.file == "link.txt" and "symlink" in d.message for d in context.diagnostics)


def test_directory_outside_git(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_files(root, {"a.py": "x = 1\n", "node_modules/dep/index.js": "x\n"})
    context = gather(root)
    assert context.meta.commit is None and [f.path for f in context.files] == ["a.py"]


def test_incremental_gather_reuses_unchanged_probes(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    first = gather(repo)
    assert not any(run.reused for run in first.meta.probes.values())
    second = gather(repo, previous=first.model_dump())
    assert all(run.reused for run in second.meta.probes.values())
    assert second.model_dump(exclude={"meta"}) == first.model_dump(exclude={"meta"})
    write_files(repo, {"Dockerfile": "FROM python:3.12\n"})
    third = gather(repo, previous=second.model_dump())
    assert third.meta.probes["containers"].reused is False
    assert third.meta.probes["build"].reused is True  # only names matter to it


def test_store_roundtrip_and_stale_flag(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    settings = Settings.from_env()
    context, path = service.gather_repo(settings, repo)
    assert path.is_file() and path.parent.parent == home / "repos"
    assert RepoContextStore(home).load(repo) == context
    assert open_view(repo, RepoContextStore(home)).freshness() == "fresh"
    write_files(repo, {"src/app.py": "import requests\nrequests.get('x')\n"})
    commit_all(repo, "change")
    assert open_view(repo, RepoContextStore(home)).freshness() == "stale"
    _, _, record = service.build_bundle(settings, "vulnerability-remediation", repo, {})
    assert record.repocontext.freshness == "stale" and record.repocontext.commit == context.meta.commit


def test_missing_repository_is_a_clear_error(home: Path, tmp_path: Path) -> None:
    with pytest.raises(PlannerError, match="does not exist"):
        service.gather_repo(Settings.from_env(), tmp_path / "nope")


def test_corrupt_snapshot_is_a_clear_error(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    settings = Settings.from_env()
    _, path = service.gather_repo(settings, repo)
    for stored in [path, *path.parent.glob("parts/*.json")]:
        stored.write_text("{not json")
    with pytest.raises(EnvironmentProblem, match=r"unreadable .* re-run `planner gather`"):
        service.build_bundle(settings, "vulnerability-remediation", repo, {})
    context, _ = service.gather_repo(settings, repo)  # a re-gather repairs it
    assert context.files


def test_files_with_secret_values_are_denied_and_never_stored(make_repo: Callable[..., Path]) -> None:
    token = "ghp_" + "x1" * 18
    repo = make_repo({"deploy/settings.py": f"GITHUB_TOKEN = '{token}'\n", "app.py": "x = 1\n"})
    context = gather(repo)
    assert [f.path for f in context.files] == ["app.py"]
    assert [(d.path, d.rule) for d in context.denied] == [("deploy/settings.py", "content:github-token")]
    assert token not in context.model_dump_json()
    again = gather(repo, previous=context.model_dump())  # still denied when nothing changed
    assert [(d.path, d.rule) for d in again.denied] == [("deploy/settings.py", "content:github-token")]
    write_files(repo, {"deploy/settings.py": "GITHUB_TOKEN = os.environ['GITHUB_TOKEN']\n"})
    cleaned = gather(repo, previous=again.model_dump())
    assert cleaned.denied == [] and "deploy/settings.py" in [f.path for f in cleaned.files]


def test_sections_are_read_lazily_and_match_the_whole(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    settings = Settings.from_env()
    service.gather_repo(settings, repo)
    store = RepoContextStore(home)
    lazy = store.load_lazy(repo)
    whole = store.load_raw(repo)
    assert lazy is not None and whole is not None and not isinstance(lazy, dict)
    assert sorted(lazy) == sorted(whole)
    assert lazy["files"] == whole["files"] and lazy["meta"] == whole["meta"]
    write_files(repo, {"src/extra.py": "x = 2\n"})
    commit_all(repo, "more")
    service.gather_repo(settings, repo)
    assert "src/extra.py" in [f["path"] for f in store.load_lazy(repo)["files"]]
    assert len(list(store.repo_dir(repo).glob("*.manifest.json"))) <= 2  # older snapshots are cleaned up
