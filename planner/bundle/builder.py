"""The bundle builder: TCCM + RepoView + inputs → a Context Bundle under a hard budget.

Semantics (DESIGN.md, "Bundle semantics"):
- must_read always loads; each item is cut to per_file_max_tokens (status
  truncated). If must_read still exceeds max_tokens or max_files, a
  BudgetError names the entries and sizes, before anything else happens.
- bootstrap_globs (bootstrap mode only) then should_read load first-fit in
  declared order; what does not fit is deferred with the tokens it needs.
- may_read is listed with an estimate, never loaded here.
- Missing keys and empty globs are `missing`; secret files are `denied`; a
  file or slice already loaded by an earlier entry is a `duplicate`.
Token counts are of each rendered block (header + body), so the sum plus the
bundle header bounds the whole rendered text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from planner import tokens
from planner.bundle import excerpt, files_of, keys, render
from planner.bundle.hotslice import SliceSource
from planner.bundle.model import LOADED, BandName, Bundle, BundleEntry, Totals
from planner.bundle.view import RepoView
from planner.errors import BudgetError
from planner.tccm.entry import Entry, input_refs
from planner.tccm.model import TCCM
from repocontext.lazyjson import plain
from repocontext.parallel import gc_paused


@dataclass
class _Item:
    entry: BundleEntry
    body: str | None = None  # for keys: the rendered slice, known up front
    value: Any = None  # for keys: the resolved slice itself
    complete: bool = True  # for keys: False when `body` is only the first part of the rendering
    loaded: str | None = None  # for files: the text as it went into the bundle
    tokens: int | None = None  # for hot-view keys: tokens of the untruncated block, counted when warmed
    excerpt: str | None = None  # for files_of entries with `lines`: why only part of the file is loaded


@dataclass
class _State:
    tccm: TCCM
    view: RepoView
    inputs: Mapping[str, str]
    hot: SliceSource | None = None
    per_item: frozenset[str] = frozenset()  # inputs that scope work items: their entries load per item
    used_tokens: int = 0
    used_files: int = 0
    seen: dict[str, str] = field(default_factory=dict)  # target -> id of the first entry that loaded it
    slices: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    entries: list[BundleEntry] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)


class _Base(TypedDict):
    """The fields every BundleEntry of one TCCM entry shares."""

    band: BandName
    entry: int
    selector: str
    reason: str | None


class _Ident(_Base):
    """A file entry's fields, all but its fate."""

    id: str
    kind: Literal["file"]
    target: str


def _id(band: str, index: int, target: str) -> str:
    return f"{band}:{index}:{target}"


def _expand(state: _State, band: BandName, index: int, entry: Entry) -> Iterator[_Item]:
    """The concrete items one TCCM entry selects, in a stable order."""
    base = _Base(band=band, entry=index, selector=entry.selector, reason=entry.reason)
    scoped = sorted(set(input_refs(entry.slice_key or "")) & state.per_item)
    if scoped:  # a run-level view: what one work item needs is in that item's own bundle
        names = ", ".join(f"${{inputs.{n}}}" for n in scoped)
        yield _Item(BundleEntry(**base, id=_id(band, index, entry.slice_key or ""), kind="selector",
                                target=entry.slice_key or "", status="per_item",
                                detail=f"scoped by {names}: loaded in each work item's own bundle"))
        return
    if entry.key is not None:
        yield from _expand_key(state, base, entry.key)
        return
    if entry.files_of is not None:
        yield from _expand_files_of(state, base, entry.files_of, entry.lines)
        return
    assert entry.glob is not None
    files = state.view.paths.match(entry.glob)
    denied = state.view.denied_index.match(entry.glob)
    if not files and not denied:
        yield _Item(BundleEntry(**base, id=_id(band, index, entry.glob), kind="selector", target=entry.glob,
                                status="missing", detail="glob matched no file"))
        return
    for path in sorted([*files, *denied]):
        if path in state.view.denied:
            rule = state.view.denied[path]
            yield _Item(BundleEntry(**base, id=_id(band, index, path), kind="file", target=path, status="denied",
                                    rule=rule, detail=f"secret file ({rule}); never read"))
        else:
            yield _Item(BundleEntry(**base, id=_id(band, index, path), kind="file", target=path, status="included",
                                    source="filesystem"))


