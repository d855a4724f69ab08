"""`planner ui` in a real browser: Playwright drives the system Chromium (never a downloaded one) against a
real server on 127.0.0.1 over real runs. Asserts what a person sees; screenshots go to the test's tmp dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_support import CHROMIUM, CHROMIUM_ARGS, SECRET, TOKEN, UIHome, needs_chromium, populate, served, sign_in

ARGS = CHROMIUM_ARGS
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIHome]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield populate(tmp_path_factory.mktemp("ui-browser"), monkeypatch)


@pytest.fixture(scope="module")
def server(ui: UIHome) -> Iterator[str]:
    with served(ui.settings) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, server: str, tmp_path: Path) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    opened = context.new_page()
    sign_in(opened, server)
    yield opened
    opened.screenshot(path=str(tmp_path / "last.png"), full_page=True)
    context.close()


def test_only_a_signed_in_browser_sees_the_runs(browser: Any, server: str, page: Any) -> None:
    stranger = browser.new_context().new_page()
    answer = stranger.goto(f"{server}/runs")
    assert answer is not None and answer.status == 401
    assert "needs its token" in stranger.inner_text("#error-message") and stranger.locator("#runs").count() == 0
    stranger.context.close()
    page.goto(f"{server}/runs")  # the page fixture signed in with the printed URL
    assert page.locator("#runs tbody tr").count() == 3
    (cookie,) = page.context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
    assert page.evaluate("document.cookie") == ""  # out of the page's scripts' reach


def test_runs_list_then_a_run(ui: UIHome, server: str, page: Any, tmp_path: Path) -> None:
    page.goto(f"{server}/runs")
    rows = page.locator("#runs tbody tr")
    assert rows.count() == 3
    created = page.locator("#runs tbody tr td:last-child").all_inner_texts()
    assert created == sorted(created, reverse=True)  # newest first
    cells = page.locator(f'#runs tr[data-id="{ui.llm}"] td').all_inner_texts()
    assert cells[2] == "readme-title" and cells[5] == "succeeded" and cells[8] == "$0.0002"
    page.select_option("select[name=task_class]", "vulnerability-remediation")
    page.wait_for_url("**task_class=vulnerability-remediation**")
    assert page.locator("#runs tbody tr").count() == 1
    page.screenshot(path=str(tmp_path / "runs-filtered.png"), full_page=True)
    page.click(f"text={ui.remediation}")
    page.wait_for_url(f"**/runs/{ui.remediation}")
    assert page.inner_text("#run-status") == "succeeded"
    assert page.locator(".item h3").first.inner_text().startswith("PyPI:requests")
    assert "+requests==2.31.0" in page.inner_text(".diff")
    assert "<script>" in page.inner_text("#report")  # shown as text, not run
    page.screenshot(path=str(tmp_path / "run.png"), full_page=True)


def test_filter_provenance_to_denied(ui: UIHome, server: str, page: Any, tmp_path: Path) -> None:
    page.goto(f"{server}/runs/{ui.llm}")
    total = page.locator("#provenance tbody tr").count()
    assert page.inner_text("#prov-count") == f"{total} of {total} entries"
    page.select_option("#f-status", "denied")
    visible = page.locator("#provenance tbody tr:visible")
    assert page.inner_text("#prov-count") == f"1 of {total} entries" and visible.count() == 1
    row = visible.first.inner_text()
    assert "denied" in row and ".env" in row and "rule:" in row and SECRET not in row
    page.select_option("#f-status", "")
    page.fill("#f-text", "docs/")
    assert page.locator("#provenance tbody tr:visible").count() >= 1
    assert all("docs/" in t for t in page.locator("#provenance tbody tr:visible").all_inner_texts())
    page.screenshot(path=str(tmp_path / "denied.png"), full_page=True)


def test_compare_two_runs(ui: UIHome, server: str, page: Any, tmp_path: Path) -> None:
    page.goto(f"{server}/runs")
    page.fill("input[name=a]", ui.llm)
    page.fill("input[name=b]", ui.second)
    page.click("text=compare")
    page.wait_for_url(f"**/compare/{ui.llm}/{ui.second}")
    only_b = page.locator('#entry-diffs tr[data-change="only_b"]').all_inner_texts()
    assert any("docs/extra.md" in row and "only in B" in row for row in only_b)
    stages = page.inner_text("#stage-diffs")
    assert "llm_fallback" in stages and "not tried" in stages and "retrieved" in stages
    page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)


def test_export_html_works_offline(ui: UIHome, server: str, page: Any, tmp_path: Path) -> None:
    page.goto(f"{server}/runs/{ui.llm}")
    with page.expect_download() as download:
        page.click("#export-link")
    saved = tmp_path / "run.html"
    download.value.save_as(saved)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(saved.as_uri())
    assert page.inner_text("#run-id") == ui.llm and page.inner_text("#run-status") == "succeeded"
    page.select_option("#f-status", "denied")  # the filters work in the file too
    assert page.locator("#provenance tbody tr:visible").count() == 1
    assert all(url.startswith("file://") for url in requests), requests
    page.screenshot(path=str(tmp_path / "export.png"), full_page=True)


def _tokens(page: Any) -> list[int]:
    return [int(t.split("/")[0]) for t in page.locator("#runs tbody tr td:nth-child(8)").all_inner_texts()]


def test_sort_the_runs_list_by_tokens(ui: UIHome, server: str, page: Any, tmp_path: Path) -> None:
    page.goto(f"{server}/runs")
    page.click("#runs a.sort[data-sort=tokens]")
    page.wait_for_url("**/runs?sort=tokens")  # descending: the default order, left out of the link
    most_first = _tokens(page)
    assert len(most_first) == 3 and most_first == sorted(most_first, reverse=True)
    assert "▼" in page.inner_text("#runs th[aria-sort=descending]")
    page.click("#runs a.sort[data-sort=tokens]")  # again: the other way round
    page.wait_for_url("**/runs?sort=tokens&order=asc")
    assert _tokens(page) == sorted(most_first)
    page.select_option("select[name=task_class]", "readme-title")  # a filter keeps the sort
    page.wait_for_url("**task_class=readme-title**")
    assert "sort=tokens" in page.url and page.locator("#runs tbody tr").count() == 2
    page.screenshot(path=str(tmp_path / "runs-sorted.png"), full_page=True)


def test_preview_a_bundle(ui: UIHome, server: str, page: Any, tmp_path: Path) -> None:
    widget = str((ui.home.parent / "widget").resolve())
    page.goto(f"{server}/task-classes")
    page.select_option("#preview-form select[name=task_class]", "readme-title")
    page.select_option("#preview-form select[name=repo]", widget)
    page.click("#preview-button")
    page.wait_for_url("**/task-classes/preview?**")
    assert page.inner_text("#preview-repo") == widget
    text = page.inner_text("#bundle-text")
    assert "# old title" in text and "<script>alert('pwned')</script>" in text  # shown as text, not run
    denied = page.locator('#provenance tr[data-status="denied"]').all_inner_texts()
    assert len(denied) == 1 and ".env" in denied[0] and "rule:" in denied[0] and SECRET not in denied[0]
    assert "tokens" in page.inner_text("#preview-totals")
    page.screenshot(path=str(tmp_path / "preview.png"), full_page=True)


def test_a_running_run_page_follows_the_run(ui: UIHome, server: str, page: Any) -> None:
    from planner.store.runs import RunStore

    store = RunStore(ui.home)  # this process owns the run, so it reads as running until its status is set
    store.create("20990101-000000-b10e00", "readme-title", str(ui.home), {}, {})
    try:
        page.goto(f"{server}/runs/20990101-000000-b10e00")
        assert page.inner_text("#run-status") == "running" and page.is_visible("#live")
        store.set_status("20990101-000000-b10e00", "failed")  # what finalize does when the run ends
        page.wait_for_function("document.getElementById('run-status').textContent === 'failed'", timeout=10_000)
        assert not page.locator("#live").count()  # reloaded once, and no longer polling
    finally:
        store.db.execute("DELETE FROM runs WHERE id = ?", ("20990101-000000-b10e00",))  # type: ignore[union-attr]
        store.db.commit()  # type: ignore[union-attr]
        store.close()
