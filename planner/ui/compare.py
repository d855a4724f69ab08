"""Two runs' provenance side by side: what one saw that the other did not, and why their chains differ."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

FIELDS = (("repository", ("repocontext", "repo")),
          ("task class", ("task_class",)), ("status", ("status",)), ("TCCM version", ("tccm", "version")),
          ("TCCM sha256", ("tccm", "sha256")), ("TCCM path", ("tccm", "path")), ("commit", ("repocontext", "commit")),
          ("freshness", ("repocontext", "freshness")), ("mode", ("mode",)), ("inputs", ("inputs",)),
          ("bundle tokens", ("totals", "tokens")), ("max tokens", ("totals", "max_tokens")),
          ("bundle sha256", ("bundle_sha256",)), ("hot views", ("hot_views",)))


class Side(BaseModel):
    status: str
    tokens: int
    tokens_needed: int | None = None
    source: str
    detail: str | None = None


Change = Literal["only_a", "only_b", "status", "tokens", "source"]


class EntryDiff(BaseModel):
    scope: str  # "run" or the work item whose bundle holds the entry
    id: str
    band: str
    target: str
    change: Change
    a: Side | None = None
    b: Side | None = None


class StageDiff(BaseModel):
    item: str
    stage: str
    a: str | None = None  # "outcome: reason", None when that run did not try the stage
    b: str | None = None


class FieldDiff(BaseModel):
    field: str
    a: str
    b: str


class Comparison(BaseModel):
    a: str
    b: str
    fields: list[FieldDiff]
    entries: list[EntryDiff]
    stages: list[StageDiff]
    same_entries: int
    patch_a: str = ""
    patch_b: str = ""


def _get(src: dict[str, Any], path: tuple[str, ...]) -> str:
    value: Any = src
    for part in path:
        value = (value or {}).get(part) if isinstance(value, dict) else None
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items())) or "-"
    return "-" if value is None else str(value)


def _entries(src: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    found = {("run", e["id"]): e for e in src.get("entries") or []}
    for bundle in src.get("item_bundles") or []:
        found.update({(bundle["item"], e["id"]): e for e in bundle.get("entries") or []})
    return found


def _side(entry: dict[str, Any]) -> Side:
    return Side(status=entry["status"], tokens=entry.get("tokens") or 0, tokens_needed=entry.get("tokens_needed"),
                source=entry.get("source") or "none", detail=entry.get("detail") or entry.get("rule"))


def _change(a: dict[str, Any], b: dict[str, Any]) -> Change | None:
    if a["status"] != b["status"]:
        return "status"
    if (a.get("tokens"), a.get("tokens_needed")) != (b.get("tokens"), b.get("tokens_needed")):
        return "tokens"
    return "source" if a.get("source") != b.get("source") else None


def _entry_diffs(a: dict[str, Any], b: dict[str, Any]) -> tuple[list[EntryDiff], int]:
    ea, eb = _entries(a), _entries(b)
    diffs, same = [], 0
    for key in sorted(ea.keys() | eb.keys()):
        left, right = ea.get(key), eb.get(key)
        change: Change | None = "only_a" if right is None else "only_b" if left is None else _change(left, right)
        if change is None:
            same += 1
            continue
        entry = left or right or {}  # the key came from one side, so one is set
        diffs.append(EntryDiff(scope=key[0], id=key[1], band=entry["band"], target=entry["target"],
                               change=change,
                               a=_side(left) if left else None, b=_side(right) if right else None))
    return diffs, same


def _stages(src: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(s.get("item") or "run", s["stage"]): f"{s['outcome']}: {s.get('reason') or ''}".rstrip(": ")
            for s in src.get("stages") or []}


def compare(a: dict[str, Any], b: dict[str, Any], patches: tuple[str, str] = ("", "")) -> Comparison:
    """`a` and `b` are provenance in the record's shape (ProvenanceRecord.model_dump); `patches` their diffs."""
    fields = [FieldDiff(field=name, a=_get(a, path), b=_get(b, path)) for name, path in FIELDS]
    entries, same = _entry_diffs(a, b)
    sa, sb = _stages(a), _stages(b)
    stages = [StageDiff(item=k[0], stage=k[1], a=sa.get(k), b=sb.get(k))
              for k in sorted(sa.keys() | sb.keys()) if sa.get(k) != sb.get(k)]
    return Comparison(a=str(a.get("id")), b=str(b.get("id")), fields=fields, entries=entries, stages=stages,
                      same_entries=same, patch_a=patches[0], patch_b=patches[1])
