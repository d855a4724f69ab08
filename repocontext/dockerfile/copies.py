"""What COPY/ADD put into the final image: container path ← repository file, heredoc or other stage.

The final image is the last stage plus the stages it is built FROM (its
"chain"). Sources are resolved against the file index, first relative to the
Dockerfile's directory, then to the repository root (the build context is not
known). `.dockerignore` is not applied. Docker semantics kept: a directory source
copies its contents; several sources or a wildcard make the destination a
directory; relative destinations are under the WORKDIR in effect.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from fnmatch import fnmatchcase

from repocontext.dockerfile.words import unquote
from repocontext.model import Dockerfile, Instruction, Stage

_GLOB_CHARS = "*?["


@dataclass(frozen=True)
class Copied:
    container: str  # absolute path inside the image
    line: int
    stage: int
    keyword: str
    repo_path: str | None = None  # from the repository
    inline: str | None = None  # heredoc body
    image_path: str | None = None  # path in another stage or image (COPY --from)
    explicit: bool = False  # named directly, not through a directory or wildcard


def chain(dockerfile: Dockerfile) -> list[Stage]:
    """The final stage and the stages it is built FROM, root first."""
    if not dockerfile.stages:
        return []
    stages = [dockerfile.stages[-1]]
    while stages[-1].base.stage_index is not None and stages[-1].base.stage_index < stages[-1].index:
        stages.append(dockerfile.stages[stages[-1].base.stage_index])
    return stages[::-1]


def walk(stages: list[Stage]) -> list[tuple[Stage, Instruction, str]]:
    """Every instruction of the chain with the WORKDIR in effect when it runs."""
    out: list[tuple[Stage, Instruction, str]] = []
    workdir = "/"
    for stage in stages:
        for instruction in stage.instructions:
            if instruction.keyword == "WORKDIR" and instruction.value:
                workdir = posixpath.normpath(posixpath.join(workdir, unquote(instruction.value)))
            out.append((stage, instruction, workdir))
    return out


def _sources_and_dest(instruction: Instruction, escape: str) -> tuple[list[str], str] | None:
    words = instruction.args if instruction.form == "exec" else [unquote(w, escape) for w in instruction.args]
    if len(words) < 2:
        return None
    return words[:-1], words[-1]


def _match(pattern: str, files: list[str]) -> list[tuple[str, str | None]]:
    """(repo path, path below the matched directory or None for a direct match)."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    found: list[tuple[str, str | None]] = []
    for path in files:
        segments = path.split("/")
        if len(segments) < len(parts) or not all(fnmatchcase(s, p) for s, p in zip(segments, parts, strict=False)):
            continue
        found.append((path, None if len(segments) == len(parts) else "/".join(segments[len(parts):])))
    return found


def _repo_sources(source: str, dockerfile_dir: str, files: list[str]) -> list[tuple[str, str | None]]:
    if "://" in source or source.startswith("git@"):
        return []
    for base in dict.fromkeys((dockerfile_dir, "")):
        joined = posixpath.normpath(posixpath.join(base or ".", source.lstrip("/")))
        if joined == ".." or joined.startswith("../"):
            continue  # outside the repository
        found = _match("" if joined == "." else joined, files)
        if found:
            return found
    return []


def _target(dest: str, workdir: str, as_dir: bool, name: str) -> str:
    base = dest if dest.startswith("/") else posixpath.join(workdir, dest)
    if as_dir or dest.endswith(("/", "/.")) or dest in (".", ".."):  # "." is the WORKDIR directory
        return posixpath.normpath(posixpath.join(base, name))
    return posixpath.normpath(base)


def copied_files(dockerfile: Dockerfile, path: str, files: list[str]) -> list[Copied]:
    """Every file COPY/ADD put into the final image (chain order)."""
    dockerfile_dir = posixpath.dirname(path)
    out: list[Copied] = []
    for stage, instruction, workdir in walk(chain(dockerfile)):
        if instruction.keyword not in ("COPY", "ADD"):
            continue
        parsed = _sources_and_dest(instruction, dockerfile.escape)
        if parsed is None:
            continue
        sources, dest = parsed
        source_from = next((f.value for f in instruction.flags if f.name == "from"), None)
        heredocs = {f"<<{d.name}": d for d in instruction.heredocs}
        many = len(sources) > 1 or any(c in s for s in sources for c in _GLOB_CHARS)
        common = {"line": instruction.line, "stage": stage.index, "keyword": instruction.keyword}
        for source in sources:
            doc = heredocs.get(source.replace("<<-", "<<").replace('"', "").replace("'", ""))
            if doc is not None:
                target = _target(dest, workdir, many, doc.name)
                out.append(Copied(container=target, inline=doc.content, explicit=True, **common))
            elif source_from:
                target = _target(dest, workdir, many, posixpath.basename(source.rstrip("/")))
                out.append(Copied(container=target, image_path=f"{source_from}:{source}", explicit=True, **common))
            else:
                for repo_path, below in _repo_sources(source, dockerfile_dir, files):
                    if below is None:
                        target = _target(dest, workdir, many, posixpath.basename(repo_path))
                    else:
                        target = _target(dest, workdir, True, below)
                    explicit = below is None and not any(c in source for c in _GLOB_CHARS)
                    out.append(Copied(container=target, repo_path=repo_path, explicit=explicit, **common))
    return out
