"""Build systems, package manifests and lockfiles, located by file name."""

from __future__ import annotations

from pathlib import PurePosixPath

from repocontext.model import BuildSystem, Manifest
from repocontext.paths import split_path
from repocontext.probe import Probe, ProbeContext, ProbeOutput

# file name -> (build system, ecosystem or None, manifest kind or None)
KNOWN_FILES: dict[str, tuple[str, str | None, str | None]] = {
    "pyproject.toml": ("pyproject", "PyPI", "manifest"),
    "setup.py": ("setuptools", "PyPI", "manifest"),
    "setup.cfg": ("setuptools", "PyPI", "manifest"),
    "Pipfile": ("pipenv", "PyPI", "manifest"),
    "Pipfile.lock": ("pipenv", "PyPI", "lockfile"),
    "poetry.lock": ("poetry", "PyPI", "lockfile"),
    "uv.lock": ("uv", "PyPI", "lockfile"),
    "package.json": ("npm", "npm", "manifest"),
    "package-lock.json": ("npm", "npm", "lockfile"),
    "npm-shrinkwrap.json": ("npm", "npm", "lockfile"),
    "yarn.lock": ("yarn", "npm", "lockfile"),
    "pnpm-lock.yaml": ("pnpm", "npm", "lockfile"),
    "go.mod": ("go", "Go", "manifest"),
    "go.sum": ("go", "Go", "lockfile"),
    "Cargo.toml": ("cargo", "crates.io", "manifest"),
    "Cargo.lock": ("cargo", "crates.io", "lockfile"),
    "pom.xml": ("maven", "Maven", "manifest"),
    "build.gradle": ("gradle", "Maven", "manifest"),
    "build.gradle.kts": ("gradle", "Maven", "manifest"),
    "Gemfile": ("bundler", "RubyGems", "manifest"),
    "Gemfile.lock": ("bundler", "RubyGems", "lockfile"),
    "composer.json": ("composer", "Packagist", "manifest"),
    "composer.lock": ("composer", "Packagist", "lockfile"),
    "Makefile": ("make", None, None),
    "GNUmakefile": ("make", None, None),
    "CMakeLists.txt": ("cmake", None, None),
    "tox.ini": ("tox", None, None),
    "noxfile.py": ("nox", None, None),
}


def classify(path: str) -> tuple[str, str | None, str | None] | None:
    """(build system, ecosystem, manifest kind) for a build-relevant path, else None."""
    parent, name = split_path(path)
    if name in KNOWN_FILES:
        return KNOWN_FILES[name]
    if (name.startswith("requirements") and name.endswith((".txt", ".in"))) or (
        name.endswith(".txt") and split_path(parent)[1] == "requirements"
    ):
        return ("pip", "PyPI", "manifest")
    if name.startswith("constraints") and name.endswith(".txt"):
        return ("pip", "PyPI", "manifest")
    return None


# Every path `classify` accepts matches one of these (it then decides): the index finds them by base name.
CANDIDATE_GLOBS = (*(f"**/{name}" for name in KNOWN_FILES), "**/requirements*.txt", "**/requirements*.in",
                   "**/requirements/*.txt", "**/constraints*.txt")


def build_files(ctx: ProbeContext) -> list[tuple[str, tuple[str, str | None, str | None]]]:
    """(path, classification) of the build-relevant files, in index order."""
    found = ((record.path, classify(record.path)) for record in ctx.matching(CANDIDATE_GLOBS))
    return [(path, kind) for path, kind in found if kind is not None]


class BuildProbe(Probe):
    name = "build"
    version = "1"
    inputs = ()  # names only: the file index is enough
    produces = ("build", "manifests")

    def fingerprint(self, ctx: ProbeContext, upstream_fingerprints: dict[str, str]) -> str:  # type: ignore[override]
        # Depends only on which paths exist, not on their content.
        import hashlib

        digest = hashlib.sha256(f"{self.name}\0{self.version}\0".encode())
        for path, _ in build_files(ctx):
            digest.update(path.encode() + b"\0")
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
                entry = Manifest(path=path, ecosystem=ecosystem, kind=kind,  # type: ignore[arg-type]
                                 format=_format(path))
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
    return name
