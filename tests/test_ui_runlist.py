"""The runs list of `planner ui` over real runs: sorting by column, portfolio groups with totals by status (and
their /api), the SQL copy following PLANNER_HOME as runs are added, and bad sort input as one clear line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from ui_support import IMG, PortfolioHome, populate_portfolio, snapshot

from planner.cli import app as cli_app
from planner.ui import runlist
from planner.ui.app import create_app


@pytest.fixture(scope="module")
def pf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PortfolioHome]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield populate_portfolio(tmp_path_factory.mktemp("ui-portfolio"), monkeypatch)


@pytest.fixture(scope="module")
def client(pf: PortfolioHome) -> TestClient:
    return TestClient(create_app(pf.settings), raise_server_exceptions=False)


def shown_ids(body: str) -> list[str]:
    return re.findall(r'<tr data-id="([^"]+)"', body)


def tokens_of(client: TestClient, run_id: str) -> int:
    return int(client.get(f"/api/runs/{run_id}/provenance").json()["totals"]["tokens"])


def test_a_portfolio_groups_its_runs_with_totals(pf: PortfolioHome, client: TestClient) -> None:
    body = client.get("/runs").text
    group = body[body.index(f'<tbody class="portfolio" data-portfolio="{pf.portfolio}">'):]
    group = group[:group.index("</tbody>")]
    assert f'portfolio <a href="/portfolios/{pf.portfolio}">{pf.portfolio}</a>' in group
    assert "vulnerability-remediation" in group
    assert "2 run(s) of 2 repositories" in group and "2 succeeded" in group  # totals by status
    assert all(f'data-id="{m}" class="member hidden" data-portfolio="{pf.portfolio}"' in group for m in pf.members)
    alone = body[body.index(f'<tr data-id="{pf.alone}">'):]
    assert 'class="member' not in alone[:alone.index("</tr>")]  # a run outside the portfolio stands alone
    assert "3 shown by these filters" in body
    assert IMG not in body and "shop-&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in body  # the repo path, escaped


def test_flat_lists_every_run_on_its_own_line(pf: PortfolioHome, client: TestClient) -> None:
    body = client.get("/runs", params={"flat": 1}).text
    assert 'class="portfolio"' not in body and 'class="member' not in body
    assert sorted(shown_ids(body)) == sorted([*pf.members, pf.alone])
    assert 'name="flat" value="1"' in body and "checked" in body


def test_filters_apply_inside_groups(pf: PortfolioHome, client: TestClient) -> None:
    body = client.get("/runs", params={"status": "failed"}).text
    assert 'id="empty"' in body and "matches these filters" in body
    repo_of_alone = next(r["repo"] for r in client.get("/api/runs").json() if r["id"] == pf.alone)
    only = client.get("/runs", params={"repo": repo_of_alone}).text
    assert shown_ids(only) == [pf.alone] and 'class="portfolio"' not in only


def test_api_portfolios_is_the_cli_list_plus_runs(pf: PortfolioHome, client: TestClient) -> None:
    result = CliRunner().invoke(cli_app, ["portfolio", "list", "--json"], env=pf.env)
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout)
    api = client.get("/api/portfolios").json()
    assert [{k: v for k, v in row.items() if k not in ("runs", "by_status")} for row in api] == cli
    assert api[0]["id"] == pf.portfolio and sorted(api[0]["runs"]) == sorted(pf.members)
    assert api[0]["by_status"] == {"succeeded": 2}


def test_sorting_by_each_column_in_sql(pf: PortfolioHome, client: TestClient) -> None:
    tokens = {i: tokens_of(client, i) for i in [*pf.members, pf.alone]}
    by_tokens = client.get("/api/runs", params={"sort": "tokens", "order": "asc"}).json()
    assert [tokens[r["id"]] for r in by_tokens] == sorted(tokens.values())
    flat = client.get("/runs", params={"flat": 1, "sort": "tokens", "order": "desc"}).text
    assert [tokens[i] for i in shown_ids(flat)] == sorted(tokens.values(), reverse=True)
    assert 'aria-sort="descending"' in flat and "tokens / budget ▼" in flat
    assert "sort=tokens&amp;order=asc" in flat  # the header link flips the order
    started = client.get("/api/runs", params={"sort": "started", "order": "asc"}).json()
    assert [r["id"] for r in started] == [r["id"] for r in client.get("/api/runs").json()]  # CLI order: oldest first
    for column in ("duration", "cost", "status"):
        page = client.get("/runs", params={"sort": column, "order": "asc"})
        assert page.status_code == 200 and len(shown_ids(page.text)) == 3, column
    # a group sorts as one entry, by its runs' summed tokens: above the lone run when sorting by most tokens
    grouped = client.get("/runs", params={"sort": "tokens", "order": "desc"}).text
    assert grouped.index(f'data-portfolio="{pf.portfolio}"') < grouped.index(f'<tr data-id="{pf.alone}">')


def test_paging_counts_a_portfolio_as_one_entry(pf: PortfolioHome, client: TestClient,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runlist, "PAGE_SIZE", 1)
    pages = [client.get("/runs", params={"page": n}).text for n in (1, 2)]
    assert all(f"page {n} of 2" in p for n, p in zip((1, 2), pages, strict=True))
    assert sum('class="portfolio"' in p for p in pages) == 1 and sum(pf.alone in p for p in pages) == 1


def test_bad_sort_or_page_is_one_clear_line(client: TestClient) -> None:
    for params, message in (({"sort": "id; DROP TABLE runs"}, "sort='id; DROP TABLE runs': expected one of"),
                            ({"order": "sideways"}, "order='sideways': expected asc or desc"),
                            ({"page": "two"}, "page: ")):
        page = client.get("/runs", params=params)
        assert page.status_code == 400 and "Traceback" not in page.text, params
        assert message.replace("'", "&#39;") in page.text, page.text[-400:]
    assert client.get("/api/runs", params={"sort": "nope"}).json()["error"].startswith("sort='nope'")


def test_the_copy_follows_new_runs_and_writes_nothing(pf: PortfolioHome, client: TestClient) -> None:
    from planner.run.dispatch import dispatch

    before = snapshot(pf.home)
    first = shown_ids(client.get("/runs", params={"flat": 1}).text)
    assert snapshot(pf.home) == before  # reading wrote nothing (SQLite's -shm aside)
    repo = next(r["repo"] for r in client.get("/api/runs").json() if r["id"] == pf.alone)
    added = dispatch(pf.settings, "vulnerability-remediation", pf.home.parent / "alone", {},
                     {"advisories": str(pf.home.parent / "advisories")})
    after = shown_ids(client.get("/runs", params={"flat": 1}).text)  # (the module's last test: it adds a run)
    assert sorted(after) == sorted([*first, added["run_id"]])  # the new run is listed (runs of one second: by id)
    assert added["run_id"] in [r["id"] for r in client.get("/api/runs", params={"repo": repo}).json()]


def test_a_portfolio_page_groups_its_repositories_by_outcome(pf: PortfolioHome, client: TestClient) -> None:
    body = client.get(f"/portfolios/{pf.portfolio[:10]}").text
    assert f'id="portfolio-id">{pf.portfolio}<' in body and 'id="portfolio-status">succeeded<' in body
    assert all(f'<a href="/runs/{m}">{m}</a>' in body for m in pf.members)  # each repository links to its run
    assert "<th>package</th><th>from</th><th>to</th><th>advisories</th>" in body  # the class's own columns
    assert IMG not in body  # a repository path is escaped here too
    api = client.get(f"/api/portfolios/{pf.portfolio}").json()
    result = CliRunner().invoke(cli_app, ["portfolio", "report", pf.portfolio, "--json"], env=pf.env)
    assert api["groups"] == json.loads(result.stdout)["groups"] and api["status"] == "succeeded"
    table = client.get(f"/portfolios/{pf.portfolio}/report.csv")
    assert table.headers["content-type"].startswith("text/csv")
    lines = table.text.splitlines()
    assert lines[0].startswith("repository,run_id,repository_status,item,item_status,package,from,to")
    assert len(lines) == 3 and all(",succeeded,PyPI:requests,succeeded,requests,2.30.0," in line for line in lines[1:])
    assert client.get("/portfolios/pf-nope").status_code == 404
    assert f'<a href="/portfolios/{pf.portfolio}">' in client.get("/runs").text


def test_a_status_filter_unfolds_the_matching_runs_inside_a_portfolio(pf: PortfolioHome, client: TestClient) -> None:
    body = client.get("/runs", params={"status": "succeeded"}).text
    assert all(f'data-id="{m}" class="member" data-portfolio="{pf.portfolio}"' in body for m in pf.members)
    assert f'aria-expanded="true" data-portfolio="{pf.portfolio}"' in body
