"""The LLM fallback: any LangChain chat model, structured output into a Plan.

The prompt is the rendered bundle plus the task inputs and the work item,
nothing else — the model never sees the full RepoContext. Token usage comes
from the model's usage metadata (or is counted with cl100k_base and marked
estimated), and cost from a small price table; both go into the run ledger.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from planner import tokens
from planner.bundle.model import Bundle
from planner.chain.work import WorkItem
from planner.errors import PlannerError
from planner.patch.plan import Edit, Plan

# USD per million tokens (input, output); unknown models get no cost rather than a guess.
PRICES: dict[str, tuple[float, float]] = {
    "openai:gpt-4o": (2.5, 10.0), "openai:gpt-4o-mini": (0.15, 0.6), "openai:gpt-4.1": (2.0, 8.0),
    "openai:gpt-4.1-mini": (0.4, 1.6), "anthropic:claude-3-5-sonnet-latest": (3.0, 15.0),
    "anthropic:claude-3-5-haiku-latest": (0.8, 4.0),
}


class LLMPlan(BaseModel):
    """The structured answer asked of the model."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(description="one line: what the change does")
    steps: list[str] = Field(default_factory=list, description="the steps, in order")
    edits: list[Edit] = Field(default_factory=list, description="exact search/replace edits in repository files")
    used_entries: list[str] = Field(default_factory=list,
                                    description="ids of the bundle items (the text after '### ') you relied on")
    requests: list[str] = Field(default_factory=list,
                                description="ids of not-loaded items you need before you can finish; else empty")
    notes: list[str] = Field(default_factory=list, description="caveats for the reviewer")


def init_model(spec: str) -> Any:
    """A chat model from "provider:name" via LangChain's init_chat_model."""
    if ":" not in spec:
        raise PlannerError(f"--model {spec!r}: expected provider:name, e.g. openai:gpt-4o-mini")
    try:
        from langchain.chat_models import init_chat_model

        return init_chat_model(spec, temperature=0)
    except (ImportError, ValueError) as exc:
        raise PlannerError(f"--model {spec!r}: {exc}") from None


def available(bundle: Bundle) -> list[str]:
    return [f"- {e.id} (~{e.tokens_needed} tokens, {e.status})" for e in bundle.entries
            if e.status in ("listed", "deferred")]


def build_prompt(task_class: str, description: str, worker: str | None, inputs: dict[str, str],
                 item: WorkItem, bundle: Bundle) -> str:
    shown = ", ".join(f"{k}={v}" for k, v in sorted(inputs.items())) or "none"
    parts = [
        f"You are the planner for the task class '{task_class}': {description.strip()}",
        f"Instructions: {worker.strip()}" if worker else "",
        f"Task inputs: {shown}",
        f"Work item: {item.title}\n{json.dumps(item.data, sort_keys=True, indent=1)}",
        "Answer with a plan: exact search/replace edits (the 'old' text must occur in the file as shown in the"
        " bundle), the ids of the bundle items you used, and, only if you cannot finish without them, the ids"
        " of not-loaded items to request.",
        "Not loaded, available on request:\n" + ("\n".join(available(bundle)) or "- none"),
        "Context bundle:\n" + bundle.text,
    ]
    return "\n\n".join(p for p in parts if p)


def _usage(raw: Any, prompt: str, answer: str) -> tuple[int, int, bool]:
    usage = getattr(raw, "usage_metadata", None) or {}
    if usage.get("input_tokens") is not None:
        return int(usage["input_tokens"]), int(usage.get("output_tokens") or 0), False
    return tokens.count(prompt), tokens.count(answer), True


def ledger_entry(model: Any, model_name: str | None, raw: Any, prompt: str, ok: bool) -> dict[str, Any]:
    """One call's line in the cost ledger: tokens in/out (reported, else counted) and cost when priced."""
    content = json.dumps(getattr(raw, "tool_calls", None) or getattr(raw, "content", ""), default=str)
    tokens_in, tokens_out, estimated = _usage(raw, prompt, content)
    price = PRICES.get(model_name or "")
    cost = round((tokens_in * price[0] + tokens_out * price[1]) / 1_000_000, 6) if price else None
    return {"model": model_name or type(model).__name__, "tokens_in": tokens_in, "tokens_out": tokens_out,
            "estimated": estimated, "cost_usd": cost, "ok": ok}


def ask(model: Any, model_name: str | None, prompt: str) -> tuple[Plan | None, dict[str, Any], str | None]:
    """(plan or None, ledger entry, error) for one model call."""
    raw: Any = None
    parsed: LLMPlan | None = None
    error: str | None = None
    try:
        structured = model.with_structured_output(LLMPlan, include_raw=True)
        answer = structured.invoke(prompt)
        raw, parsed = answer.get("raw"), answer.get("parsed")
        if parsed is None:
            error = f"the model's answer did not parse: {answer.get('parsing_error')}"
    except Exception as exc:  # noqa: BLE001 - any provider error becomes a recorded failure, not a crash
        error = f"model call failed: {exc.__class__.__name__}: {exc}"
    ledger = ledger_entry(model, model_name, raw, prompt, parsed is not None)
    if parsed is None:
        return None, ledger, error
    return Plan(**parsed.model_dump(), source="llm"), ledger, None


ANSWERED_BY = "answer (planner runs answer)"


def answered(answers: dict[str, Any], item_id: str) -> tuple[Plan | None, dict[str, Any]]:
    """The plan a person gave for this item with `planner runs answer` (its own id, else "*"), standing where
    the model's would (source llm, `data.answered_by`), and its ledger line (no tokens, no cost)."""
    raw = answers.get(item_id, answers.get("*"))
    ledger = {"model": ANSWERED_BY, "tokens_in": 0, "tokens_out": 0, "estimated": False, "cost_usd": None,
              "ok": raw is not None, "item": item_id}
    if raw is None:
        return None, ledger
    plan = Plan(**LLMPlan.model_validate(raw).model_dump(), source="llm", data={"answered_by": "planner runs answer"})
    return plan, ledger
