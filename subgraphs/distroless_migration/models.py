"""What a migration takes and gives: its options and the user mapping file (in), the result of migrating one
Dockerfile with every decision at file and line (`DockerfileMigration`, out), and that result as the item's
markdown report (`render`, `summary`).

The user mapping file
The mapping file is YAML with up to three tables, each optional:

    images:                 # source image → Chainguard image (added to or overriding the built-in table)
      python: python        #   a Chainguard image name: tag still cut from the source tag
      mycorp/base: wolfi-base:latest   #   name:tag: that tag, always
      ghcr.io/acme/jre: registry.acme.dev/hardened/jre   # a full repository (contains "/"): used as is
    packages:               # Debian/RPM/Alpine package → Wolfi package(s); [] = not needed on Wolfi
      libfoo-dev: foo-dev
      libbar: [bar, bar-utils]
    build_only:             # Wolfi packages needed only to build, never at runtime
      - protobuf-dev

Without `--input mapping=FILE`, a `distroless-mapping.yaml` in a PLANNER_TASK_CLASS_PATH directory (the
first found) is the mapping file: a fleet keeps its image and package mappings beside its task classes.
The user's images: come before the shipped mappings (`data/extra-images.yaml`) and the catalog aliases.

Run inputs (`--input NAME=VALUE`): registry, org, mapping=FILE, and keep_unconverted=true|false
(default false: a Dockerfile with an unmapped package or an unconvertible command is a blocked work item;
true: those are kept as written under `# TODO(planner):` comments and the item succeeds, listing them).

Image keys match the repository as written (`mycorp/base`), its normalised form
(`docker.io/mycorp/base`) or, for official images, the short name (`python`).
Errors are one line: `file:line: field: cause`.

The report: a DockerfileMigration as markdown: the path as heading and a one-line summary (so a run over many
Dockerfiles reads at a glance), then blockers, stages, packages, the final-stage decision and notes.

Wording follows the item's status: an unconverted package or command is a **blocker** of a blocked item,
and "kept as written (TODO)" when the user set keep_unconverted (never "unmapped" next to a success).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from repocontext import bounded

_IMAGE_VALUE = re.compile(r"[a-z0-9][a-z0-9._/:-]*\Z")
_PACKAGE = re.compile(r"[A-Za-z0-9@][A-Za-z0-9._+@-]*\Z")
FIELDS = ("images", "packages", "build_only")


class MappingError(ValueError):
    """A user mapping file that cannot be used; the message is one line naming file, line and field."""


class UserMapping(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    images: dict[str, str] = Field(default_factory=dict)
    packages: dict[str, list[str]] = Field(default_factory=dict)
    build_only: list[str] = Field(default_factory=list)
    source: str | None = None  # the file it was loaded from


class MigrationOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    registry: str = "cgr.dev"
    org: str = "chainguard"
    mapping: UserMapping = Field(default_factory=UserMapping)
    # What cannot be converted (unmapped packages, Debian-only commands, remote installers) is always kept as
    # written under a `# TODO(planner):` comment; False: the work item is blocked on it (its edits stay out of the
    # patch); True: the user accepts the kept commands and the item succeeds, reporting them as notes.
    keep_unconverted: bool = False

    def repository(self, image: str) -> str:
        """The full repository of a Chainguard image name (a name with "/" is already one)."""
        return image if "/" in image else f"{self.registry}/{self.org}/{image}"


def _fail(path: str, node: Node | None, field: str, cause: str) -> MappingError:
    line = f":{node.start_mark.line + 1}" if node is not None else ""
    return MappingError(f"{path}{line}: {field}: {cause}")


def _mapping_items(path: str, node: Node, field: str) -> list[tuple[str, Node, Node]]:
    if not isinstance(node, MappingNode):
        raise _fail(path, node, field, "expected a mapping")
    seen: set[str] = set()
    items: list[tuple[str, Node, Node]] = []
    for key, value in node.value:
        if not isinstance(key, ScalarNode) or not key.value:
            raise _fail(path, key, field, "keys must be non-empty strings")
        if key.value in seen:
            raise _fail(path, key, f"{field}.{key.value}", "duplicate key")
        seen.add(key.value)
        items.append((key.value, key, value))
    return items


def _scalar(path: str, node: Node, field: str, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(node, ScalarNode) or node.tag != "tag:yaml.org,2002:str" or not pattern.match(node.value):
        shown = node.value if isinstance(node, ScalarNode) else type(node).__name__.replace("Node", "").lower()
        raise _fail(path, node, field, f"expected {what}, got {shown!r}")
    return node.value


def _names(path: str, node: Node, field: str) -> list[str]:
    if isinstance(node, SequenceNode):
        return [_scalar(path, item, f"{field}[{i}]", _PACKAGE, "a package name") for i, item in enumerate(node.value)]
    return [_scalar(path, node, field, _PACKAGE, "a package name or a list of names")]


def parse_mapping(text: str, path: str) -> UserMapping:
    try:
        root = bounded.compose(text, loader_class=yaml.SafeLoader)
    except bounded.LimitExceeded as exc:
        line = f":{exc.line}" if exc.line is not None else ""
        raise MappingError(f"{path}{line}: {bounded.describe(exc)}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise MappingError(f"{path}{line}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if root is None:
        return UserMapping(source=path)
    tables: dict[str, object] = {}
    for name, key, value in _mapping_items(path, root, "mapping"):
        if name not in FIELDS:
            raise _fail(path, key, name, f"unknown field (allowed: {', '.join(FIELDS)})")
        if name == "build_only":
            tables[name] = _names(path, value, name)
        elif name == "images":
            tables[name] = {k: _scalar(path, v, f"images.{k}", _IMAGE_VALUE, "an image name")
                            for k, _key, v in _mapping_items(path, value, name)}
        else:
            tables[name] = {k: _names(path, v, f"packages.{k}") for k, _key, v in _mapping_items(path, value, name)}
    return UserMapping.model_validate({"source": path, **tables})


def load_mapping(path: str | Path) -> UserMapping:
    """Read a user mapping file; MappingError (one line: file, line, field, cause) when it is unusable."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise MappingError(f"{name}: cannot read mapping file: {cause}") from None
    return parse_mapping(text, name)


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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _images(m: DockerfileMigration) -> list[dict[str, object]]:
    return [{"line": s.line, "from": s.old_image, "to": s.new_image, "added": s.added} for s in m.stages
            if s.added or (s.old_image is not None and s.old_image != s.new_image)]


