"""`planner task-classes surface NAME`: what a run of a task class may do — each limit with the class
that set it, the inputs that relax it, what a child widened on purpose, whether side-effects may use
the network, and the flow's side-effects. `summary` is the one-line form `task-classes list` shows."""

from __future__ import annotations

from typing import Any

from planner.policy.enforce import check_side_effect
from planner.policy.model import LIMITS, NEEDS_NETWORK, SIDE_EFFECTS, Policy
from planner.tccm.model import TCCM

MEANING = {"paths": "the only files it may edit", "file_kinds": "the only kinds of file it may edit",
           "reasoned_paths": "edited only by an edit that says why", "max_files_changed": "files one item may change",
           "version_bump": "the largest version bump", "side_effects": "the side-effects it may run",
           "network": "whether side-effects that need the network may run"}


def _network(policy: Policy) -> dict[str, Any]:
    lifted_by = sorted(name for name, lifted in policy.relax.items() if lifted.network is True)
    return {"value": policy.network, "from": policy.origin.get("network") or "default (false)",
            "relaxed_by": lifted_by, "needed_by": sorted(NEEDS_NETWORK)}


def _refusals(policy: Policy) -> dict[str, str]:
    """side-effect → the rule that refuses it, for every one this policy refuses."""
    found = {effect: check_side_effect(policy, effect) for effect in SIDE_EFFECTS}
    return {effect: v.rule for effect, v in found.items() if v is not None}


def describe(tccm: TCCM) -> dict[str, Any]:
    policy = tccm.policy
    flow_effects = sorted({s.effect for s in tccm.flow.states.values() if s.effect}) if tccm.flow else []
    if policy is None:
        return {"task_class": tccm.task_class, "policy": False, "limits": {}, "relax": {}, "widened": [],
                "note": "no policy: a run may change any file and run any side-effect it asks for",
                "allowed_side_effects": list(SIDE_EFFECTS), "blocked_side_effects": [], "refused_by": {},
                "network": {"value": True, "from": "no policy", "relaxed_by": [], "needed_by": sorted(NEEDS_NETWORK)},
                "flow_side_effects": flow_effects, "summary": summary(None)}
    limits = {name: {"value": policy.value(name), "from": policy.origin.get(name), "meaning": MEANING[name]}
              for name in LIMITS if policy.value(name) is not None}
    refused = _refusals(policy)
    return {"task_class": tccm.task_class, "policy": True, "note": policy.note, "limits": limits,
            "relax": {name: lifted.model_dump(exclude_none=True) for name, lifted in sorted(policy.relax.items())},
            "widened": list(policy.widened),
            "allowed_side_effects": [s for s in SIDE_EFFECTS if s not in refused],
            "blocked_side_effects": [s for s in SIDE_EFFECTS if s in refused], "refused_by": refused,
            "network": _network(policy), "flow_side_effects": flow_effects, "summary": summary(policy)}


def summary(policy: Policy | None) -> str:
    """One line: `edits: manifest,lockfile; bumps ≤ minor; effects: apply,verify; network`."""
    if policy is None:
        return "—"
    limits, parts = policy.limits, []
    if limits.paths is not None:
        parts.append("paths: " + ",".join(limits.paths))
    if limits.file_kinds is not None:
        parts.append("edits: " + ",".join(limits.file_kinds))
    if limits.max_files_changed is not None:
        parts.append(f"≤ {limits.max_files_changed} files")
    if limits.version_bump is not None:
        parts.append(f"bumps ≤ {limits.version_bump}")
    allowed = [s for s in SIDE_EFFECTS if s not in _refusals(policy)]
    parts.append("effects: " + (",".join(allowed) or "none"))
    parts.append("network" if policy.network else "no network")
    return "; ".join(parts)


def lines(surface: dict[str, Any]) -> list[str]:
    out = [f"{surface['task_class']}: {surface['note'] or 'decision surface'}"]
    for name, limit in surface["limits"].items():
        value = limit["value"]
        shown = ", ".join(value) if isinstance(value, list) else str(value).lower() if isinstance(value, bool) \
            else str(value)
        out.append(f"  policy.{name} = {shown}  ({limit['meaning']}; from {limit['from']})")
    network = surface["network"]
    if surface["policy"] and "network" not in surface["limits"]:
        out.append(f"  policy.network = false  ({MEANING['network']}; not set: off by default)")
    for name, lifted in surface["relax"].items():
        out.append(f"  --input {name}=true lifts: " + ", ".join(f"{k} → {v}" for k, v in lifted.items()))
    out += [f"  widened on purpose: {w}" for w in surface["widened"]]
    refused = ", ".join(f"{s} ({surface['refused_by'][s]})" for s in surface["blocked_side_effects"])
    out.append(f"  side-effects allowed: {', '.join(surface['allowed_side_effects']) or 'none'}; refused: "
               f"{refused or 'none'}")
    needed = ", ".join(network["needed_by"])
    out.append(f"  network: {'allowed' if network['value'] else 'refused'} (needed by: {needed})")
    if surface["flow_side_effects"]:
        out.append(f"  its flow runs: {', '.join(surface['flow_side_effects'])}")
    return out
