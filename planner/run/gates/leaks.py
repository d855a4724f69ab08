"""A patch never carries a new secret: an edit that writes a secret-looking value the file did not hold is
refused, whatever made it (a recipe's `with:` fed by an input, a solved example, an LLM).

The shown `patch.diff` is redacted and `patch.exact.diff` (0600) keeps the real values for `git apply`, so a
secret an edit *introduces* would reach the exact patch and the `--apply` commit. Values the file already
holds stay allowed: a version bump on a line next to an index URL's password must still apply exactly.
Checked in the supervisor's join (planner/run/supervisor.py) before anything is merged into the patch, and
again on the patch `--apply` commits (planner/run/apply.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from planner.chain.work import Blocker, ItemResult
from planner.patch.plan import Edit, EditError, apply_edits
from repocontext.secrets import redact_tree, secret_spans

CHECKED = frozenset({"succeeded", "needs_regeneration", "no_changes"})
FIX = "read the value from the environment or a secret store at run time; a patch never carries a new secret"


def introduced(before: str, after: str) -> list[tuple[int, str]]:
    """(line in `after`, rule) of each secret-looking value in `after` that `before` does not already hold."""
    return [(after.count("\n", 0, start) + 1, rule) for start, end, rule in secret_spans(after)
            if after[start:end] not in before]


def found_in(files: Mapping[str, tuple[str, str]]) -> dict[str, list[tuple[int, str]]]:
    """path → (line, rule) of each new secret value, for the files (path → (before, after)) that get one."""
    return {path: hits for path, (before, after) in sorted(files.items()) if (hits := introduced(before, after))}


def message(path: str, line: int, rule: str) -> str:
    """One line naming the place and the rule, never the value."""
    return f"{path}:{line}: the edit writes a value that looks like a secret ({rule}) the file did not hold"


def block(result: ItemResult, found: Mapping[str, list[tuple[int, str]]]) -> None:
    """Block the item: none of its edits enter the patch, each place is a `secret` blocker, and what the run
    keeps of its plan and edits (outcomes, checkpoints, `--json`) holds the value only as its marker."""
    places = [(path, line, rule) for path, hits in found.items() for line, rule in hits]
    result.status = "blocked"
    result.error = "refused: " + "; ".join(message(*p) for p in places)
    result.blockers = [*result.blockers, *(Blocker(kind="secret", file=path, line=line, message=message(
        path, line, rule), fix=FIX) for path, line, rule in places)]
    result.edits = redact_tree(result.edits)
    result.plan = redact_tree(result.plan)
    result.refused_patch = ""
    shown = "".join(f"- {message(*p)}\n" for p in places)
    result.report = redact_tree(result.report) + f"\n**Refused** (nothing of this item is in the patch):\n\n{shown}"


def gate(results: Iterable[ItemResult], read: Callable[[str], str | None]) -> list[dict[str, Any]]:
    """Block each item whose edits introduce a secret value; the stage records for provenance."""
    stages: list[dict[str, Any]] = []
    for result in results:
        if result.status not in CHECKED or not result.edits:
            continue
        try:
            files = apply_edits(read, [Edit.model_validate(e) for e in result.edits])
        except EditError:
            continue  # the merge fails it, naming why
        found = found_in(files)
        if found:
            block(result, found)
            stages.append({"item": result.item.id, "stage": "secrets", "outcome": "refused",
                           "reason": "; ".join(message(p, line, rule) for p, hits in found.items()
                                               for line, rule in hits)})
    return stages
