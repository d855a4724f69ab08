"""`work_items:` from YAML: one work item per file, per recipe match, or per entry of a RepoContext key.

Listed before any bundle (as a task module's list_work is), so no budget cut hides one; each item
carries `file` (or `files`) so the recipes, and its own bundle, are narrowed to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner.bundle import files_of, keys
from planner.bundle.view import RepoView
from planner.chain.work import WorkItem
from planner.recipes import engine
from planner.recipes.edits import file_edits
from planner.tccm.model import TCCM


def _files(tccm: TCCM, view: RepoView, inputs: Mapping[str, str]) -> list[str]:
    spec = tccm.work_items
    assert spec is not None
    if spec.globs is not None:
        globs = engine.substitute(spec.globs, inputs, "work_items")
        return sorted({p for g in globs for p in view.paths.match(g) if p in view.sizes and p not in view.denied})
    return sorted({p for r in tccm.recipes for p in engine.select(r, view, inputs, None)})


def _item(kind: str, ident: str, title: str, scope: dict[str, str], **data: Any) -> WorkItem:
    """`scope` becomes the item's inputs, so its own bundle (built under the budget, item by item) can
    select with ${inputs.file} / ${inputs.entry}."""
    return WorkItem(id=f"{kind}:{ident}", title=title, data={"source": "work_items", **data}, inputs=scope)


def _per_match(tccm: TCCM, view: RepoView, inputs: Mapping[str, str]) -> list[WorkItem]:
    scope = set(_files(tccm, view, inputs))
    result = engine.run(tccm.recipes, Path(view.root), view, inputs, scope)
    items = []
    for path in result.changed:
        for edit in file_edits(path, result.before[path], result.after[path], "", shifted=False):
            first = edit.old.splitlines()[0].strip() if edit.old.strip() else ""
            items.append(_item("match", f"{path}:{edit.line}", f"{path}:{edit.line}: {first[:80]}",
                               {"file": path}, file=path, line=edit.line))
    for row in result.rows:
        items += [_item("match", f"{f['file']}:{f['line']}", f"{f['file']}:{f['line']}: {f['rule']}"
                        + (f" ({f['message']})" if f.get("message") else ""),
                        {"file": f["file"]}, file=f["file"], line=f["line"]) for f in row.findings]
    unique = {i.id: i for i in items}  # a finding on a line a fix also changes is one item
    return sorted(unique.values(), key=lambda i: (i.data["file"], i.data["line"]))


def _per_key(tccm: TCCM, view: RepoView, inputs: Mapping[str, str]) -> list[WorkItem]:
    key = str(tccm.work_items.of) if tccm.work_items else ""
    if view.context is None:
        return []
    resolved = keys.resolve(view.context, key, inputs)
    value = resolved.value if resolved.found else None
    entries = (sorted(value.items()) if isinstance(value, Mapping)
               else list(enumerate(value)) if isinstance(value, list) else [])
    items = []
    for name, entry in entries:
        named = sorted({n.path for n in files_of.named_files(entry)})
        items.append(_item("key", f"{key}.{name}", f"{key}.{name}", {"entry": str(name)}, key=f"{key}.{name}",
                           entry=str(name), files=named))
    return items


def list_items(tccm: TCCM, view: RepoView, inputs: Mapping[str, str]) -> tuple[list[WorkItem], str]:
    """(items, why there are none)."""
    spec = tccm.work_items
    assert spec is not None
    if spec.per == "file":
        items = [_item("file", p, p, {"file": p}, file=p) for p in _files(tccm, view, inputs)]
        return items, "" if items else f"no file matches the work items' source ({spec.of or 'the recipes files'})"
    if spec.per == "match":
        items = _per_match(tccm, view, inputs)
        return items, "" if items else "the recipes match nothing in this repository"
    items = _per_key(tccm, view, inputs)
    return items, "" if items else f"the RepoContext key {spec.of} has no entries here"
