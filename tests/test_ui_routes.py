"""`planner ui` routes with FastAPI's test client, over real dispatched runs: every page and API, escaping,
read-only, paths that try to leave PLANNER_HOME, and bad input as a page with one clear line."""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from ui_support import IMG, SCRIPT, SECRET, UIHome, populate, snapshot

from planner.cli import app as cli_app
from planner.ui import runlist
from planner.ui.app import create_app
from planner.ui.home import Home, NotFound

PAGES = ["/runs", "/runs?status=succeeded", "/task-classes", "/learn", "/api/runs", "/api/task-classes", "/api/learn"]


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIHome]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield populate(tmp_path_factory.mktemp("ui"), monkeypatch)


@pytest.fixture(scope="module")
def client(ui: UIHome) -> TestClient:
    return TestClient(create_app(ui.settings), raise_server_exceptions=False)


def run_pages(ui: UIHome) -> list[str]:
    ids = (ui.llm, ui.second, ui.remediation)
    return [*(f"/runs/{i}" for i in ids), *(f"/runs/{i}/export.html" for i in ids), *(f"/api/runs/{i}" for i in ids),
            *(f"/api/runs/{i}/provenance" for i in ids), f"/compare/{ui.llm}/{ui.second}",
            f"/api/compare/{ui.llm}/{ui.second}"]