def _expand_key(state: _State, base: _Base, key: str) -> Iterator[_Item]:
    band, index = base["band"], base["entry"]
    if state.view.context is None:
        yield _Item(BundleEntry(**base, id=_id(band, index, key), kind="key", target=key,
                                status="missing", detail="no RepoContext for this repository (bootstrap mode)"))
        return
    hot = state.hot.get(key, state.inputs) if state.hot is not None else None
    if hot is not None:  # a pre-rendered slice: the same key, notes and body a resolve+render would give
        yield _Item(
            BundleEntry(**base, id=_id(band, index, hot.key), kind="key", target=hot.key,
                        status="included", source="hot_view", detail="; ".join(hot.notes) or None),
            body=hot.body, value=hot.value, tokens=hot.tokens.get(_id(band, index, hot.key)),
        )
        return
    resolved = keys.resolve(state.view.context, key, state.inputs)
    notes = "; ".join(resolved.notes) or None
    if not resolved.found:
        detail = "key not present in the RepoContext" + (f" ({notes})" if notes else "")
        yield _Item(BundleEntry(**base, id=_id(band, index, resolved.key), kind="key",
                                target=resolved.key, status="missing", detail=detail))
        return
    yield _Item(
        BundleEntry(**base, id=_id(band, index, resolved.key), kind="key", target=resolved.key,
                    status="included", source="repocontext", detail=notes),
        body=None, value=resolved.value,
    )


def _slice_value(state: _State, key: str) -> tuple[str, Any, list[str], str]:
    """(resolved key, value, notes, source) of a key: from a hot view when one serves it, else the RepoContext."""
    hot = state.hot.get(key, state.inputs) if state.hot is not None else None
    if hot is not None:
        return hot.key, hot.value, list(hot.notes), "hot_view"
    assert state.view.context is not None
    resolved = keys.resolve(state.view.context, key, state.inputs)
    return resolved.key, resolved.value if resolved.found else None, resolved.notes, "repocontext"


def _expand_files_of(state: _State, base: _Base, key: str, context: int | None) -> Iterator[_Item]:
    band, index = base["band"], base["entry"]
    if state.view.context is None:
        yield _Item(BundleEntry(**base, id=_id(band, index, key), kind="selector", target=key, status="missing",
                                detail="no RepoContext for this repository (bootstrap mode)"))
        return
    shown, value, notes, _ = _slice_value(state, key)
    named = files_of.named_files(value) if value is not None else []
    if not named:
        why = "key not present in the RepoContext" if value is None else "its records name no file"
        detail = "; ".join([f"{shown}: {why}", *notes])
        yield _Item(BundleEntry(**base, id=_id(band, index, shown), kind="selector", target=shown,
                                status="missing", detail=detail))
        return
    for item in named:
        detail = "; ".join([item.via(shown), *notes])
        ident: _Ident = {**base, "id": _id(band, index, item.path), "kind": "file", "target": item.path}
        if item.path in state.view.denied:
            rule = state.view.denied[item.path]
            yield _Item(BundleEntry(**ident, status="denied", rule=rule,
                                    detail=f"{detail}; secret file ({rule}); never read"))
        elif item.path in state.view.sizes:
            yield _excerpted(state, _Item(BundleEntry(**ident, status="included", source="filesystem",
                                                      detail=detail)), item.lines, context)
        else:
            yield _Item(BundleEntry(**ident, status="missing", detail=f"{detail}; not a file of the repository"))


def _excerpted(state: _State, item: _Item, named: list[int], context: int | None) -> _Item:
    """The item with its body cut to the named lines and their context, when the TCCM asks for an excerpt."""
    if context is None or not named:
        return item
    result = state.view.read(item.entry.target)
    cut = excerpt.excerpt(result.text, named, context) if result.text is not None else None
    if cut is not None:
        item.body, item.excerpt = cut
    return item


def _window(state: _State) -> int:
    """Characters of a slice worth rendering: enough for per_file_max_tokens + 1 tokens and then some."""
    return (state.tccm.budget.per_file_max_tokens + 1) * tokens.CHARS_PER_TOKEN_BOUND


def _render_key(state: _State, item: _Item) -> None:
    """Render a key item's body, capped at the window (same text for a hot-view hit and a miss)."""
    window = _window(state)
    if item.body is None or len(item.body) > window:
        item.body, item.complete = render.render_capped(item.value, window)


