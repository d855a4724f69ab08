"""[runtime.py]
The final stage: shell-free or not, from the evidence, and how.

Modes:
- "as-is": scratch, or an image with no mapping (reported as a blocker).
- "plain": the final image runs no RUN: its FROM maps to the non -dev image and shell-form
  commands become exec form.
- "restructure": the final image runs RUNs: the stage becomes a -dev builder and a new final
  stage on the non -dev image copies the build outputs (see artifacts.py).
- "keep-dev": something needs a shell: the final stage stays on the -dev image (wolfi-base for a
  distro), and every blocker says where (file:line) and what would remove it.

Blockers: a shell-form or `sh -c` command that cannot be split without a shell (variables,
pipes, &&, redirections, globs), an entrypoint/command script (shell scripts; a script for the
runtime's own interpreter is run through it instead), a deployment override that runs a shell, a
program the runtime image lacks, a RUN in a language image we cannot restructure (only Python,
Node, Go, Java and distro bases are), and the package and layout blockers of artifacts.py. A RUN
alone is never a blocker: it stays in the builder.

A restructure is refused (the stage stays -dev, with a blocker) when the final image sets no CMD or
ENTRYPOINT (the runtime would only run the base image's default) or when a RUN's outputs would be lost
(artifacts.lost_outputs: global installs, writes outside the copied paths).

Runtime images: Python → python:X.Y, Node → node, Java → jre, Go → static when CGO_ENABLED=0 is
set (else glibc-dynamic), a distro base → glibc-dynamic when restructured, and without RUNs too unless
everything it copies from other stages is a Go build with CGO_ENABLED=0 (then static): a program built
on the (now glibc-based Wolfi) builder links glibc, which static lacks.
The image's own ENTRYPOINT (python, node, java, …) is reset with `ENTRYPOINT []` only when CMD starts with
the program itself (commands.py); a CMD of arguments (`CMD ["index.js"]`) stays on it.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from repocontext.dockerfile.copies import walk
from repocontext.dockerfile.packages import SHELLS
from repocontext.dockerfile.shell import program_index
from repocontext.model import Instruction, ShellEvidence, Stage
from subgraphs.distroless_migration.artifacts import Artifacts, Installed, collect, lost_outputs, package_blockers
from subgraphs.distroless_migration.commands import (
    Spec,
    for_cmd,
    healthcheck_command,
    is_argument,
    shell_to_argv,
    unwrap_shell,
)
from subgraphs.distroless_migration.images import SHELLS as CATALOG_SHELLS
from subgraphs.distroless_migration.images import ImageChoice, Unmapped, cut_version, java_for, variant
from subgraphs.distroless_migration.models import Blocker, EvidenceRef, MigrationOptions, RuntimeDecision

RESTRUCTURABLE = frozenset({"python", "node", "go", "java"})
SCRIPT_KINDS = frozenset({"entrypoint-script", "cmd-script"})
ALREADY_NO_SHELL = "the image has no shell, so this fails already"
SYSTEM_PATH = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
STANDARD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


@dataclass
class FinalContext:
    path: str
    chain: list[Stage]
    root: ImageChoice | Unmapped | None  # None: scratch
    run_lines: list[int]  # RUNs of the final image that still run after rewriting
    installed: list[Installed]
    evidence: list[ShellEvidence]
    deployment: list[ShellEvidence]
    options: MigrationOptions
    escape: str = "\\"
    siblings: list[int] = field(default_factory=list)  # FROM lines of other stages on the final root that run commands
    static_copies: bool = False  # everything copied from other stages is a static (CGO_ENABLED=0) Go build
    unconverted: list[int] = field(default_factory=list)  # lines of RUNs with commands kept unconverted (blockers)
    rewritten: dict[int, Instruction] = field(default_factory=dict)  # RUNs as rewritten for Wolfi, by line

    @property
    def has_run(self) -> bool:
        return bool(self.run_lines)


@dataclass
class FinalPlan:
    mode: str
    decision: RuntimeDecision
    target: ImageChoice | None = None  # the final image (dev variant for keep-dev)
    dev: bool = False
    argv: dict[int, list[str] | None] = field(default_factory=dict)  # instruction line → new exec argv (None: drop)
    entrypoint: list[str] | None = None  # the ENTRYPOINT to set before the final CMD (None: keep the image's)
    artifacts: Artifacts | None = None


def effective_specs(chain: list[Stage]) -> list[Spec]:
    """ENTRYPOINT, CMD and HEALTHCHECK that the final image runs."""
    final = chain[-1]
    by_line = {i.line: i for _s, i, _w in walk(chain)}
    specs: list[Spec] = []
    for keyword, command in (("ENTRYPOINT", final.entrypoint), ("CMD", final.cmd)):
        if command is not None and command.line in by_line:
            specs.append(Spec(keyword, by_line[command.line], command.form, list(command.args), command.value))
    checks = [i for _s, i, _w in walk(chain) if i.keyword == "HEALTHCHECK"]
    found = healthcheck_command(checks[-1]) if checks else None
    if found is not None:
        form, argv, text = found
        specs.append(Spec("HEALTHCHECK", checks[-1], form, argv or [], text))
    return specs


class _Decider:
    def __init__(self, ctx: FinalContext) -> None:
        self.ctx = ctx
        self.blockers: list[Blocker] = []
        self.notes: list[str] = []
        self.argv: dict[int, list[str] | None] = {}
        self.fixes: list[str] = []  # notes on command rewrites, kept only when they are applied

    def block(self, line: int, what: str, how: str, file: str | None = None) -> None:
        self.blockers.append(Blocker(file=file or self.ctx.path, line=line, what=what, how=how))

    def decide(self) -> FinalPlan:
        ctx = self.ctx
        refs = [EvidenceRef(file=e.file, line=e.line, kind=e.kind, detail=e.detail)
                for e in [*ctx.evidence, *ctx.deployment]]
        decision = RuntimeDecision(stage=ctx.chain[-1].index, evidence=refs)
        if ctx.root is None or isinstance(ctx.root, Unmapped):
            return self._as_is(decision)
        root = ctx.root
        specs = effective_specs(ctx.chain)
        for spec in specs:
            self._spec(spec)
        self._ignored_cmd(specs)
        self._scripts(specs, root)
        if not ctx.has_run:
            for line in ctx.siblings:
                self.block(line, "this stage is built FROM the final image's base stage and runs commands, so that "
                           "base needs its shell", "give this stage its own FROM (the -dev image) so the final stage "
                           "can use the shell-free one")
        for e in ctx.deployment:
            self.block(e.line, e.detail, "give the deployment an exec-form command that runs the program directly",
                       e.file)
        if root.debug:
            self.notes.append("the source image has a shell on purpose (distroless :debug): kept the -dev variant")
            return self._finish(decision, "keep-dev", root, specs)
        artifacts = self._artifacts(root)
        target = self._target(root, artifacts)
        self._programs(specs, target, artifacts, root)
        mode = "restructure" if ctx.has_run else "plain"
        return self._finish(decision, "keep-dev" if self.blockers else mode, target, specs, artifacts)

    def _as_is(self, decision: RuntimeDecision) -> FinalPlan:
        if isinstance(self.ctx.root, Unmapped):
            self.block(self.ctx.chain[0].line, self.ctx.root.reason, "add the image to the mapping file's images:")
        else:
            decision.shell_free = True
            for e in self.ctx.evidence:
                if e.kind != "shell-script-copied":
                    self.block(e.line, e.detail, f"{ALREADY_NO_SHELL}: use an exec form that runs the program")
        decision.blockers, decision.notes = self.blockers, self.notes
        return FinalPlan(mode="as-is", decision=decision)

    def _spec(self, spec: Spec) -> None:
        if spec.form == "shell":
            argv, why = shell_to_argv(spec.text)
        else:
            k = program_index(spec.argv)
            if k is None or posixpath.basename(spec.argv[k]) not in SHELLS:
                return
            argv, why = unwrap_shell(spec.argv[k:]) if k == 0 else (None, "runs a shell behind a wrapper")
        if argv is None:
            self.block(spec.line, f"{spec.keyword} {spec.text} {why}",
                       f"write {spec.keyword} in exec form (JSON array) with no shell features: move variables into "
                       "ENV or the app's config, and pipes or && into the build or the app")
        else:
            self.argv[spec.line] = argv

    def _ignored_cmd(self, specs: list[Spec]) -> None:
        """A shell-form ENTRYPOINT ignores CMD; in exec form it would pass CMD as arguments, so CMD goes."""
        entry = next((s for s in specs if s.keyword == "ENTRYPOINT"), None)
        if entry is None or entry.form != "shell" or entry.line not in self.argv:
            return
        for spec in specs:
            if spec.keyword == "CMD":
                self.argv[spec.line] = None
                self.fixes.append(f"line {spec.line}: CMD dropped: the shell-form ENTRYPOINT ignored it, "
                                  "the exec form would pass it as arguments")

    def _scripts(self, specs: list[Spec], root: ImageChoice) -> None:
        by_line = {s.line: s for s in specs}
        for e in self.ctx.evidence:
            if e.kind not in SCRIPT_KINDS or e.line not in by_line:
                continue
            spec = by_line[e.line]
            interpreter = _interpreter(e.shebang)
            argv = self.argv.get(spec.line, spec.argv)
            script = e.script or "the script"
            if interpreter and interpreter in root.info.programs and argv and e.shebang and not _is_shell(e.shebang):
                self.argv[spec.line] = [interpreter, *argv]
                self.fixes.append(f"line {spec.line}: {script} runs through {interpreter} (its shebang needs "
                                  "/usr/bin/env, which the runtime image lacks)")
                continue
            self.block(e.line, e.detail, f"replace {posixpath.basename(script)} with an exec-form {spec.keyword} that "
                       "runs the program directly (move its setup into build steps or the application)")

    def _artifacts(self, root: ImageChoice) -> Artifacts:
        ctx = self.ctx
        artifacts = collect(ctx.path, ctx.chain, ctx.escape)
        if not ctx.has_run:
            return artifacts
        language = root.info.language
        first_run = ctx.run_lines[0]
        if language is not None and language not in RESTRUCTURABLE:
            self.block(first_run, f"the final {root.name} image runs build steps (RUN)",
                       f"move the build into a builder stage and COPY its outputs into {root.name}; "
                       f"restructuring {root.name} images automatically is not supported")
        final = ctx.chain[-1]
        if final.workdir and final.workdir != "/":
            artifacts.add(final.workdir)
        if final.user and _account(final.user) & artifacts.users:
            artifacts.add("/etc/passwd", order=0)
            artifacts.add("/etc/group", order=0)
        package_blockers(ctx.path, ctx.installed, ctx.options.mapping.build_only, artifacts)
        if final.entrypoint is None and final.cmd is None:
            self.block(first_run, "the final stage sets no CMD or ENTRYPOINT: a restructured runtime would only run "
                       f"the base image's default ({root.info.entrypoint or 'nothing'})",
                       "set the CMD (or ENTRYPOINT) the container runs, in exec form")
        if artifacts.system_pip:
            version = cut_version(root.tag)
            if version is None or "." not in version:
                self.block(artifacts.pip_line or first_run, "pip installs into the system site-packages, but the "
                           f"Python version of {root.name}:{root.tag} is unknown",
                           "pin the image to python:3.X or use a virtualenv")
            else:
                artifacts.add(f"/usr/lib/python{version}/site-packages", order=1)
        self.blockers += artifacts.blockers
        self.blockers += lost_outputs(ctx.path, ctx.chain, ctx.run_lines, artifacts, ctx.rewritten)
        for line in sorted(set(ctx.unconverted) & set(ctx.run_lines)):
            self.block(line, "this RUN keeps commands that could not be converted (see the blockers): what they "
                       "install cannot be carried into a shell-free runtime", "resolve those blockers first")
        return artifacts

    def _target(self, root: ImageChoice, artifacts: Artifacts) -> ImageChoice:
        language = root.info.language
        if language == "go":  # a Go program needs no Go toolchain to run
            return root.named("static" if artifacts.cgo_disabled else "glibc-dynamic").with_tag("latest")
        if not self.ctx.has_run and root.kind == "distro":
            if self.ctx.static_copies:
                return root.named("static")
            self.notes.append("glibc-dynamic rather than static: what this stage copies may link glibc (a program "
                              "built on the Wolfi builder does); static suffices for statically linked programs")
            return ImageChoice(name="glibc-dynamic", tag="latest", kind="distro")
        if not self.ctx.has_run:
            return java_for(root, builds=False)
        if language == "java":
            return java_for(root, builds=False)
        if root.kind == "distro" or language is None:
            return ImageChoice(name="glibc-dynamic", tag="latest", kind="distro")
        return root

    def _programs(self, specs: list[Spec], target: ImageChoice, artifacts: Artifacts, root: ImageChoice) -> None:
        final = self.ctx.chain[-1]
        has_entrypoint = any(s.keyword == "ENTRYPOINT" and (s.form == "shell" or s.argv) for s in specs)  # [] is none
        blocked = {b.line for b in self.blockers}
        for spec in specs:
            if (spec.keyword == "CMD" and has_entrypoint) or spec.line in blocked:
                continue
            argv = self.argv.get(spec.line, spec.argv)
            if argv is None:
                continue  # dropped (_ignored_cmd): nothing of it runs
            if spec.keyword == "CMD" and spec.form == "exec" and argv and is_argument(argv[0], root.info.language):
                continue  # arguments of the image's own ENTRYPOINT (the interpreter), not a program
            k = program_index(argv) if spec.line in self.argv or spec.form == "exec" else None
            if k is None:
                continue
            fixed = self._program(argv[k], target, artifacts, final)
            if fixed is None:
                how = ("check health from outside (a Kubernetes probe) or with a program the image has, e.g. the "
                       "interpreter" if spec.keyword == "HEALTHCHECK" else "run a program the image has or that "
                       "the build copies in (the interpreter, or a binary built in the builder)")
                self.block(spec.line, f"{spec.keyword} runs {argv[k]}, which the runtime image {target.name} "
                           "does not have", how)
            elif fixed != argv[k]:
                self.argv[spec.line] = [*argv[:k], fixed, *argv[k + 1:]]

    def _program(self, program: str, target: ImageChoice, artifacts: Artifacts, final: Stage) -> str | None:
        """The program as the runtime image can run it, or None when it is not there."""
        programs = set(target.info.programs)
        if target.name == "python" and cut_version(target.tag):
            programs.add(f"python{cut_version(target.tag)}")
        name = posixpath.basename(program)
        if "/" in program:
            path = posixpath.normpath(posixpath.join(final.workdir or "/", program))
            if artifacts.covered(path):
                return program
            return name if name in programs else None
        if name in programs:
            return program
        copied = next((c.dest for c in artifacts.copies if c.dest in {f"{d}/{name}" for d in STANDARD_PATH}), None)
        if copied is not None and posixpath.dirname(copied) in SYSTEM_PATH:
            return program  # /usr/bin and /bin are on every image's PATH
        if copied is not None:
            self.notes.append(f"{name} is run by its path {copied}: Chainguard images' PATH may lack its directory")
            return copied
        path_dirs = [d for d in final.env.get("PATH", "").split(":") if d.startswith("/")]
        if any(artifacts.covered(d) for d in path_dirs):
            self.notes.append(f"{name} is assumed to be on PATH in a copied directory ({final.env['PATH']})")
            return program
        if artifacts.system_pip:
            artifacts.add(f"/usr/bin/{name}", order=3)
            self.notes.append(f"{name}: taken to be a console script pip installed into /usr/bin in the builder")
            return program
        return None

    def _finish(self, decision: RuntimeDecision, mode: str, target: ImageChoice, specs: list[Spec],
                artifacts: Artifacts | None = None) -> FinalPlan:
        dev = mode == "keep-dev"
        if dev:
            target = self.ctx.root if isinstance(self.ctx.root, ImageChoice) else target
            target = java_for(target, builds=True) if self.ctx.has_run else target
            if target.kind == "distro":
                target = target.named("wolfi-base")
            self.argv = {}
        entrypoint = self._entrypoint(target, specs)
        if not dev:
            self.notes[:0] = [*(artifacts.notes if artifacts else []), *self.fixes]
        decision.image = target.reference(self.ctx.options, dev)
        shipped = variant(target.name, False)  # catalog data: does the default image carry busybox or bash?
        decision.shell_free = not dev and not target.info.programs & SHELLS and not (shipped and shipped.shell)
        if not dev and shipped is not None and shipped.shell:
            self.notes.append(f"{decision.image} has no package manager, but the Chainguard catalog data lists "
                              f"{', '.join(sorted(shipped.packages & CATALOG_SHELLS))} in it: it keeps a shell")
        decision.restructured = mode == "restructure"
        decision.blockers = sorted(self.blockers, key=lambda b: (b.file != self.ctx.path, b.line))
        decision.notes = self.notes
        return FinalPlan(mode=mode, decision=decision, target=target, dev=dev, argv=self.argv,
                         entrypoint=entrypoint, artifacts=artifacts)

    def _entrypoint(self, target: ImageChoice, specs: list[Spec]) -> list[str] | None:
        final, root = self.ctx.chain[-1], self.ctx.root
        cmd = next((s for s in specs if s.keyword == "CMD"), None)
        if final.entrypoint is not None or cmd is None or not isinstance(root, ImageChoice):
            return None
        argv = self.argv.get(cmd.line) or cmd.argv
        form = "exec" if cmd.line in self.argv else cmd.form
        choice = for_cmd(form, argv, root, target, self.ctx.chain[0].base.raw, cmd.line)
        if choice.note:
            self.notes.append(choice.note)
        return choice.argv


def _account(user: str) -> set[str]:
    name, _, group = user.partition(":")
    return {n for n in (name, group) if n}


def _interpreter(shebang: str | None) -> str | None:
    if not shebang:
        return None
    words = shebang[2:].split()
    if words and posixpath.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    return posixpath.basename(words[0]) if words else None


def _is_shell(shebang: str) -> bool:
    return _interpreter(shebang) in SHELLS


def decide(ctx: FinalContext) -> FinalPlan:
    return _Decider(ctx).decide()
