"""Repository path helpers on plain strings (the hot paths of a gather run them once per file).

Each agrees with PurePosixPath for every input: index paths (relative, no empty
or "." parts) are split as strings; anything else goes through PurePosixPath.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePosixPath


def repo_id(root: Path) -> str:
    """A stable id for a repository checkout: its name plus a hash of its real path (the store's folder)."""
    real = str(root.resolve())
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", root.resolve().name).strip("-") or "repo"
    return f"{slug}-{hashlib.sha1(real.encode()).hexdigest()[:12]}"


def is_plain(path: str) -> bool:
    """A relative path without empty or "." parts, as the index lists them."""
    return not (path.startswith(("/", "./")) or path.endswith(("/", "/.")) or "//" in path or "/./" in path
                or path in ("", "."))


def split_path(path: str) -> tuple[str, str]:
    """(parent directory, "." at the top; base name), as PurePosixPath gives them."""
    if not is_plain(path):
        pure = PurePosixPath(path)
        return str(pure.parent), pure.name
    parent, _, name = path.rpartition("/")
    return parent or ".", name


def suffix(path: str) -> str:
    """The file name's last suffix (".py"), as PurePosixPath(path).suffix gives it."""
    name = split_path(path)[1]
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""
