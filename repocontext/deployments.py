"""Deployment manifests: Docker Compose files (by name) and Kubernetes manifests (by content).

A Kubernetes manifest is a YAML file with a document that has string `apiVersion`
and `kind` keys. Files over MAX_YAML_BYTES are not parsed. Templated YAML that
does not parse (Helm charts) is recognised by top-level `apiVersion:` and `kind:`
lines instead, and its kinds and images are read from those lines. Command overrides
that need a shell are reported by `repocontext.deployment_commands`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import Any

import yaml

from repocontext import bounded, globs
from repocontext.deployment_commands import command_evidence
from repocontext.model import DeploymentManifest, ShellEvidence

COMPOSE_GLOBS = ("**/compose.yaml", "**/compose.yml", "**/compose.*.yaml", "**/compose.*.yml",
                 "**/docker-compose*.yaml", "**/docker-compose*.yml")
MAX_YAML_BYTES = 512_000
MAX_DOCUMENTS = 500
_API_LINE = re.compile(r"^apiVersion:\s*\S", re.MULTILINE)
_KIND_LINE = re.compile(r"^kind:\s*([\"']?)([A-Za-z][\w.-]*)\1\s*$", re.MULTILINE)
_IMAGE_LINE = re.compile(r"^\s*(?:-\s+)?image:[ \t]*(\S.*?)[ \t]*$", re.MULTILINE)

_ERRORS = (yaml.YAMLError, ValueError, TypeError, RecursionError)  # bad dates and alias cycles raise non-YAML errors
Problem = tuple[str, int | None, str]  # (path, line, message)


def is_compose(path: str) -> bool:
    return any(globs.match(p, path) for p in COMPOSE_GLOBS)


def _documents(text: str) -> Iterator[Any]:
    for count, doc in enumerate(bounded.load_all(text)):
        if count >= MAX_DOCUMENTS:
            return
        yield doc


def _images(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "image" and isinstance(value, str):
                yield value
            else:
                yield from _images(value)
    elif isinstance(node, list):
        for item in node:
            yield from _images(item)


def _compose(path: str, text: str) -> tuple[DeploymentManifest, list[Problem]]:
    try:
        data = bounded.load(text)  # checked before it is built: `_images` walks it whole
        services = data.get("services") if isinstance(data, dict) else None
        services = services if isinstance(services, dict) else {}
        images = sorted(set(_images(services)))
    except bounded.LimitExceeded as exc:
        return DeploymentManifest(path=path, format="compose"), [(path, exc.line, bounded.describe(exc))]
    except _ERRORS as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        message = f"invalid compose YAML: {getattr(exc, 'problem', None) or exc.__class__.__name__}"
        return DeploymentManifest(path=path, format="compose"), [(path, line, message)]
    return DeploymentManifest(path=path, format="compose", kinds=sorted(str(s) for s in services), images=images), []


def _kubernetes(path: str, text: str) -> tuple[DeploymentManifest | None, list[Problem]]:
    """The manifest `text` is, if any, and a problem when it was over a parse limit (its kinds and images are
    then read from its lines, as for templated YAML)."""
    if "apiVersion" not in text or "kind" not in text:
        return None, []
    kinds: set[str] = set()
    images: set[str] = set()
    problems: list[Problem] = []
    try:
        for doc in _documents(text):
            if isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str):
                kinds.add(doc["kind"])
                images.update(_images(doc))
    except _ERRORS as exc:
        if not _API_LINE.search(text):
            return None, []
        if isinstance(exc, bounded.LimitExceeded):
            problems.append((path, exc.line, bounded.describe(exc)))
        kinds = {m.group(2) for m in _KIND_LINE.finditer(text)}
        images = {m.group(1).strip("\"'") for m in _IMAGE_LINE.finditer(text)}
    if not kinds:
        return None, problems
    return DeploymentManifest(path=path, format="kubernetes", kinds=sorted(kinds), images=sorted(images)), problems


def find_deployments(paths: list[tuple[str, int]], read: Callable[[str], str | None]
                     ) -> tuple[list[DeploymentManifest], list[ShellEvidence], list[Problem]]:
    """Compose and Kubernetes manifests among `paths` ((path, size) pairs) sorted by path, the shell
    evidence in their command overrides, and problems."""
    found: list[DeploymentManifest] = []
    evidence: list[ShellEvidence] = []
    problems: list[Problem] = []
    for path, size in sorted(paths):
        manifest, more_evidence, more_problems = deployment_of(path, size, read)
        found += [manifest] if manifest is not None else []
        evidence += more_evidence
        problems += more_problems
    return found, evidence, problems


def deployment_of(path: str, size: int, read: Callable[[str], str | None]
                  ) -> tuple[DeploymentManifest | None, list[ShellEvidence], list[Problem]]:
    """One YAML file: the manifest it is (or None), its command-override evidence and its problems. Depends on
    the path, the size and the content alone, so a gather can keep it per file."""
    if PurePosixPath(path).suffix not in (".yaml", ".yml"):
        return None, [], []
    if size > MAX_YAML_BYTES:
        if not is_compose(path):
            return None, [], []
        too_big = f"not parsed: file is larger than {MAX_YAML_BYTES:,} bytes"
        return DeploymentManifest(path=path, format="compose"), [], [(path, None, too_big)]
    text = read(path)
    if text is None:
        return None, [], []
    if is_compose(path):
        manifest, issues = _compose(path, text)
        return manifest, (command_evidence(path, text, compose=True) if not issues else []), issues
    k8s, problems = _kubernetes(path, text)
    if k8s is None or problems:
        return k8s, [], problems
    return k8s, command_evidence(path, text, compose=False), []
