"""Which files declare Python dependencies, by name: shared by the build and dependencies probes.

Requirement files are found by name (`*requirements*.txt|.in`, anything under
a `requirements/` directory, `*constraints*.txt|.in`), not every `*.txt` or
`*.in` file: MANIFEST.in, autoconf templates and notes are not requirement
files. A requirement file with any other name is still read when one of these
(or a tox.ini, setup.cfg or conda environment file) includes it with -r/-c.
"""

from __future__ import annotations

import os
from typing import Literal

from repocontext import globs
from repocontext.paths import split_path

# A manifest (requirement file, pyproject.toml, package.json, ...) larger than this is skipped with a note, not
# parsed: real ones are kilobytes (a hashed pip-compile output of a large service, ~100 KB), and a 2 MB
# requirements.txt of 60,000 pins cost a gather 13 s and 700 MB, mostly in what the pins set off downstream
# (call sites per package). Lockfiles are not manifests here: they keep the probes' read limit.
MANIFEST_BOUND_ENV = "PLANNER_MANIFEST_MAX_BYTES"
MANIFEST_MAX_BYTES = 1 << 20

# The ecosystems whose manifests and lockfiles the dependencies probe reads (conda: the pip requirements of an
# environment file). A manifest or lockfile the build probe classifies under any other ecosystem is found but
# not evaluated, and a run says so instead of reading as "no vulnerable dependency".
EVALUATED_ECOSYSTEMS = frozenset({"PyPI", "npm", "Go", "conda", "crates.io", "RubyGems", "NuGet", "Maven",
                                  "Packagist"})

REQUIREMENTS_GLOBS: tuple[str, ...] = (
    "**/*requirements*.txt", "**/*requirements*.in", "**/requirements/**/*.txt", "**/requirements/**/*.in",
    "**/*constraints*.txt", "**/*constraints*.in",
)
CONDA_GLOBS: tuple[str, ...] = ("**/environment*.yml", "**/environment*.yaml")


def is_requirements_file(path: str) -> bool:
    """True for a path the requirement globs match (by name or by a `requirements/` directory)."""
    return any(globs.matcher(pattern).match(path) for pattern in REQUIREMENTS_GLOBS)


def is_conda_environment(path: str) -> bool:
    return any(globs.matcher(pattern).match(path) for pattern in CONDA_GLOBS)


def manifest_bound() -> int:
    """The manifest size bound in bytes: PLANNER_MANIFEST_MAX_BYTES when it is a positive integer, else 1 MiB."""
    try:
        value = int(os.environ.get(MANIFEST_BOUND_ENV, "").replace("_", ""))
    except ValueError:
        return MANIFEST_MAX_BYTES
    return value if value > 0 else MANIFEST_MAX_BYTES


def skipped_note(path: str, size: int, bound: int) -> str:
    return f"skipped: {path} ({size} bytes over the {bound}-byte bound)"


# (build system, ecosystem or None, manifest kind or None)
Classification = tuple[str, str | None, Literal["manifest", "lockfile"] | None]
# file name -> its classification
KNOWN_FILES: dict[str, Classification] = {
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
    "gradle.lockfile": ("gradle", "Maven", "lockfile"),
    "packages.lock.json": ("dotnet", "NuGet", "lockfile"),
    "Directory.Packages.props": ("dotnet", "NuGet", "manifest"),  # central package versions
    "Directory.Build.props": ("dotnet", "NuGet", "manifest"),  # PackageReferences of every project below
    "packages.config": ("nuget", "NuGet", "manifest"),
    "Gemfile": ("bundler", "RubyGems", "manifest"),
    "Gemfile.lock": ("bundler", "RubyGems", "lockfile"),
    "gems.rb": ("bundler", "RubyGems", "manifest"),
    "gems.locked": ("bundler", "RubyGems", "lockfile"),
    "composer.json": ("composer", "Packagist", "manifest"),
    "composer.lock": ("composer", "Packagist", "lockfile"),
    "Makefile": ("make", None, None),
    "GNUmakefile": ("make", None, None),
    "CMakeLists.txt": ("cmake", None, None),
    "tox.ini": ("tox", "PyPI", "manifest"),  # its testenv `deps` are pip requirements
    "noxfile.py": ("nox", None, None),
}


def classify(path: str) -> Classification | None:
    """(build system, ecosystem, manifest kind) for a build-relevant path, else None. The one list of
    manifest and lockfile names: the build and dependencies probes, the policy's file kinds
    (planner/policy/kinds.py) and the honest-outcome check all read it."""
    _, name = split_path(path)
    if name in KNOWN_FILES:
        return KNOWN_FILES[name]
    if name.endswith((".csproj", ".fsproj", ".vbproj")):
        return ("dotnet", "NuGet", "manifest")
    if name == "libs.versions.toml" and split_path(path)[0].rstrip("/").rpartition("/")[2] == "gradle":
        return ("gradle", "Maven", "manifest")  # Gradle's default version catalog: gradle/libs.versions.toml
    if name.endswith(".gemspec"):
        return ("rubygems", "RubyGems", "manifest")
    if is_requirements_file(path):
        return ("pip", "PyPI", "manifest")
    if is_conda_environment(path):
        return ("conda", "conda", "manifest")  # conda packages, and pip requirements under `- pip:`
    return None

# Lockfiles no probe classifies (no parser reads them yet), still lockfiles to a policy's `file_kinds`.
OTHER_LOCKFILES = frozenset({"pdm.lock", "conda-lock.yml"})


def file_kind(path: str) -> str | None:
    """"manifest" or "lockfile" for a path named like one, else None (the policy's answer without a
    RepoContext)."""
    found = classify(path)
    if found is not None and found[2] is not None:
        return found[2]
    return "lockfile" if path.rpartition("/")[2] in OTHER_LOCKFILES else None
