"""Container build files parsed in full, shell-invocation evidence for their final images, and
deployment manifests (Docker Compose, Kubernetes).

Dockerfiles are located by name (Dockerfile, Containerfile, *.Dockerfile, *.dockerfile,
Dockerfile.*, Containerfile.*) and parsed by `repocontext.dockerfile`; parse problems
become diagnostics with file and line. The evidence may read files the final image
copies in (for their shebang); those files are part of the fingerprint.
"""

from __future__ import annotations

import hashlib

from repocontext.deployments import YAML_GLOBS, find_deployments
from repocontext.dockerfile import parse
from repocontext.dockerfile.copies import Listing
from repocontext.dockerfile.shell import evidence, files_to_read
from repocontext.model import Containers, Diagnostic, Dockerfile
from repocontext.probe import Probe, ProbeContext, ProbeOutput

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


class ContainersProbe(Probe):
    name = "containers"
    version = "2"
    applies_to_tasks = ("distroless-migration",)
    inputs = DOCKERFILE_GLOBS + SCRIPT_GLOBS + YAML_GLOBS
    produces = ("containers",)

    def _dockerfiles(self, ctx: ProbeContext) -> list[tuple[str, str | None]]:
        # DOCKERFILE_GLOBS name exactly what is_dockerfile accepts; the index finds them by base name.
        return [(r.path, ctx.read_text(r.path)) for r in ctx.matching(DOCKERFILE_GLOBS)]

    def extra_fingerprint(self, ctx: ProbeContext) -> str:
        # Files copied into a final image are read for their shebang whatever their name.
        digest = hashlib.sha256()
        paths = Listing(sorted(r.path for r in ctx.files))
        for path, text in self._dockerfiles(ctx):
            if text is None:
                continue
            for used in files_to_read(parse(text, path).dockerfile, path, paths):
                record = ctx.record(used)
                digest.update(f"{used}\0{record.sha if record else ''}\0".encode())
        return digest.hexdigest()

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        diagnostics: list[Diagnostic] = []
        result = Containers()
        paths = Listing(sorted(r.path for r in ctx.files))
        for path, text in self._dockerfiles(ctx):
            if text is None:
                diagnostics.append(self.diagnostic("not read (binary, too large or secret-looking)", path))
                result.dockerfiles.append(Dockerfile(path=path))
                continue
            parsed = parse(text, path)
            diagnostics += [self.diagnostic(message, path, line) for line, message in parsed.problems]
            result.dockerfiles.append(parsed.dockerfile)
            result.shell_evidence += evidence(parsed.dockerfile, path, paths, ctx.read_text)
        yaml_files = [(r.path, r.size) for r in ctx.matching(YAML_GLOBS)]
        deployments, deployment_evidence, problems = find_deployments(yaml_files, ctx.read_text)
        result.shell_evidence += deployment_evidence
        diagnostics += [self.diagnostic(message, path, line) for path, line, message in problems]
        result.deployments = deployments
        result.deployment_manifests = sorted(d.path for d in deployments)
        result.shell_evidence.sort(key=lambda e: (e.file, e.line, e.kind, e.detail))
        return ProbeOutput(values={"containers": result.model_dump()}, diagnostics=diagnostics)
