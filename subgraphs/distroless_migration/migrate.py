"""migrate_dockerfile: one Dockerfile → Chainguard images, with every decision reported.

Per stage: the base image is mapped (images.py), RUNs are rewritten for Wolfi (rewrite.py), a
stage that runs commands (or one built FROM it does) gets the -dev variant and `USER root` after
its FROM. A distro stage that installs a language runtime (python3, nodejs, openjdk, golang) moves
to that language's image, whose -dev variant provides those packages. The final stage is decided
from the shell evidence (runtime.py) and, when its RUNs allow, restructured into a -dev builder
plus a shell-free runtime stage (artifacts.py, restructure.py).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from repocontext.dockerfile import parse
from repocontext.dockerfile.copies import chain as final_chain
from repocontext.dockerfile.shell import evidence as shell_evidence
from repocontext.dockerfile.words import unquote
from repocontext.model import Dockerfile, Instruction, ShellEvidence, Stage
from subgraphs.distroless_migration.artifacts import Installed
from subgraphs.distroless_migration.commands import render_command
from subgraphs.distroless_migration.editor import Editor
from subgraphs.distroless_migration.fromline import (
    arg_only,
    keyword,
    replace_arg_default,
    replace_image,
    user_root_follows,
)
from subgraphs.distroless_migration.images import ImageChoice, Unmapped, java_for, map_base
from subgraphs.distroless_migration.models import DockerfileMigration, PackageChange, StageChange, UnmappedPackage
from subgraphs.distroless_migration.options import MigrationOptions
from subgraphs.distroless_migration.packages import APT_MANAGERS, PROVIDED_EVERYWHERE, RPM_MANAGERS, runtime_of
from subgraphs.distroless_migration.restructure import HEADER, builder_name, render_runtime_stage, runtime_users
from subgraphs.distroless_migration.rewrite import RunContext, RunResult, installs_only, rewrite_run
from subgraphs.distroless_migration.runtime import FinalContext, FinalPlan, decide, effective_specs

Reader = Callable[[str], str | None]
COMMENT = "# distroless-migration: no Wolfi package known for {names}: left out of apk add\n"


@dataclass
class _Target:
    choice: ImageChoice
    dev: bool


class _Migration:
    def __init__(self, text: str, path: str, options: MigrationOptions, read: Reader, files: list[str] | None,
                 deployment: list[ShellEvidence]) -> None:
        parsed = parse(text, path)
        self.text, self.path, self.options, self.read = text, path, options, read
        self.df: Dockerfile = parsed.dockerfile
        self.files, self.deployment = files, deployment
        self.notes = [f"line {line}: {message}" for line, message in parsed.problems]
        self.editor = Editor(self.df)
        self.stages: list[Stage] = self.df.stages
        n = len(self.stages)
        self.root_of = [0] * n
        self.choice: dict[int, ImageChoice | Unmapped | None] = {}
        self.provided: dict[int, dict[str, str]] = {}
        self.has_run = [False] * n
        self.run_lines: list[int] = []  # RUNs still run after rewriting
        self.needs_shell = [False] * n
        self.installed: list[list[Installed]] = [[] for _ in range(n)]
        self.packages: list[PackageChange] = []
        self.unmapped: list[UnmappedPackage] = []
        self.changes: list[StageChange] = []
        self.arg_values: dict[str, str] = {}  # global ARG → its new default
        self.final_indexes = {s.index for s in final_chain(self.df)}

    def run(self) -> DockerfileMigration:
        if not self.stages:
            return DockerfileMigration(path=self.path, new_text=self.text, changed=False, notes=self.notes)
        self._roots()
        self._runs()
        self._shell_needs()
        plan = self._decide()
        targets = self._targets(plan)
        self._froms(targets, plan)
        self._final(plan)
        new_text = self.editor.render()
        if plan.mode == "restructure":
            self._added_stage(new_text, plan)
        return DockerfileMigration(
            path=self.path, new_text=new_text, changed=new_text != self.text, stages=self.changes,
            packages=sorted(self.packages, key=lambda p: p.line), unmapped=sorted(self.unmapped, key=lambda u: u.line),
            runtime=plan.decision, notes=self.notes)

    # --- images and RUNs ----------------------------------------------------

    def _roots(self) -> None:
        for stage in self.stages:
            parent = stage.base.stage_index
            self.root_of[stage.index] = self.root_of[parent] if parent is not None else stage.index
            if parent is None:
                self.choice[stage.index] = None if stage.base.scratch else map_base(stage.base, self.options)
        for root, choice in self.choice.items():
            self.provided[root] = {}
            if isinstance(choice, ImageChoice) and choice.kind == "distro":
                self.choice[root] = self._language_switch(root, choice)

    def _language_switch(self, root: int, choice: ImageChoice) -> ImageChoice:
        names = [p.name for s in self.stages if self.root_of[s.index] == root for p in s.packages
                 if p.manager in APT_MANAGERS | RPM_MANAGERS]
        found = next(((n, r) for n in names if (r := runtime_of(n)) is not None), None)
        if found is None:
            return choice
        package, (image, version) = found
        self.provided[root] = {n: f"the {image} image" for n in names if (r := runtime_of(n)) and r[0] == image}
        return ImageChoice(name=image, tag=version or "latest", kind="language",
                           notes=(f"installs {package} on a distro base: moved to the {image} image",))

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
                        self.notes.append(f"line {instruction.line}: RUN not rewritten (escape directive)")
                    continue
                self._run(stage, instruction, root)

    def _run(self, stage: Stage, instruction: Instruction, root: int) -> None:
        ctx = RunContext(overrides=self.options.mapping.packages, provided=self.provided[root])
        result = rewrite_run(instruction, ctx)
        own = [p for p in stage.packages if p.line == instruction.line]
        if instruction.form == "exec" or result.failed:
            why = "exec-form RUN: not rewritten" if instruction.form == "exec" else "the RUN could not be rewritten"
            result.unmapped += [UnmappedPackage(name=p.name, manager=p.manager, line=p.source_line, reason=why)
                                for p in own if p.manager != "apk"]
        result.packages += [PackageChange(manager="apk", old=p.name, new=[p.name], line=p.source_line,
                                          note="Alpine name kept: Wolfi names can differ") for p in own
                            if p.manager == "apk"]
        if stage.index in self.final_indexes and self._redundant(instruction, result):
            result.notes.append(f"line {instruction.line}: RUN dropped: it only installs packages every "
                                "Chainguard image has (ca-certificates, tzdata)")
            result.raw = None
        if result.raw != instruction.raw:
            self.editor.replace(instruction.line, result.raw or "")
        self.has_run[stage.index] |= result.raw is not None
        if result.raw is not None:
            self.run_lines.append(instruction.line)
        if result.removed:
            indent = re.match(r"[ \t]*", instruction.raw).group(0)  # type: ignore[union-attr]
            names = ", ".join(" ".join(n.split()) for n in result.removed)
            self.editor.insert_before(instruction.line, indent + COMMENT.format(names=names))
        self.packages += result.packages
        self.unmapped += result.unmapped
        self.notes += result.notes
        self.installed[stage.index] += [Installed(n, p.line) for p in result.packages for n in p.new]
        self.installed[stage.index] += [Installed(u.name, u.line, mapped=False, variable="$" in u.name)
                                        for u in result.unmapped]

    @staticmethod
    def _redundant(instruction: Instruction, result: RunResult) -> bool:
        names = [n for p in result.packages for n in p.new]
        kept = [u for u in result.unmapped if u.name not in result.removed]  # still in the apk line (variables)
        return (result.raw is not None and not instruction.heredocs and not kept and bool(names)
                and all(n in PROVIDED_EVERYWHERE for n in names) and installs_only(result.raw, len(instruction.flags)))

    def _shell_needs(self) -> None:
        for stage in reversed(self.stages):
            children = [s for s in self.stages if s.base.stage_index == stage.index]
            self.needs_shell[stage.index] = self.has_run[stage.index] or any(
                self.needs_shell[c.index] for c in children)

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
                      and self.needs_shell[s.index]]))

    def _targets(self, plan: FinalPlan) -> dict[int, _Target]:
        final_root = final_chain(self.df)[0].index
        targets: dict[int, _Target] = {}
        for root, choice in self.choice.items():
            if not isinstance(choice, ImageChoice):
                continue
            if root == final_root and plan.mode in ("plain", "keep-dev") and plan.target is not None:
                targets[root] = _Target(plan.target, plan.dev)
            elif root == final_root and plan.mode == "restructure":
                targets[root] = _Target(java_for(choice, builds=True), True)
            elif choice.kind == "distro":
                targets[root] = _Target(choice.named("wolfi-base" if self.needs_shell[root] else "static"),
                                        self.needs_shell[root])
            else:
                targets[root] = _Target(java_for(choice, builds=True), self.needs_shell[root])
        return targets

    def _froms(self, targets: dict[int, _Target], plan: FinalPlan) -> None:
        words = self._from_words(targets)
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
            elif isinstance(choice, Unmapped):
                change.notes.append(f"not migrated: {choice.reason}")
            else:
                self._from(stage, targets[stage.index], words[stage.index], change)

    def _from_words(self, targets: dict[int, _Target]) -> dict[int, tuple[str, list[str]]]:
        """The new FROM image word per mapped root stage, with notes; ARG defaults rewritten in place."""
        words: dict[int, tuple[str, list[str]]] = {}
        groups: dict[str, list[int]] = {}
        for root, target in targets.items():
            base = self.stages[root].base
            name = arg_only(base.raw)
            if name is not None and self.df.global_args.get(name):
                groups.setdefault(name, []).append(root)
            elif "$" in base.raw:
                words[root] = (target.choice.reference(self.options, target.dev),
                               [f"FROM used ARG {', '.join(_args(base.raw))}: written out from the default"])
            else:
                words[root] = (target.choice.reference(self.options, target.dev), [])
        for name, roots in groups.items():
            words.update(self._arg_group(name, roots, targets))
        return words

    def _arg_group(self, name: str, roots: list[int], targets: dict[int, _Target]) -> dict[int, tuple[str, list[str]]]:
        shared = targets[roots[0]].choice.reference(self.options, False)
        declared = [i for i in self.df.preamble if i.keyword == "ARG" and any(
            w.split("=", 1)[0] == name for w in i.args)]
        notes: list[str] = []
        new_raw = replace_arg_default(declared[-1], name, shared) if declared else None
        if new_raw is not None:
            self.arg_values[name] = shared
            if new_raw != declared[-1].raw:
                self.editor.replace(declared[-1].line, new_raw)
                notes.append(f"ARG {name} default (line {declared[-1].line}) mapped to {shared}")
        out: dict[int, tuple[str, list[str]]] = {}
        for root in roots:
            target, raw = targets[root], self.stages[root].base.raw.removesuffix("-dev")
            if new_raw is not None and target.choice.reference(self.options, False) == shared:
                dev = target.dev and target.choice.has_dev
                out[root] = (f"{raw}-dev" if dev else raw, list(notes))
            else:
                why = "serves stages with different images" if new_raw is not None else "default could not be rewritten"
                out[root] = (target.choice.reference(self.options, target.dev),
                             [f"ARG {name} {why}: this stage's image is written out"])
        return out

    def _from(self, stage: Stage, target: _Target, word: tuple[str, list[str]], change: StageChange) -> None:
        new_word, notes = word
        base, choice = stage.base, self.choice[stage.index]
        assert isinstance(choice, ImageChoice)
        change.notes += [*choice.notes, *notes]
        if base.digest:
            change.notes.append(f"digest {base.digest[:19]}… dropped: it pinned the old image (pin the new one)")
        change.new_image = new_word
        change.dev_variant = target.dev and target.choice.has_dev
        from_ins = stage.instructions[0]
        if new_word != base.raw:
            self.editor.replace(stage.line, replace_image(self.editor.raw(stage.line), base.raw, new_word))
        if change.dev_variant and not target.choice.info.root and self.needs_shell[stage.index] \
                and not user_root_follows(stage):
            self.editor.insert_after(stage.line, f"{keyword('USER', from_ins)} root\n")
            change.user_root_added = True

    def _final(self, plan: FinalPlan) -> None:
        chain = final_chain(self.df)
        final = chain[-1]
        specs = {s.line: s for s in effective_specs(chain)}
        if plan.mode == "plain":
            for line, argv in plan.argv.items():
                spec = specs[line]
                self.editor.replace(line, "" if argv is None else render_command(
                    spec.instruction.keyword_raw, argv, spec.instruction))
        if plan.mode in ("plain", "keep-dev") and plan.reset_entrypoint and final.cmd is not None:
            cmd = specs[final.cmd.line].instruction
            self.editor.insert_before(cmd.line, render_command(keyword("ENTRYPOINT", cmd), []))
            plan.decision.notes.append(f"ENTRYPOINT [] added before CMD (line {cmd.line}): the image's own "
                                       "ENTRYPOINT would otherwise run the CMD as its arguments")
        root = self.choice.get(chain[0].index)
        was_root = isinstance(root, ImageChoice) and root.kind in ("language", "distro")
        root_added = self.changes[chain[0].index].user_root_added and plan.mode == "keep-dev"
        runs_as = final.user if plan.mode != "restructure" else (
            (runtime_users(chain)[-1].value or None) if runtime_users(chain) else None)
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
        image = plan.target.reference(self.options, False)
        name = arg_only(chain[0].base.raw)
        if name is not None and self.arg_values.get(name) == image:
            image = chain[0].base.raw.removesuffix("-dev")  # keep the build argument working for the runtime too
        specs = effective_specs(chain)
        self.editor.append(render_runtime_stage(chain, image, builder, plan.artifacts.minimized(), specs, plan.argv,
                                                plan.reset_entrypoint))
        if plan.reset_entrypoint:
            plan.decision.notes.append("ENTRYPOINT [] set before CMD: the image's own ENTRYPOINT would otherwise "
                                       "run the CMD as its arguments")

    def _added_stage(self, new_text: str, plan: FinalPlan) -> None:
        line = new_text.count("\n", 0, new_text.rindex(HEADER)) + 2
        image = plan.decision.image or ""
        word = new_text.splitlines()[line - 1].split()[-1]
        self.changes.append(StageChange(
            index=len(self.stages), line=line, new_image=word, added=True,
            notes=[f"shell-free runtime on {image}: copies the build outputs from the builder"]))


def _args(raw: str) -> list[str]:
    return sorted(set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", raw)))


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


def migrate_dockerfile(path: str, text: str, options: MigrationOptions, read: Reader | None = None, *,
                       files: list[str] | None = None,
                       deployment_evidence: Sequence[ShellEvidence] = ()) -> DockerfileMigration:
    """Migrate one Dockerfile. `read(repo_path)` returns a repository file's text (for entrypoint scripts'
    shebangs); `files` is the repository's file list (default: the files COPY names directly, found by
    `read`); `deployment_evidence` are shell uses by deployment manifests that run this image."""
    return _Migration(text, path, options, read or (lambda _p: None), files, list(deployment_evidence)).run()
