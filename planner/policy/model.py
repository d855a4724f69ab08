"""The `policy:` of a TCCM: path globs, file kinds, a file count, version bumps, side-effects and
whether side-effects may use the network.

A field left out places no limit (a class with no policy at all can change anything, as before
policies existed) — except `network`, which a policy leaves off unless it says `network: true`:
reaching a package index is the one thing a surface should have to grant explicitly. `relax` names
run inputs that lift a limit when the user passes NAME=true, and `widens` names the fields a child
deliberately widens over its parent (see inherit.py).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from repocontext.globs import check_globs

Bump = Literal["patch", "minor", "major"]
BUMP_ORDER: dict[str, int] = {"patch": 0, "minor": 1, "major": 2}
FileKind = Literal["manifest", "lockfile", "dockerfile", "compose", "kubernetes", "ci", "test", "docs", "source",
                   "config", "other"]
SideEffect = Literal["apply", "verify", "regenerate", "regather", "command"]
# command: a `command:` recipe runs a program (in a throwaway copy of the repository).
SIDE_EFFECTS: tuple[str, ...] = ("apply", "verify", "regenerate", "regather", "command")
# Side-effects that need the network, so run only under `network: true`:
# - regenerate: lockfile tools (npm, yarn, pnpm, uv, poetry, pipenv, pip-compile) resolve against the
#   package index, even in their lockfile-only modes.
# Not the others: apply works in memory; regather runs local probes (advisories come from files the
# operator names); verify runs the repository's own test command against what is installed, and
# fetches nothing itself (a suite that reaches the network does so on its own, as it does in CI).
NEEDS_NETWORK: frozenset[str] = frozenset({"regenerate"})
# The limits, in the order a surface lists them; each is a rule a refusal names as `policy.<field>`.
LIMITS: tuple[str, ...] = ("paths", "file_kinds", "reasoned_paths", "max_files_changed", "version_bump",
                           "side_effects", "network")
Widenable = Literal["paths", "file_kinds", "reasoned_paths", "max_files_changed", "version_bump", "side_effects",
                    "network"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Limits(_Strict):
    """The limits themselves (what `relax` may lift, too)."""

    paths: list[str] | None = Field(default=None, description="globs of the files a run may edit")
    file_kinds: list[FileKind] | None = Field(default=None, description="kinds of file a run may edit")
    reasoned_paths: list[str] | None = Field(
        default=None, description="globs of files an edit may touch only when it says why (its `reason`)")
    max_files_changed: int | None = Field(default=None, gt=0, le=100_000, description="files one item may change")
    version_bump: Bump | None = Field(default=None, description="the largest version bump a dependency edit makes")
    side_effects: list[SideEffect] | None = Field(default=None, description="side-effect steps a run may take")
    network: bool | None = Field(
        default=None, description="whether side-effects that need the network (regenerate, a command: recipe) may "
                                   "run; off unless true")

    @field_validator("paths", "reasoned_paths")
    @classmethod
    def _inside_repo(cls, value: list[str] | None) -> list[str] | None:
        check_globs(value)
        return value


class PolicyDocument(Limits):
    """What a TCCM file says under `policy:` (before `extends` is applied)."""

    note: str | None = Field(default=None, max_length=2000, description="why the surface is what it is")
    relax: dict[str, Limits] | None = Field(
        default=None, description="run inputs that lift limits when passed as NAME=true, e.g. allow_major")
    widens: list[Widenable] | None = Field(
        default=None, description="fields this class deliberately widens over its parent (else a validation error)")


class Policy(_Strict):
    """A resolved policy: every limit with the task class that set it."""

    limits: Limits = Limits()
    origin: dict[str, str] = Field(default_factory=dict)  # field → the task class whose file set it
    widened: tuple[str, ...] = ()  # fields a class widened over its parent, explicitly
    relax: dict[str, Limits] = Field(default_factory=dict)
    note: str | None = None

    def value(self, name: str) -> object:
        return getattr(self.limits, name)

    @property
    def network(self) -> bool:
        return self.limits.network is True

    def rule(self, name: str) -> str:
        """`policy.<field> (from <task class>)`: how a refusal names the rule."""
        source = self.origin.get(name)
        if source is None and name == "network":
            return "policy.network (default false)"  # the one limit in force without being written
        return f"policy.{name}" + (f" (from {source})" if source else "")


class Violation(BaseModel):
    """An edit or step a policy refuses: the rule, where, why, and how to get past it."""

    model_config = ConfigDict(extra="forbid")

    rule: str  # policy.<field>
    message: str
    file: str | None = None
    fix: str | None = None
