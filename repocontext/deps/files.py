"""Which files declare Python dependencies, by name: shared by the build and dependencies probes.

Requirement files are found by name (`*requirements*.txt|.in`, anything under
a `requirements/` directory, `*constraints*.txt|.in`), not every `*.txt` or
`*.in` file: MANIFEST.in, autoconf templates and notes are not requirement
files. A requirement file with any other name is still read when one of these
(or a tox.ini, setup.cfg or conda environment file) includes it with -r/-c.
"""

from __future__ import annotations

from repocontext import globs

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
