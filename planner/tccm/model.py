"""The TCCM schema: one task class's context manifest, validated strictly."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from planner.flow.model import Flow, FlowDocument
from planner.policy.model import Policy, PolicyDocument
from planner.tccm.entry import Entry, input_refs
from planner.tccm.entry import Strict as _Strict
from planner.tccm.recipes import Recipe, WorkItems
from repocontext.globs import check_globs

SLUG = r"^[a-z0-9][a-z0-9-]*[a-z0-9]$|^[a-z0-9]$"
Slug = Annotated[str, StringConstraints(pattern=SLUG, max_length=64)]
BANDS: tuple[str, ...] = ("must_read", "should_read", "may_read")
Band = Literal["must_read", "should_read", "may_read"]

_FLOW_INPUT = re.compile(r"\binputs\.([A-Za-z_][A-Za-z0-9_]*)")


class Budget(_Strict):
    max_files: int = Field(gt=0, le=100_000)
    max_tokens: int = Field(gt=0, le=2_000_000)
    per_file_max_tokens: int = Field(gt=0, le=2_000_000)

    @model_validator(mode="after")
    def _consistent(self) -> Budget:
        if self.per_file_max_tokens > self.max_tokens:
            raise ValueError(
                f"per_file_max_tokens ({self.per_file_max_tokens}) exceeds max_tokens ({self.max_tokens})"
            )
        return self


class BudgetOverride(_Strict):
    """A child TCCM may override any budget field."""

    max_files: int | None = Field(default=None, gt=0, le=100_000)
    max_tokens: int | None = Field(default=None, gt=0, le=2_000_000)
    per_file_max_tokens: int | None = Field(default=None, gt=0, le=2_000_000)


InputName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64)]


BOOLEAN_VALUES = ("true", "false", "yes", "no", "1", "0", "on", "off")


class InputSpec(_Strict):
    """One run input a task class accepts (`--input NAME=VALUE`)."""

    description: str = Field(max_length=1000)
    kind: Literal["text", "boolean"] = Field(default="text", description="boolean: true/false (yes/no, 1/0, on/off)")
    values: list[str] | None = Field(default=None, description="the only values accepted (e.g. [\"true\", \"false\"])")
    required: bool = Field(default=False, description="a run without it is refused")
    multiline: bool = Field(default=False, description=(
        "the value may span lines; otherwise a line break in it is refused before the run (a value is "
        "substituted into files, and a newline there would add lines the task class never meant)"))
    pattern: str | None = Field(default=None, max_length=500, description=(
        "a regular expression the whole value must match (e.g. '3\\.[0-9]+(\\.[0-9]+)?')"))

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"pattern {value!r} is not a regular expression: {exc}") from None
        return value


class ReportColumn(_Strict):
    """One column of a fleet report: a work item's value by dotted path (`data.package`, `id`, `status`)."""

    title: str = Field(max_length=40)
    value: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")]


class ReportSpec(_Strict):
    """How this class's outcomes read in a portfolio report: the columns that mean something for it."""

    columns: list[ReportColumn] = Field(default_factory=list, max_length=12)


def _input_specs(value: object) -> object:
    """`NAME: description` is short for `NAME: {description: ...}`."""
    if isinstance(value, dict):
        return {k: {"description": v} if isinstance(v, str) else v for k, v in value.items()}
    return value


