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
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TypedDict

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


class _Where(TypedDict):
    """The instruction a Copied comes from."""

    line: int
    stage: int
    keyword: str


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


class Listing:
    """Repository paths for COPY source matching: kept in the given order, searched by sorted prefix.

    Build one per file list and pass it for every Dockerfile: matching a source
    then costs a binary search plus the files below it, not a scan of the repository.
    """

    def __init__(self, files: Sequence[str]) -> None:
        self.files = list(files)
        self.order = sorted(range(len(self.files)), key=self.files.__getitem__)
        self.keys = [self.files[i] for i in self.order]

    def under(self, prefix: str) -> list[int]:
        """Positions (in the given order) of `prefix` itself and every path below it; all when it is ""."""
        if not prefix:
            return list(range(len(self.files)))
        found = []
        exact = bisect_left(self.keys, prefix)
        while exact < len(self.keys) and self.keys[exact] == prefix:
            found.append(self.order[exact])
            exact += 1
        # "a/b/..." sorts in one run, between "a/b/" and "a/b0" ("0" follows "/").
        start, end = bisect_left(self.keys, prefix + "/"), bisect_left(self.keys, prefix + "0")
        found += self.order[start:end]
        return sorted(found)


def _as_listing(files: Sequence[str] | Listing) -> Listing:
    return files if isinstance(files, Listing) else Listing(files)


def _match(pattern: str, files: Listing) -> list[tuple[str, str | None]]:
    """(repo path, path below the matched directory or None for a direct match)."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not any(c in part for part in parts for c in _GLOB_CHARS):
        return _match_literal(parts, files)
    return _match_glob(parts, files)


def _match_literal(parts: list[str], files: Listing) -> list[tuple[str, str | None]]:
    """_match for a source without wildcards: every path `under` it is the source or below it (`COPY . .`
    of a large tree asked fnmatch about every segment of every file)."""
    source = "/".join(parts)
    cut = len(source) + 1 if source else 0
    return [(path, path[cut:] or None) for path in map(files.files.__getitem__, files.under(source))]


def _match_glob(parts: list[str], files: Listing) -> list[tuple[str, str | None]]:
    literal: list[str] = []
    for part in parts:  # fnmatch of a part without wildcards is plain equality: search by that prefix
        if any(c in part for c in _GLOB_CHARS):
            break
        literal.append(part)
    found: list[tuple[str, str | None]] = []
    for position in files.under("/".join(literal)):
        path = files.files[position]
        segments = path.split("/")
        if len(segments) < len(parts) or not all(fnmatchcase(s, p) for s, p in zip(segments, parts, strict=False)):
            continue
        found.append((path, None if len(segments) == len(parts) else "/".join(segments[len(parts):])))
    return found


def _repo_sources(source: str, dockerfile_dir: str, files: Listing) -> list[tuple[str, str | None]]:
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


def _directory(dest: str, workdir: str) -> str:
    """Where a directory source's files land, ending in "/": `_directory(d, w) + below` is `_target(d, w, True,
    below)` for a repository path `below` (no empty, "." or ".." segment), without a join and a normpath per
    file (`COPY . .` of a large tree)."""
    base = posixpath.normpath(dest if dest.startswith("/") else posixpath.join(workdir, dest))
    return base if base.endswith("/") else base + "/"


def copied_files(dockerfile: Dockerfile, path: str, files: Sequence[str] | Listing) -> list[Copied]:
    """Every file COPY/ADD put into the final image (chain order); `files` lists the repository."""
    dockerfile_dir = posixpath.dirname(path)
    listing = _as_listing(files)
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
        common = _Where(line=instruction.line, stage=stage.index, keyword=instruction.keyword)
        for source in sources:
            doc = heredocs.get(source.replace("<<-", "<<").replace('"', "").replace("'", ""))
            if doc is not None:
                target = _target(dest, workdir, many, doc.name)
                out.append(Copied(container=target, inline=doc.content, explicit=True, **common))
            elif source_from:
                target = _target(dest, workdir, many, posixpath.basename(source.rstrip("/")))
                out.append(Copied(container=target, image_path=f"{source_from}:{source}", explicit=True, **common))
            else:
                directory = _directory(dest, workdir)
                for repo_path, below in _repo_sources(source, dockerfile_dir, listing):
                    if below is None:
                        target = _target(dest, workdir, many, posixpath.basename(repo_path))
                    else:
                        target = directory + below
                    explicit = below is None and not any(c in source for c in _GLOB_CHARS)
                    out.append(Copied(container=target, repo_path=repo_path, explicit=explicit, **common))
    return out
