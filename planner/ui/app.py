"""`planner ui`: a read-only web app over PLANNER_HOME (pages for people, /api for scripts).

Every route is a GET that reads; none writes to PLANNER_HOME or a repository.
The /api shapes are the CLI's `--json` shapes (planner/queries.py and
`show_payload`), so a script can move between the two.
"""

from __future__ import annotations

import gc
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException

from planner import service
from planner.config import Settings
from planner.errors import EnvironmentProblem, PlannerError
from planner.portfolio.outcomes import to_csv
from planner.queries import task_class_rows
from planner.store.runs import show_payload
from planner.store.telemetry import MIN_RUNS, Telemetry
from planner.ui.catalog import Catalog
from planner.ui.compare import compare
from planner.ui.home import Home, NotFound
from planner.ui.preview import gathered_repos, input_names, parse_inputs, preview
from planner.ui.render import environment, render
from planner.ui.runlist import RunFilters, api_portfolios, api_rows, runs_page
from planner.ui.views import progress, run_page, source


def _error(request: Request, status: int, title: str, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    return HTMLResponse(render("error.html", title=title, message=message), status_code=status)


def _install_errors(app: FastAPI) -> None:
    """Bad input is a page with one clear line; never a traceback."""

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound) -> Response:
        return _error(request, 404, "Not found", exc.message)

    @app.exception_handler(PlannerError)
    async def planner_error(request: Request, exc: PlannerError) -> Response:
        status = 503 if isinstance(exc, EnvironmentProblem) else 400
        return _error(request, status, "Cannot show this", exc.message)

    @app.exception_handler(RequestValidationError)
    async def bad_query(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "request"
        return _error(request, 400, "Bad request", f"{where}: {first.get('msg', 'invalid value')}")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        message = "no such page (try /runs)" if exc.status_code == 404 else str(exc.detail)
        return _error(request, exc.status_code, "Not found" if exc.status_code == 404 else "Error", message)

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:
        return _error(request, 500, "Internal error", f"internal error: {exc.__class__.__name__}")


def _page(template: str, **context: Any) -> HTMLResponse:
    return HTMLResponse(render(template, **context))


def export_html(settings: Settings, run_id: str) -> str:
    """The run page as one self-contained file (inline CSS and script, no links to a server)."""
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    return render("run.html", r=run_page(Home(settings.home), run_id), export=True, exported_at=stamp)


def _add_pages(app: FastAPI, settings: Settings, home: Home, catalog: Catalog) -> None:
    @app.get("/", include_in_schema=False)
    def index() -> RedirectResponse:
        return RedirectResponse("/runs")

    @app.get("/runs", response_class=HTMLResponse)
    def runs(status: str | None = None, task_class: str | None = None, repo: str | None = None,
             kind: str | None = None, sort: str | None = None, order: str | None = None, flat: bool = False,
             page: int = 1) -> HTMLResponse:
        filters = RunFilters.parse(status=status, task_class=task_class, repo=repo, kind=kind, sort=sort,
                                   order=order, flat=flat, page=max(1, page))
        return _page("runs.html", page=runs_page(home, catalog, filters))

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run(run_id: str) -> HTMLResponse:
        data = run_page(home, run_id)
        return _page("run.html", r=data)

    @app.get("/runs/{run_id}/export.html", response_class=HTMLResponse)
    def export(run_id: str) -> HTMLResponse:
        return HTMLResponse(export_html(settings, run_id))

    @app.get("/compare/{a}/{b}", response_class=HTMLResponse)
    def compare_page(a: str, b: str) -> HTMLResponse:
        return _page("compare.html", c=_compare(home, a, b).model_dump())

    @app.get("/portfolios/{portfolio_id}", response_class=HTMLResponse)
    def portfolio_page(portfolio_id: str) -> HTMLResponse:
        return _page("portfolio.html", p=_portfolio(settings, portfolio_id))

    @app.get("/portfolios/{portfolio_id}/report.csv")
    def portfolio_csv(portfolio_id: str) -> Response:
        summary = _portfolio(settings, portfolio_id)
        return Response(to_csv(summary["repositories"], summary["columns"]), media_type="text/csv",
                        headers={"content-disposition": f'attachment; filename="{summary["id"]}.csv"'})

    @app.get("/task-classes", response_class=HTMLResponse)
    def task_classes() -> HTMLResponse:
        registry = service.registry(settings)
        rows = task_class_rows(registry)
        tccms = {r["task_class"]: registry.get(r["task_class"]) for r in rows if r["valid"]}
        return _page("task_classes.html", rows=rows, tccms=tccms, repos=gathered_repos(settings, catalog),
                     inputs={name: input_names(t) for name, t in tccms.items()})

    @app.get("/task-classes/preview", response_class=HTMLResponse)
    def preview_page(task_class: str, repo: str, inputs: str = "") -> HTMLResponse:
        shown = preview(settings, catalog, task_class, repo, parse_inputs(inputs))
        return _page("preview.html", p=shown, inputs_text=inputs,
                     names=input_names(service.task_class(settings, task_class)))

    @app.get("/learn", response_class=HTMLResponse)
    def learn(task_class: str | None = None) -> HTMLResponse:
        stats = _learn(settings, None)
        names = sorted({s["task_class"] for s in stats})
        shown = [s for s in stats if not task_class or s["task_class"] == task_class]
        return _page("learn.html", stats=shown, names=names, task_class=task_class, min_runs=MIN_RUNS)


def _portfolio(settings: Settings, portfolio_id: str) -> dict[str, Any]:
    """`planner portfolio report --json` for one portfolio (read-only)."""
    from planner.portfolio.report import summary
    from planner.portfolio.store import PortfolioStore

    try:
        store = PortfolioStore(settings.home, readonly=True)
    except PlannerError as exc:
        raise NotFound(exc.message) from None
    try:
        try:
            full = store.resolve(portfolio_id)
        except PlannerError as exc:
            raise NotFound(exc.message) from None
        return summary(store, full)
    finally:
        store.close()


def _compare(home: Home, a: str, b: str) -> Any:
    (full_a, _, _, src_a), (full_b, _, _, src_b) = source(home, a), source(home, b)
    patches = (home.artifact(full_a, "patch.diff") or "", home.artifact(full_b, "patch.diff") or "")
    return compare(src_a, src_b, patches)


def _learn(settings: Settings, task_class: str | None) -> list[dict[str, Any]]:
    telemetry = Telemetry(settings.home, readonly=True)
    try:
        return [s.as_dict() for s in telemetry.report(task_class)]
    finally:
        telemetry.close()


def _add_api(app: FastAPI, settings: Settings, home: Home, catalog: Catalog) -> None:
    @app.get("/api/runs")
    def api_runs(status: str | None = None, task_class: str | None = None, repo: str | None = None,
                 kind: str | None = None, sort: str | None = None, order: str | None = None) -> list[dict[str, Any]]:
        """`planner runs list --json` (oldest first), optionally filtered, or sorted as the runs page sorts."""
        filters = RunFilters.parse(status=status, task_class=task_class, repo=repo, kind=kind, sort=sort, order=order)
        return api_rows(catalog, filters, cli_order=sort is None and order is None)

    @app.get("/api/portfolios")
    def api_portfolio_list() -> list[dict[str, Any]]:
        """`planner portfolio list --json`, each portfolio with its runs and their totals by status."""
        return api_portfolios(catalog)

    @app.get("/api/portfolios/{portfolio_id}")
    def api_portfolio(portfolio_id: str) -> dict[str, Any]:
        """`planner portfolio report ID --json`: repositories grouped by outcome and reason."""
        return _portfolio(settings, portfolio_id)

    @app.get("/api/runs/{run_id}/progress")
    def api_progress(run_id: str) -> dict[str, Any]:
        """What a running run's page polls: its status and the nodes finished so far."""
        return progress(home, run_id)

    @app.get("/api/task-classes/preview")
    def api_preview(task_class: str, repo: str, inputs: str = "") -> dict[str, Any]:
        """`planner bundle TASK_CLASS --repo REPO --json`, except that nothing is recorded (no record_path)."""
        shown = preview(settings, catalog, task_class, repo, parse_inputs(inputs))
        return {**shown.record, "text": shown.text}

    @app.get("/api/runs/{run_id}")
    def api_run(run_id: str) -> dict[str, Any]:
        """`planner runs show --json` (a bundle build: its provenance record, as the CLI prints)."""
        _, run, state, src = source(home, run_id)
        if run is None:
            return src
        state.pop("nodes_done", None)
        return show_payload({**state, "run": run})

    @app.get("/api/runs/{run_id}/provenance")
    def api_provenance(run_id: str) -> dict[str, Any]:
        """`planner provenance ID --json` (for a running run: what its checkpoint holds so far)."""
        return source(home, run_id)[3]

    @app.get("/api/compare/{a}/{b}")
    def api_compare(a: str, b: str) -> dict[str, Any]:
        return _compare(home, a, b).model_dump(mode="json")

    @app.get("/api/task-classes")
    def api_task_classes() -> list[dict[str, Any]]:
        """`planner task-classes list --json`."""
        return task_class_rows(service.registry(settings))

    @app.get("/api/learn")
    def api_learn(task_class: str | None = None) -> list[dict[str, Any]]:
        """`planner learn report --json`."""
        return _learn(settings, task_class)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings.from_env()
    home, catalog = Home(settings.home), Catalog(settings.home)
    app = FastAPI(title="tccm-planner", docs_url=None, redoc_url=None, openapi_url=None)
    _install_errors(app)
    _add_pages(app, settings, home, catalog)
    _add_api(app, settings, home, catalog)
    app.state.catalog = catalog
    return app


def warm(app: FastAPI | None = None) -> None:
    """What a first request would otherwise pay: compile every template, import the checkpoint reader and (given
    the app) open the runs list; then keep start-up's objects out of garbage collection. `planner ui` calls it
    before it listens."""
    env = environment()
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)
    import langgraph.checkpoint.sqlite  # noqa: F401 - read_state imports it on a run page

    if app is not None:
        app.state.catalog.read(lambda db: None)
    # what is alive now (modules, templates, pydantic schemas) lives as long as the server: leave it out of
    # the collector's full passes, which otherwise walk it all on the request that triggers one (60-190 ms
    # on a 2,000-entry run page, on this 2-core machine)
    gc.collect()
    gc.freeze()
