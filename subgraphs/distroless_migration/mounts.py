"""BuildKit cache mounts of a RUN whose apt/yum/dnf install became `apk add --no-cache`.

Decision: the mount flags stay where they are, adapted to apk's cache path. `target=/var/cache/apt` (or yum's /
dnf's cache) → `target=/var/cache/apk`; a mount of apt's lists (`/var/lib/apt`) is removed (apk keeps its
indexes under /var/cache/apk too), and so is a second mount that would now have the same target. Every other
key (`sharing=locked`, `id=…`) is kept. `apk add --no-cache` neither reads nor fills that cache, so the mount is
harmless but idle; the note says so rather than changing the apk options (untested here: no Docker engine).
"""

from __future__ import annotations

import re

from repocontext.dockerfile.shellwords import Token

APK_CACHE = "/var/cache/apk"
_CACHE = re.compile(r"/var/cache/(?:apt|yum|dnf)(?:/.*)?\Z")
_LISTS = re.compile(r"/var/lib/apt(?:/.*)?\Z")
_TARGET_KEYS = ("target", "dst", "destination")
Edit = tuple[int, int, str]


def _fields(value: str) -> list[list[str]]:
    return [part.split("=", 1) for part in value.split(",")]


def _target(fields: list[list[str]]) -> tuple[int, str] | None:
    for i, field in enumerate(fields):
        if len(field) == 2 and field[0] in _TARGET_KEYS:
            return i, field[1]
    return None


def adapt(flags: list[Token], previous: list[int], line: int) -> tuple[list[Edit], list[str]]:
    """Edits of the `--mount=` flag words (previous[i]: where flag i's leading space starts) and notes."""
    edits: list[Edit] = []
    notes: list[str] = []
    kept_apk = False
    for token, before in zip(flags, previous, strict=True):
        if not token.text.startswith("--mount="):
            continue
        fields = _fields(token.text.removeprefix("--mount="))
        found = _target(fields)
        if found is None or ["type", "cache"] not in fields:
            continue
        index, target = found
        if _LISTS.match(target) or (kept_apk and (_CACHE.match(target) or target == APK_CACHE)):
            edits.append((before, token.end, ""))
            notes.append(f"line {line}: BuildKit cache mount of {target} removed (apk has no apt lists; one cache "
                         f"mount of {APK_CACHE} is enough)")
        elif _CACHE.match(target):
            fields[index][1] = APK_CACHE
            edits.append((token.start, token.end, "--mount=" + ",".join("=".join(f) for f in fields)))
            notes.append(f"line {line}: BuildKit cache mount {target} → {APK_CACHE} (kept for the layout; "
                         "`apk add --no-cache` does not use it)")
            kept_apk = True
        elif target == APK_CACHE:
            kept_apk = True
    return edits, notes
