"""Optional parts of the install: a command that needs one says which extra brings it, in one line."""

from __future__ import annotations

import importlib.util

from planner.errors import EnvironmentProblem

EXTRAS = {"ui": ("fastapi", "uvicorn", "jinja2", "markdown_it"), "portfolio": ("celery",)}


def require(extra: str, what: str) -> None:
    """Raise when a module of `extra` is not installed (checked without importing it: cheap)."""
    missing = [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]
    if missing:
        raise EnvironmentProblem(f"{what} needs the {extra!r} extra ({', '.join(missing)} not installed): "
                                 f"pip install 'tccm-planner[{extra}]'")