class TCCMDocument(_Strict):
    """Exactly what one YAML file says (before `extends` is applied)."""

    task_class: Slug
    version: str | int = Field(union_mode="left_to_right")
    description: str | None = Field(default=None, max_length=4000)
    extends: Slug | None = None
    subgraph: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")] | None = None
    worker: str | None = Field(default=None, max_length=20_000)
    must_read: list[Entry] | None = None
    should_read: list[Entry] | None = None
    may_read: list[Entry] | None = None
    bootstrap_globs: list[str] | None = None
    budget: BudgetOverride | None = Field(default=None, description=(
        "max_files, max_tokens, per_file_max_tokens of the Context Bundle; required, except in a class with "
        "recipes and no extends, which defaults to 50 files, 50000 tokens, 8000 per file"))
    inputs: dict[InputName, InputSpec] | None = Field(default=None, description=(
        "the run inputs this class accepts, NAME: description or NAME: {description, kind, values, required, "
        "multiline, pattern}; values are single-line unless multiline: true; a child "
        "adds to (or redefines) its parent's. Inputs named in ${inputs.NAME} and policy.relax are accepted too; "
        "any other --input is refused"))
    policy: PolicyDocument | None = Field(default=None, description="the decision surface: what a run may change")
    flow: FlowDocument | None = Field(
        default=None, description="typed states run per work item instead of one LLM call; a child's states "
                                  "override or add to its parent's by name")
    report: ReportSpec | None = Field(default=None, description=(
        "columns of the fleet (portfolio) report, each a work item's value by dotted path, e.g. "
        "{title: package, value: data.package}; a child's replace its parent's"))
    recipes: list[Recipe] | None = Field(default=None, description=(
        "deterministic steps tried, in order, before solved examples and the LLM: each with an id (name@version), "
        "files (globs) or files_of (a RepoContext key), and one of ast-grep (rules in ast-grep's format), replace "
        "(pattern/with) or command (run; needs policy.side_effects: [command]). Every recipe runs on the result of "
        "the ones before it; a child's recipe with the same name replaces its parent's in place"))
    work_items: WorkItems | None = Field(default=None, description=(
        "how the class fans out: {per: file | match | key, of: GLOBS or KEY}; an empty source ends the run "
        "not_applicable"))

    @field_validator("inputs", mode="before")
    @classmethod
    def _short_inputs(cls, value: object) -> object:
        return _input_specs(value)

    @field_validator("version")
    @classmethod
    def _version_text(cls, value: str | int) -> str:
        text = str(value)
        if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z.+-]*", text):
            raise ValueError(f"version {text!r} must be like 1 or 1.2.0")
        return text

    @field_validator("bootstrap_globs")
    @classmethod
    def _bootstrap_inside_repo(cls, value: list[str] | None) -> list[str] | None:
        check_globs(value)
        return value


class TCCM(_Strict):
    """A resolved task class (after `extends`), ready for the bundle builder."""

    task_class: str
    version: str
    description: str
    extends: str | None = None
    subgraph: str | None = None
    worker: str | None = None
    must_read: tuple[Entry, ...] = ()
    should_read: tuple[Entry, ...] = ()
    may_read: tuple[Entry, ...] = ()
    bootstrap_globs: tuple[str, ...] = ()
    budget: Budget
    inputs: dict[str, InputSpec] = Field(default_factory=dict)  # declared, extends applied (child wins)
    report: ReportSpec = ReportSpec()  # the fleet report's columns (the child's, else the parent's)
    policy: Policy | None = None  # the decision surface, extends applied (None: unrestricted)
    flow: Flow | None = None  # the child's flow merged over the parent's, state by state
    recipes: tuple[Recipe, ...] = ()  # declared recipes, extends applied
    work_items: WorkItems | None = None
    flow_origin: dict[str, str] = Field(default_factory=dict)  # flow state → the task class that defined it
    path: str  # the file it came from
    sha256: str  # hash of that file (and, for extends, of the chain)
    chain: tuple[str, ...] = ()  # files that contributed, child first
    lineage: tuple[str, ...] = ()  # task classes of the extends chain, child first (whose subgraph runs it)

    def band(self, name: str) -> tuple[Entry, ...]:
        return getattr(self, name)

    def accepted_inputs(self) -> dict[str, InputSpec]:
        """Every input a run may pass: the declared ones, those the bands substitute and the policy's relax
        switches (a class that declares nothing still accepts what it visibly uses)."""
        found: dict[str, InputSpec] = {}
        for band in BANDS:
            for entry in self.band(band):
                for name in input_refs(entry.slice_key or ""):
                    found[name] = InputSpec(description=f"substituted in {band}: {entry.selector}")
        if self.flow is not None:  # `when: item.data.inputs.mode == strict` and the like
            for name in sorted(set(_FLOW_INPUT.findall(self.flow.model_dump_json()))):
                found.setdefault(name, InputSpec(description="read by the flow"))
        for recipe in self.recipes:  # `with: "\\g<1>${inputs.version}"` and the like
            for name in sorted(set(input_refs(recipe.model_dump_json()))):
                found.setdefault(name, InputSpec(description=f"substituted in recipe {recipe.id}"))
        if self.work_items:
            for name in self.work_items.item_inputs:
                found.setdefault(name, InputSpec(description=f"set for each work item ({self.work_items.per})"))
        for name in (self.policy.relax if self.policy else {}):
            found[name] = InputSpec(description=f"lifts policy limits ({name}=true)", kind="boolean")
        return {**found, **self.inputs}
