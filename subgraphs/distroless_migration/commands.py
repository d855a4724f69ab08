"""The commands an image runs (CMD, ENTRYPOINT, HEALTHCHECK) on the new images: the exec form of a shell-form
command, the ENTRYPOINT a CMD needs on its Chainguard image, and the text of the shell-free runtime stage
that ends with them.

CMD / ENTRYPOINT / HEALTHCHECK → exec form (`shell_to_argv`), when no shell feature is needed.

Docker runs a shell-form command as `/bin/sh -c "…"`. It can become an exec form
(split like a shell would, with shlex) only when the text uses no expansion,
redirection, pipe, list, glob, subshell or leading assignment; a leading `exec` is
dropped (exec form already replaces PID 1). An exec form that runs a shell with
`-c` is unwrapped under the same condition.

Whether a CMD still runs the same on the Chainguard image's ENTRYPOINT, and the ENTRYPOINT to set if not.

Conventions relied on (from the images' published configs; none of this was run here, there is no Docker
engine):
- Chainguard: python → /usr/bin/python, node → /usr/bin/node, jre/jdk → /usr/bin/java, go → /usr/bin/go,
  ruby → /usr/bin/ruby, php → /bin/php, nginx → /usr/sbin/nginx, maven → mvn, gradle → gradle,
  redis → redis-server; the -dev variants keep it. static, glibc-dynamic, wolfi-base: none (images.py).
- Docker Hub sources: python, golang, rust, ruby, openjdk, amazoncorretto and the distros set no ENTRYPOINT;
  eclipse-temurin, maven and nginx have one that ends in `exec "$@"`: for all of these CMD is the whole
  command line. node's docker-entrypoint.sh prepends `node` when CMD's first word is an option or not a
  command (`CMD ["index.js"]` → `node index.js`); php, redis and postgres prepend their program when the
  first word is an option (redis also for a `.conf` file). gcr.io/distroless python3 / nodejs run CMD as
  arguments of the interpreter; distroless java of `java -jar`.

Rule: when no ENTRYPOINT is set in the Dockerfile and CMD's first word is the program itself (a name or
path like python, node, npm, java, /app/bin, or any shell-form CMD), `ENTRYPOINT []` goes before CMD so the
image's own ENTRYPOINT does not get the program as its first argument. When the first word is an argument
(an option, a script for the image's interpreter such as index.js / app.py / app.jar, a Java main class) CMD
stays on the image's ENTRYPOINT, which is what node/php/redis images did; a distroless java source gets
`ENTRYPOINT ["java", "-jar"]` (Chainguard's is java alone). A bare name is taken to be a program:
a node script without a .js extension would be misread (the note says so).

The shell-free runtime stage added after a restructured final stage (`render_runtime_stage`).

Layout, in this order: FROM the non -dev image (with the original --platform), the ARGs that
the copied instructions refer to, every ENV and LABEL of the final image (verbatim), WORKDIR,
one `COPY --from=BUILDER` per artifact, EXPOSE / VOLUME / STOPSIGNAL (verbatim), the effective
HEALTHCHECK, the last USER, then ENTRYPOINT / CMD in exec form. Keywords follow the case of the
original FROM.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass, field

from repocontext.dockerfile.copies import walk
from repocontext.dockerfile.packages import SHELLS, shell_script_of
from repocontext.dockerfile.shellwords import is_assignment
from repocontext.dockerfile.words import parse_exec
from repocontext.model import Instruction, Stage
from subgraphs.distroless_migration.artifacts import Copy
from subgraphs.distroless_migration.images import JAVA, UNKNOWN_IMAGE, ImageChoice

_SPECIAL = frozenset("$`|&;<>()*?[]{}\n")
_AT_WORD_START = frozenset("#~")


def _needs_shell(text: str) -> str | None:
    """The first character that only a shell can interpret, else None."""
    quote = ""
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif quote == "'":
            quote = "" if ch == "'" else quote
        elif quote == '"':
            if ch in "$`":
                return ch
            escaped = ch == "\\"
            quote = "" if ch == '"' else quote
        elif ch == "\\":
            escaped = True
        elif ch in "'\"":
            quote = ch
        elif ch in _SPECIAL or (ch in _AT_WORD_START and (i == 0 or text[i - 1].isspace())):
            return ch
    return None


def shell_to_argv(text: str) -> tuple[list[str] | None, str]:
    """(argv, "") when `text` runs the same without a shell, else (None, why)."""
    special = _needs_shell(text)
    if special is not None:
        what = "a variable or command substitution" if special in "$`" else f"the shell syntax {special!r}"
        return None, f"uses {what}, which needs a shell"
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        return None, f"cannot be split like a shell would ({exc})"
    if argv and argv[0] == "exec":
        argv = argv[1:]
    if not argv:
        return None, "is empty"
    if is_assignment(argv[0]):
        return None, f"sets {argv[0].split('=', 1)[0]} for the command, which needs a shell (use ENV)"
    return argv, ""


def unwrap_shell(argv: list[str]) -> tuple[list[str] | None, str]:
    """An exec form that runs `sh -c SCRIPT`: the script as argv when it needs no shell."""
    script = shell_script_of(argv)
    if script is None:
        shell = posixpath.basename(argv[0]) if argv else ""
        return None, f"runs {shell} directly" if shell in SHELLS else "runs a shell"
    return shell_to_argv(script)


@dataclass(frozen=True)
class Spec:
    """The effective CMD / ENTRYPOINT / HEALTHCHECK command of the final image."""

    keyword: str  # "CMD" | "ENTRYPOINT" | "HEALTHCHECK"
    instruction: Instruction
    form: str  # "shell" | "exec"
    argv: list[str]  # exec form's argv; for shell form the shell words (for display)
    text: str  # the command as written

    @property
    def line(self) -> int:
        return self.instruction.line


def healthcheck_command(instruction: Instruction) -> tuple[str, list[str] | None, str] | None:
    """(form, exec argv, text) of `HEALTHCHECK … CMD …`; None for NONE."""
    value = instruction.value
    if not value.upper().startswith("CMD"):
        return None
    text = value[3:].strip()
    argv = parse_exec(text)
    return ("exec", argv, text) if argv is not None else ("shell", None, text)


def exec_json(argv: list[str]) -> str:
    return json.dumps(argv, ensure_ascii=False)


def render_command(keyword_raw: str, argv: list[str] | None, instruction: Instruction | None = None) -> str:
    """`CMD ["a", "b"]`, `ENTRYPOINT []`, or a HEALTHCHECK with its flags kept."""
    body = exec_json(argv if argv is not None else [])
    if instruction is not None and instruction.keyword == "HEALTHCHECK":
        flags = "".join(f" --{f.name}" + (f"={f.value}" if f.value is not None else "") for f in instruction.flags)
        cmd = "CMD" if keyword_raw.isupper() else "cmd"
        return f"{keyword_raw}{flags} {cmd} {body}\n"
    return f"{keyword_raw} {body}\n"


SCRIPTS: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyc", ".pyz", ".pyw"), "node": (".js", ".mjs", ".cjs"), "java": (".jar",),
    "ruby": (".rb",), "php": (".php", ".phar"), "redis": (".conf",), "nginx": (".conf",),
}
_MAIN_CLASS = re.compile(r"[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)+\Z")
JAVA_JAR = ["java", "-jar"]  # java is on PATH in jre/jdk


@dataclass(frozen=True)
class EntrypointChoice:
    argv: list[str] | None  # the ENTRYPOINT to write before CMD; None: keep the image's own
    note: str = ""

    @property
    def label(self) -> str:
        return "image" if self.argv is None else " ".join(self.argv) or "cleared"


def is_argument(word: str, language: str | None) -> bool:
    """CMD's first word is an argument of the image's program rather than a program of its own."""
    if word.startswith("-"):
        return True
    if language and word.endswith(SCRIPTS.get(language, ())):
        return True
    return language == "java" and "/" not in word and _MAIN_CLASS.match(word) is not None


def for_cmd(form: str, argv: list[str], root: ImageChoice, target: ImageChoice, source: str,
            line: int) -> EntrypointChoice:
    """What to write before the CMD at `line` (exec argv, or shell words), built FROM `source` mapped to `root`
    and now on `target`."""
    info = target.info
    if info is UNKNOWN_IMAGE:
        return EntrypointChoice(None, f"line {line}: the ENTRYPOINT of {target.name} is unknown here: check that CMD "
                                      "still runs as intended")
    if info.entrypoint is None or not argv:
        return EntrypointChoice(None)
    program = argv[0]
    if form == "shell" or not is_argument(program, info.language):
        return EntrypointChoice([], f"line {line}: ENTRYPOINT [] added before CMD: it starts with the program "
                                    f"({program}), which the image's ENTRYPOINT ({info.entrypoint}) would otherwise "
                                    "get as its first argument")
    if root.kind == "distroless" and target.name in JAVA:
        return EntrypointChoice(JAVA_JAR, f"line {line}: ENTRYPOINT [\"java\", \"-jar\"] added: {source} "
                                          "ran CMD with `java -jar`, the Chainguard image's ENTRYPOINT is java alone")
    return EntrypointChoice(None, f"line {line}: CMD starts with {program}, an argument: it stays on the image's "
                                  f"ENTRYPOINT ({info.entrypoint}); {_was(root, source)}")


def _was(root: ImageChoice, source: str) -> str:
    if root.kind in ("distroless", "chainguard"):
        return f"{source} passed it to its interpreter too"
    if root.name == "node":
        return f"{source}'s docker-entrypoint.sh ran it with node too"
    if root.name in ("php", "redis", "postgres"):
        return f"{source}'s entrypoint prepended its program for an option too"
    return f"on {source} it was run as a program (that only works for an executable file): check it"


@dataclass(frozen=True)
class Insert:
    stage: int
    line: int  # the CMD's line: the ENTRYPOINT goes before it
    argv: list[str]
    note: str


@dataclass
class StagePass:
    """Every stage's own CMD gets the ENTRYPOINT it needs on its new image, tracking what each stage inherits
    from the stage it is built FROM. The final CMD kept in place (plain or -dev mode) is the plan's: `final`
    holds its line and the plan's ENTRYPOINT, adjusted here to what the stage inherits."""

    stages: list[Stage]
    root_of: list[int]
    choices: dict[int, ImageChoice]  # mapped root stage → its image (as mapped from the source)
    targets: dict[int, ImageChoice]  # mapped root stage → the image its FROM now names
    final_line: int | None  # the final CMD handled by the plan, if any
    final_entrypoint: list[str] | None = None
    inserts: list[Insert] = field(default_factory=list)
    notes: dict[int, list[str]] = field(default_factory=dict)  # stage → notes on CMDs left on the image's ENTRYPOINT

    def run(self) -> StagePass:
        state: dict[int, str] = {}
        for stage in self.stages:
            parent = stage.base.stage_index
            state[stage.index] = self._stage(stage, state.get(parent, "image") if parent is not None else "image")
        return self

    def _stage(self, stage: Stage, inherited: str) -> str:
        lines = {i.line: i.keyword for i in stage.instructions}
        root = self.root_of[stage.index]
        choice, target = self.choices.get(root), self.targets.get(root)
        cmd = stage.cmd if stage.cmd is not None and lines.get(stage.cmd.line) == "CMD" else None
        if "ENTRYPOINT" in lines.values() or inherited == "user":
            return "user"
        if cmd is None or choice is None or target is None:
            return inherited
        if cmd.line == self.final_line:
            label = "image" if self.final_entrypoint is None else " ".join(self.final_entrypoint) or "cleared"
            if label == inherited:
                self.final_entrypoint = None  # the stage it is built FROM already set it
            elif label == "image":
                self.final_entrypoint = [target.info.entrypoint or ""]  # restore what the parent cleared
            return label
        pick = for_cmd(cmd.form, list(cmd.args), choice, target, self.stages[root].base.raw, cmd.line)
        if pick.label != inherited:
            argv = pick.argv if pick.argv is not None else [target.info.entrypoint or ""]
            note = pick.note if pick.argv is not None else \
                f"line {cmd.line}: ENTRYPOINT {argv} restored: the stage it is built FROM cleared it"
            self.inserts.append(Insert(stage.index, cmd.line, argv, note))
        elif pick.note and pick.argv is None:
            self.notes.setdefault(stage.index, []).append(pick.note)
        return pick.label


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
