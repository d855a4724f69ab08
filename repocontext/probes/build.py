"""Build systems, package manifests and lockfiles, located by file name.

Only names matter, except for requirement files: their header says whether
pip-compile or `uv pip compile` generated them (`Manifest.generated_by`), so
their content counts in the fingerprint too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import PurePosixPath

from repocontext.deps.common import may_be_compiled
from repocontext.deps.files import (
    CONDA_GLOBS,
    KNOWN_FILES,
    REQUIREMENTS_GLOBS,
    Classification,
    classify,
    is_conda_environment,
)
from repocontext.model import BuildSystem, Manifest
from repocontext.probe import Probe, ProbeContext, ProbeOutput
from repocontext.secrets import RULES_DIGEST

# Every path `classify` accepts matches one of these (it then decides): the index finds them by base name.
CANDIDATE_GLOBS = (*(f"**/{name}" for name in KNOWN_FILES), "**/*.csproj", *REQUIREMENTS_GLOBS, *CONDA_GLOBS)


def build_files(ctx: ProbeContext) -> list[tuple[str, Classification]]:
    """(path, classification) of the build-relevant files, in index order."""
    found = ((record.path, classify(record.path)) for record in ctx.matching(CANDIDATE_GLOBS))
    return [(path, kind) for path, kind in found if kind is not None]


class BuildProbe(Probe):
    name = "build"
    version = "2"  # 2: more requirement-file names, tox.ini and conda files as manifests, generated_by
    inputs = ()  # names only (and requirement files' headers: see fingerprint)
    produces = ("build", "manifests")

    def fingerprint(self, ctx: ProbeContext, upstream_fingerprints: Mapping[str, str]) -> str:
        # Which paths exist, and the content of requirement files (their header names the compile command).
        digest = hashlib.sha256(f"{self.name}\0{self.version}\0{RULES_DIGEST}\0".encode())
        for path, _ in build_files(ctx):
            record = ctx.record(path) if _format(path) == "requirements.txt" else None
            digest.update(f"{path}\0{record.sha if record else ''}\0".encode())
        return digest.hexdigest()

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        systems: list[BuildSystem] = []
        files: list[str] = []
        manifests: list[Manifest] = []
        lockfiles: list[Manifest] = []
        for path, (system, ecosystem, kind) in build_files(ctx):
            files.append(path)
            systems.append(BuildSystem(name=system, file=path))
            if ecosystem and kind:
                entry = Manifest(path=path, ecosystem=ecosystem, kind=kind,
                                 format=_format(path), generated_by=_generated_by(ctx, path))
                (lockfiles if kind == "lockfile" else manifests).append(entry)
        return ProbeOutput(values={
            "build": {"systems": [s.model_dump() for s in systems], "files": files},
            "manifests": {"manifests": [m.model_dump() for m in manifests],
                          "lockfiles": [m.model_dump() for m in lockfiles]},
        })


def _format(path: str) -> str:
    name = PurePosixPath(path).name
    if name.endswith((".txt", ".in")) and name not in KNOWN_FILES:
        return "requirements.txt"
    if is_conda_environment(path) and name not in KNOWN_FILES:
        return "environment.yml"
    return name


def _generated_by(ctx: ProbeContext, path: str) -> str | None:
    """The compile command in a requirement file's header (pip-compile, uv pip compile), else None."""
    if _format(path) != "requirements.txt":
        return None
    text = ctx.read_text(path)
    if text is None or not may_be_compiled(text):
        return None
    from repocontext.deps.compiled import compile_header  # its parsers only for a file that may be compiled

    header = compile_header(text)
    return header.command if header else None
