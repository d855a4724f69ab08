"""The `flow:` of a TCCM: typed states (seed 002) with their exits.

    flow:
      start: check
      max_steps: 12                 # required when the flow has a cycle
      states:
        check:   {type: decision, transitions: [{when: "plan.exists", next: verify}], default: propose}
        propose: {type: action, instructions: "…", next: verify}
        verify:  {type: side-effect, effect: verify, next: done}
        done:    {type: annotation, note: "verified", next: end}

Linear states (recall, reflection, annotation, side-effect) have one `next`; a decision has
`transitions` and a `default`; an action has either. `end` finishes the flow. Structural checks
(targets, reachability, cycles) live in validate.py, where they get file:line. A file holds a
FlowDocument; merge.py resolves it, through `extends`, into the Flow that runs.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

STATE_TYPES: tuple[str, ...] = ("action", "decision", "recall", "reflection", "annotation", "side-effect")
LINEAR: frozenset[str] = frozenset({"recall", "reflection", "annotation", "side-effect"})
END = "end"
FLOW_EFFECTS: tuple[str, ...] = ("apply", "verify", "regenerate", "regather")  # side-effects a flow state can name
StateName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]*$", max_length=64)]
# Fields that only some state types take; anything else on a state is an error (see validate.py).
TYPE_FIELDS: dict[str, frozenset[str]] = {
    "action": frozenset({"instructions", "next", "transitions", "default"}),
    "decision": frozenset({"choose", "transitions", "default", "instructions"}),
    "recall": frozenset({"may_read", "examples", "next"}),
    "reflection": frozenset({"problem", "word_limit", "next"}),
    "annotation": frozenset({"note", "next"}),
    "side-effect": frozenset({"effect", "next"}),
}
COMMON: frozenset[str] = frozenset({"type", "description"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Transition(_Strict):
    """One exit: a deterministic condition (`when`) or, for an LLM choice, a description of when to take it."""

    when: str | None = Field(default=None, max_length=500, description="e.g. verify.failed and visits.fix < 3")
    description: str | None = Field(default=None, max_length=1000, description="for choose: llm")
    next: StateName


class FlowState(_Strict):
    type: str = Field(description="action | decision | recall | reflection | annotation | side-effect")
    description: str | None = Field(default=None, max_length=2000, description="the state's objective")
    instructions: str | None = Field(default=None, max_length=20_000, description="what the LLM is asked to do")
    next: StateName | None = None
    transitions: list[Transition] | None = None
    default: StateName | None = Field(default=None, description="a decision's exit when no transition holds")
    choose: Literal["conditions", "llm"] | None = Field(default=None, description="decision: how it picks")
    may_read: list[str] | None = Field(default=None, description="recall: entry ids, paths, keys or selectors")
    examples: int | None = Field(default=None, ge=1, le=5, description="recall: solved examples to bring in")
    problem: str | None = Field(default=None, max_length=4000, description="reflection: what to think about")
    word_limit: int | None = Field(default=None, ge=10, le=2000, description="reflection: the note's length")
    note: str | None = Field(default=None, max_length=2000, description="annotation: the progress marker")
    effect: str | None = Field(default=None, description="side-effect: apply | verify | regenerate | regather")

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in STATE_TYPES:
            raise ValueError(f"unknown state type {value!r} (known: {', '.join(STATE_TYPES)})")
        return value

    @field_validator("effect")
    @classmethod
    def _known_effect(cls, value: str | None) -> str | None:
        if value is not None and value not in FLOW_EFFECTS:
            raise ValueError(f"unknown side-effect {value!r} (a flow can run: {', '.join(FLOW_EFFECTS)})")
        return value

    def targets(self) -> list[str]:
        """Every state this one can go to, in declared order."""
        found = [t.next for t in self.transitions or ()]
        return [*found, *(x for x in (self.default, self.next) if x)]


class Flow(_Strict):
    """A resolved flow (a child's merged over its parent's, see merge.py), ready to compile."""

    description: str | None = Field(default=None, max_length=4000)
    start: StateName
    max_steps: int | None = Field(default=None, ge=1, le=200, description="states a run may visit (for loops)")
    states: dict[StateName, FlowState] = Field(min_length=1)


class FlowDocument(_Strict):
    """What one TCCM file says under `flow:`. Without `extends` it is the whole flow; in a child, its
    states override the parent's of the same name or add new ones, and what it leaves out is the
    parent's (see merge.py)."""

    description: str | None = Field(default=None, max_length=4000)
    start: StateName | None = Field(default=None, description="the first state (a child: the parent's unless set)")
    max_steps: int | None = Field(default=None, ge=1, le=200, description="states a run may visit (for loops)")
    states: dict[StateName, FlowState] = Field(
        default_factory=dict, description="states by name; in a child, a state of the parent's name replaces it")
    remove: list[StateName] | None = Field(default=None, description="a child: parent states to drop")
    replace: bool = Field(default=False, description="a child: drop the parent's flow and use this one whole")
