"""What a run page shows, as plain data: one run (from its record, or live from its checkpoint)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from planner.advisories.source import AdvisorySource
from planner.ui.home import Home, NotFound, ledger

BAND_ORDER = ("must_read", "bootstrap", "should_read", "may_read")


def _from_state(state: dict[str, Any]) -> dict[str, Any]:
    """A running (or unfinished) run's provenance so far, in the record's shape. Bundle text, files and
    slices stay out: the page shows fates and sizes, never content."""
    bundle = state.get("bundle") or {}
    return {"entries": bundle.get("entries", []), "totals": bundle.get("totals"), "mode": bundle.get("mode"),
            "bundle_sha256": bundle.get("sha256"), "item_bundles": state.get("bundles", []),
            "stages": state.get("stages", []), "requests": state.get("requests", []),
            "llm_calls": state.get("llm_calls", []), "tccm": state.get("tccm"), "inputs": state.get("inputs", {}),
            "repocontext": state.get("repocontext"), "hot_views": None, "task_class": state.get("task_class")}


def band_bar(entries: list[dict[str, Any]], totals: dict[str, Any] | None) -> dict[str, Any]:
    """Tokens per band against max_tokens (the bar on a run page)."""
    per: dict[str, int] = defaultdict(int)
    for entry in entries:
        per[entry["band"]] += entry.get("tokens") or 0
    limit = max(1, (totals or {}).get("max_tokens") or 1)
    header = (totals or {}).get("header_tokens") or 0
    segments = [{"band": b, "tokens": per[b], "pct": round(100 * per[b] / limit, 2)} for b in BAND_ORDER if per[b]]
    if header:
        segments.append({"band": "header", "tokens": header, "pct": round(100 * header / limit, 2)})
    return {"segments": segments, "tokens": (totals or {}).get("tokens", 0), "max_tokens": limit}


def _prompts(home: Home, run_id: str, state: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Each needs_llm item's saved prompt: item id → (path, text)."""
    found = {}
    for key, path in (state.get("artifacts") or {}).items():
        if key.startswith("prompt:"):
            text = home.artifact(run_id, Path(path).name)
            if text is not None:
                found[key.removeprefix("prompt:")] = (path, text)
    return found


