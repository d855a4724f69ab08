"""Reading the migration inputs out of a bundle: one work item per Dockerfile."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner.bundle.model import Bundle
from planner.chain.work import WorkItem
from planner.errors import PlannerError
from repocontext.lazyjson import plain
from repocontext.probes.containers import is_dockerfile
from subgraphs.distroless_migration.options import MappingError, MigrationOptions, UserMapping, load_mapping


def dockerfiles(bundle: Bundle) -> list[str]:
    """Every Dockerfile the bundle selected, loaded or not (a truncated one is still named)."""
    named = {e.target for e in bundle.entries if e.kind == "file" and is_dockerfile(e.target)}
    for _, value in bundle.slice("containers"):
        records = value if isinstance(value, list) else (value or {}).get("dockerfiles", [])
        named.update(r["path"] for r in records if isinstance(r, dict) and "path" in r)
    return sorted(named)


ITEM_INPUTS = ("dockerfile",)  # each Dockerfile's bundle is scoped to it


def _item(path: str, evidence: list[dict[str, Any]] | None = None) -> WorkItem:
    data: dict[str, Any] = {"path": path}
    if evidence is not None:
        data["deployment_evidence"] = evidence
    return WorkItem(id=path, title=f"Migrate {path}", data=data, inputs={"dockerfile": path})


def concerns(manifest: str, dockerfile: str, evidence: Mapping[str, Any] | None = None) -> bool:
    """Compose evidence concerns only the Dockerfile its service builds (`build:` context and dockerfile),
    never another service's; a service that only names an image concerns none. Kubernetes evidence, which
    names no build, is taken to concern the Dockerfiles at or below the manifest's own directory."""
    if evidence is not None and str(evidence.get("detail", "")).startswith("service "):
        return evidence.get("dockerfile") == dockerfile
    folder = posixpath.dirname(manifest)
    return not folder or dockerfile.startswith(folder + "/")


def list_work(context: Mapping[str, Any], inputs: Mapping[str, str]) -> list[WorkItem]:
    """One item per Dockerfile the gather parsed (narrowed by the dockerfile input). Each carries the
    deployment evidence (compose/Kubernetes command overrides) that concerns it, whole, from the RepoContext."""
    containers = context.get("containers") or {}
    paths = sorted({str(d["path"]) for d in containers.get("dockerfiles", [])})
    evidence = [plain(e) for e in containers.get("shell_evidence", [])
                if str(e.get("kind", "")).startswith("deployment-")]
    wanted = inputs.get("dockerfile")
    return [_item(path, [e for e in evidence if concerns(e["file"], path, e)]) for path in paths
            if not wanted or path == wanted.removeprefix("./")]


def nothing_listed(context: Mapping[str, Any], inputs: Mapping[str, str]) -> str:
    if inputs.get("dockerfile"):
        return f"the RepoContext has no Dockerfile {inputs['dockerfile']}"
    return "the gather found no Dockerfile (Dockerfile, *.Dockerfile, Dockerfile.*, Containerfile)"


def split_work(bundle: Bundle, inputs: dict[str, str]) -> list[WorkItem]:
    """Without a RepoContext (bootstrap): the Dockerfiles the bundle selected."""
    return [_item(path) for path in dockerfiles(bundle)]


_TRUE, _FALSE = frozenset({"true", "yes", "1", "on"}), frozenset({"false", "no", "0", "off", ""})


MAPPING_FILE = "distroless-mapping.yaml"  # a fleet-wide mapping kept beside the user's task classes


def task_class_mapping(env: Mapping[str, str] | None = None) -> Path | None:
    """The first `distroless-mapping.yaml` in a PLANNER_TASK_CLASS_PATH directory, if any."""
    value = (os.environ if env is None else env).get("PLANNER_TASK_CLASS_PATH") or ""
    found = (Path(d).expanduser() / MAPPING_FILE for d in value.split(os.pathsep) if d)
    return next((p for p in found if p.is_file()), None)


def options_from(inputs: dict[str, str]) -> MigrationOptions:
    """--input registry=… org=… mapping=FILE (a user mapping file, YAML) keep_unconverted=true|false.
    Without mapping=, a distroless-mapping.yaml on the task-class path is the user mapping."""
    mapping = UserMapping()
    source = Path(inputs["mapping"]).expanduser() if inputs.get("mapping") else task_class_mapping()
    if source is not None:
        try:
            mapping = load_mapping(source)
        except MappingError as exc:
            raise PlannerError(str(exc)) from None
    keep = (inputs.get("keep_unconverted") or "").strip().lower()
    if keep not in _TRUE | _FALSE:
        raise PlannerError(f"--input keep_unconverted={inputs['keep_unconverted']!r}: expected true or false")
    return MigrationOptions(registry=inputs.get("registry") or "cgr.dev", org=inputs.get("org") or "chainguard",
                            mapping=mapping, keep_unconverted=keep in _TRUE)


def deployment_evidence(bundle: Bundle) -> list[dict[str, Any]]:
    evidence: list[dict[str, Any]] = []
    for _, value in bundle.slice("containers"):
        records = value if isinstance(value, list) else (value or {}).get("shell_evidence", [])
        evidence += [r for r in records if isinstance(r, dict) and str(r.get("kind", "")).startswith("deployment-")]
    return evidence
