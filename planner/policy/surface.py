"""`planner task-classes surface NAME`: what a run of a task class may do — each limit with the class
that set it, the inputs that relax it, what a child widened on purpose, and the flow's side-effects."""

from __future__ import annotations

from typing import Any

from planner.policy.model import LIMITS
from planner.tccm.model import TCCM

SIDE_EFFECTS = ("apply", "verify", "regenerate", "regather")
MEANING = {"paths": "the only files it may edit", "file_kinds": "the only kinds of file it may edit",
           "reasoned_paths": "edited only by an edit that says why", "max_files_changed": "files one item may change",
           "version_bump": "the largest version bump", "side_effects": "the side-effects it may run"}


def describe(tccm: TCCM) -> dict[str, Any]:
    policy = tccm.policy
    flow_effects = sorted({s.effect for s in tccm.flow.states.values() if s.effect}) if tccm.flow else []
    if policy is None:
        return {"task_class": tccm.task_class, "policy": False, "limits": {}, "relax": {}, "widened": [],
                "note": "no policy: a run may change any file and run any side-effect it asks for",
                "allowed_side_effects": list(SIDE_EFFECTS), "blocked_side_effects": [],
                "flow_side_effects": flow_effects}
    limits = {name: {"value": policy.value(name), "from": policy.origin.get(name), "meaning": MEANING[name]}
              for name in LIMITS if policy.value(name) is not None}
    allowed = policy.limits.side_effects
    return {"task_class": tccm.task_class, "policy": True, "note": policy.note, "limits": limits,
            "relax": {name: lifted.model_dump(exclude_none=True) for name, lifted in sorted(policy.relax.items())},
            "widened": list(policy.widened),
            "allowed_side_effects": list(allowed if allowed is not None else SIDE_EFFECTS),
            "blocked_side_effects": [s for s in SIDE_EFFECTS if allowed is not None and s not in allowed],
            "flow_side_effects": flow_effects}


def lines(surface: dict[str, Any]) -> list[str]:
    out = [f"{surface['task_class']}: {surface['note'] or 'decision surface'}"]
    for name, limit in surface["limits"].items():
        value = limit["value"]
        shown = ", ".join(value) if isinstance(value, list) else str(value)
        out.append(f"  policy.{name} = {shown}  ({limit['meaning']}; from {limit['from']})")
    for name, lifted in surface["relax"].items():
        out.append(f"  --input {name}=true lifts: " + ", ".join(f"{k} → {v}" for k, v in lifted.items()))
    out += [f"  widened on purpose: {w}" for w in surface["widened"]]
    out.append(f"  side-effects allowed: {', '.join(surface['allowed_side_effects']) or 'none'}; refused: "
               f"{', '.join(surface['blocked_side_effects']) or 'none'}")
    if surface["flow_side_effects"]:
        out.append(f"  its flow runs: {', '.join(surface['flow_side_effects'])}")
    return out
