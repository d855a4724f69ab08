"""Migration options and the user mapping file.

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
    return UserMapping(source=path, **tables)  # type: ignore[arg-type]


def load_mapping(path: str | Path) -> UserMapping:
    """Read a user mapping file; MappingError (one line: file, line, field, cause) when it is unusable."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise MappingError(f"{name}: cannot read mapping file: {cause}") from None
    return parse_mapping(text, name)
