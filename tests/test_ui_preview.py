"""`planner ui`'s bundle preview over real runs: the bundle and provenance `planner bundle` would give, built in
memory; nothing written to PLANNER_HOME or the repository; only repositories recorded runs name."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from ui_support import IMG, SCRIPT, SECRET, UIHome, populate, snapshot

from planner.cli import app as cli_app
from planner.ui.app import create_app


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIHome]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield populate(tmp_path_factory.mktemp("ui-preview"), monkeypatch)


@pytest.fixture(scope="module")
def client(ui: UIHome) -> TestClient:
    return TestClient(create_app(ui.settings), raise_server_exceptions=False)


def widget(ui: UIHome) -> str:
    return str((ui.home.parent / "widget").resolve())


def preview(client: TestClient, repo: str, task_class: str = "readme-title", inputs: str = "") -> object:
    return client.get("/task-classes/preview", params={"task_class": task_class, "repo": repo, "inputs": inputs})


def test_the_form_offers_gathered_repos_that_runs_name(ui: UIHome, client: TestClient) -> None:
    body = client.get("/task-classes").text
    form = body[body.index('id="preview-form"'):body.index("</form>")]
    assert f'<option value="{widget(ui)}">' in form and str((ui.home.parent / "shop").resolve()) in form
    assert '<option value="readme-title">' in form and 'value="broken"' not in form  # invalid: not offered
    assert "vulnerability-remediation" in body


def test_preview_renders_the_bundle_and_its_provenance(ui: UIHome, client: TestClient) -> None:
    page = preview(client, widget(ui))
    assert page.status_code == 200, page.text[-500:]
    body = page.text
    text = body[body.index('id="bundle-text"'):]
    assert "# old title" in text and "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in text  # README, escaped
    assert SCRIPT not in body and IMG not in body and "<img" not in body
    assert SECRET not in body and "do-not-leak" not in body  # .env: denied, the rule shown, never the content
    denied = body[body.index('data-status="denied"'):]
    assert ".env" in denied[:denied.index("</tr>")] and "rule:" in denied[:denied.index("</tr>")]
    assert 'data-band="may_read"' in body and "docs/&#34;&gt;&lt;img" in body  # the hostile file name, escaped
    assert "not recorded" in body and "readme-title.yaml" in body and "fresh" in body


def test_preview_is_planner_bundle_without_the_record(ui: UIHome, client: TestClient, tmp_path: Path) -> None:
    api = client.get("/api/task-classes/preview", params={"task_class": "readme-title", "repo": widget(ui)}).json()
    home = tmp_path / "home-copy"  # `planner bundle` records: run it on a copy of the home, not the module's
    shutil.copytree(ui.home, home, ignore=shutil.ignore_patterns("*.sqlite-shm"))
    result = CliRunner().invoke(cli_app, ["bundle", "readme-title", "--repo", widget(ui), "--json"],
                                env={**ui.env, "PLANNER_HOME": str(home), "PLANNER_REDIS_URL": "off"})
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout)
    for key in ("entries", "totals", "bundle_sha256", "tccm", "repocontext", "mode", "inputs", "text"):
        assert api[key] == cli[key], key
    assert "record_path" not in api and api["hot_views"].startswith("off (a preview")


def test_preview_writes_nothing(ui: UIHome, client: TestClient) -> None:
    repo = Path(widget(ui))
    before = snapshot(ui.home), snapshot(repo)
    for url in ("/task-classes", "/task-classes/preview", "/api/task-classes/preview"):
        client.get(url, params={"task_class": "readme-title", "repo": str(repo)})
    assert (snapshot(ui.home), snapshot(repo)) == before
    assert not list((ui.home / "runs").glob("*.json.tmp*"))


def test_inputs_reach_the_bundle(ui: UIHome, client: TestClient) -> None:
    shop = str((ui.home.parent / "shop").resolve())
    page = preview(client, shop, "vulnerability-remediation", "package=requests; ecosystem=PyPI")
    assert page.status_code == 200, page.text[-400:]
    assert "<code>ecosystem=PyPI</code> <code>package=requests</code>" in page.text  # in the record, sorted
    bad = preview(client, shop, "vulnerability-remediation", "no equals sign")
    assert bad.status_code == 400 and "input &#39;no equals sign&#39;: expected NAME=VALUE" in bad.text


def test_only_repos_that_runs_name_are_read(ui: UIHome, client: TestClient, tmp_path: Path) -> None:
    link = tmp_path / "link-to-widget"
    link.symlink_to(widget(ui), target_is_directory=True)
    for repo in ("/etc", str(tmp_path), f"{widget(ui)}/../shop", str(link), "relative/path", str(ui.home)):
        page = preview(client, repo)
        assert page.status_code == 400 and "Traceback" not in page.text, repo
        assert "is not one that recorded runs name" in page.text, page.text[-300:]
    assert client.get("/api/task-classes/preview", params={"task_class": "readme-title", "repo": "/etc"}
                      ).json()["error"].startswith("repository '/etc' is not one")
    unknown = preview(client, widget(ui), "no-such-class")
    assert unknown.status_code in (400, 404) and "no-such-class" in unknown.text and "Traceback" not in unknown.text
    assert client.get("/task-classes/preview").status_code == 400  # task_class and repo are required
