"""Container build files (Dockerfile, Containerfile, *.Dockerfile, Dockerfile.*), located by name."""

from __future__ import annotations

from pathlib import PurePosixPath

from repocontext.probe import Probe, ProbeContext, ProbeOutput

DOCKERFILE_GLOBS = ("**/Dockerfile", "**/Containerfile", "**/*.Dockerfile", "**/*.dockerfile",
                    "**/Dockerfile.*", "**/Containerfile.*")


def is_dockerfile(path: str) -> bool:
    name = PurePosixPath(path).name
    return (
        name in ("Dockerfile", "Containerfile")
        or name.startswith(("Dockerfile.", "Containerfile."))
        or name.endswith((".Dockerfile", ".dockerfile"))
    )


class ContainersProbe(Probe):
    name = "containers"
    version = "1"
    applies_to_tasks = ("distroless-migration", "vulnerability-remediation")
    inputs = DOCKERFILE_GLOBS
    produces = ("containers.dockerfiles",)

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        found = [r.path for r in ctx.files if is_dockerfile(r.path)]
        return ProbeOutput(values={"containers.dockerfiles": [{"path": p, "stages": []} for p in found]})
