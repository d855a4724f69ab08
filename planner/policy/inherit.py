"""`extends` for policies: a child narrows its parent's surface, never widens it unless it says so.

A field the child leaves out is the parent's. A field it sets must be no wider than the parent's
(globs each inside one of the parent's, kinds and side-effects a subset, numbers and bumps no
larger, reasoned paths a superset, `network: true` only where the parent's is true); a wider one is
a validation error unless the child lists the field in `widens:`, and then the resolved policy
records it so validation and `surface` show it.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.policy.model import BUMP_ORDER, LIMITS, Limits, Policy, PolicyDocument
from repocontext.globs import match


def _inside(pattern: str, parents: Sequence[str]) -> bool:
    """A glob is provably inside a parent's when it is one of them or a parent glob matches it as a
    path (e.g. `api/Dockerfile*` inside `**/Dockerfile*`); anything else counts as wider. An anchored
    `/README.md` is read as the path it names, a bare name as `**/NAME` (it matches at any depth), so
    `README.md` is not inside `/README.md` but `/README.md` is inside `README.md`."""
    stripped = pattern.strip()
    as_path = stripped[1:] if stripped.startswith("/") else (stripped if "/" in stripped else "**/" + stripped)
    return pattern in parents or any(match(parent, as_path) for parent in parents)


def wider(name: str, parent: object, child: object) -> str | None:
    """Why `child` is wider than `parent` for field `name`, or None when it is as narrow or narrower."""
    if name == "network":  # unset is false here, not "no limit": turning it on is always a widening
        return "allows the network; the parent's policy does not" if child is True and parent is not True else None
    if parent is None or child is None:
        return None  # no limit to widen (the child sets one) or nothing set
    if name == "paths":
        assert isinstance(child, list) and isinstance(parent, list)  # Limits.paths: list[str]
        out = [g for g in child if not _inside(g, parent)]
        return f"{', '.join(repr(g) for g in out)} not inside the parent's globs" if out else None
    if name in ("file_kinds", "side_effects"):
        assert isinstance(child, list) and isinstance(parent, list)  # Limits: list[FileKind] / list[SideEffect]
        extra = sorted(set(child) - set(parent))
        return f"adds {', '.join(extra)}" if extra else None
    if name == "reasoned_paths":
        assert isinstance(child, list) and isinstance(parent, list)  # Limits.reasoned_paths: list[str]
        dropped = [g for g in parent if g not in child]
        return f"drops {', '.join(repr(g) for g in dropped)}" if dropped else None
    if name == "max_files_changed":
        assert isinstance(child, int) and isinstance(parent, int)  # Limits.max_files_changed: int
        return f"{child} > {parent}" if child > parent else None
    if name == "version_bump":
        return f"{child} > {parent}" if BUMP_ORDER[str(child)] > BUMP_ORDER[str(parent)] else None
    return None


def resolve(parent: Policy | None, doc: PolicyDocument | None, task_class: str,
            parent_class: str = "its parent") -> tuple[Policy | None, list[tuple[str, str]]]:
    """The child's policy over its parent's, and the problems: (field, cause) per undeclared widening."""
    if doc is None:
        return parent, []
    base = parent or Policy()
    problems: list[tuple[str, str]] = []
    values, origin = base.limits.model_dump(), dict(base.origin)
    declared, widened = set(doc.widens or ()), list(base.widened)
    for name in LIMITS:
        mine = getattr(doc, name)
        if mine is None:
            if name in declared:
                problems.append(("widens", f"names {name!r}, but this file sets no policy.{name}"))
            continue
        why = wider(name, values[name], mine) if parent is not None else None
        if why and name not in declared:
            problems.append((name, f"widens the parent's policy ({why}); a child may only narrow it, "
                                   f"or list {name!r} under policy.widens to widen it on purpose"))
        elif why:
            widened.append(f"{name} ({task_class} over {origin.get(name, parent_class)}: {why})")
        values[name], origin[name] = mine, task_class
    relax = {**base.relax, **(doc.relax or {})}
    policy = Policy(limits=Limits.model_validate(values), origin=origin, widened=tuple(widened), relax=relax,
                    note=doc.note or base.note)
    return policy, problems


def effective(policy: Policy, inputs: dict[str, str]) -> tuple[Policy, list[str]]:
    """The policy for one run: each `relax` input passed as true lifts the limits it names."""
    notes: list[str] = []
    values, origin = policy.limits.model_dump(), dict(policy.origin)
    for name, lifted in sorted(policy.relax.items()):
        if str(inputs.get(name, "")).strip().lower() not in ("true", "1", "yes"):
            continue
        for field, value in lifted.model_dump(exclude_none=True).items():
            values[field], origin[field] = value, f"input {name}=true"
        notes.append(f"policy relaxed by input {name}=true: {', '.join(lifted.model_dump(exclude_none=True))}")
    if not notes:
        return policy, []
    return policy.model_copy(update={"limits": Limits.model_validate(values), "origin": origin}), notes
