"""Whether a CMD still runs the same on the Chainguard image's ENTRYPOINT, and the ENTRYPOINT to set if not.

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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from repocontext.model import Stage
from subgraphs.distroless_migration.images import JAVA, UNKNOWN_IMAGE, ImageChoice

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
