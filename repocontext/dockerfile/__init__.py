"""A faithful Dockerfile parser: exact source kept per instruction, stages, packages, shell evidence.

`parse(text, path)` never raises for bad content; problems come back with their
line. `render(dockerfile)` rebuilds the original text byte for byte.
"""

from __future__ import annotations

from repocontext.dockerfile.parser import ParseResult, parse, render

__all__ = ["ParseResult", "parse", "render"]
