"""Pydantic models for OSV advisory records (https://ossf.github.io/osv-schema/).

Lenient on purpose: unknown fields are ignored (the schema evolves) and most
fields are optional, but what is present must have the right shape, otherwise
the record is reported as malformed by the loader.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

T = TypeVar("T")


def _none_is_empty(value: Any) -> Any:
    return [] if value is None else value


# Go-written tools (osv-scanner) emit `null` for empty lists; treat it as empty, not malformed.
def _list() -> list[Any]:
    """The empty list, as a Python function: pydantic reads a builtin factory's signature by tokenizing it."""
    return []


Many = Annotated[list[T], BeforeValidator(_none_is_empty), Field(default_factory=_list)]


class _Osv(BaseModel):
    # Numbers where strings belong (e.g. `introduced: 0` in hand-written JSON) are accepted as strings.
    # Built on first use: a gather whose packages no advisory names parses none (~10 ms of its imports).
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True, defer_build=True)


class Package(_Osv):
    ecosystem: str = ""
    name: str = ""
    purl: str | None = None


class Event(_Osv):
    """One timeline event; exactly one of the four fields is meant to be set."""

    introduced: str | None = None
    fixed: str | None = None
    last_affected: str | None = None
    limit: str | None = None

    @property
    def kind(self) -> str | None:
        for name in ("introduced", "fixed", "last_affected", "limit"):
            if getattr(self, name) is not None:
                return name
        return None

    @property
    def value(self) -> str | None:
        kind = self.kind
        return getattr(self, kind) if kind else None


class Range(_Osv):
    type: str = ""
    repo: str | None = None
    events: Many[Event]
    database_specific: dict[str, Any] | None = None


class Severity(_Osv):
    type: str = ""
    score: str = ""


class Affected(_Osv):
    package: Package | None = None
    severity: Many[Severity]
    ranges: Many[Range]
    versions: Many[str]
    ecosystem_specific: dict[str, Any] | None = None
    database_specific: dict[str, Any] | None = None


class Reference(_Osv):
    type: str = ""
    url: str = ""


class Advisory(_Osv):
    id: str = Field(min_length=1)
    aliases: Many[str]
    related: Many[str]
    summary: str | None = None
    details: str | None = None
    modified: str | None = None
    published: str | None = None
    withdrawn: str | None = None
    affected: Many[Affected]
    severity: Many[Severity]
    references: Many[Reference]
    database_specific: dict[str, Any] | None = None

    @property
    def ids(self) -> list[str]:
        """The id followed by its aliases: every name this advisory is known by."""
        return [self.id, *self.aliases]


class LoadIssue(BaseModel):
    """A source that could not be read or a record that is malformed; never fatal."""

    source: str  # file path, or "archive.zip!member.json"
    reason: str


def build_models() -> None:
    """Build the advisory models' schemas now (they are deferred): the daemon does before it forks, so the
    commands it runs pay for none of them."""
    for model in (Package, Event, Range, Severity, Affected, Reference, Advisory, LoadIssue):
        model.model_rebuild()
