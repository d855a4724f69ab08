"""The `recipes:` and `work_items:` of a TCCM: deterministic steps declared in YAML.

A recipe has an `id` (name@version, recorded in provenance and the report), the files it applies to
(`files:` globs or `files_of:` a RepoContext key) and exactly one kind:

- `ast-grep:` one rule or a list, in ast-grep's own rule format, passed to ast-grep unchanged;
- `replace:` a multiline regular expression and its replacement (`\\g<name>` groups);
- `command:` an argv run in a throwaway copy of the repository; the diff it leaves is the edit.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from planner.tccm.entry import Entry
from repocontext.globs import GlobError, check_glob

_ID = re.compile(r"[a-z0-9][a-z0-9._-]*@[0-9A-Za-z][0-9A-Za-z.+-]*")
# The top-level keys of an ast-grep rule file (https://ast-grep.github.io/reference/yaml.html).
AST_GREP_KEYS = frozenset({"id", "language", "rule", "constraints", "utils", "transform", "fix", "rewriters",
                           "message", "note", "severity", "labels", "files", "ignores", "url", "metadata"})
_FLAGS = {"IGNORECASE": re.IGNORECASE, "DOTALL": re.DOTALL, "VERBOSE": re.VERBOSE}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Replace(_Strict):
    """A text replacement: Python `re` syntax, always MULTILINE (`^`/`$` match at each line)."""

    pattern: str = Field(description="a regular expression (Python syntax, MULTILINE); ${inputs.NAME} is substituted")
    with_: str = Field(alias="with", description="the replacement; \\g<name> / \\g<1> insert groups; "
                                                 "${inputs.NAME} is substituted")
    count: int = Field(default=0, ge=0, description="at most this many replacements per file (0: all)")
    flags: list[Literal["IGNORECASE", "DOTALL", "VERBOSE"]] = Field(default_factory=list,
                                                                    description="extra re flags")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _compiles(self) -> Replace:
        try:
            re.compile(self.pattern, self.re_flags)
        except re.error as exc:
            raise ValueError(f"pattern does not compile: {exc}") from None
        return self

    @property
    def re_flags(self) -> int:
        flags = re.MULTILINE
        for name in self.flags:
            flags |= _FLAGS[name]
        return flags


class Command(_Strict):
    """A command run in a throwaway copy of the repository; needs policy.side_effects to include `command`."""

    run: list[str] = Field(min_length=1, description="the argv, e.g. [ruff, check, --select, UP, --fix, .]; "
                                                     "not run through a shell")
    timeout: int = Field(default=300, gt=0, le=3600, description="seconds before the command is killed")


def _check_rule(rule: Any, where: str) -> None:
    if not isinstance(rule, dict):
        raise ValueError(f"{where}: an ast-grep rule is a mapping (id, language, rule, fix, ...)")


def field_problem(rule: dict[str, Any]) -> str | None:
    """An unknown or missing top-level field of an ast-grep rule (checked per rule, so that validation lists
    every bad rule of a class at its own line, not only the first)."""
    unknown = sorted(set(rule) - AST_GREP_KEYS)
    if unknown:
        return f"unknown ast-grep rule field(s) {', '.join(map(str, unknown))}"
    missing = [k for k in ("id", "language", "rule") if k not in rule]
    if missing:
        return f"an ast-grep rule needs {', '.join(missing)}"
    return None


class Recipe(_Strict):
    """One declarative recipe."""

    id: str = Field(max_length=128, description="name@version (e.g. yaml-safe-load@1), recorded in provenance "
                                                "and the report")
    description: str | None = Field(default=None, max_length=2000)
    files: list[str] | None = Field(default=None, description="globs of the files the recipe applies to (or, for "
                                                              "command:, may change)")
    files_of: str | None = Field(default=None, description="a RepoContext key whose records name the files (as in "
                                                           "bands)")
    ast_grep: list[dict[str, Any]] | None = Field(
        default=None, alias="ast-grep",
        description="one ast-grep rule or a list, in ast-grep's YAML rule format unchanged (id, language, rule, "
                    "constraints, utils, transform, fix); a file's rules are applied until nothing changes")
    replace: Replace | None = None
    command: Command | None = None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.fullmatch(value):
            raise ValueError(f"recipe id {value!r} must be name@version, e.g. yaml-safe-load@1 (lowercase name)")
        return value

    @field_validator("ast_grep", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        rules = [value] if isinstance(value, dict) else value
        if isinstance(rules, list):
            if not rules:
                raise ValueError("at least one ast-grep rule")
            for i, rule in enumerate(rules):
                _check_rule(rule, f"rule {i}")
        return rules

    @field_validator("files", mode="before")
    @classmethod
    def _one_glob(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value  # `files: "**/*.py"` is a list of one

    @field_validator("files")
    @classmethod
    def _globs(cls, value: list[str] | None) -> list[str] | None:
        for glob in value or ():
            try:
                check_glob(glob)
            except GlobError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("files_of")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        if value is not None:
            Entry(files_of=value)  # the bands' own key check
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> Recipe:
        kinds = [k for k in ("ast_grep", "replace", "command") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("a recipe needs exactly one of 'ast-grep', 'replace' or 'command'")
        if (self.files is None) == (self.files_of is None):
            raise ValueError("a recipe needs exactly one of 'files' (globs) or 'files_of' (a RepoContext key)")
        return self

    @property
    def kind(self) -> str:
        return "ast-grep" if self.ast_grep is not None else ("replace" if self.replace is not None else "command")


class WorkItems(_Strict):
    """How a YAML class fans out: one work item per file, per recipe match, or per entry of a RepoContext key."""

    per: Literal["file", "match", "key"] = Field(description="file: one item per file; match: one per recipe "
                                                             "match; key: one per entry of a RepoContext key")
    of: str | list[str] | None = Field(default=None, description="globs (per file/match; default: the recipes' "
                                                                 "files) or a RepoContext key (per key)")

    @model_validator(mode="after")
    def _source(self) -> WorkItems:
        if self.per == "key" and not isinstance(self.of, str):
            raise ValueError("per: key needs `of:` a RepoContext key, e.g. dependencies.python")
        if self.per != "key" and self.of is not None:
            for glob in [self.of] if isinstance(self.of, str) else self.of:
                try:
                    check_glob(glob)
                except GlobError as exc:
                    raise ValueError(str(exc)) from None
        return self

    @property
    def item_inputs(self) -> tuple[str, ...]:
        """The inputs each item carries (and its own bundle may select with): file, or entry for per key."""
        return ("entry",) if self.per == "key" else ("file",)

    @property
    def globs(self) -> list[str] | None:
        return None if self.of is None else ([self.of] if isinstance(self.of, str) else list(self.of))
