"""Container build files parsed in full, shell-invocation evidence for their final images, and
deployment manifests (Docker Compose, Kubernetes).

Dockerfiles are located by name (Dockerfile, Containerfile, *.Dockerfile, *.dockerfile,
Dockerfile.*, Containerfile.*) and parsed by `repocontext.dockerfile`; parse problems
become diagnostics with file and line. The evidence may read files the final image
copies in (for their shebang); those files are part of the fingerprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from repocontext.model import (
    Containers,
    DeploymentManifest,
    Diagnostic,
    DiagnosticLevel,
    Dockerfile,
    FileRecord,
    ShellEvidence,
)
from repocontext.probe import PerFileProbe, ProbeContext, ProbeOutput

if TYPE_CHECKING:  # the Dockerfile machinery is imported only when a repository has a Dockerfile
    from repocontext.dockerfile.copies import Copied, Listing

# The Dockerfile parser and the deployment readers are imported when a repository has such files: a
# small repository's gather does not pay their start-up.
YAML_GLOBS = ("**/*.yaml", "**/*.yml")

DOCKERFILE_GLOBS = ("**/Dockerfile", "**/Containerfile", "**/*.Dockerfile", "**/*.dockerfile",
                    "**/Dockerfile.*", "**/Containerfile.*")
SCRIPT_GLOBS = ("**/*.sh",)


def is_dockerfile(path: str) -> bool:
    name = path.rpartition("/")[2]
    return (
        name in ("Dockerfile", "Containerfile")
        or name.startswith(("Dockerfile.", "Containerfile."))
        or name.endswith((".Dockerfile", ".dockerfile"))
    )


class ContainersProbe(PerFileProbe):
    """Per file (kept between gathers, so a re-gather reads only the files that changed): a Dockerfile's parse
    and a YAML file's deployment facts. Combined over all: the Dockerfiles in index order, the evidence of
    their final images (which reads the files they copy in), and the deployments by path."""

    name = "containers"
    version = "3"  # 3: compose shell evidence names the Dockerfile its service builds (dockerfile)
    applies_to_tasks = ("distroless-migration",)
    inputs = DOCKERFILE_GLOBS + SCRIPT_GLOBS + YAML_GLOBS
    produces = ("containers",)
    # Measured on docker/awesome-compose and instana/robot-shop (78 and 70 files, 49 and 46 KB: 46 and 32 ms):
    # a Dockerfile's parse or a YAML document's load, about a microsecond a byte.
    SECONDS_PER_FILE = 1e-4
    SECONDS_PER_BYTE = 8e-7

    def extra_fingerprint(self, ctx: ProbeContext) -> str:
        # Files copied into a final image are read for their shebang whatever their name.
        digest = hashlib.sha256()
        dockerfiles = ctx.matching(DOCKERFILE_GLOBS)
        if not dockerfiles:
            return digest.hexdigest()
        from repocontext.dockerfile.shell import files_to_read

        paths = _listing(ctx)
        for record in dockerfiles:
            parsed = _parsed(ctx, record, self.slot)
            if parsed is None:
                continue
            for used in files_to_read(parsed[0], record.path, paths, _copied(ctx, record, parsed[0])):
                found = ctx.record(used)
                digest.update(f"{used}\0{found.sha if found else ''}\0".encode())
        return digest.hexdigest()

    def analyze(self, ctx: ProbeContext, record: FileRecord) -> dict[str, Any] | None:
        result: dict[str, Any] = {}
        if is_dockerfile(record.path):
            parsed = _parsed(ctx, record, self.slot)
            result["dockerfile"] = None if parsed is None else {
                "parsed": parsed[0].model_dump(mode="json"), "problems": [list(p) for p in parsed[1]]}
        if record.path.endswith((".yaml", ".yml")):
            from repocontext.deployments import deployment_of

            manifest, found, problems = deployment_of(record.path, record.size, ctx.read_text)
            if manifest is not None or found or problems:
                result["deployment"] = {"manifest": None if manifest is None else manifest.model_dump(mode="json"),
                                        "evidence": [e.model_dump(mode="json") for e in found],
                                        "problems": [list(p) for p in problems]}
        return result or None

    def combine(self, ctx: ProbeContext, results: dict[str, Any]) -> ProbeOutput:
        diagnostics: list[Diagnostic] = []
        result = Containers.model_construct()  # not validated: validating builds every Dockerfile model's schema
        dockerfiles = ctx.matching(DOCKERFILE_GLOBS)
        if dockerfiles:
            self._dockerfiles(ctx, dockerfiles, results, result, diagnostics)
        deployments = [found["deployment"] for _, found in sorted(results.items()) if found and "deployment" in found]
        for found in deployments:
            if found["manifest"] is not None:
                result.deployments.append(DeploymentManifest.model_validate(found["manifest"]))
            result.shell_evidence += [ShellEvidence.model_validate(e) for e in found["evidence"]]
        for found in deployments:
            diagnostics += [self.diagnostic(message, file, line) for file, line, message in found["problems"]]
        result.deployment_manifests = sorted(d.path for d in result.deployments)
        result.shell_evidence.sort(key=lambda e: (e.file, e.line, e.kind, e.detail))
        return ProbeOutput(values={"containers": _as_json(result)}, diagnostics=diagnostics)

    def _dockerfiles(self, ctx: ProbeContext, dockerfiles: list[FileRecord], results: dict[str, Any],
                     result: Containers, diagnostics: list[Diagnostic]) -> None:
        """The Dockerfiles in index order, with the evidence of their final images."""
        from repocontext.dockerfile.shell import evidence

        paths = _listing(ctx)
        for record in dockerfiles:
            path = record.path
            found = (results.get(path) or {}).get("dockerfile")
            if found is None:
                diagnostics.append(self.diagnostic("not read (binary, too large or secret-looking)", path))
                result.dockerfiles.append(Dockerfile(path=path))
                continue
            dockerfile, problems = _stored_parse(found)
            # A first gather fingerprints this probe after its run: the parse is known now, as a re-gather
            # knows it from the probe cache (_cached_parse).
            ctx.memo.setdefault(_parse_key(record), (dockerfile, problems))
            diagnostics += [self.diagnostic(message, path, line) for line, message in problems]
            result.dockerfiles.append(dockerfile)
            result.shell_evidence += evidence(dockerfile, path, paths, ctx.read_text, _copied(ctx, record, dockerfile))

    def run_incremental(self, ctx: ProbeContext, previous: Mapping[str, Any], changes: Mapping[str, tuple[Any, Any]],
                        previous_diagnostics: Sequence[Diagnostic] = (),
                        result_of: Callable[[str], Any] | None = None) -> ProbeOutput | None:
        """`combine` over the changed files' new results and the kept results of the others: no file that did
        not change is read (combining is cheap; the evidence still reads what final images copy in)."""
        results = {}
        for record in ctx.matching(self.inputs):
            change = changes.get(record.path)
            results[record.path] = change[1] if change is not None else self.result_for(ctx, record.path, result_of)
        return self.combine(ctx, results)

    def diagnostic(self, message: str, file: str | None = None, line: int | None = None,
                   level: DiagnosticLevel = "warning") -> Diagnostic:
        return Diagnostic(probe=self.name, level=level, message=message, file=file, line=line)


def _as_json(result: Containers) -> dict[str, Any]:
    """`result.model_dump()`; for a repository without containers, without building its models' schemas."""
    if any(getattr(result, name) for name in Containers.model_fields):
        return result.model_dump()
    return {name: [] for name in Containers.model_fields}


