"""The shell-free runtime stage added after a restructured final stage.

Layout, in this order: FROM the non -dev image (with the original --platform), the ARGs that
the copied instructions refer to, every ENV and LABEL of the final image (verbatim), WORKDIR,
one `COPY --from=BUILDER` per artifact, EXPOSE / VOLUME / STOPSIGNAL (verbatim), the effective
HEALTHCHECK, the last USER, then ENTRYPOINT / CMD in exec form. Keywords follow the case of the
original FROM.
"""

from __future__ import annotations

import re

from repocontext.dockerfile.copies import walk
from repocontext.model import Instruction, Stage
from subgraphs.distroless_migration.artifacts import Copy
from subgraphs.distroless_migration.commands import Spec, render_command

HEADER = "# Shell-free runtime: only what the build produced (no shell, no package manager).\n"
VERBATIM = ("EXPOSE", "VOLUME", "STOPSIGNAL")
BUILD_ENV = frozenset({"DEBIAN_FRONTEND"})
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def _line(raw: str) -> str:
    return raw if raw.endswith("\n") else raw + "\n"


def _keyword(name: str, lower: bool) -> str:
    return name.lower() if lower else name


def builder_name(taken: set[str]) -> str:
    for name in ("build", "builder"):
        if name not in taken:
            return name
    n = 2
    while f"build-{n}" in taken:
        n += 1
    return f"build-{n}"


def render_runtime_stage(chain: list[Stage], image: str, builder: str, copies: list[Copy], specs: list[Spec],
                         argv: dict[int, list[str] | None], entrypoint: list[str] | None) -> str:
    """The text of the new final stage (starting with a blank line and a comment)."""
    final = chain[-1]
    from_instruction = final.instructions[0]
    lower = from_instruction.keyword_raw.islower()
    instructions = [i for _s, i, _w in walk(chain)]
    platform = f"--platform={final.platform} " if final.platform else ""
    out = ["\n", HEADER, f"{_keyword('FROM', lower)} {platform}{image}\n"]
    carried = [i for i in instructions if i.keyword == "LABEL" or (i.keyword == "ENV" and not _build_only_env(i))]
    used = {m.group(1) for i in carried for m in _VARIABLE.finditer(i.value)}
    out += [_line(i.raw) for i in instructions if i.keyword == "ARG" and _declares(i, used)]
    out += [_line(i.raw) for i in carried]
    if final.workdir and final.workdir != "/":
        out.append(f"{_keyword('WORKDIR', lower)} {final.workdir}\n")
    out += [f"{_keyword('COPY', lower)} --from={builder} {c.source} {c.dest}\n" for c in copies]
    out += [_line(i.raw) for i in instructions if i.keyword in VERBATIM]
    out += _commands([s for s in specs if s.keyword == "HEALTHCHECK"], argv, entrypoint, lower)
    out += [_line(i.raw) for i in runtime_users(chain)][-1:]
    out += _commands([s for s in specs if s.keyword != "HEALTHCHECK"], argv, entrypoint, lower)
    return "".join(out)


def runtime_users(chain: list[Stage]) -> list[Instruction]:
    """USER instructions that matter at runtime: a `USER root` right after a FROM is taken to be for the build
    steps (the pattern a -dev builder needs), so the runtime keeps the image's nonroot user."""
    return [i for s in chain for n, i in enumerate(s.instructions) if i.keyword == "USER"
            and not (n == 1 and i.value.split(":", 1)[0] in ("root", "0"))]


def _build_only_env(instruction: Instruction) -> bool:
    """ENV that only configures package installs (DEBIAN_FRONTEND): meaningless in the runtime."""
    names = {w.split("=", 1)[0] for w in instruction.args if "=" in w} or set(instruction.args[:1])
    return names <= BUILD_ENV


def _declares(instruction: Instruction, names: set[str]) -> bool:
    return any(word.split("=", 1)[0] in names for word in instruction.args)


def _commands(specs: list[Spec], argv: dict[int, list[str] | None], entrypoint: list[str] | None,
              lower: bool) -> list[str]:
    out: list[str] = []
    for spec in sorted(specs, key=lambda s: ("HEALTHCHECK", "ENTRYPOINT", "CMD").index(s.keyword)):
        if spec.keyword == "CMD" and entrypoint is not None:
            out.append(render_command(_keyword("ENTRYPOINT", lower), entrypoint))
        if spec.line in argv and argv[spec.line] is None:
            continue
        keyword = spec.instruction.keyword_raw
        if spec.line in argv:
            out.append(render_command(keyword, argv[spec.line], spec.instruction))
        else:
            out.append(_line(spec.instruction.raw))
    return out
