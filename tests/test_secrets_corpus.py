"""The planted-secrets corpus (tests/fixtures/secrets/corpus.yaml): each value's fate by the rules, then the
whole corpus through `planner gather` and `planner dispatch` of the shipped task classes, with hot views in a
real redis-server, and every store, page, bundle and prompt searched for every planted value."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
import yaml
from conftest import git, run_main
from fake_llm import fake_planner
from fastapi.testclient import TestClient
from hotviews_support import clear_namespace, forget_local_state

from planner.config import Settings
from planner.hotviews import naming
from planner.patch.plan import Edit, apply_edits, unified_diff
from planner.portfolio import collect
from planner.portfolio.model import Result, Spec
from planner.run.dispatch import dispatch
from planner.run.taskbase import reader
from planner.store.runs import EXACT_PATCH, read_state
from planner.ui.app import create_app
from repocontext.secrets import content_rule, path_rule, redact

pytest_plugins = ["hotviews_fixtures"]

CORPUS = yaml.safe_load((Path(__file__).parent / "fixtures" / "secrets" / "corpus.yaml").read_text())
PLANTED: list[dict[str, str]] = CORPUS["planted"]
VALUES = [p["value"].encode() for p in PLANTED]
# A second service whose base image no recipe maps: its item goes to the (fake) LLM, so a prompt is made.
WORKER = "FROM registry.corp.example/acme/base:7\nENV WORKER_TOKEN=FAKEworkerEnvT0ken0000\nCOPY app /app\n" \
         "CMD [\"/app\"]\n"


def test_the_corpus_has_at_least_twenty_kinds() -> None:
    assert len({p["kind"] for p in PLANTED}) >= 20
    assert all(p["value"] in CORPUS["files"][p["file"]] for p in PLANTED)


@pytest.mark.parametrize("planted", PLANTED, ids=[p["kind"] for p in PLANTED])
def test_each_planted_value_meets_its_fate(planted: dict[str, str]) -> None:
    path, text = planted["file"], CORPUS["files"][planted["file"]]
    by_name = path_rule(path)
    by_content = None if by_name else content_rule(text, path)
    fate = "name" if by_name else "content" if by_content else "redact"
    assert fate == planted["outcome"], (by_name, by_content)
    if fate == "redact":  # a denied file is never read; a read one keeps its lines, less the value
        assert planted["value"] not in redact(text) and "REDACTED-" in redact(text)


def _cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    code, out, err = run_main(capsys, monkeypatch, *args)
    return code, out + err


def _redis_values(url: str) -> Iterator[bytes]:
    client = redis.Redis.from_url(url)
    for key in client.scan_iter(match=f"{naming.PREFIX}:*"):
        yield key
        kind = client.type(key).decode()
        if kind == "string":
            yield client.get(key) or b""
        elif kind == "hash":
            for field, value in client.hgetall(key).items():
                yield field + b"=" + value
        elif kind == "set":
            yield from client.smembers(key)
        elif kind == "list":
            yield from client.lrange(key, 0, -1)
        elif kind == "zset":
            yield from client.zrange(key, 0, -1)


def _pages(settings: Settings, run_ids: list[str], repo: Path) -> Iterator[tuple[str, bytes]]:
    client = TestClient(create_app(settings), raise_server_exceptions=False)
    urls = ["/runs", "/api/runs", "/task-classes", "/api/task-classes", "/learn", "/api/learn",
            f"/compare/{run_ids[0]}/{run_ids[1]}", f"/api/compare/{run_ids[0]}/{run_ids[1]}",
            f"/task-classes/preview?task_class=distroless-migration&repo={repo}",
            f"/task-classes/preview?task_class=vulnerability-remediation&repo={repo}&inputs=package%3Drequests"]
    for run_id in run_ids:
        urls += [f"/runs/{run_id}", f"/runs/{run_id}/export.html", f"/api/runs/{run_id}",
                 f"/api/runs/{run_id}/provenance", f"/api/runs/{run_id}/progress"]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        yield url, response.content


def _leaks(where: str, data: bytes) -> list[str]:
    return [f"{where}: {value.decode()}" for value in VALUES if value in data]


@pytest.fixture
def corpus_repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({**CORPUS["files"], "worker/Dockerfile": WORKER, "worker/app": "binary\n"})


@pytest.fixture
def advisories(tmp_path: Path) -> Path:
    root = tmp_path / "advisories"
    root.mkdir()
    record = {"id": "PYSEC-2023-74", "modified": "2024-01-01T00:00:00Z", "aliases": ["CVE-2023-32681"],
              "summary": "requests bug", "affected": [{"package": {"ecosystem": "PyPI", "name": "requests"}, "ranges": [
                  {"type": "ECOSYSTEM", "events": [{"introduced": "2.3.0"}, {"fixed": "2.31.0"}]}]}]}
    (root / "PYSEC-2023-74.json").write_text(json.dumps(record))
    return root


def test_no_planted_secret_reaches_a_store_a_page_a_bundle_or_a_prompt(
        home: Path, corpus_repo: Path, advisories: Path, real_redis_url: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    forget_local_state()
    clear_namespace(real_redis_url)
    monkeypatch.setenv("PLANNER_REDIS_URL", real_redis_url)
    monkeypatch.setenv("PLANNER_ADVISORIES", str(advisories))  # gather's too (issue 23.5: not yet a freshness input)
    shown: list[tuple[str, bytes]] = []
    code, out = _cli(capsys, monkeypatch, "gather", str(corpus_repo))
    assert code == 0, out
    shown.append(("gather", out.encode()))
    runs = []
    # Runs that succeed: their plans are filed as solved examples (worker/Dockerfile, with no model, blocks).
    for args in (["vulnerability-remediation", "--advisories", str(advisories)],
                 ["distroless-migration", "-i", "dockerfile=Dockerfile"]):
        code, out = _cli(capsys, monkeypatch, "dispatch", *args[:1], "--repo", str(corpus_repo), *args[1:], "--json")
        record = json.loads(out)
        assert record["patch"], record
        runs.append(record["run_id"])
        shown.append((f"dispatch {args[0]}", out.encode()))
    for task_class, inputs in (("vulnerability-remediation", ["-i", "package=requests"]),
                               ("distroless-migration", ["-i", "dockerfile=Dockerfile"])):
        code, out = _cli(capsys, monkeypatch, "bundle", task_class, "--repo", str(corpus_repo), *inputs, "--json")
        assert code == 0, out
        shown.append((f"bundle {task_class}", out.encode()))
    model = fake_planner({"summary": "Move to the static image", "edits": [
        {"file": "worker/Dockerfile", "old": "FROM registry.corp.example/acme/base:7",
         "new": "FROM cgr.dev/chainguard/static"}], "used_entries": [], "notes": []})
    state = dispatch(Settings.from_env(), "distroless-migration", corpus_repo, {"dockerfile": "worker/Dockerfile"},
                     {}, model, "fake:x")
    assert model.prompts and state["patch"], state.get("outcomes")
    runs.append(state["run_id"])
    shown += [("prompt", prompt.encode()) for prompt in model.prompts]
    shown += [(f"state {key}", json.dumps(value, default=str).encode()) for key, value in state.items()]
    exact = sorted(home.rglob(EXACT_PATCH))  # the one copy kept exact, for `git apply`: the owner's alone
    assert exact and all(path.stat().st_mode & 0o777 == 0o600 for path in exact)
    shown += [(str(path), path.read_bytes()) for path in sorted(home.rglob("*"))
              if path.is_file() and path.name != EXACT_PATCH]
    shown += [("redis", b"\n".join(_redis_values(real_redis_url)))]
    shown += list(_pages(Settings.from_env(), runs, corpus_repo))
    with sqlite3.connect(home / "examples.sqlite") as db:  # the solved-example store was written, and searched
        assert db.execute("SELECT count(*) FROM examples").fetchone()[0] >= 3
    leaks = [leak for where, data in shown for leak in _leaks(where, data)]
    assert not leaks, "\n".join(leaks)
    assert any(b"REDACTED-url-userinfo" in data for _, data in shown)  # the redacted lines are there, scrubbed
    forget_local_state()


def test_a_patch_next_to_a_secret_applies_exactly(home: Path, corpus_repo: Path, advisories: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_ADVISORIES", str(advisories))
    before = {name: (corpus_repo / name).read_bytes() for name in ("requirements.txt", "Dockerfile")}
    code, out = _cli(capsys, monkeypatch, "dispatch", "vulnerability-remediation", "--repo", str(corpus_repo),
                     "--advisories", str(advisories), "--apply", "--json")
    record = json.loads(out)
    assert code == 0 and record["branch"], out
    git(corpus_repo, "checkout", "-q", record["branch"])
    after = (corpus_repo / "requirements.txt").read_bytes()
    assert after == before["requirements.txt"].replace(b"requests==2.30.0", b"requests==2.31.0")
    code, out = _cli(capsys, monkeypatch, "dispatch", "distroless-migration", "--repo", str(corpus_repo), "--apply",
                     "--json", "-i", "dockerfile=Dockerfile")
    record = json.loads(out)
    assert code == 0 and record["branch"], out
    git(corpus_repo, "checkout", "-q", record["branch"])
    migrated = (corpus_repo / "Dockerfile").read_text()
    for value in ("FAKEdockerArgT0ken0000", "FAKEdockerEnvKey0000", "FAKEdockerEnvPassw0rd"):
        assert value in migrated  # the user's file keeps its own values; only the stored copies are redacted
    assert "REDACTED" not in migrated
    subprocess.run(["git", "-C", str(corpus_repo), "diff", "--quiet"], check=True)


def test_edits_read_back_from_a_checkpoint_make_the_exact_patch(home: Path, corpus_repo: Path) -> None:
    """What a resumed run works from (the checkpoint) holds markers, yet makes the very same patch."""
    state = dispatch(Settings.from_env(), "distroless-migration", corpus_repo, {"dockerfile": "Dockerfile"}, {})
    saved = read_state(home, state["run_id"])
    edits = [Edit.model_validate(e) for r in saved["results"] for e in r["edits"]]
    assert edits and not _leaks("checkpoint", json.dumps(saved, default=str).encode())
    assert any("REDACTED-" in e.old for e in edits)
    patch = unified_diff(apply_edits(reader(str(corpus_repo)), edits))
    assert patch == (home / "runs" / state["run_id"] / EXACT_PATCH).read_text()
    assert "ENV DB_PASSWORD FAKEdockerEnvPassw0rd" in patch


def test_a_portfolio_branch_is_made_from_the_exact_patch(home: Path, corpus_repo: Path, advisories: Path) -> None:
    """A portfolio records the shown (redacted) patch; its branch is made from the run's exact copy."""
    state = dispatch(Settings.from_env(), "vulnerability-remediation", corpus_repo, {},
                     {"advisories": str(advisories)})
    assert "REDACTED-url-userinfo" in state["patch"] and "FAKEpipIndexT0ken0000" not in state["patch"]
    spec = Spec(id="p1", task_class="vulnerability-remediation", tccm_sha256="x", apply=True)
    result = Result(repo=str(corpus_repo), key="k", status="succeeded", run_id=state["run_id"],
                    patch=state["patch"], report="r")
    applied = collect.apply(spec, result, home)
    assert applied.branch and applied.apply_error is None
    shown = git(corpus_repo, "show", f"{applied.branch}:requirements.txt")
    original = (corpus_repo / "requirements.txt").read_text()
    assert shown == original.replace("requests==2.30.0", "requests==2.31.0")
