"""The MCP tools: each one a thin call into the engine, answered as structured content plus a short text.

Every PlannerError becomes an MCP tool error carrying the CLI's one-line message; anything else becomes one
line too (`internal error: ...`), as the CLI prints it, and the server goes on serving. A repository path a
caller names is confined to the roots the operator allowed (planner.roots) before anything reads it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ParamSpec

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from planner.config import Settings
from planner.errors import PlannerError
from planner.mcpserver import schemas
from planner.roots import RepoRoots

Inputs = Annotated[dict[str, str | int | float | bool] | None, Field(
    description="Run inputs NAME → value, as the CLI's --input NAME=VALUE (list_task_classes says which a class "
                "accepts); booleans as true/false")]
TaskClass = Annotated[str, Field(description="A task class name, from list_task_classes")]
Repo = Annotated[str, Field(description="The repository's path (absolute is safest: a relative one is resolved "
                                        "against the server's working directory); it must lie under a root "
                                        "the server allows (its --root, PLANNER_REPO_ROOTS, else its working "
                                        "directory)")]
RunId = Annotated[str, Field(description="A run id (or a unique prefix of one), from dispatch")]
P = ParamSpec("P")


def one_line(exc: Exception) -> str:
    """The message the CLI would print for `exc`."""
    if isinstance(exc, PlannerError):
        return exc.message
    return f"internal error: {exc.__class__.__name__}: {exc} (set PLANNER_DEBUG=1 for a traceback)"


def errors(fn: Callable[P, CallToolResult]) -> Callable[P, CallToolResult]:
    """Answer whatever `fn` raises as a tool error of one line (never a crash of the server)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure is answered as a tool error; the server goes on
            return failed(exc)

    return wrapper


def failed(exc: Exception) -> CallToolResult:
    """A tool error with exactly the CLI's line (a raised ToolError would get the SDK's prefix)."""
    if os.environ.get("PLANNER_DEBUG") and not isinstance(exc, PlannerError):
        raise exc
    return CallToolResult(content=[TextContent(type="text", text=one_line(exc))], is_error=True)