def _materialise(state: _State, item: _Item) -> tuple[str, int] | None:
    """Read and render the item, cut to per_file_max_tokens. None when it became denied/skipped."""
    entry = item.entry
    if entry.kind == "key":
        _render_key(state, item)
    body = item.body
    if body is None:
        result = state.view.read(entry.target)
        if result.text is None:
            assert result.status != "ok"  # a read without text is always denied or skipped
            entry.status, entry.detail, entry.rule, entry.source = result.status, result.detail, result.rule, "none"
            return None
        body = result.text
    item.loaded = body
    if item.excerpt is not None:
        entry.status = "excerpt"
        entry.detail = "; ".join(x for x in (entry.detail, item.excerpt) if x)
    text = render.block(entry.id, body)
    limit = state.tccm.budget.per_file_max_tokens
    exact = True
    if not item.complete:
        size = limit + 1  # longer than the window, so over the per-file cap: cut below, sized from the cut
    elif item.tokens is not None and len(text) <= tokens.exact_window(limit):
        size = item.tokens  # exact, as count_upto would be here (beyond this window it estimates)
    else:
        size, exact = tokens.count_upto(text, limit)
    if not exact:
        entry.detail = "; ".join(x for x in (entry.detail, "full size estimated from a prefix") if x)
    if size <= limit:
        return text, size
    entry.status, entry.tokens_needed = "truncated", size
    text, size, cut = _truncated(entry.id, body, limit, entry.kind == "key")
    item.loaded = cut
    shown = render.prefix_value(item.value, len(cut)) if entry.kind == "key" else None
    if not item.complete:
        entry.tokens_needed = render.estimate_tokens(item.value, len(cut), size, shown)
        entry.detail = "; ".join(x for x in (entry.detail, "full size estimated from the part shown") if x)
    if entry.kind == "key":  # the structured slice is exactly what the cut text shows
        item.value = shown
    return text, size


def _truncated(item_id: str, body: str, limit: int, rendered: bool) -> tuple[str, int, str]:
    """(block, its tokens, the body part kept): the body cut so the block is at most `limit` tokens."""
    frame = tokens.count(render.block(item_id, "", truncated=True))
    room = limit - frame
    if rendered:  # a rendered slice: cut after a whole line, counted exactly without encoding it again
        lines = tokens.cut_at_line(body, max(room, 0))
        if lines is not None:
            cut, used = lines
            return render.block(item_id, cut, truncated=True), frame + used, cut
    # Token counts are not exactly additive at arbitrary seams, so shrink until the block fits.
    while True:
        cut = tokens.cut(body, max(room, 0))  # checked just below, with the block around it
        text = render.block(item_id, cut, truncated=True)
        size = tokens.count(text)
        if size <= limit or room <= 0:
            return text, size, cut
        room -= size - limit


def _seen_key(item: _Item) -> str:
    """An excerpt of a file does not stand for the whole file a later entry may load."""
    return f"{'excerpt' if item.excerpt is not None else item.entry.kind}:{item.entry.target}"


def _duplicate(state: _State, item: _Item) -> bool:
    first = state.seen.get(_seen_key(item))
    if first is None:
        return False
    item.entry.status, item.entry.detail, item.entry.source = "duplicate", f"already loaded as {first}", "none"
    return True


def _accept(state: _State, item: _Item, text: str, size: int) -> None:
    item.entry.tokens = size
    state.used_tokens += size
    state.used_files += item.entry.kind == "file"
    state.seen[_seen_key(item)] = item.entry.id
    state.blocks.append(text)
    if item.entry.kind == "key":
        state.slices[item.entry.id] = plain(item.value)  # graph state is plain JSON, never a lazy view
    elif item.loaded is not None:
        state.files[item.entry.target] = item.loaded


def _load_must(state: _State) -> None:
    for index, entry in enumerate(state.tccm.must_read):
        for item in _expand(state, "must_read", index, entry):
            state.entries.append(item.entry)
            if item.entry.status != "included" or _duplicate(state, item):
                continue
            loaded = _materialise(state, item)
            if loaded:
                _accept(state, item, *loaded)
    cut = [e for e in state.entries if e.kind == "key" and e.status == "truncated"]
    if cut:  # a decision may rest on a must_read slice: never hand one over cut
        sizes = ", ".join(f"{e.id} needs {e.tokens_needed}" for e in cut)
        raise BudgetError(
            f"must_read slice(s) of {state.tccm.task_class} exceed per_file_max_tokens "
            f"{state.tccm.budget.per_file_max_tokens} ({state.tccm.path}): {sizes}; narrow the key with an input "
            f"or raise the budget"
        )
    budget = state.tccm.budget
    if state.used_tokens > budget.max_tokens or state.used_files > budget.max_files:
        sizes = ", ".join(f"{e.id}={e.tokens}" for e in state.entries if e.status in LOADED)
        raise BudgetError(
            f"must_read of {state.tccm.task_class} needs {state.used_tokens} tokens in {state.used_files} files "
            f"but the budget is {budget.max_tokens} tokens / {budget.max_files} files ({state.tccm.path}): {sizes}"
        )


