"""Image references parsed by Docker's (distribution/reference) rules.

`[registry/]path[:tag][@digest]`. The first path component is a registry when it
contains "." or ":", is "localhost", or has upper-case letters; otherwise the
registry is docker.io, and a single-component docker.io path gets "library/"
(official images). `index.docker.io` normalises to docker.io.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_REGISTRY = "docker.io"
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*\Z")
_TAG = re.compile(r"[\w][\w.-]{0,127}\Z")
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}\Z")
_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_REGISTRY = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?\Z")


@dataclass(frozen=True)
class ImageRef:
    registry: str  # as written, or docker.io when none is written
    name: str  # the path as written, without the registry
    tag: str | None
    digest: str | None
    repository: str  # normalised: docker.io/library/python

    @property
    def normalized(self) -> str:
        text = self.repository
        if self.tag or not self.digest:
            text += f":{self.tag or 'latest'}"
        return text + (f"@{self.digest}" if self.digest else "")


def parse_reference(ref: str) -> ImageRef | str:
    """The parsed reference, or a message saying why it is invalid."""
    rest, _, digest = ref.partition("@")
    if digest and not _DIGEST.match(digest):
        return f"invalid digest {digest!r}"
    tag = None
    colon, slash = rest.rfind(":"), rest.rfind("/")
    if colon > slash:
        rest, tag = rest[:colon], rest[colon + 1 :]
        if not _TAG.match(tag):
            return f"invalid tag {tag!r}"
    first, sep, remainder = rest.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
        if not _REGISTRY.match(first):
            return f"invalid registry {first!r}"
        registry, path = first, remainder
    else:
        registry, path = DEFAULT_REGISTRY, rest
    if not path or not all(_COMPONENT.match(c) for c in path.split("/")):
        return f"invalid repository name {path!r} (lower-case letters, digits and separators only)"
    if len(path) + len(registry) + 1 > 255:
        return "repository name longer than 255 characters"
    domain = DEFAULT_REGISTRY if registry in ("index.docker.io", "registry-1.docker.io") else registry
    full_path = f"library/{path}" if domain == DEFAULT_REGISTRY and "/" not in path else path
    return ImageRef(registry=registry, name=path, tag=tag, digest=digest or None,
                    repository=f"{domain}/{full_path}")