def _parsed(ctx: ProbeContext, record: FileRecord, slot: str) -> tuple[Dockerfile, list[tuple[int | None, str]]] | None:
    """A Dockerfile's parse (the model and its problems), once per gather: the fingerprint needs it to know
    which copied files the evidence reads, and `analyze` needs it again. In a re-gather an unchanged
    Dockerfile's parse comes from the probe cache (this probe's own result for that blob) instead of parsing
    every Dockerfile again for the fingerprint. None when it cannot be read."""
    key = _parse_key(record)
    if key not in ctx.memo:
        found = _cached_parse(ctx, record, slot)
        ctx.memo[key] = _parse_now(ctx, record) if found is _MISSING else found
    return ctx.memo[key]


_MISSING = object()


def _parse_key(record: FileRecord) -> str:
    return f"containers-parse:{record.path}\0{record.sha}"


def _listing(ctx: ProbeContext) -> Listing:
    """Every indexed path, sorted, for matching COPY sources: built once per gather."""
    from repocontext.dockerfile.copies import Listing

    if "containers-listing" not in ctx.memo:
        ctx.memo["containers-listing"] = Listing(sorted(r.path for r in ctx.files))
    return ctx.memo["containers-listing"]


def _copied(ctx: ProbeContext, record: FileRecord, dockerfile: Dockerfile) -> list[Copied]:
    """What the Dockerfile at `record` copies into its final image, once per gather: the fingerprint and the
    evidence both need it, and a `COPY . /app` matches every file of the repository (8,000 at a time)."""
    from repocontext.dockerfile.copies import copied_files

    key = f"containers-copied:{record.path}\0{record.sha}"
    if key not in ctx.memo:
        ctx.memo[key] = copied_files(dockerfile, record.path, _listing(ctx))
    return ctx.memo[key]


def _cached_parse(ctx: ProbeContext, record: FileRecord, slot: str) -> Any:
    if ctx.cached is None:
        return _MISSING
    try:
        result = ctx.cached(slot, f"{record.path}\0{record.sha}")
    except KeyError:
        return _MISSING
    if not isinstance(result, dict) or "dockerfile" not in result:
        return _MISSING
    found = result["dockerfile"]
    return None if found is None else _stored_parse(found)


def _stored_parse(found: Mapping[str, Any]) -> tuple[Dockerfile, list[tuple[int | None, str]]]:
    """A Dockerfile's parse from its analysis result (`analyze`'s "dockerfile" entry)."""
    return Dockerfile.model_validate(found["parsed"]), [(line, message) for line, message in found["problems"]]


def _parse_now(ctx: ProbeContext, record: FileRecord) -> tuple[Dockerfile, list[tuple[int | None, str]]] | None:
    from repocontext.dockerfile import parse

    text = ctx.read_text(record.path)
    parsed = None if text is None else parse(text, record.path)
    return None if parsed is None else (parsed.dockerfile, list(parsed.problems))
