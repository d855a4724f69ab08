"""Checking a work item's edits and a run's side-effect steps against its policy.

Called by the supervisor's join before any patch is made (so nothing outside the surface is
reported or applied), by the flow's side-effect states and by the built-in side-effects
(`--verify`, `--regenerate`), which also refuse a side-effect that needs the network unless
the policy says `network: true`. A refusal names the rule (`policy.<field> (from <task class>)`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from planner.policy.inherit import effective
from planner.policy.kinds import kind_of
from planner.policy.model import BUMP_ORDER, NEEDS_NETWORK, Policy, Violation
from planner.policy.versions import bump, edit_bumps
from repocontext.globs import match

BUMPED_KINDS = frozenset({"manifest", "dockerfile", "compose", "kubernetes"})  # where versions are declared


def from_state(tccm: Mapping[str, Any] | None, inputs: dict[str, str]) -> tuple[Policy | None, list[str]]:
    """The run's effective policy from the resolved TCCM held in graph state (None: no policy)."""
    raw = (tccm or {}).get("policy")
    if not raw:
        return None, []
    return effective(Policy.model_validate(raw), inputs)


def _lifts(field: str, value: object, wanted: str) -> bool:
    if value is None:
        return False
    if field == "version_bump":
        return BUMP_ORDER[str(value)] >= BUMP_ORDER[wanted]
    return value is True if field == "network" else True


def _relax_fix(policy: Policy, field: str, wanted: str) -> str | None:
    for name, lifted in sorted(policy.relax.items()):
        if _lifts(field, getattr(lifted, field), wanted):
            return f"pass --input {name}=true to allow it"
    return None


def _file_rules(policy: Policy, path: str, reason: str, known: Mapping[str, str]) -> list[Violation]:
    limits, out = policy.limits, []
    if limits.paths is not None and not any(match(g, path) for g in limits.paths):
        out.append(Violation(rule=policy.rule("paths"), file=path,
                             message=f"{path} is outside the globs a run may edit ({', '.join(limits.paths)})"))
    kind = kind_of(path, known)
    if limits.file_kinds is not None and kind not in limits.file_kinds:
        out.append(Violation(rule=policy.rule("file_kinds"), file=path,
                             message=f"{path} is a {kind} file; a run may edit {', '.join(limits.file_kinds)}"))
    if limits.reasoned_paths and any(match(g, path) for g in limits.reasoned_paths) and not reason.strip():
        out.append(Violation(rule=policy.rule("reasoned_paths"), file=path,
                             message=f"an edit of {path} must say why (its reason is empty)"))
    return out


def _bump_rules(policy: Policy, edits: Sequence[Mapping[str, Any]], item: Mapping[str, Any],
                known: Mapping[str, str]) -> list[Violation]:
    limit = policy.limits.version_bump
    if limit is None:
        return []
    found: list[tuple[str | None, str, str, str, str]] = []  # file, what, from, to, bump
    data = item.get("data") or {}
    if data.get("target"):  # a dependency item says what it upgrades from and to
        package = data.get("package", "the package")
        found += [(None, package, str(v), str(data["target"]), kind)
                  for v in data.get("installed") or [] if (kind := bump(str(v), str(data["target"])))]
    # An edit that moves a spec to the item's target is the item's own move, judged above from what is
    # installed: a range's floor (`redis>=2.8.0,<5.0.0`, installed 4.5.3) is not the version being replaced.
    own = str(data["target"]) if data.get("target") and data.get("installed") else None
    for edit in edits:
        if kind_of(edit["file"], known) in BUMPED_KINDS:
            found += [(edit["file"], edit["file"], a, b, kind) for a, b, kind in edit_bumps(edit["old"], edit["new"])
                      if b != own]
    out, seen = [], set()
    for file, what, old, new, kind in found:
        if BUMP_ORDER[kind] > BUMP_ORDER[limit] and (old, new) not in seen:  # the item's own line comes first
            seen.add((old, new))
            out.append(Violation(rule=policy.rule("version_bump"), file=file, fix=_relax_fix(policy, "version_bump",
                                 kind), message=f"{what} {old} → {new} is a {kind} bump; the limit is {limit}"))
    return out


def check_edits(policy: Policy, edits: Sequence[Mapping[str, Any]], item: Mapping[str, Any],
                known: Mapping[str, str] | None = None) -> list[Violation]:
    """Every rule an item's edits break (empty: all inside the surface)."""
    known = known or {}
    out: list[Violation] = []
    for path in sorted({e["file"] for e in edits}):
        reasons = " ".join(str(e.get("reason") or "") for e in edits if e["file"] == path)
        out += _file_rules(policy, path, reasons, known)
    files = {e["file"] for e in edits}
    cap = policy.limits.max_files_changed
    if cap is not None and len(files) > cap:
        out.append(Violation(rule=policy.rule("max_files_changed"), fix=_relax_fix(policy, "max_files_changed", ""),
                             message=f"the item changes {len(files)} files; the limit is {cap}"))
    return out + _bump_rules(policy, edits, item, known)


def check_side_effect(policy: Policy | None, effect: str) -> Violation | None:
    """None when the side-effect may run: the policy lists it (or sets no list) and, for one that needs
    the network, says `network: true`."""
    if policy is None:
        return None
    allowed = policy.limits.side_effects
    if allowed is not None and effect not in allowed:
        return Violation(rule=policy.rule("side_effects"), fix=_relax_fix(policy, "side_effects", ""),
                         message=f"side-effect {effect!r} is not allowed (allowed: {', '.join(allowed) or 'none'})")
    if effect in NEEDS_NETWORK and not policy.network:
        fix = _relax_fix(policy, "network", "") or "set `network: true` in the task class's policy"
        return Violation(rule=policy.rule("network"), fix=fix,
                         message=f"side-effect {effect!r} needs the network (its tools fetch from the package "
                                 "index), and the policy does not allow the network")
    return None


def could_run(policy: Policy | None, effect: str) -> Violation | None:
    """None when some run could take the side-effect: the policy allows it, or one of its `relax`
    inputs does (validation refuses only what no run can do; a run without the input is refused then)."""
    refused = check_side_effect(policy, effect)
    if refused is None or policy is None or not policy.relax:
        return refused
    relaxed, _ = effective(policy, dict.fromkeys(policy.relax, "true"))
    return refused if check_side_effect(relaxed, effect) else None