def _final(m: DockerfileMigration) -> str:
    r = m.runtime
    if r.image is None:
        return "final stage not migrated" if not r.shell_free else "final stage unchanged (no shell already)"
    if r.shell_free:
        return "final stage shell-free" + (" (restructured)" if r.restructured else "")
    reasons = len(r.blockers)
    return f"final stage kept -dev ({reasons} reason{'s' * (reasons != 1)})" if reasons else "final stage keeps a shell"


def summary(m: DockerfileMigration) -> dict[str, object]:
    """The facts a reviewer (or the JSON) needs first, and the same as one line of text."""
    images = _images(m)
    shown = ", ".join(f"`{i['from']}` → `{i['to']}`" if not i["added"] else f"+ runtime `{i['to']}`" for i in images)
    blockers, kept = len(m.blockers), m.keep_unconverted and bool(m.blockers)
    what = f"{blockers} unconverted, kept as TODO" if kept else f"{blockers} blocker{'s' * (blockers != 1)}"
    unmapped = f"{len(m.unmapped)} kept as written" if kept else f"{len(m.unmapped)} unmapped"
    parts = [shown or "no image changes", f"packages {len(m.packages)} mapped, {unmapped}", _final(m), what]
    if m.checks:
        parts.append(f"{len(m.checks)} build check{'s' * (len(m.checks) != 1)} failed")
    line = "; ".join(parts)
    return {"path": m.path, "images": images, "packages_mapped": len(m.packages), "packages_unmapped": len(m.unmapped),
            "final_image": m.runtime.image, "shell_free": m.runtime.shell_free, "restructured": m.runtime.restructured,
            "kept_dev_reasons": len(m.runtime.blockers), "blockers": blockers, "checks_failed": len(m.checks),
            "line": line}


