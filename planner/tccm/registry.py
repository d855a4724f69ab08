"""The task-class registry: every TCCM file in service, validated and resolved.

Files come from each directory on PLANNER_TASK_CLASS_PATH, then the built-in
`task-class-contexts/`. Precedence: the first directory that defines a task
class wins, so a user's file overrides a built-in class of the same name (and
`planner task-classes list` shows which file is in service and what it
shadows). Two files in one directory defining one class are an error. A class
may extend the definition it shadows (`extends:` its own name). A broken file
never hides the good ones: its errors are kept and reported when it (or a
class extending it) is asked for.

`extends` merge rules: scalars (description, subgraph, worker) come from the
child when it sets them; band entries are the parent's followed by the
child's, where a child entry with the same selector replaces the parent's in
place; bootstrap globs are the union (parent first); budget fields override
one by one. A child without `subgraph` runs its parent's subgraph module and
recipes (the `lineage` of task classes is searched for one, child first). A
child's `flow` is merged over its parent's state by state (planner/flow/
merge.py) and the merged flow is validated, each problem at the line of the
state it concerns; `policy` fields may only narrow the parent's
(planner/policy/inherit.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from planner.errors import PlannerError, TCCMError
from planner.flow.merge import Merged, merge
from planner.flow.validate import Problem, refused_effects, state_problems
from planner.flow.validate import problems as flow_problems
from planner.policy import inherit
from planner.tccm import recipemerge as recipes
from planner.tccm import yamlsource
from planner.tccm.entry import Entry
from planner.tccm.model import BANDS, TCCM, Budget, ReportSpec, TCCMDocument

RECIPE_BUDGET = {"max_files": 50, "max_tokens": 50_000, "per_file_max_tokens": 8_000}  # see _build


@dataclass
class SourceFile:
    path: Path
    sha256: str = ""
    document: TCCMDocument | None = None
    located: yamlsource.Located | None = None
    errors: list[TCCMError] = field(default_factory=list)

    @property
    def display(self) -> str:
        return _display(self.path)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _pydantic_errors(source: SourceFile, exc: ValidationError) -> list[TCCMError]:
    located = source.located
    errors = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        line = located.line_of(loc) if located else None
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "missing":
            message = "required field is missing"
        errors.append(TCCMError(source.display, line, yamlsource.dotted(loc) or None, message))
    return errors


def read_source(path: Path) -> SourceFile:
    """One TCCM file, read and checked on its own. Whatever is wrong with it is kept in its `errors`, never
    raised: every class is read when the registry is built, so one bad file must not stop the others."""
    source = SourceFile(path=path)
    try:
        return _read_source(source)
    except RecursionError:  # yamlsource caps nesting; this is for a structure deep in some other way
        source.errors.append(TCCMError(source.display, None, None, "the file nests too deeply to be read"))
        return source


def _read_source(source: SourceFile) -> SourceFile:
    path = source.path
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        source.errors.append(TCCMError(source.display, None, None, f"cannot read file: {exc.strerror}"))
        return source
    except UnicodeDecodeError:
        source.errors.append(TCCMError(source.display, None, None, "file is not UTF-8 text"))
        return source
    source.sha256 = hashlib.sha256(raw).hexdigest()
    try:
        source.located = yamlsource.load(text)
    except yamlsource.YamlProblem as problem:
        source.errors.append(TCCMError(source.display, problem.line, problem.field, problem.cause))
        return source
    try:
        source.document = TCCMDocument.model_validate(source.located.data)
    except ValidationError as exc:
        source.errors.extend(_pydantic_errors(source, exc))
        return source
    if source.document.flow is not None:  # structural flow problems, all of them, each at its line
        source.errors.extend(TCCMError(source.display, source.located.line_of(loc), yamlsource.dotted(loc), cause)
                             for loc, cause in _own_flow_problems(source.document))
    if source.document.task_class != path.stem:
        line = source.located.line_of(("task_class",))
        source.errors.append(TCCMError(
            source.display, line, "task_class",
            f"{source.document.task_class!r} does not match the file name {path.name!r} (expected {path.stem!r})",
        ))
    return source


def _rule_errors(source: SourceFile) -> list[TCCMError]:
    """The file's ast-grep rules that are malformed or that ast-grep refuses (asked when the class is used or
    validated, not when the registry is read: each rule costs an ast-grep process, cached per rule)."""
    if source.document is None or source.located is None or not source.document.recipes:
        return []
    located = source.located
    return [TCCMError(source.display, located.line_of(loc), yamlsource.dotted(loc), cause)
            for loc, cause in recipes.bad_rules(source.document.recipes)]


def _own_flow_problems(doc: TCCMDocument) -> list[Problem]:
    """A flow's problems that this file alone decides: all of them without `extends`; with one, each
    state's own (targets, reachability and cycles are checked on the merged flow, in _surface)."""
    assert doc.flow is not None
    if doc.extends:
        return state_problems(doc.flow.states)
    merged = merge(None, {}, doc.flow, doc.task_class)
    if merged.flow is None:
        return merged.problems
    return flow_problems(merged.flow)


