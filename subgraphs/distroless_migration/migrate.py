"""migrate_dockerfile: one Dockerfile → Chainguard images, with every decision reported.

Per stage: the base image is mapped (images.py; an invalid digest is dropped with a note), the FROM
word written (stages.py: ARG-parameterised FROMs stay parameterised), RUNs are rewritten for Wolfi
(rewrite.py), a stage that runs commands (or one built FROM it does) gets the -dev variant and `USER root`
after its FROM. A distro stage that installs a language runtime (python3, nodejs, openjdk, golang) moves
to that language's image, whose -dev variant provides those packages. Every stage's CMD gets the
ENTRYPOINT it needs on its new image (commands.py), so a stage used as a build target runs too.
The final stage is decided from the shell evidence (runtime.py) and, when its RUNs allow, restructured
into a -dev builder plus a shell-free runtime stage (artifacts.py, commands.py).

Nothing is dropped silently: what cannot be converted stays as written under a `# TODO(planner):` comment
and is an `ItemBlocker` of the migration (the work item is blocked unless keep_unconverted is set).

`Editor` makes the new Dockerfile text: the original pieces (trivia and instructions, in line order) with
some replaced, some dropped, text inserted before or after a piece, and text appended at the end.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from repocontext.dockerfile import parse
from repocontext.dockerfile.copies import chain as final_chain
from repocontext.dockerfile.shell import evidence as shell_evidence
from repocontext.model import Dockerfile, Instruction, ShellEvidence, Stage
from subgraphs.distroless_migration.artifacts import Installed
from subgraphs.distroless_migration.commands import (
    HEADER,
    StagePass,
    builder_name,
    render_command,
    render_runtime_stage,
    runtime_users,
)
from subgraphs.distroless_migration.images import ImageChoice, Unmapped, java_for, map_base, without_digest
from subgraphs.distroless_migration.models import (
    DockerfileMigration,
    ItemBlocker,
    MigrationOptions,
    PackageChange,
    StageChange,
    UnmappedPackage,
)
from subgraphs.distroless_migration.rewrite import RunContext, RunResult, installs_only, reparsed, rewrite_run
from subgraphs.distroless_migration.runtime import FinalContext, FinalPlan, decide, effective_specs
from subgraphs.distroless_migration.stages import (
    FromWords,
    Reader,
    Target,
    arg_only,
    bash_lines,
    candidate_files,
    copy_source,
    drops_privileges,
    keyword,
    needs_root,
    pick_runtime,
    present_in,
    replace_image,
    restore_user,
    static_copies,
    tag_template,
    user_root_follows,
)
from subgraphs.distroless_migration.verify import check
from subgraphs.distroless_migration.wolfi import APT_MANAGERS, RPM_MANAGERS, runtime_of


class Editor:
    def __init__(self, dockerfile: Dockerfile) -> None:
        pieces = [(t.line, t.raw) for t in dockerfile.trivia]
        pieces += [(i.line, i.raw) for i in dockerfile.preamble]
        pieces += [(i.line, i.raw) for s in dockerfile.stages for i in s.instructions]
        self.pieces = dict(sorted(pieces))
        self.before: dict[int, list[str]] = {}
        self.after: dict[int, list[str]] = {}
        self.tail: list[str] = []

    def raw(self, line: int) -> str:
        return self.pieces[line]

    def replace(self, line: int, raw: str) -> None:
        self.pieces[line] = raw

    def insert_before(self, line: int, text: str) -> None:
        self.before.setdefault(line, []).append(text)

    def insert_after(self, line: int, text: str) -> None:
        self.after.setdefault(line, []).append(text)

    def append(self, text: str) -> None:
        self.tail.append(text)

    def origin(self, new_line: int) -> int:
        """The original line a line of the rendered text comes from (text inserted around an instruction
        counts as that instruction's; the appended tail as the last line), so a check of the written file
        is reported where the user's file has it."""
        at, last = 1, 1
        for line, raw in self.pieces.items():
            extra = self.after.get(line, [])
            piece = raw + "\n" if extra and raw and not raw.endswith("\n") else raw
            size = sum(t.count("\n") for t in self.before.get(line, [])) + piece.count("\n") + \
                sum(t.count("\n") for t in extra)
            if raw and piece.count("\n") == 0 and not extra:
                size += 1  # a last piece without its newline still holds a line
            if at <= new_line < at + max(size, 1 if raw else 0):
                inside = new_line - at - sum(t.count("\n") for t in self.before.get(line, []))
                return line + max(0, min(inside, raw.count("\n") - 1 if raw.count("\n") else 0))
            at += size
            last = line
        return last

    def render(self) -> str:
        out: list[str] = []
        for line, raw in self.pieces.items():
            out += self.before.get(line, [])
            extra = self.after.get(line, [])
            out.append(raw + "\n" if extra and raw and not raw.endswith("\n") else raw)
            out += extra
        text = "".join(out)
        if self.tail:
            text += ("" if not text or text.endswith("\n") else "\n") + "".join(self.tail)
        return text


_LINE = re.compile(r"line \d+: |\b(?:apk|apt-get|apt|yum|dnf|microdnf|tdnf) (?=package)")  # a TODO's text, wherever it
# is and whichever manager installed the name: a migrated file's apk line keeps the TODO its apt line had


class _Migration:
    def __init__(self, text: str, path: str, options: MigrationOptions, read: Reader, files: list[str] | None,
                 deployment: list[ShellEvidence]) -> None:
        parsed = parse(text, path)
        self.text, self.path, self.options, self.read = text, path, options, read
        self.df: Dockerfile = parsed.dockerfile
        self.files, self.deployment = files, deployment
        self.problems = parsed.problems
        self.notes: list[str] = []
        self.editor = Editor(self.df)
        self.stages: list[Stage] = self.df.stages
        n = len(self.stages)
        self.root_of = [0] * n
        self.choice: dict[int, ImageChoice | Unmapped | None] = {}
        self.provided: dict[int, dict[str, str]] = {}
        self.has_run = [False] * n
        self.run_lines: list[int] = []  # RUNs still run after rewriting
        self.needs_shell = [False] * n
        self.needs_root = [False] * n  # a RUN of the stage (or of one built FROM it) writes or installs
        self.installed: list[list[Installed]] = [[] for _ in range(n)]
        self.packages: list[PackageChange] = []
        self.unmapped: list[UnmappedPackage] = []
        self.blockers: list[ItemBlocker] = []
        self.rewritten: dict[int, Instruction] = {}  # RUNs as rewritten, re-read (what the final image runs)
        self.changes: list[StageChange] = []
        self.digest_dropped: dict[int, int] = {}  # root stage → its FROM line, where an invalid digest was dropped
        self.froms = FromWords(self.stages, self.df.preamble, self.df.global_args, options, self.editor.replace)
        self.final_indexes = {s.index for s in final_chain(self.df)}
        self.kept_froms: list[int] = []  # FROM lines of stages left unchanged on purpose (not checked)

    def run(self) -> DockerfileMigration:
        if not self.stages:
            return DockerfileMigration(path=self.path, new_text=self.text, changed=False,
                                       notes=[f"line {line}: {message}" for line, message in self.problems])
        self._roots()
        self.notes[:0] = [f"line {line}: {message}" for line, message in self.problems
                          if not (line in self.digest_dropped.values() and "invalid digest" in message)]
        self._runs()
        self._shell_needs()
        mapped = {s.index for s in self.stages if isinstance(self.choice.get(self.root_of[s.index]), ImageChoice)}
        self.notes += [f"line {line}: runs bash, which Chainguard -dev images are not documented to have (BusyBox sh "
                       "is): add bash to an apk add line before it if the build fails"
                       for line in bash_lines(self.df, mapped, self.rewritten)]
        plan = self._decide()
        targets = self._targets(plan)
        self._froms(targets)
        self._entrypoints(targets, plan)
        self._final(plan)
        new_text = self.editor.render()
        if plan.mode == "restructure":
            self._added_stage(new_text, plan)
        written = {c.new_image for c in self.changes if c.new_image != c.old_image}
        checks = check(self.path, new_text, self.options.registry, self.kept_froms, written, self.text) \
            if new_text != self.text else []
        checks = [c.model_copy(update={"line": self.editor.origin(c.line)}) for c in checks]  # the user's lines
        return DockerfileMigration(
            path=self.path, new_text=new_text, changed=new_text != self.text, stages=self.changes,
            packages=sorted(self.packages, key=lambda p: p.line), unmapped=sorted(self.unmapped, key=lambda u: u.line),
            runtime=plan.decision, notes=self.notes, blockers=sorted(self.blockers, key=lambda b: b.line),
            keep_unconverted=self.options.keep_unconverted, checks=checks)

    # --- images and RUNs ----------------------------------------------------

    def _roots(self) -> None:
        for stage in self.stages:
            parent = stage.base.stage_index
            self.root_of[stage.index] = self.root_of[parent] if parent is not None else stage.index
            if parent is None:
                self.choice[stage.index] = None if stage.base.scratch else self._map(stage)
        for root, choice in self.choice.items():
            self.provided[root] = {}
            if isinstance(choice, ImageChoice) and choice.kind == "distro":
                self.choice[root] = self._language_switch(root, choice)

    def _map(self, stage: Stage) -> ImageChoice | Unmapped:
        choice = map_base(stage.base, self.options)
        fixed = without_digest(stage.base) if isinstance(choice, Unmapped) else None
        if fixed is None:
            return choice
        self.digest_dropped[stage.index] = stage.line
        return map_base(fixed, self.options)

    def _language_switch(self, root: int, choice: ImageChoice) -> ImageChoice:
        stages = [s for s in self.stages if self.root_of[s.index] == root]
        names = [p.name for s in stages for p in s.packages if p.manager in APT_MANAGERS | RPM_MANAGERS]
        runtimes = [(n, r) for n in names if (r := runtime_of(n)) is not None]
        if not runtimes:
            return choice
        _package, image, version, notes = pick_runtime(stages, runtimes)
        self.provided[root] = {n: f"the {image} image" for n, r in runtimes if r[0] == image}
        return ImageChoice(name=image, tag=version or "latest", kind="language", notes=tuple(notes))

    def _runs(self) -> None:
        for stage in self.stages:
            root = self.root_of[stage.index]
            mapped = isinstance(self.choice[root], ImageChoice)
            for instruction in stage.instructions:
                if instruction.keyword != "RUN":
                    continue
                if not mapped or self.df.escape != "\\":
                    self.has_run[stage.index] = True
                    self.run_lines.append(instruction.line)
                    if mapped:
                        self._unrewritten(stage, instruction, "RUN not rewritten (escape directive)")
                    continue
                self._run(stage, instruction, root)

    def _unrewritten(self, stage: Stage, instruction: Instruction, why: str) -> None:
        """A RUN left as written: its distro package installs are a blocker, each package reported."""
        own = [p for p in stage.packages if p.line == instruction.line and p.manager != "apk"]
        self.unmapped += [UnmappedPackage(name=p.name, manager=p.manager, line=p.source_line, reason=why)
                          for p in own]
        if not own:
            self.notes.append(f"line {instruction.line}: {why}")
            return
        names = ", ".join(sorted({p.name for p in own}))
        blocker = ItemBlocker(kind="not-rewritten", file=self.path, line=instruction.line,
                              message=f"{why}: its {own[0].manager} install ({names}) stays as written",
                              fix="write the install as a shell-form RUN (`RUN apt-get install -y …`) so it can be "
                                  "converted, or as `apk add --no-cache` with Wolfi names")
        self.blockers.append(blocker)
        self._todo(instruction, [blocker])

    def _run(self, stage: Stage, instruction: Instruction, root: int) -> None:
        later = [(p.line, p.manager, p.name) for p in stage.packages if p.manager in APT_MANAGERS | RPM_MANAGERS]
        choice = self.choice[root]
        ctx = RunContext(overrides=self.options.mapping.packages, provided=self.provided[root], path=self.path,
                         later=later, wolfi_source=isinstance(choice, ImageChoice) and choice.kind == "chainguard")
        result = rewrite_run(instruction, ctx)
        if instruction.form == "exec" or result.failed:
            self._unrewritten(stage, instruction, "exec-form RUN: not rewritten" if instruction.form == "exec"
                              else "the RUN could not be rewritten safely")
        runs = [i for s in self.stages if s.index in self.final_indexes for i in s.instructions if i.keyword == "RUN"]
        present = present_in(self.choice.get(root), only_run=len(runs) == 1)
        if stage.index in self.final_indexes and self._redundant(instruction, result, present):
            names = sorted({n for p in result.packages for n in p.new})
            result.notes.append(f"line {instruction.line}: RUN dropped: it only installs packages the final image "
                                f"already has ({', '.join(names)}; Chainguard catalog data)")
            result.raw = None
        if result.raw != instruction.raw:
            self.editor.replace(instruction.line, result.raw or "")
            again = reparsed(result.raw, instruction.line) if result.raw else None
            if again is not None:
                self.rewritten[instruction.line] = again
        self.has_run[stage.index] |= result.raw is not None
        if result.raw is not None:
            self.run_lines.append(instruction.line)
        self._todo(instruction, result.blockers)
        self.packages += result.packages
        self.unmapped += result.unmapped
        self.blockers += result.blockers
        self.notes += result.notes
        self.installed[stage.index] += [Installed(n, p.line) for p in result.packages for n in p.new]
        self.installed[stage.index] += [Installed(u.name, u.line, mapped=False, variable="$" in u.name)
                                        for u in result.unmapped]

    def _todo(self, instruction: Instruction, blockers: list[ItemBlocker]) -> None:
        """A `# TODO(planner):` line above the instruction per blocker (not repeated on a migrated file)."""
        lines = self.text.splitlines()
        above: set[str] = set()
        i = instruction.line - 2
        while i >= 0 and lines[i].lstrip().startswith("#"):
            above.add(_LINE.sub("", lines[i].strip()))
            i -= 1
        indent = instruction.raw[: len(instruction.raw) - len(instruction.raw.lstrip(" \t"))]
        for blocker in blockers:
            text = blocker.todo()
            if _LINE.sub("", text) not in above:
                above.add(_LINE.sub("", text))
                self.editor.insert_before(instruction.line, f"{indent}{text}\n")

    @staticmethod
    def _redundant(instruction: Instruction, result: RunResult, present: Callable[[str], bool]) -> bool:
        names = [n for p in result.packages for n in p.new]
        return (result.raw is not None and not instruction.heredocs and not result.unmapped and bool(names)
                and all(present(n) for n in names) and installs_only(result.raw, len(instruction.flags)))

    def _shell_needs(self) -> None:
        kept = set(self.run_lines)
        for stage in reversed(self.stages):
            children = [s for s in self.stages if s.base.stage_index == stage.index]
            self.needs_shell[stage.index] = self.has_run[stage.index] or any(
                self.needs_shell[c.index] for c in children)
            self.needs_root[stage.index] = needs_root(stage, self.rewritten, kept) or any(
                self.needs_root[c.index] for c in children)

    # --- the final stage ----------------------------------------------------

    def _decide(self) -> FinalPlan:
        chain = final_chain(self.df)
        files = self.files if self.files is not None else candidate_files(self.df, self.path, self.read)
        found = shell_evidence(self.df, self.path, files, self.read)
        return decide(FinalContext(
            path=self.path, chain=chain, root=self.choice[chain[0].index],
            run_lines=[i.line for s in chain for i in s.instructions if i.line in self.run_lines],
            installed=[i for s in chain for i in self.installed[s.index]],
            evidence=found, deployment=self.deployment, options=self.options, escape=self.df.escape,
            siblings=[s.line for s in self.stages if s not in chain and self.root_of[s.index] == chain[0].index
                      and self.needs_shell[s.index]], static_copies=static_copies(self.df, self.path, chain),
            unconverted=self._blocked_runs(), rewritten=self.rewritten))

    def _blocked_runs(self) -> list[int]:
        """First lines of the RUNs that hold a blocker."""
        runs = [i for s in self.stages for i in s.instructions if i.keyword == "RUN"]
        listed = {(u.line, u.name) for u in self.unmapped}  # package blockers of the final stage come from these
        found = [b for b in self.blockers if not any(line == b.line and name in b.message for line, name in listed)]
        return sorted({i.line for i in runs for b in found if i.line <= b.line <= (i.end_line or i.line)})

    def _targets(self, plan: FinalPlan) -> dict[int, Target]:
        final_root = final_chain(self.df)[0].index
        targets: dict[int, Target] = {}
        for root, choice in self.choice.items():
            if not isinstance(choice, ImageChoice):
                continue
            if root == final_root and plan.mode in ("plain", "keep-dev") and plan.target is not None:
                targets[root] = Target(plan.target, plan.dev)
            elif root == final_root and plan.mode == "restructure":
                targets[root] = Target(java_for(choice, builds=True), True)
            elif choice.kind == "distro":
                targets[root] = Target(choice.named("wolfi-base" if self.needs_shell[root] else "static"),
                                       self.needs_shell[root])
            else:
                targets[root] = Target(java_for(choice, builds=True), self.needs_shell[root])
        return targets

    def _froms(self, targets: dict[int, Target]) -> None:
        words = self.froms.words(targets)
        for stage in self.stages:
            base = stage.base
            change = StageChange(index=stage.index, name=stage.name, line=stage.line, old_image=base.raw,
                                 new_image=base.raw)
            self.changes.append(change)
            choice = self.choice.get(stage.index)
            if base.stage_index is not None:
                change.notes.append("built FROM an earlier stage: unchanged")
            elif choice is None:
                change.notes.append("scratch: unchanged")
            elif isinstance(choice, Unmapped) and copy_source(self.stages, self.final_indexes, stage):
                self.kept_froms.append(stage.line)
                change.notes.append(f"left unchanged: only a COPY --from source, whose files are the same whatever the "
                                    f"rest of the file runs on ({choice.reason.split(';')[0]})")
            elif isinstance(choice, Unmapped):
                change.notes.append(f"not migrated: {choice.reason}")
            else:
                self._from(stage, targets[stage.index], words[stage.index], change)

    def _from(self, stage: Stage, target: Target, word: tuple[str, list[str]], change: StageChange) -> None:
        new_word, notes = word
        base, choice = stage.base, self.choice[stage.index]
        assert isinstance(choice, ImageChoice)
        change.notes += [*choice.notes, *notes]
        if base.digest:
            change.notes.append(f"digest {base.digest[:19]}… dropped: it pinned the old image (pin the new one)")
        if stage.index in self.digest_dropped:
            change.notes.append(f"invalid digest in {base.raw!r} dropped (not a well-formed digest): mapped by "
                                "name and tag")
        change.new_image = new_word
        change.dev_variant = target.dev and target.choice.has_dev
        from_ins = stage.instructions[0]
        if new_word != base.raw:
            self.editor.replace(stage.line, replace_image(self.editor.raw(stage.line), base.raw, new_word))
        if change.dev_variant and not target.choice.info.root and self.needs_root[stage.index] \
                and not user_root_follows(stage):
            self.editor.insert_after(stage.line, f"{keyword('USER', from_ins)} root\n")
            change.user_root_added = True

    def _entrypoints(self, targets: dict[int, Target], plan: FinalPlan) -> None:
        """The ENTRYPOINT each stage's own CMD needs on its new image (commands.StagePass)."""
        final_cmd = final_chain(self.df)[-1].cmd
        handled = final_cmd.line if final_cmd is not None and plan.mode in ("plain", "keep-dev") else None
        mapped = {r: c for r, c in self.choice.items() if isinstance(c, ImageChoice)}
        done = StagePass(self.stages, self.root_of, mapped, {r: t.choice for r, t in targets.items()}, handled,
                         plan.entrypoint).run()
        plan.entrypoint = done.final_entrypoint
        for insert in done.inserts:
            instruction = next(i for i in self.stages[insert.stage].instructions if i.line == insert.line)
            self.editor.insert_before(insert.line, render_command(keyword("ENTRYPOINT", instruction), insert.argv))
            self.changes[insert.stage].notes.append(insert.note)
        for index, notes in done.notes.items():
            self.changes[index].notes += notes

    def _final(self, plan: FinalPlan) -> None:
        chain = final_chain(self.df)
        final = chain[-1]
        specs = {s.line: s for s in effective_specs(chain)}
        if plan.mode == "plain":
            for line, argv in plan.argv.items():
                spec = specs[line]
                self.editor.replace(line, "" if argv is None else render_command(
                    spec.instruction.keyword_raw, argv, spec.instruction))
        if plan.mode in ("plain", "keep-dev") and plan.entrypoint is not None and final.cmd is not None:
            cmd = specs[final.cmd.line].instruction
            self.editor.insert_before(cmd.line, render_command(keyword("ENTRYPOINT", cmd), plan.entrypoint))
        root = self.choice.get(chain[0].index)
        was_root = isinstance(root, ImageChoice) and root.kind in ("language", "distro")
        root_added = self.changes[chain[0].index].user_root_added and plan.mode == "keep-dev"
        runs_as = final.user if plan.mode != "restructure" else (
            (runtime_users(chain)[-1].value or None) if runtime_users(chain) else None)
        if root_added and runs_as is None and plan.target is not None and not drops_privileges(chain, self.read):
            line, user, note = restore_user(chain, self.run_lines, plan.target.name)
            self.editor.insert_after(line, f"{keyword('USER', chain[0].instructions[0])} {user}\n")
            plan.decision.notes.append(note)
        if was_root and runs_as is None and not root_added and plan.target and not plan.target.info.root:
            plan.decision.notes.append("the final image now runs as nonroot (uid 65532) where it ran as root: "
                                       "the app can write only to directories it owns")
        if plan.mode == "restructure":
            self._restructure(plan, chain)

    def _restructure(self, plan: FinalPlan, chain: list[Stage]) -> None:
        final = chain[-1]
        builder = final.name or builder_name({s.name for s in self.stages if s.name})
        if final.name is None:
            word = self.changes[final.index].new_image
            self.editor.replace(final.line, replace_image(self.editor.raw(final.line), word, word, name=builder))
            self.changes[final.index].name = builder
        assert plan.target is not None and plan.artifacts is not None
        image = self._runtime_image(plan.target.reference(self.options, False), chain[0])
        specs = effective_specs(chain)
        self.editor.append(render_runtime_stage(chain, image, builder, plan.artifacts.minimized(), specs, plan.argv,
                                                plan.entrypoint))

    def _runtime_image(self, image: str, root: Stage) -> str:
        """The runtime stage's image word: parameterised like the root's FROM when the build argument still fits."""
        name, template = arg_only(root.base.raw), tag_template(root.base.raw)
        if name is not None and self.froms.arg_values.get(name) == image:
            return root.base.raw.removesuffix("-dev")  # keep the build argument working for the runtime too
        repository, _, tag = image.rpartition(":")
        if template is not None and self.froms.tag_values.get(template.name) == tag:
            return f"{repository}:${{{template.name}}}"
        return image

    def _added_stage(self, new_text: str, plan: FinalPlan) -> None:
        line = new_text.count("\n", 0, new_text.rindex(HEADER)) + 2
        image = plan.decision.image or ""
        word = new_text.splitlines()[line - 1].split()[-1]
        self.changes.append(StageChange(
            index=len(self.stages), line=line, new_image=word, added=True,
            notes=[f"shell-free runtime on {image}: copies the build outputs from the builder"]))


def migrate_dockerfile(path: str, text: str, options: MigrationOptions, read: Reader | None = None, *,
                       files: list[str] | None = None,
                       deployment_evidence: Sequence[ShellEvidence] = ()) -> DockerfileMigration:
    """Migrate one Dockerfile. `read(repo_path)` returns a repository file's text (for entrypoint scripts'
    shebangs); `files` is the repository's file list (default: the files COPY names directly, found by
    `read`); `deployment_evidence` are shell uses by deployment manifests that run this image."""
    return _Migration(text, path, options, read or (lambda _p: None), files, list(deployment_evidence)).run()
