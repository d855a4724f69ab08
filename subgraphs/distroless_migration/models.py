"""The result of migrating one Dockerfile: new text and every decision, with file and line."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StageChange(_Model):
    index: int
    name: str | None = None  # the stage name after migration (a restructured final stage's builder gets one)
    line: int  # the FROM line (in the new text for an added stage)
    old_image: str | None = None  # the FROM image word as written; None for an added stage
    new_image: str  # the FROM image word now (unchanged when nothing was mapped)
    notes: list[str] = Field(default_factory=list)  # digest dropped, ARG default mapped, tag without version, …
    dev_variant: bool = False
    user_root_added: bool = False
    added: bool = False  # the shell-free runtime stage added after a restructured final stage

    @property
    def note(self) -> str:
        return "; ".join(self.notes)


class PackageChange(_Model):
    manager: str
    old: str
    new: list[str] = Field(default_factory=list)  # Wolfi names; [] when not needed (or provided by the image)
    line: int
    note: str = ""


class UnmappedPackage(_Model):
    """A package with no known Wolfi name (or a variable list): kept as written, with a TODO comment, and a
    blocker of the item unless the user asked to keep what could not be converted."""

    name: str
    manager: str
    line: int
    reason: str


class ItemBlocker(_Model):
    """Something the migration could not convert (never dropped: kept as written under a `# TODO(planner):`
    comment). The work item is blocked on it unless the `keep_unconverted` option is set.

    Kinds: unmapped-package, dynamic-package-list, unconverted-command, not-rewritten; check-failed for a
    build check the written file fails (verify.py), which blocks whatever keep_unconverted says."""

    kind: str
    file: str
    line: int
    message: str
    fix: str

    def todo(self) -> str:
        """The comment put above the instruction (one line)."""
        return " ".join(f"# TODO(planner): {self.message}. Fix: {self.fix}".split())


class EvidenceRef(_Model):
    file: str
    line: int
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.kind} {self.detail}"


class Blocker(_Model):
    """Why the final stage keeps a shell (a -dev image), and what change would remove the need. Not a blocker
    of the work item: a final stage kept on -dev is a correct migration."""

    file: str
    line: int
    what: str
    how: str


class RuntimeDecision(_Model):
    stage: int | None = None  # the final stage (original index)
    image: str | None = None  # the final image now
    shell_free: bool = False
    restructured: bool = False  # split into a -dev builder and an added shell-free stage
    evidence: list[EvidenceRef] = Field(default_factory=list)
    blockers: list[Blocker] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class DockerfileMigration(_Model):
    path: str
    new_text: str
    changed: bool
    stages: list[StageChange] = Field(default_factory=list)
    packages: list[PackageChange] = Field(default_factory=list)
    unmapped: list[UnmappedPackage] = Field(default_factory=list)
    runtime: RuntimeDecision = Field(default_factory=RuntimeDecision)
    notes: list[str] = Field(default_factory=list)  # dropped steps, Debian-specific commands, parse problems
    blockers: list[ItemBlocker] = Field(default_factory=list)  # what could not be converted, in line order
    keep_unconverted: bool = False  # the user accepted the unconverted commands (kept as written, with TODOs)
    checks: list[ItemBlocker] = Field(default_factory=list)  # build checks the written file fails (verify.py)

    @property
    def blocked(self) -> bool:
        """The work item cannot succeed: the file fails a build check, or something was not converted and the
        user did not accept that."""
        return bool(self.checks) or (bool(self.blockers) and not self.keep_unconverted)