def _merge_entries(parent: Sequence[Entry], child: Sequence[Entry]) -> tuple[Entry, ...]:
    merged = list(parent)
    index = {entry.selector: i for i, entry in enumerate(merged)}
    for entry in child:
        if entry.selector in index:
            merged[index[entry.selector]] = entry
        else:
            index[entry.selector] = len(merged)
            merged.append(entry)
    return tuple(merged)


class Registry:
    def __init__(self, directories: Iterable[Path]) -> None:
        self.directories = [d for d in directories]
        self.sources: list[SourceFile] = []
        for directory in self.directories:
            if directory.is_dir():
                files = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
                self.sources.extend(read_source(p) for p in files)
        self._by_name: dict[str, list[SourceFile]] = {}
        for source in self.sources:
            name = source.document.task_class if source.document else source.path.stem
            self._by_name.setdefault(name, []).append(source)

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def source(self, name: str, level: int = 0) -> SourceFile:
        """The definition in service (level 0), or the one it shadows (level 1, …)."""
        sources = self._by_name.get(name)
        if not sources:
            known = ", ".join(self.names()) or "none"
            raise PlannerError(f"unknown task class {name!r} (known: {known})")
        source = sources[level]
        twin = next((s for s in sources if s is not source and s.path.parent == source.path.parent), None)
        if twin is not None:
            first, second = sorted((source, twin), key=lambda s: s.path)
            raise TCCMError(second.display, None, "task_class",
                            f"{name!r} is defined twice in one directory: in {first.display} and in {second.display}")
        return source

    def shadowed(self, name: str) -> list[str]:
        """The files a class's definition in service overrides (lower-precedence directories)."""
        return [s.display for s in self._by_name.get(name, [])[1:]]

    def errors_for(self, name: str) -> list[TCCMError]:
        """Every problem that stops `name` from resolving (its own file, duplicates, its extends chain)."""
        try:
            self.get(name)
        except TCCMError:
            return self._collect(name)
        return []

    def _collect(self, name: str) -> list[TCCMError]:
        try:
            source = self.source(name)
        except TCCMError as exc:
            return [exc]
        if source.errors:
            return list(source.errors)
        if _rule_errors(source):  # every bad ast-grep rule of the file, each at its line
            return _rule_errors(source)
        try:
            self._resolve(name, ())
        except TCCMError as exc:
            return [exc]
        return []

    def get(self, name: str) -> TCCM:
        return self._resolve(name, ())

    def _resolve(self, name: str, stack: tuple[str, ...], level: int = 0) -> TCCM:
        source = self.source(name, level)
        if source.errors:
            raise source.errors[0]
        doc = source.document
        assert doc is not None and source.located is not None
        parent: TCCM | None = None
        if doc.extends:
            line = source.located.line_of(("extends",))
            own = doc.extends == name  # extends the definition this file shadows
            if own and level + 1 >= len(self._by_name[name]):
                raise TCCMError(source.display, line, "extends", f"extends {name!r}, but no other file defines it")
            if doc.extends in stack or (doc.extends == name and not own):
                cycle = " → ".join((*stack, name, doc.extends))
                raise TCCMError(source.display, line, "extends", f"extends cycle: {cycle}")
            if doc.extends not in self._by_name:
                raise TCCMError(source.display, line, "extends", f"unknown task class {doc.extends!r}")
            try:
                parent = (self._resolve(name, stack, level + 1) if own
                          else self._resolve(doc.extends, (*stack, name)))
            except TCCMError as exc:
                if exc.field == "extends" and "cycle" in exc.cause:
                    raise
                raise TCCMError(source.display, line, "extends", f"{doc.extends!r} is invalid: {exc}") from None
        return self._build(source, doc, parent)

    def _build(self, source: SourceFile, doc: TCCMDocument, parent: TCCM | None) -> TCCM:
        located = source.located
        assert located is not None
        budget_fields: dict[str, Any] = parent.budget.model_dump() if parent else {}
        if doc.budget is not None:
            budget_fields.update(doc.budget.model_dump(exclude_none=True))
        elif parent is None and doc.recipes:
            # a class that states its work as recipes needs no budget to run them; the budget only bounds
            # what an LLM would be shown, so it gets the documented default rather than an error
            budget_fields = dict(RECIPE_BUDGET)
        description = doc.description or (parent.description if parent else None)
        if description is None:
            raise TCCMError(source.display, 1, "description", "required field is missing")
        try:
            budget = Budget.model_validate(budget_fields)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ("budget", *err["loc"]) if err["loc"] else ("budget",)
            cause = err["msg"].removeprefix("Value error, ")
            if err["type"] == "missing":
                cause = "required field is missing"
            raise TCCMError(source.display, located.line_of(loc), yamlsource.dotted(loc), cause) from None
        bands = {
            band: _merge_entries(parent.band(band) if parent else (), getattr(doc, band) or ())
            for band in BANDS
        }
        boot = list(parent.bootstrap_globs) if parent else []
        boot += [g for g in doc.bootstrap_globs or () if g not in boot]
        policy, flow, flow_origin = self._surface(source, doc, parent)
        problem = recipes.refused_commands(doc.recipes or (), policy)
        if problem is not None:
            loc = ("recipes", problem[0], "command")
            raise TCCMError(source.display, located.line_of(loc), yamlsource.dotted(loc), problem[1])
        refused = _rule_errors(source)
        if refused:
            raise refused[0]
        chain = (str(source.path), *(parent.chain if parent else ()))
        digest = hashlib.sha256(source.sha256.encode())
        if parent:
            digest.update(parent.sha256.encode())
        return TCCM(
            task_class=doc.task_class, version=str(doc.version), description=description, extends=doc.extends,
            subgraph=doc.subgraph or (parent.subgraph if parent else None),
            lineage=(doc.task_class, *(t for t in (parent.lineage if parent else ()) if t != doc.task_class)),
            worker=doc.worker or (parent.worker if parent else None),
            bootstrap_globs=tuple(boot), budget=budget, path=str(source.path), policy=policy, flow=flow,
            inputs={**(parent.inputs if parent else {}), **(doc.inputs or {})},
            report=doc.report or (parent.report if parent else ReportSpec()),
            recipes=recipes.merge(parent.recipes if parent else (), doc.recipes or ()),
            work_items=doc.work_items or (parent.work_items if parent else None),
            flow_origin=flow_origin,
            sha256=digest.hexdigest() if parent else source.sha256, chain=chain, **bands,
        )

    def _surface(self, source: SourceFile, doc: TCCMDocument, parent: TCCM | None) -> tuple[Any, Any, Any]:
        """The policy (extends applied; an undeclared widening is an error) and the flow (merged over the
        parent's), checked against each other: a flow may only run side-effects the policy allows."""
        located = source.located
        assert located is not None
        policy, problems = inherit.resolve(parent.policy if parent else None, doc.policy, doc.task_class,
                                           parent.task_class if parent else "its parent")
        for field_name, cause in problems:
            where = ("policy", field_name)
            raise TCCMError(source.display, located.line_of(where), yamlsource.dotted(where), cause)
        merged = self._flow(source, doc, parent)
        if merged.flow is not None:
            for loc, cause in refused_effects(merged.flow, policy):
                own = merged.origin.get(str(loc[2])) == doc.task_class  # else: inherited unchanged
                line = located.line_of(loc) if own else located.line_of(("policy",))
                raise TCCMError(source.display, line, yamlsource.dotted(loc), cause)
        return policy, merged.flow, merged.origin

    def _flow(self, source: SourceFile, doc: TCCMDocument, parent: TCCM | None) -> Merged:
        """The flow this class runs: its own, its parent's, or its own merged over its parent's (validated
        here, where the parent is known; a problem in a state the parent defined is shown at `flow:`)."""
        located = source.located
        assert located is not None
        origins = _inherited_origin(doc, parent)
        if doc.flow is None:
            return Merged(flow=parent.flow, origin=origins) if parent else Merged()
        label = doc.task_class
        merged = merge(parent.flow if parent else None, origins, doc.flow, label)
        if not doc.extends:  # read_source checked it whole
            return merged
        found = merged.problems or (flow_problems(merged.flow) if merged.flow else [])
        for loc, cause in found:
            name = str(loc[2]) if loc[:2] == ("flow", "states") and len(loc) > 2 else None
            inherited = False
            if name is not None and merged.origin.get(name) != label:
                inherited = True
                cause, loc = f"{cause} (state {name!r} comes from {merged.origin.get(name)})", ("flow", "states", name)
            line = located.line_of(("flow",) if inherited else loc)
            raise TCCMError(source.display, line, yamlsource.dotted(loc), cause)
        return merged

    def notices(self, name: str) -> list[str]:
        """What validation shows besides errors: each limit a class widened over its parent, on purpose."""
        try:
            tccm = self.get(name)
        except PlannerError:
            return []
        source = self.source(name)
        line = source.located.line_of(("policy", "widens")) if source.located else None
        where = f"{source.display}:{line}" if line else source.display
        return [f"{where}: policy.widens: widened on purpose: {w}" for w in (tccm.policy.widened if tccm.policy
                                                                              else ())]

    def validate(self, names: Iterable[str] | None = None) -> list[TCCMError]:
        """All problems, file by file, in a stable order."""
        errors: list[TCCMError] = []
        seen: set[str] = set()
        for name in names if names is not None else self.names():
            for error in self.errors_for(name):
                if str(error) not in seen:
                    seen.add(str(error))
                    errors.append(error)
        return errors

    def validate_files(self, paths: Sequence[Path]) -> list[TCCMError]:
        """Validate the given files (or directories of them) against this registry."""
        wanted: list[str] = []
        for path in paths:
            files = sorted([*path.glob("*.yaml"), *path.glob("*.yml")]) if path.is_dir() else [path]
            for file in files:
                if not file.exists():
                    return [TCCMError(_display(file), None, None, "file does not exist")]
                resolved = file.resolve()
                match = [s for s in self.sources if s.path.resolve() == resolved]
                if not match:  # a file outside the registry: check it alongside the registry
                    source = read_source(file)
                    self.sources.append(source)
                    name = source.document.task_class if source.document else file.stem
                    self._by_name.setdefault(name, []).append(source)
                    match = [source]
                source = match[0]
                wanted.append(source.document.task_class if source.document else source.path.stem)
        return self.validate(wanted)


def _inherited_origin(doc: TCCMDocument, parent: TCCM | None) -> dict[str, str]:
    """The parent's flow origins; where the child extends the definition of its own name that it shadows,
    the parent's states are named with the parent's file, so they stay apart from the child's."""
    if parent is None:
        return {}
    shadowed = f"{doc.task_class} ({_display(Path(parent.path))})"
    return {n: shadowed if origin == doc.task_class else origin for n, origin in parent.flow_origin.items()}
