"""bench/realworld.py part 2, the bench's own build checks of a migrated Dockerfile (issue 29 §1), written
apart from the tool's so that a tool bug cannot hide itself: every `apk add` name (pins stripped) is in
../shared/wolfi/packages.tsv (a package or a provides), every shell-form RUN passes `sh -n`, no
apt/yum/dnf/microdnf is left, every FROM is cgr.dev/…, a stage, scratch or an ARG."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

from realworld_common import CORPUS, ROOT

WOLFI = CORPUS.parent / "wolfi" / "packages.tsv"
_LEFT = re.compile(r"(?:^|[\s;&|(`])(?:apt-get|apt|aptitude|yum|dnf|microdnf)\s+(?:-\S+\s+)*"
                   r"(?:install|update|upgrade)\b")


@cache
def wolfi_names(path: Path = WOLFI) -> frozenset[str]:
    names: set[str] = set()
    for row in path.read_text(encoding="utf-8").splitlines()[1:]:
        cols = row.split("\t")
        names.add(cols[0])
        if len(cols) > 3:
            names.update(p.strip() for p in cols[3].split(",") if p.strip())
    return frozenset(names)


def _froms(text: str) -> list[tuple[int, str, str | None]]:
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", line, re.IGNORECASE)
        if m:
            found.append((n, m.group(1), (m.group(2) or "").lower() or None))
    return found


def failures(text: str) -> list[str]:
    """What would stop the file from building, one `line N: why` each (empty: passes)."""
    from realworld_distroless import installed_packages, run_scripts  # that module imports this one

    out: list[str] = []
    known = wolfi_names() if WOLFI.is_file() else frozenset()
    for line, _m, name in installed_packages(text, ("apk",)):
        if known and name not in known:
            out.append(f"line {line}: apk add {name}: not a Wolfi package")
    for line, script in run_scripts(text):
        if script.lstrip().startswith("["):
            continue
        done = subprocess.run(["sh", "-n", "-c", script], capture_output=True, text=True, check=False)
        if done.returncode:
            out.append(f"line {line}: sh -n: {done.stderr.strip()[:120]}")
        if _LEFT.search(script):
            out.append(f"line {line}: a distro package manager is left")
    stages: set[str] = set()
    for line, image, name in _froms(text):
        ok = (image.startswith("cgr.dev/") or image.lower() in stages or image == "scratch" or image.startswith("$"))
        if not ok:
            out.append(f"line {line}: FROM {image} is not a Chainguard image, a stage, scratch or an ARG")
        if name:
            stages.add(name)
    return out


def migration_ms(repo: Path, files: list[str], dockerfiles: list[str]) -> dict[str, float]:
    """In-process time of `migrate_dockerfile` (parse, map, rewrite, build checks) per Dockerfile of a
    whole-repository pass, after the data files are loaded once (as in a dispatch): mean and max, ms."""
    sys.path.insert(0, str(ROOT))
    from subgraphs.distroless_migration.migrate import migrate_dockerfile
    from subgraphs.distroless_migration.models import MigrationOptions

    def read(rel: str) -> str | None:
        path = repo / rel
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    times = []
    for path in dockerfiles:
        start = time.perf_counter()
        migrate_dockerfile(path, read(path) or "", MigrationOptions(), read, files=files)
        times.append(1000 * (time.perf_counter() - start))
    if not times:
        return {"mean": 0.0, "max": 0.0}
    return {"mean": round(sum(times) / len(times), 1), "max": round(max(times), 1)}