def cli_json(ui: UIHome, *args: str) -> object:
    result = CliRunner().invoke(cli_app, [*args, "--json"], env=ui.env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_every_page_answers_and_escapes_repo_strings(ui: UIHome, client: TestClient) -> None:
    for url in PAGES + run_pages(ui):
        response = client.get(url)
        assert response.status_code == 200, (url, response.text[:300])
        body = response.text
        assert SECRET not in body and "do-not-leak" not in body, url  # denied: the rule, never the content
        if not url.startswith("/api/"):
            assert SCRIPT not in body and IMG not in body and "<img" not in body, url


def test_runs_page_lists_newest_first_with_the_columns(ui: UIHome, client: TestClient) -> None:
    body = client.get("/runs").text
    newest_first = [r["id"] for r in reversed(client.get("/api/runs").json())]  # runs in one second: by id
    positions = [body.index(f'data-id="{i}"') for i in newest_first]
    assert positions == sorted(positions) and len(positions) == 3
    row = body[body.index(f'data-id="{ui.llm}"'):]
    row = row[:row.index("</tr>")]
    assert "readme-title" in row and "succeeded" in row and "$0.0002" in row  # gpt-4o-mini price of 2×1280 tokens
    filtered = client.get("/runs", params={"task_class": "vulnerability-remediation"}).text
    assert ui.remediation in filtered and ui.llm not in filtered and "1 shown by these filters" in filtered


def test_runs_page_paginates(ui: UIHome, client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runlist, "PAGE_SIZE", 2)
    first, second = client.get("/runs").text, client.get("/runs", params={"page": 2}).text
    shown = [re.findall(r'data-id="([^"]+)"', page) for page in (first, second)]
    # Newest first: the reverse of `planner runs list` (creation order, exact within a second).
    newest_first = [r["id"] for r in client.get("/api/runs").json()][::-1]
    assert [len(ids) for ids in shown] == [2, 1] and shown[0] + shown[1] == newest_first
    assert set(shown[0] + shown[1]) == {r["id"] for r in client.get("/api/runs").json()}
    assert "page 1 of 2" in first and 'rel="next"' in first and "page 2 of 2" in second
    assert "page 2 of 2" in client.get("/runs", params={"page": 99}).text  # past the end: the last page


def test_run_page_shows_report_patch_items_and_provenance(ui: UIHome, client: TestClient) -> None:
    body = client.get(f"/runs/{ui.llm}").text
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in body or "&lt;script&gt;" in body
    assert '<span class="l del">-# old title</span>' in body and '<span class="l add">+# widget</span>' in body
    assert 'data-status="denied"' in body and "rule:" in body  # .env: denied with its rule
    assert "llm_fallback" in body and "planned" in body and "openai:gpt-4o-mini" in body
    assert "readme-title.yaml" in body and "fresh" in body  # TCCM path and RepoContext freshness
    remediation = client.get(f"/runs/{ui.remediation}").text
    assert "PyPI:requests" in remediation and "recipe_match" in remediation and "+requests==2.31.0" in remediation
    assert 'class="b-must_read"' in remediation  # the tokens-per-band bar


def test_unknown_and_escaping_ids_are_a_404_page(ui: UIHome, client: TestClient) -> None:
    for url in ["/runs/20990101-000000-ffffff", "/runs/..%2F..%2Fetc%2Fpasswd", "/runs/%2e%2e%2frunner",
                "/runs/a%5Cb", "/runs/x/export.html", "/compare/nope/nope", "/api/runs/../../etc/passwd"]:
        response = client.get(url)
        assert response.status_code == 404, url
        assert "Traceback" not in response.text
    for raw in ("..", "../runs", "a/b", "..\\x", "*", "2026%"):  # what a client might not normalise away
        with pytest.raises(NotFound):
            Home(ui.home).resolve(raw)
    page = client.get("/runs/20990101-000000-ffffff").text
    assert "run &#39;20990101-000000-ffffff&#39; does not exist" in page
    assert client.get("/api/runs/nope").json() == {"error": f"run 'nope' does not exist under PLANNER_HOME {ui.home}"}


def test_symlinks_out_of_the_home_are_not_followed(ui: UIHome, client: TestClient, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    record = (ui.home / "runs" / f"{ui.llm}.json").read_text()
    (outside / "record.json").write_text(record.replace(ui.llm, "20990101-000000-0u7s1d"))
    (outside / "report.md").write_text("TOP SECRET REPORT\n")
    link = ui.home / "runs" / "20990101-000000-0u7s1d.json"
    link.symlink_to(outside / "record.json")
    artifacts = ui.home / "runs" / "20990101-000000-0u7s1d"
    artifacts.symlink_to(outside, target_is_directory=True)
    try:
        response = client.get("/runs/20990101-000000-0u7s1d")
        assert response.status_code == 404 and "outside PLANNER_HOME" in response.text
        assert "TOP SECRET" not in client.get("/runs/20990101-000000-0u7s1d/export.html").text
    finally:
        link.unlink()
        artifacts.unlink()


def test_the_api_matches_the_cli_json(ui: UIHome, client: TestClient) -> None:
    assert client.get("/api/runs").json() == cli_json(ui, "runs", "list")
    assert client.get(f"/api/runs/{ui.llm}/provenance").json() == cli_json(ui, "provenance", ui.llm)
    assert client.get(f"/api/runs/{ui.remediation}").json() == cli_json(ui, "runs", "show", ui.remediation)
    assert client.get("/api/task-classes").json() == cli_json(ui, "task-classes", "list")
    assert client.get("/api/learn").json() == cli_json(ui, "learn", "report")
    failed = client.get("/api/runs", params={"status": "failed"}).json()
    assert failed == []


def test_compare_names_what_only_one_run_saw(ui: UIHome, client: TestClient) -> None:
    data = client.get(f"/api/compare/{ui.llm}/{ui.second}").json()
    only_b = [d["id"] for d in data["entries"] if d["change"] == "only_b"]
    assert "may_read:0:docs/extra.md" in only_b
    stages = {(d["item"], d["stage"]): (d["a"], d["b"]) for d in data["stages"]}
    assert stages[("task", "llm_fallback")][0].startswith("planned: openai:gpt-4o-mini") and \
        stages[("task", "llm_fallback")][1] is None
    assert stages[("task", "solved_example_rag")][1].startswith(f"retrieved: run {ui.llm}")
    commit = next(f for f in data["fields"] if f["field"] == "commit")
    assert commit["a"] != commit["b"]
    page = client.get(f"/compare/{ui.llm}/{ui.second}").text
    assert "only in B" in page and "docs/extra.md" in page and "not tried" in page
    repository = next(f for f in data["fields"] if f["field"] == "repository")
    assert repository["a"] and repository["b"]  # both repositories, named
    assert data["patch_a"] and data["patch_a"] in client.get(f"/api/runs/{ui.llm}").json()["patch"]
    assert '<div class="side" data-side="A">' in page and '<div class="side" data-side="B">' in page


def test_task_classes_and_learning_pages(ui: UIHome, client: TestClient) -> None:
    body = client.get("/task-classes").text
    assert "readme-title" in body and "glob:docs/**" in body and "4000 tokens" in body
    assert "broken" in body and "invalid" in body and "escapes" in body  # the validation problem, in one line
    assert "10 states from <code>triage</code>, at most 16 steps" in body  # base-image-bump's flow
    assert "edits: manifest,lockfile; bumps ≤ minor; effects: apply,verify,regenerate,regather; network" in body
    learn = client.get("/learn").text
    assert "glob:README.md" in learn and 'class="chart"' in learn
    assert "vulnerability-remediation" not in client.get("/learn", params={"task_class": "readme-title"}).text.split(
        "</form>")[1]


def test_no_route_writes_and_none_accepts_a_change(ui: UIHome, client: TestClient) -> None:
    gc.collect()  # the dispatches' own checkpointer connections: closed now (a close checkpoints the WAL), not mid-test
    before = snapshot(ui.home)
    for url in PAGES + run_pages(ui):
        client.get(url)
    after = snapshot(ui.home)
    assert after == before, {k: (before.get(k), after.get(k)) for k in before.keys() | after.keys()
                             if before.get(k) != after.get(k)}
    assert client.post("/runs").status_code == 405 and client.delete(f"/api/runs/{ui.llm}").status_code == 405


def test_a_running_run_shows_live_progress(ui: UIHome, client: TestClient) -> None:
    from planner.store.runs import RunStore

    store = RunStore(ui.home)  # this process is the run's owner, so it reads as running
    store.create("20990101-000000-11fe00", "readme-title", str(ui.home), {}, {})
    try:
        body = client.get("/runs/20990101-000000-11fe00").text
        # no page-wide refresh: the page polls a small JSON fragment and reloads only when a node finished
        assert 'http-equiv="refresh"' not in body and "Running" in body and "No work items yet" in body
        assert '"/api/runs/20990101-000000-11fe00/progress"' in body and 'data-nodes="0"' in body
        progress = client.get("/api/runs/20990101-000000-11fe0/progress").json()  # a prefix works, as elsewhere
        assert progress["id"] == "20990101-000000-11fe00" and progress["status"] == "running"
        assert progress["nodes_done"] == [] and progress["updated_at"]
        finished = client.get(f"/api/runs/{ui.llm}/progress").json()
        assert finished["status"] == "succeeded" and finished["nodes_done"] == []
        assert client.get("/api/runs/20990101-000000-abcdef/progress").status_code == 404
    finally:
        store.db.execute("DELETE FROM runs WHERE id = ?", ("20990101-000000-11fe00",))  # type: ignore[union-attr]
        store.db.commit()  # type: ignore[union-attr]
        store.close()


def test_a_corrupt_runs_db_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "runs.sqlite").write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("PLANNER_HOME", str(home))
    from planner.config import Settings

    client = TestClient(create_app(Settings.from_env()), raise_server_exceptions=False)
    response = client.get("/runs")
    assert response.status_code == 503 and "Traceback" not in response.text
    assert "cannot read the run store under" in response.text and "not a database" in response.text
    assert client.get("/api/runs").json()["error"].startswith("cannot read the run store")


def test_an_empty_home_is_an_empty_list_and_stays_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "nothing-here"))
    from planner.config import Settings

    client = TestClient(create_app(Settings.from_env()))
    assert "Nothing recorded yet" in client.get("/runs").text and client.get("/api/runs").json() == []
    assert "No finished runs" in client.get("/learn").text
    assert not (tmp_path / "nothing-here").exists()  # a reader creates nothing


def test_provenance_html_is_one_self_contained_file(ui: UIHome) -> None:
    result = CliRunner().invoke(cli_app, ["provenance", ui.llm[:-2], "--html"], env=ui.env)
    assert result.exit_code == 0, result.output
    html = result.stdout
    assert html.startswith("<!doctype html>") and ui.llm in html and "<style>" in html
    assert "<img" not in html and "<link" not in html and 'href="/' not in html  # nothing to fetch, no server
    assert "http://" not in html and "https://" not in html
    assert SCRIPT not in html and "&lt;script&gt;" in html
    missing = CliRunner().invoke(cli_app, ["provenance", "nope", "--html"], env=ui.env)
    assert missing.exit_code != 0


def test_planner_help_does_not_import_the_web_stack() -> None:
    code = ("import sys; from planner.cli import app; from typer.main import get_command; get_command(app); "
            "print(sorted(m for m in ('fastapi', 'uvicorn', 'jinja2', 'starlette') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ}).stdout
    assert out.strip() == "[]"
    from planner.cli.ui import ui_command

    assert ui_command.__defaults__ == ("127.0.0.1", 8765, None)
