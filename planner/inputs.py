"""Task inputs given as NAME=VALUE pairs: one parser for the CLI's `--input` and the UI's preview form, and
the check against what a task class accepts."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from planner.errors import PlannerError

if TYPE_CHECKING:
    from planner.tccm.model import TCCM


def parse_pairs(pairs: Iterable[str], label: str = "input") -> dict[str, str]:
    """NAME=VALUE pairs as a mapping; a ValueError names the pair (as `label`) that is not one, or a repeat."""
    inputs: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not name or not name.replace("_", "a").isalnum():
            raise ValueError(f"{label} {pair.strip()!r}: expected NAME=VALUE")
        if name in inputs:
            raise ValueError(f"{label} {name!r} given twice")
        inputs[name] = value.strip()
    return inputs


def check_inputs(tccm: TCCM, given: Mapping[str, str]) -> None:
    """Refuse an input the task class does not accept (naming the nearest one it does), a value outside
    an input's declared values, and a missing required input: never ignore what the user typed."""
    from planner.tccm.model import BOOLEAN_VALUES  # here: parse_pairs serves the CLI before pydantic is loaded

    accepted = tccm.accepted_inputs()
    known = ", ".join(sorted(accepted)) or "none"
    for name, value in given.items():
        spec = accepted.get(name)
        if spec is None:
            import difflib  # only for the hint: a gather imports this module and never gets here

            near = difflib.get_close_matches(name, list(accepted), n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise PlannerError(f"task class {tccm.task_class} does not accept input {name!r}{hint}; "
                               f"it accepts: {known}")
        _check_shape(tccm.task_class, name, str(value), spec.multiline, spec.pattern)
        allowed = BOOLEAN_VALUES if spec.kind == "boolean" else spec.values
        if allowed is not None and str(value).strip().lower() not in {v.lower() for v in allowed}:
            raise PlannerError(f"input {name}={value!r} is not one of {', '.join(allowed)} "
                               f"(task class {tccm.task_class})")
    missing = sorted(name for name, spec in accepted.items() if spec.required and not given.get(name))
    if missing:
        raise PlannerError(f"task class {tccm.task_class} needs input {missing[0]}=VALUE "
                           f"({accepted[missing[0]].description})")


_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")  # what str.splitlines splits on


def _check_shape(task_class: str, name: str, value: str, multiline: bool, pattern: str | None) -> None:
    """A value is one line unless its input says `multiline: true` (a newline in a version substituted into a
    Dockerfile would be a new instruction), and matches the input's `pattern` as a whole when it has one."""
    if not multiline and any(c in _LINE_BREAKS for c in value):
        raise PlannerError(f"input {name} must be a single line (task class {task_class} does not declare it "
                           f"multiline); got {value!r}")
    if pattern is not None:
        import re  # here: a gather imports this module and never checks inputs

        if re.fullmatch(pattern, value) is None:
            raise PlannerError(f"input {name}={value!r} does not match the pattern {pattern} "
                               f"(task class {task_class})")


def check_sources(joined: str | None, label: str = "advisory source") -> None:
    """Each advisory source (os.pathsep-joined) must exist: a misspelled path would otherwise mean "no
    vulnerabilities" without a word."""
    for part in (joined or "").split(os.pathsep):
        if part.strip() and not Path(part.strip()).expanduser().exists():
            raise PlannerError(f"{label} {part.strip()} does not exist (--advisories or PLANNER_ADVISORIES)")