def answer(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def as_inputs(inputs: Inputs) -> dict[str, str]:
    """JSON values as the CLI's NAME=VALUE strings (booleans as true/false, which boolean inputs accept)."""
    return {name: (str(v).lower() if isinstance(v, bool) else str(v)) for name, v in (inputs or {}).items()}


_roots: list[RepoRoots] = []  # the server's, set when it starts (confine_to)
WHO = "this `planner mcp` server"


def confine_to(roots: RepoRoots) -> None:
    _roots[:] = [roots]


def repo_roots() -> RepoRoots:
    """The server's roots; a tool called in-process without a server (a bench) chooses them from the env."""
    if not _roots:
        _roots.append(RepoRoots.choose())
    return _roots[0]


def as_repo(repo: str) -> Path:
    return repo_roots().confine(repo, WHO)


def bundle_repo_allowed(settings: Settings, bundle_id: str) -> None:
    """A recorded bundle's repository (made by the CLI, say) is read again by request_may_read: the same roots."""
    from planner.store.provenance import ProvenanceStore

    repo = ProvenanceStore(settings.home).get(bundle_id).repocontext.repo
    if not repo_roots().admits(Path(repo).resolve()):
        raise PlannerError(f"bundle {bundle_id} is of repository {repo}, outside the roots {WHO} may read: "
                           f"{repo_roots().shown()}")


@errors
def list_task_classes() -> Annotated[CallToolResult, schemas.TaskClasses]:
    """Every task class in service: name, description, version, the inputs it accepts, its budget, and
    whether it has recipes, a flow or a policy. Invalid classes are listed with their errors."""
    from planner import service
    from planner.mcpserver.views import class_row

    registry = service.registry(Settings.from_env())
    rows = [class_row(registry, name) for name in registry.names()]
    text = "\n".join(f"- {r['name']} v{r.get('version', '?')}: {r.get('summary') or r.get('errors')}" for r in rows)
    return answer(text or "no task classes in service", {"task_classes": rows})


@errors
def get_agent_context(task_class: TaskClass, repo: Repo, inputs: Inputs = None,
                      budget_tokens: Annotated[int | None, Field(
                          description="A token budget lower than the class's max_tokens narrows the bundle; a "
                                      "higher one changes nothing")] = None,
                      gather: Annotated[bool, Field(
                          description="Gather (or refresh) the repository's RepoContext first when it is missing, "
                                      "stale, dirty or made with another advisory source than the server's; "
                                      "false: use what is stored (a bootstrap bundle when nothing is)")] = True,
                      ) -> Annotated[CallToolResult, schemas.AgentContext]:
    """The Context Bundle the task class gets for the repository, exactly as `planner bundle --text`
    renders it, with its provenance recorded (bundle_id). First, as a dispatch does, the repository's
    RepoContext is gathered when it is missing or stale, with the server's advisory source (`gathered`, `was`
    and `advisories` say so); this writes under the server's PLANNER_HOME, never in the repository.
    budget_tokens lower than the task class's narrows the bundle (never widens it). Over budget for want of
    an input that scopes work items (no package), `overview` lists the candidate items. Secrets are denied.
    may_read entries are listed, not loaded: ask for one with request_may_read."""
    from planner import service
    from planner.inputs import check_inputs
    from planner.mcpserver.views import bundle_result
    from planner.run.agent import agent_bundle, ensure_repocontext

    settings, root = Settings.from_env(), as_repo(repo)
    given = as_inputs(inputs)
    check_inputs(service.task_class(settings, task_class), given)  # a bad call gathers nothing
    if gather:
        refreshed = ensure_repocontext(settings, service.repo_root(root))
    else:
        from planner.advisories.source import describe

        joined = os.pathsep.join(str(p) for p in settings.advisories) or None
        refreshed = {"gathered": False, "was": "not checked (gather=false)",
                     "advisories": describe(joined).model_dump(mode="json")}
    bundle, record, overview = agent_bundle(settings, task_class, root, given, budget_tokens)
    data = {**bundle_result(bundle, record), **refreshed}
    head = (f"bundle {record.id}: {bundle.totals.tokens}/{bundle.totals.max_tokens} tokens, mode {bundle.mode}, "
            f"RepoContext {record.repocontext.freshness}")
    if refreshed["gathered"]:
        head += f" (gathered now: it was {refreshed['was']})"
    if record.repocontext.freshness != "fresh":  # say so: a bootstrap or stale bundle is not the repo as it is
        head += f" (`planner gather {record.repocontext.repo}` or a dispatch refreshes it)"
    if overview is not None:
        data.update(overview=overview, overview_note=service.OVERVIEW_NOTE)
        head += "\n" + service.OVERVIEW_NOTE.replace("--input", "inputs") + "".join(f"\n  {o}" for o in overview)
    return answer(f"{head}\n\n{bundle.text}", data)


@errors
def request_may_read(
    bundle_id: Annotated[str, Field(description="The bundle_id get_agent_context returned (or a run id)")],
    entry: Annotated[str, Field(description="An entry id from that bundle's entries, or its path or key")],
) -> Annotated[CallToolResult, schemas.MayRead]:
    """Load one may_read (or deferred) entry of a bundle from get_agent_context, by entry id or path/key,
    within what is left of that bundle's budget. Logged as `requested` in that bundle's provenance."""
    from planner.run.agent import request_entry

    settings = Settings.from_env()
    bundle_repo_allowed(settings, bundle_id)
    result = request_entry(settings, bundle_id, entry)
    head = f"{result['entry']}: {result['outcome']} ({result['tokens']} tokens)"
    return answer(f"{head}\n\n{result['text']}" if result["text"] else head, result)


@errors
def query_decision_surface(task_class: TaskClass,
                           inputs: Inputs = None) -> Annotated[CallToolResult, schemas.DecisionSurface]:
    """What a run of the task class may do with these inputs: allowed and blocked actions, the rule behind
    each, and how to allow a blocked one (what `planner task-classes surface` answers)."""
    from planner import service
    from planner.inputs import check_inputs
    from planner.tccm import surface as surfaces

    tccm = service.task_class(Settings.from_env(), task_class)
    given = as_inputs(inputs)
    check_inputs(tccm, given)
    relaxed: list[str] = []
    if tccm.policy is not None and given:  # the surface of a run with these inputs: relax switches applied
        from planner.policy.inherit import effective

        policy, relaxed = effective(tccm.policy, given)
        tccm = tccm.model_copy(update={"policy": policy})
    described = {**surfaces.describe(tccm), "inputs": given, "relaxed_by_inputs": relaxed}
    return answer("\n".join([*surfaces.lines(described), *relaxed]), described)


@errors
def search_prior_decisions(
    query: Annotated[str, Field(description="Words to match: a package, an image, an error, a decision…")],
    task_class: Annotated[str | None, Field(description="Only this task class's runs")] = None,
    limit: Annotated[int, Field(description="At most this many results", ge=1, le=200)] = 10,
) -> Annotated[CallToolResult, schemas.PriorDecisions]:
    """Solved examples (successful runs' plans) and decisions recorded with record_workflow_decision that
    match the query, best first, each with its run id."""
    from planner.run.agent import search

    hits = search(Settings.from_env(), query, task_class, limit)
    lines = [f"- {h['kind']} {h['run_id']} ({h['score']}): {h.get('summary') or h.get('decision')}" for h in hits]
    return answer("\n".join(lines) or "nothing matches", {"query": query, "results": hits})


@errors
def get_workflow_context(workflow_id: RunId) -> Annotated[CallToolResult, schemas.WorkflowContext]:
    """A run's status, work items, what each chain stage did, its report, recorded decisions and the next
    steps open to it (resume, answer with a model, allow a blocked action…)."""
    from planner.run.workflow import workflow_context

    data = workflow_context(Settings.from_env(), workflow_id)
    steps = "".join(f"\n- {s}" for s in data["next_steps"])
    return answer(f"run {data['run_id']} ({data['task_class']}): {data['status']}{steps}", data)


@errors
def record_workflow_decision(
    workflow_id: RunId,
    decision_type: Annotated[str, Field(description="What kind of decision: approval, rejection, override…")],
    decision: Annotated[str, Field(description="What was decided")],
    rationale: Annotated[str, Field(description="Why")],
    affected_nodes: Annotated[list[str] | None, Field(
        description="The work items or graph nodes it concerns")] = None,
) -> Annotated[CallToolResult, schemas.Decision]:
    """Append a decision to a run's provenance (shown by `planner provenance` and the UI, and found by
    search_prior_decisions)."""
    from planner.run.agent import record_decision

    line = record_decision(Settings.from_env(), workflow_id, decision_type, decision, rationale,
                           affected_nodes or [])
    return answer(f"recorded on {line['run_id']}: {decision_type}: {decision}", line)


async def dispatch(task_class: TaskClass, repo: Repo, ctx: Context, inputs: Inputs = None,
                   apply: Annotated[bool, Field(description="Commit a succeeded patch on a new branch (a clean "
                                                            "work tree only), as --apply")] = False,
                   ) -> Annotated[CallToolResult, schemas.Run]:
    """Run the task class on the repository (gather → bundle → recipe / solved example / LLM → patch and
    report), with progress notifications. apply=True commits the patch on a new branch, as the CLI's
    --apply does (a clean work tree only). Returns run_id, status, patch, report_markdown and items."""
    import anyio
    import anyio.from_thread
    import anyio.lowlevel

    from planner.mcpserver.running import run_dispatch

    loop, steps = anyio.lowlevel.current_token(), 0  # the graph calls back from its own worker threads

    def progress(message: str) -> None:
        nonlocal steps
        steps += 1
        try:
            anyio.from_thread.run(ctx.report_progress, steps, None, message, token=loop)
        except Exception:  # noqa: BLE001 - a client that stopped listening must not fail the run
            return

    try:
        data = await anyio.to_thread.run_sync(
            functools.partial(run_dispatch, Settings.from_env(), task_class, as_repo(repo), as_inputs(inputs),
                              apply, progress))
    except Exception as exc:  # noqa: BLE001 - any failure is answered as a tool error; the server goes on
        return failed(exc)
    text = f"run {data['run_id']}: {data['status']}" + (f" — {data['error']}" if data.get("error") else "")
    return answer(f"{text}\n\n{data['report_markdown']}", data)


def _hints(read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=idempotent,
                           open_world_hint=open_world)


# Each tool with what it does to its world, as MCP hints. "Writes" below means PLANNER_HOME (the planner's own
# store: RepoContexts, provenance, runs), unless the repository is named; nothing reaches the network except a
# dispatch's model (PLANNER_MODEL, a provider's API).
TOOLS: tuple[tuple[Callable[..., Any], ToolAnnotations], ...] = (
    (list_task_classes, _hints(read_only=True, destructive=False, idempotent=True, open_world=False)),
    # gathers the RepoContext when missing or stale and records the bundle's provenance: writes PLANNER_HOME,
    # never the repository; a repeated call gathers nothing more (it adds one more provenance record)
    (get_agent_context, _hints(read_only=False, destructive=False, idempotent=True, open_world=False)),
    # notes the request in the bundle's provenance; an entry is loaded once (a repeat is refused)
    (request_may_read, _hints(read_only=False, destructive=False, idempotent=False, open_world=False)),
    (query_decision_surface, _hints(read_only=True, destructive=False, idempotent=True, open_world=False)),
    (search_prior_decisions, _hints(read_only=True, destructive=False, idempotent=True, open_world=False)),
    # a new run each call; with apply=True it commits on a new branch of the repository (the checkout is left
    # as it is); with PLANNER_MODEL it calls that provider
    (dispatch, _hints(read_only=False, destructive=True, idempotent=False, open_world=True)),
    (get_workflow_context, _hints(read_only=True, destructive=False, idempotent=True, open_world=False)),
    # appends a note to the run's provenance: each call one more
    (record_workflow_decision, _hints(read_only=False, destructive=False, idempotent=False, open_world=False)),
)
