"""may_read (and deferred) entries requested mid-run by a worker node.

A request loads the entry when the budget still allows it: the entry becomes
`requested`, its block is appended to the bundle text and the totals grow.
Otherwise nothing changes and the refusal is the recorded outcome. Every
request is logged (by whom, outcome, tokens) for provenance.
"""

from __future__ import annotations

import hashlib
from typing import Any

from planner import tokens
from planner.bundle import keys, render
from planner.bundle.model import Bundle
from planner.bundle.view import RepoView
from planner.tccm.model import TCCM

REQUESTABLE = ("listed", "deferred")


def _find(bundle: Bundle, wanted: str) -> int | None:
    for index, entry in enumerate(bundle.entries):
        if wanted in (entry.id, entry.target) and entry.status in REQUESTABLE:
            return index
    for index, entry in enumerate(bundle.entries):
        if wanted in (entry.id, entry.target):
            return index
    return None


def _body(bundle: Bundle, view: RepoView, index: int) -> tuple[str | None, Any, str]:
    entry = bundle.entries[index]
    if entry.kind == "key":
        if view.context is None:
            return None, None, "no RepoContext"
        resolved = keys.resolve(view.context, entry.target, {})
        return (render.render_value(resolved.value), resolved.value, "") if resolved.found else (None, None, "gone")
    result = view.read(entry.target)
    return result.text, None, result.detail or ""


def request(bundle: Bundle, tccm: TCCM, view: RepoView, wanted: str, by: str) -> tuple[Bundle, dict[str, Any]]:
    """Try to load `wanted` (an entry id or a path/key); returns the new bundle and the request record."""
    record: dict[str, Any] = {"entry": wanted, "by": by, "tokens": 0}
    index = _find(bundle, wanted)
    if index is None:
        return bundle, {**record, "outcome": "unknown entry"}
    entry = bundle.entries[index]
    record["entry"] = entry.id
    if entry.status not in REQUESTABLE:
        return bundle, {**record, "outcome": f"not requestable ({entry.status})"}
    body, value, why = _body(bundle, view, index)
    if body is None:
        return bundle, {**record, "outcome": f"unreadable: {why}"}
    budget = tccm.budget
    text = render.block(entry.id, body)
    size = tokens.count(text)
    if size > budget.per_file_max_tokens:
        room = budget.per_file_max_tokens - tokens.count(render.block(entry.id, "", True))
        body = tokens.truncate(body, max(room, 0))
        text = render.block(entry.id, body, truncated=True)
        size = tokens.count(text)
    is_file = entry.kind == "file"
    if bundle.totals.tokens + size > budget.max_tokens or bundle.totals.files + is_file > budget.max_files:
        left = budget.max_tokens - bundle.totals.tokens
        return bundle, {**record, "outcome": f"refused: needs {size} tokens, {left} left", "tokens_needed": size}
    updated = bundle.model_copy(deep=True)
    changed = updated.entries[index]
    changed.status, changed.tokens, changed.tokens_needed = "requested", size, None
    changed.source = "repocontext" if entry.kind == "key" else "filesystem"
    changed.detail = f"requested by {by}"
    updated.text += text
    updated.sha256 = hashlib.sha256(updated.text.encode()).hexdigest()
    updated.totals.tokens += size
    updated.totals.files += is_file
    updated.totals.by_status[entry.status] = updated.totals.by_status.get(entry.status, 1) - 1
    updated.totals.by_status["requested"] = updated.totals.by_status.get("requested", 0) + 1
    if entry.kind == "key":
        updated.slices[entry.id] = value
    else:
        updated.files[entry.target] = body
    return updated, {**record, "outcome": "loaded", "tokens": size}
