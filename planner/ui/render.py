"""Templates (Jinja2, autoescaped), the report's markdown and the patch's per-file colouring."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from planner.ui.views import tokens_text

TEMPLATES = Path(__file__).resolve().parent / "templates"


def markdown(text: str) -> Markup:
    """The report as HTML. Raw HTML in it is escaped (html=False) and unsafe link schemes are refused by
    markdown-it's link validation: reports quote repo-derived text."""
    return Markup(_md().render(text or ""))  # safe: markdown-it escapes every character with html disabled


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _line_class(line: str) -> str:
    if line.startswith(("+++", "---", "diff --git", "index ", "new file", "deleted file", "similarity", "rename ",
                        "GIT binary patch", "old mode", "new mode")):
        return "meta"
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "ctx")


def patch_files(patch: str) -> list[dict[str, Any]]:
    """The unified diff split per file, each line classed add / del / hunk / meta / ctx."""
    files: list[dict[str, Any]] = []
    for line in (patch or "").splitlines():
        if line.startswith("diff --git ") or not files:
            name = line.split(" b/", 1)[-1] if line.startswith("diff --git ") else "patch"
            files.append({"name": name, "lines": [], "added": 0, "removed": 0})
        current = files[-1]
        kind = _line_class(line)
        current["added"] += kind == "add"
        current["removed"] += kind == "del"
        current["lines"].append((kind, line))
    return files


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(markdown=markdown, tokens=tokens_text, money=_money, duration=_duration,
                       short=lambda s, n=12: (s or "")[:n])
    env.globals.update(patch_files=patch_files)
    return env


def render(template: str, **context: Any) -> str:
    # `export` is True only for `planner provenance --html`: no links back to a server that is not there
    return environment().get_template(template).render({"export": False, **context})