def _status(m: DockerfileMigration, status: str | None) -> str:
    if status is not None:
        return status
    return "blocked" if m.blocked else "changed" if m.changed else "unchanged"


def _blockers(m: DockerfileMigration) -> list[str]:
    if not m.blockers:
        return []
    title = ("Kept unconverted (keep_unconverted=true: each is kept as written under a `# TODO(planner):` comment)"
             if m.keep_unconverted else "Blockers (each kept as written under a `# TODO(planner):` comment; this "
             "Dockerfile's edits stay out of the patch until they are resolved or keep_unconverted=true is given)")
    lines = ["", f"### {title}", ""]
    lines += [f"- `{b.file}:{b.line}` [{b.kind}] {b.message}. **Fix:** {b.fix}." for b in m.blockers]
    return lines


def _checks(m: DockerfileMigration) -> list[str]:
    if not m.checks:
        return []
    lines = ["", "### Build checks failed (the written file would not build: the item is blocked)", ""]
    return lines + [f"- `{b.file}:{b.line}` {b.message}. **Fix:** {b.fix}." for b in m.checks]


def _stages(m: DockerfileMigration) -> list[str]:
    lines = ["", "| # | stage | line | from | to | -dev | USER root | notes |", "|---|---|---|---|---|---|---|---|"]
    for s in m.stages:
        old = f"`{_cell(s.old_image)}`" if s.old_image is not None else "(added)"
        lines.append(f"| {s.index} | {s.name or ''} | {s.line} | {old} | `{_cell(s.new_image)}` | "
                     f"{'yes' if s.dev_variant else ''} | {'added' if s.user_root_added else ''} | {_cell(s.note)} |")
    return lines


def _packages(m: DockerfileMigration) -> list[str]:
    if not m.packages and not m.unmapped:
        return []
    lines = ["", "### Packages", "", "| line | manager | package | Wolfi | note |", "|---|---|---|---|---|"]
    for p in m.packages:
        new = ", ".join(f"`{n}`" for n in p.new) or "—"
        lines.append(f"| {p.line} | {p.manager} | `{p.old}` | {new} | {_cell(p.note)} |")
    label = "kept as written (TODO)" if m.keep_unconverted else "**unmapped: blocker**"
    for u in m.unmapped:
        lines.append(f"| {u.line} | {u.manager} | `{_cell(u.name)}` | {label} | {_cell(u.reason)} |")
    return lines


def _runtime(m: DockerfileMigration) -> list[str]:
    r = m.runtime
    verdict = "shell-free" if r.shell_free else "keeps a shell"
    how = " (restructured: -dev builder + shell-free runtime stage)" if r.restructured else ""
    lines = ["", "### Final stage", "", f"`{r.image or 'unchanged'}`: **{verdict}**{how}."]
    if r.blockers:
        lines += ["", "Why it keeps a shell (-dev):", ""]
        lines += [f"- `{b.file}:{b.line}` {b.what}. **Fix:** {b.how}." for b in r.blockers]
    if r.evidence:
        lines += ["", "Shell evidence:", ""] + [f"- `{e.file}:{e.line}` {e.kind}: {e.detail}" for e in r.evidence]
    if r.notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in r.notes]
    return lines


def render(m: DockerfileMigration, status: str | None = None) -> str:
    head = [f"## `{m.path}`", "", f"**{_status(m, status)}** · {summary(m)['line']}"]
    lines = [*head, *_checks(m), *_blockers(m), *_stages(m), *_packages(m), *_runtime(m)]
    if m.notes:
        lines += ["", "### Notes", ""] + [f"- {n}" for n in m.notes]
    return "\n".join(lines) + "\n"
