"""The fleet page in a real browser (Playwright driving the system Chromium): from the runs list to a
portfolio's outcome groups, and from a group to a run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_support import CHROMIUM, CHROMIUM_ARGS, PortfolioHome, needs_chromium, populate_portfolio, served, sign_in

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def pf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PortfolioHome]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield populate_portfolio(tmp_path_factory.mktemp("ui-fleet"), monkeypatch)


@pytest.fixture(scope="module")
def server(pf: PortfolioHome) -> Iterator[str]:
    with served(pf.settings) as url:
        yield url


@pytest.fixture
def page(server: str, tmp_path: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        opened = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True).new_page()
        sign_in(opened, server)
        yield opened
        opened.screenshot(path=str(tmp_path / "last.png"), full_page=True)
        browser.close()


def test_from_the_runs_list_to_a_fleet_page_and_a_run(pf: PortfolioHome, server: str, page: Any,
                                                      tmp_path: Path) -> None:
    page.goto(f"{server}/runs")
    page.click(f'a[href="/portfolios/{pf.portfolio}"]')
    page.wait_for_url(f"**/portfolios/{pf.portfolio}")
    assert page.inner_text("#portfolio-status") == "succeeded"
    assert "2 succeeded" in page.inner_text("#portfolio-counts")
    group = page.locator('section.group[data-status="succeeded"]')
    assert group.count() == 1
    headers = group.locator("thead th").all_inner_texts()
    assert headers == ["repository", "run", "item", "package", "from", "to", "advisories", "where"]
    cells = group.locator("tbody tr").first.locator("td").all_inner_texts()
    assert cells[3:6] == ["requests", "2.30.0", "2.31.0"]
    page.screenshot(path=str(tmp_path / "fleet.png"), full_page=True)
    with page.expect_download() as download:
        page.click("text=CSV")
    assert download.value.suggested_filename == f"{pf.portfolio}.csv"
    member = pf.members[0]
    page.click(f'a[href="/runs/{member}"]')
    page.wait_for_url(f"**/runs/{member}")
    assert page.inner_text("#run-status") == "succeeded"