def _items(src: dict[str, Any], state: dict[str, Any],
           prompts: dict[str, tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """Per work item: status and blockers (checkpoint), stages, its narrowed bundle, requests and LLM calls,
    the diff a policy refused and the prompt a needs_llm item saved."""
    outcomes = {o["item"]["id"]: o for o in state.get("outcomes") or state.get("results") or []}
    bundles = {b["item"]: b for b in src.get("item_bundles") or []}
    ids = [i["id"] for i in state.get("items") or []]
    ids += [i for i in [*bundles, *(s.get("item") for s in src.get("stages") or [])] if i and i not in ids]
    seen: list[str] = list(dict.fromkeys(ids))
    items = []
    for item_id in seen:
        outcome, bundle = outcomes.get(item_id) or {}, bundles.get(item_id)
        items.append({
            "id": item_id, "status": outcome.get("status"), "blockers": outcome.get("blockers") or [],
            "error": outcome.get("error"), "source": outcome.get("source"),
            "refused_patch": outcome.get("refused_patch") or "", "prompt": (prompts or {}).get(item_id),
            "stages": [s for s in src.get("stages") or [] if s.get("item") == item_id],
            "requests": [r for r in src.get("requests") or [] if r.get("item") == item_id],
            "llm_calls": [c for c in src.get("llm_calls") or [] if c.get("item") == item_id],
            "bundle": bundle, "bar": band_bar(bundle["entries"], bundle.get("totals")) if bundle else None,
        })
    return items


def _entry_row(entry: dict[str, Any], scope: str) -> tuple[str, ...]:
    """One provenance table row as display strings (computed here, not in the template: a run page can
    have thousands): scope, band, selector → target, status, tokens, source, reason/detail, rule."""
    shown = entry["selector"]
    if entry["kind"] != "selector" and entry["target"] not in shown:
        shown = f"{shown} → {entry['target']}"
    note = " — ".join(x for x in (entry.get("reason"), entry.get("detail")) if x)
    return (scope, entry["band"], shown, entry["status"], tokens_text(entry), entry.get("source") or "none", note,
            entry.get("rule") or "")


def tokens_text(entry: dict[str, Any]) -> str:
    tokens, needed = entry.get("tokens") or 0, entry.get("tokens_needed")
    if needed is not None and entry.get("status") != "included":
        return f"{tokens}/{needed}" if tokens else f"~{needed}"
    return str(tokens) if tokens else ""


def entry_rows(src: dict[str, Any]) -> list[tuple[str, ...]]:
    rows = [_entry_row(e, "run") for e in src.get("entries") or []]
    for bundle in src.get("item_bundles") or []:
        rows += [_entry_row(e, bundle["item"]) for e in bundle.get("entries") or []]
    return rows


def _cost(calls: list[dict[str, Any]]) -> float | None:
    costs = [c.get("cost_usd") for c in calls]
    priced = [c for c in costs if c is not None]
    return None if len(priced) < len(costs) else round(sum(priced), 6)


def source(home: Home, run_id: str) -> tuple[str, dict[str, Any] | None, dict[str, Any], dict[str, Any]]:
    """(full id, runs table row, checkpoint state, provenance in the record's shape): the record when the run
    finished, else what its checkpoint holds so far. NotFound when neither a run nor a bundle build."""
    full = home.resolve(run_id)
    run, record = home.run(full), home.record(full)
    if run is None and record is None:
        raise NotFound(f"run {run_id!r} does not exist under PLANNER_HOME {home.path}")
    state = home.state(full) if run else {}
    if record:
        src = record.model_dump(mode="json")
    else:
        assert run is not None  # one of them exists (above)
        src = {**_from_state(state), "id": full, "status": run["status"]}
    return full, run, state, src


def run_page(home: Home, run_id: str) -> dict[str, Any]:
    """Everything the run page shows; NotFound for an id that is neither a run nor a bundle build."""
    full, run, state, src = source(home, run_id)
    status = run["status"] if run else src["status"]
    entries = entry_rows(src)
    calls = src.get("llm_calls") or ledger(home.artifact(full, "ledger.json"))
    return {
        "id": full, "run": run, "kind": "run" if run else "bundle", "status": status, "src": src,
        "task_class": (run or {}).get("task_class") or src.get("task_class"),
        "repo": (run or {}).get("repo") or (src.get("repocontext") or {}).get("repo"),
        "live": status == "running", "nodes_done": state.get("nodes_done", []),
        "report": home.artifact(full, "report.md") or state.get("report") or "",
        "patch": home.artifact(full, "patch.diff") or state.get("patch") or "",
        "work_items": _items(src, state, _prompts(home, full, state)), "entries": entries,
        "bar": band_bar(src.get("entries") or [], src.get("totals")),
        "bands": sorted({e[1] for e in entries}, key=_band_key), "statuses": sorted({e[3] for e in entries}),
        "llm_calls": calls, "cost_usd": _cost(calls),
        "run_stages": [s for s in src.get("stages") or [] if not s.get("item")],
        "error": state.get("error"), "verification": state.get("verification"),
        "prompts": home.prompts(full) if status == "needs_llm" else [],
        "coverage": _coverage(state),
    }


def _coverage(state: dict[str, Any]) -> dict[str, Any] | None:
    """What the run read (its advisory source, files not evaluated), for a class that says."""
    coverage = state.get("coverage")
    if not coverage:
        return None
    source = AdvisorySource.model_validate(coverage["advisories"])
    return {"advisories_line": source.line(), "warning": source.warning,
            "not_evaluated": coverage.get("not_evaluated") or []}


def _band_key(band: str) -> int:
    return BAND_ORDER.index(band) if band in BAND_ORDER else len(BAND_ORDER)


def progress(home: Home, run_id: str) -> dict[str, Any]:
    """A run's status and finished nodes: what its page polls while it runs (small, so polling is cheap)."""
    full = home.resolve(run_id)
    run = home.run(full)
    if run is None:  # a bundle build: recorded whole, nothing to follow
        record = home.record(full)
        return {"id": full, "status": record.status if record else "unknown", "nodes_done": [], "updated_at": None}
    state = home.state(full) if run["status"] == "running" else {}
    return {"id": full, "status": run["status"], "nodes_done": state.get("nodes_done", []),
            "updated_at": run["updated_at"]}
