"""What each MCP tool answers, as pydantic models: the SDK publishes each as the tool's `outputSchema` and checks
every structured result against it before it goes out (a client checks it again). The fields an agent relies on
are named and typed; the engine's nested records stay open (`extra="allow"`), so a field the engine adds later
is passed on rather than refused."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class TaskClassRow(Open):
    name: str
    valid: bool = Field(description="false: the class does not load; `errors` says why")
    version: str | int | None = None
    description: str | None = None
    inputs: dict[str, Any] | None = Field(default=None, description="input name → kind, values, required")
    budget: dict[str, Any] | None = None
    recipes: list[str] | None = None
    has_recipes: bool | None = None
    has_flow: bool | None = None
    has_policy: bool | None = None
    errors: list[str] | None = None


class TaskClasses(Open):
    task_classes: list[TaskClassRow]


class BundleEntryOut(Open):
    id: str
    band: str
    status: str = Field(description="included, truncated, deferred, listed, missing, denied, duplicate, skipped, "
                                    "per_item, requested")
    tokens: int
    tokens_needed: int | None = None
    reason: str | None = None
    detail: str | None = None


class AgentContext(Open):
    bundle_id: str = Field(description="the provenance record of this bundle (`planner provenance BUNDLE_ID`)")
    context_markdown: str = Field(description="the bundle as `planner bundle --text` renders it")
    tokens_estimated: int
    budget: dict[str, Any]
    mode: str = Field(description="repocontext, or bootstrap when the repository has no RepoContext")
    task_class: str
    repocontext: dict[str, Any] = Field(description="the RepoContext the bundle was built from: commit, "
                                                    "gathered_at, freshness (fresh, stale, dirty, none)")
    hot_views: str | None = None
    entries: list[BundleEntryOut]
    gathered: bool = Field(description="true: this call gathered (or refreshed) the RepoContext first")
    was: str = Field(description="the RepoContext before this call: none, stale, dirty, other-advisories "
                                 "(gathered with another advisory source) or fresh")
    advisories: dict[str, Any] = Field(description="the advisory source of the server (kind none, paths or "
                                                   "snapshot; records per ecosystem) a gather here reads")
    overview: list[str] | None = Field(default=None, description="over budget without an input that scopes work "
                                       "items (e.g. no package): one line per candidate item, as `planner bundle` "
                                       "prints; pick one with inputs")
    overview_note: str | None = None


class MayRead(Open):
    bundle_id: str
    entry: str
    outcome: str = Field(description="loaded, refused: needs N tokens, M left, not requestable (…), unknown entry")
    tokens: int
    text: str


class DecisionSurface(Open):
    task_class: str
    policy: bool
    limits: dict[str, Any]
    allowed_side_effects: list[str]
    blocked_side_effects: list[str]
    refused_by: dict[str, Any]
    relax: dict[str, Any]
    inputs: dict[str, str]
    relaxed_by_inputs: list[str]


class PriorDecisions(Open):
    query: str
    results: list[dict[str, Any]] = Field(description="solved_example and decision hits, best first, each with "
                                                      "kind, run_id and score")


class Run(Open):
    run_id: str | None
    status: str | None = Field(description="succeeded, no_changes, not_applicable, not_evaluated, needs_llm, "
                                           "needs_regeneration, blocked, over_budget, failed")
    error: str | None = None
    patch: str
    report_markdown: str
    items: list[dict[str, Any]]
    branch: str | None = None
    artifacts: dict[str, Any]


class WorkflowContext(Open):
    run_id: str
    kind: str = Field(description="run, or bundle for a get_agent_context / `planner bundle` build")
    task_class: str
    repo: str
    status: str
    items: list[dict[str, Any]]
    chain: list[dict[str, Any]]
    report_markdown: str
    patch: str
    decisions: list[dict[str, Any]]
    next_steps: list[str]


class Decision(Open):
    run_id: str
    note: str
    at: str
    decision_type: str
    decision: str
    rationale: str
    affected_nodes: list[str]
