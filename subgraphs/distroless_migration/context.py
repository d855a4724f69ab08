"""Facts about a Dockerfile that the migration reads but does not change: the repository files its
COPYs name, the stage chain behind a stage, whether the final image copies only static programs, and the
RUNs that rely on bash (which Chainguard -dev images are not documented to have)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from repocontext.dockerfile.words import unquote
from repocontext.model import Dockerfile, Instruction, Stage
from subgraphs.distroless_migration.artifacts import collect, run_commands

Reader = Callable[[str], str | None]


def candidate_files(dockerfile: Dockerfile, path: str, read: Reader) -> list[str]:
    """Repository files named directly by COPY/ADD that `read` can find (when no file list is given)."""
    base = posixpath.dirname(path)
    found: set[str] = set()
    for stage in dockerfile.stages:
        for ins in stage.instructions:
            if ins.keyword not in ("COPY", "ADD") or any(f.name == "from" for f in ins.flags):
                continue
            words = ins.args if ins.form == "exec" else [unquote(w, dockerfile.escape) for w in ins.args]
            for source in words[:-1]:
                if source.startswith("<<") or "://" in source or any(c in source for c in "*?["):
                    continue
                for candidate in {posixpath.normpath(posixpath.join(base, source)), posixpath.normpath(source)}:
                    candidate = candidate.lstrip("/")
                    if candidate and not candidate.startswith("..") and candidate != "." and read(candidate):
                        found.add(candidate)
    return sorted(found)


def stage_named(dockerfile: Dockerfile, ref: str) -> int | None:
    found = next((s.index for s in dockerfile.stages if s.name is not None and s.name == ref.lower()), None)
    return found if found is not None or not ref.isdigit() else int(ref)


def chain_of(dockerfile: Dockerfile, index: int) -> list[Stage]:
    """The stage and the stages it is built FROM, root first."""
    stages = [dockerfile.stages[index]]
    while stages[-1].base.stage_index is not None:
        stages.append(dockerfile.stages[stages[-1].base.stage_index])
    return stages[::-1]


def static_copies(dockerfile: Dockerfile, path: str, chain: list[Stage]) -> bool:
    """Everything the final image copies from other stages comes from Go builds with CGO_ENABLED=0 (static)."""
    sources = [f.value for s in chain for i in s.instructions if i.keyword in ("COPY", "ADD")
               for f in i.flags if f.name == "from" and f.value]
    indexes = [stage_named(dockerfile, name) for name in sources]
    if not indexes or None in indexes:
        return False
    return all(collect(path, chain_of(dockerfile, i), dockerfile.escape).cgo_disabled for i in indexes if i is not None)


def _runs_bash(argv: list[str]) -> bool:
    """`bash …`, or a heredoc run by bash (`<<EOF bash`)."""
    words = argv[1:2] if argv and argv[0].startswith("<<") else argv[:1]
    return any(posixpath.basename(w) == "bash" for w in words)


def bash_lines(dockerfile: Dockerfile, stages: set[int], rewritten: dict[int, Instruction]) -> list[int]:
    """Lines of SHELL or RUN instructions (in the given stages; RUNs as rewritten) that run bash."""
    lines: list[int] = []
    for stage in dockerfile.stages:
        for ins in stage.instructions if stage.index in stages else []:
            shell = ins.keyword == "SHELL" and any(posixpath.basename(a) == "bash" for a in ins.args[:1])
            run = rewritten.get(ins.line, ins)
            if shell or (ins.keyword == "RUN" and any(_runs_bash(argv) for argv in run_commands(run))):
                lines.append(ins.line)
    return lines
