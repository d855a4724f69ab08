"""The gate in the supervisor's join: an item whose edits leave the surface is blocked, naming the rule.

Blocked (exit 8), not failed: nothing went wrong, the task class's surface says no, and each blocker says
how to allow it (e.g. `--input allow_major=true` where the only fix crosses a major version).

It runs before the items' edits are merged into the patch, so a refused edit is never reported
or applied; each refusal is also a stage record (stage `policy`) in the run's provenance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from planner.chain.work import Blocker, ItemResult
from planner.patch.plan import Edit, EditError, apply_edits, unified_diff
from planner.policy.enforce import check_edits
from planner.policy.model import Policy

CHECKED = frozenset({"succeeded", "needs_regeneration", "no_changes"})


def refuse(result: ItemResult, violations: list[Any]) -> None:
    """Block an item for policy violations; its edits stay out of the patch."""
    result.status = "blocked"
    result.error = "refused by policy: " + "; ".join(f"{v.rule}: {v.message}" for v in violations)
    # first: the refusal is why the item stops (a regeneration it also needed is moot until it is allowed)
    result.blockers = [*(Blocker(kind="policy", file=v.file, message=f"{v.rule}: {v.message}", fix=v.fix)
                         for v in violations), *result.blockers]
    shown = "".join(f"- `{v.rule}`: {v.message}" + (f" ({v.fix})" if v.fix else "") + "\n" for v in violations)
    result.report += f"\n**Refused by the task class's policy** (nothing of this item is in the patch):\n\n{shown}"


def _refused_diff(result: ItemResult, read: Callable[[str], str | None]) -> str:
    """The diff the policy refused, kept for a person to review (it never enters the patch)."""
    try:
        return unified_diff(apply_edits(read, [Edit.model_validate(e) for e in result.edits]))
    except EditError:
        return ""


def gate(policy: Policy | None, results: list[ItemResult], known: Mapping[str, str],
         notes: list[str], read: Callable[[str], str | None] | None = None) -> list[dict[str, Any]]:
    """Check every item that would contribute edits; returns the stage records for provenance. With `read`
    (the repository's files), a refused item keeps the diff it would have made."""
    if policy is None:
        return []
    stages: list[dict[str, Any]] = []
    for result in results:
        # A lockfile-only move (no manifest edit; the run names the lock tool's command) is the item's move too:
        # its installed → target bump is judged like an edited one.
        if result.status not in CHECKED or not (result.edits or result.status == "needs_regeneration"):
            continue
        violations = check_edits(policy, result.edits, result.item.model_dump(), known)
        if violations:
            if read is not None:
                result.refused_patch = _refused_diff(result, read)
            refuse(result, violations)
            stages.append({"item": result.item.id, "stage": "policy", "outcome": "refused",
                           "reason": "; ".join(f"{v.rule}: {v.message}" for v in violations),
                           "rules": sorted({v.rule for v in violations})})
        elif notes:  # a relaxed limit is worth a line in provenance; a plain pass is not
            stages.append({"item": result.item.id, "stage": "policy", "outcome": "allowed",
                           "reason": "every edit is inside the surface; " + "; ".join(notes)})
    return stages