def _load_first_fit(state: _State, band: BandName, entries: tuple[Entry, ...]) -> None:
    budget = state.tccm.budget
    for index, entry in enumerate(entries):
        for item in _expand(state, band, index, entry):
            state.entries.append(item.entry)
            if item.entry.status != "included" or _duplicate(state, item):
                continue
            loaded = _materialise(state, item)
            if loaded is None:
                continue
            text, size = loaded
            is_file = item.entry.kind == "file"
            if state.used_tokens + size > budget.max_tokens or state.used_files + is_file > budget.max_files:
                left = budget.max_tokens - state.used_tokens
                why = "max_files reached" if state.used_files + is_file > budget.max_files else f"{left} tokens left"
                item.entry.status, item.entry.tokens_needed, item.entry.source = "deferred", size, "none"
                item.entry.detail = f"needs {size} tokens; {why}"
                continue
            _accept(state, item, text, size)


def _list_may(state: _State) -> None:
    for index, entry in enumerate(state.tccm.may_read):
        for item in _expand(state, "may_read", index, entry):
            state.entries.append(item.entry)
            if item.entry.status != "included" or _duplicate(state, item):
                continue
            item.entry.status, item.entry.source = "listed", "none"
            if item.entry.kind == "key":
                _render_key(state, item)
                shown = tokens.count(render.block(item.entry.id, item.body or ""))
                if not item.complete:
                    item.entry.tokens_needed = render.estimate_tokens(item.value, len(item.body or ""), shown)
                    item.entry.detail = "estimated from the part rendered"
                else:
                    item.entry.tokens_needed = item.tokens if item.tokens is not None else shown
            else:  # not read: ~4 bytes per token, header included
                size = state.view.sizes.get(item.entry.target, 0) + len(render.block_header(item.entry.id)) + 1
                item.entry.tokens_needed = -(-size // 4)
                item.entry.detail = "estimated from file size"


def build(tccm: TCCM, view: RepoView, inputs: Mapping[str, str], hot: SliceSource | None = None,
          per_item: frozenset[str] = frozenset()) -> Bundle:
    """The bundle; `hot` (optional) serves pre-rendered key slices before the RepoContext is asked.
    Entries scoped by a `per_item` input are not loaded (status per_item): the run-level view of a run
    whose work items each get their own bundle."""
    with gc_paused():  # thousands of short-lived, acyclic objects: a collection mid-build is wasted time
        return _build(tccm, view, inputs, hot, per_item)


def _build(tccm: TCCM, view: RepoView, inputs: Mapping[str, str], hot: SliceSource | None,
           per_item: frozenset[str]) -> Bundle:
    header = render.bundle_header(tccm.task_class, tccm.version, view.mode, inputs)
    state = _State(tccm=tccm, view=view, inputs=inputs, hot=hot, per_item=per_item,
                   used_tokens=tokens.count(header))
    header_tokens = state.used_tokens
    _load_must(state)
    if view.mode == "bootstrap":
        bootstrap = tuple(Entry(glob=g, reason="bootstrap glob (no RepoContext yet)") for g in tccm.bootstrap_globs)
        _load_first_fit(state, "bootstrap", bootstrap)
    _load_first_fit(state, "should_read", tccm.should_read)
    _list_may(state)
    text = header + "".join(state.blocks)
    by_status: dict[str, int] = {}
    for entry in state.entries:
        by_status[entry.status] = by_status.get(entry.status, 0) + 1
    totals = Totals(tokens=state.used_tokens, max_tokens=tccm.budget.max_tokens, files=state.used_files,
                    max_files=tccm.budget.max_files, per_file_max_tokens=tccm.budget.per_file_max_tokens,
                    header_tokens=header_tokens, by_status=dict(sorted(by_status.items())))
    return Bundle(task_class=tccm.task_class, tccm_version=tccm.version, mode=view.mode, inputs=dict(inputs),
                  entries=state.entries, totals=totals, text=text,
                  sha256=hashlib.sha256(text.encode()).hexdigest(), slices=state.slices, files=state.files)
