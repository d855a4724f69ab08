"""Instructions → build stages: base images, ARG scoping, and the per-stage image config.

ARGs before the first FROM are global: their defaults (expanded in order) are
substituted into FROM to record the resolved image where that is possible. A
FROM naming an earlier stage (by name, case-insensitively, or by index) is a
stage reference and inherits that stage's config. ENV values are kept
unexpanded (they may refer to variables of the base image).
"""

from __future__ import annotations

import copy
import posixpath
import re
from collections.abc import Callable

from repocontext.dockerfile.packages import run_packages
from repocontext.dockerfile.reference import parse_reference
from repocontext.dockerfile.words import expand, unquote
from repocontext.model import BaseImage, CommandSpec, Instruction, Stage

_STAGE_NAME = re.compile(r"[a-z][a-z0-9_.-]*\Z")
_INHERITED = ("user", "workdir", "env", "expose", "shell", "cmd", "entrypoint")


class StageBuilder:
    def __init__(self, escape: str) -> None:
        self.escape = escape
        self.stages: list[Stage] = []
        self.global_args: dict[str, str | None] = {}
        self.preamble: list[Instruction] = []
        self.problems: list[tuple[int, str]] = []
        self._cmd_set = False  # CMD seen in the current stage (ENTRYPOINT resets only an inherited CMD)

    def add(self, instruction: Instruction, value_line: Callable[[int], int]) -> None:
        keyword = instruction.keyword
        if keyword == "FROM":
            self._from(instruction)
        elif not self.stages:
            self.preamble.append(instruction)
            if keyword == "ARG":
                self._global_arg(instruction)
            else:
                self.problems.append((instruction.line, f"{keyword} before the first FROM (only ARG is allowed)"))
        else:
            stage = self.stages[-1]
            stage.instructions.append(instruction)
            stage.end_line = instruction.end_line
            handler = getattr(self, f"_on_{keyword.lower()}", None)
            if handler is not None:
                handler(stage, instruction, value_line)

    def _problem(self, instruction: Instruction, message: str) -> None:
        self.problems.append((instruction.line, f"{instruction.keyword}: {message}"))

    # --- ARG and FROM -------------------------------------------------------

    def _arg_pairs(self, instruction: Instruction) -> list[tuple[str, str | None]]:
        pairs: list[tuple[str, str | None]] = []
        for word in instruction.args:
            name, eq, default = word.partition("=")
            if not name:
                self._problem(instruction, f"invalid argument {word!r}")
                continue
            pairs.append((name, unquote(default, self.escape) if eq else None))
        return pairs

    def _global_arg(self, instruction: Instruction) -> None:
        for name, default in self._arg_pairs(instruction):
            value = None if default is None else expand(default, self.global_args, self.escape)[0]
            self.global_args[name] = value

    def _from(self, instruction: Instruction) -> None:
        words = instruction.args
        name: str | None = None
        if len(words) == 3 and words[1].lower() == "as":
            name = words[2].lower()
            if not _STAGE_NAME.match(name):
                self._problem(instruction, f"invalid stage name {words[2]!r}")
        elif len(words) != 1:
            self._problem(instruction, "expects an image and an optional 'AS name'")
        platform = next((f.value for f in instruction.flags if f.name == "platform"), None)
        base = self._base(instruction, words[0] if words else "")
        stage = Stage(index=len(self.stages), name=name, line=instruction.line, end_line=instruction.end_line,
                      platform=platform, base=base, instructions=[instruction])
        if base.stage_index is not None:
            parent = self.stages[base.stage_index]
            inherited = {k: copy.deepcopy(getattr(parent, k)) for k in _INHERITED}  # never share the parent's dicts
            stage = stage.model_copy(update=inherited)
            stage.depends_on = [base.stage_index]
        self.stages.append(stage)
        self._cmd_set = False

    def _base(self, instruction: Instruction, raw: str) -> BaseImage:
        resolved, unresolved = expand(raw, self.global_args, self.escape)
        base = BaseImage(raw=raw, resolved=resolved, unresolved_args=unresolved)
        if resolved is None:
            return base
        index = self.stage_index(resolved)
        if index is not None:
            return base.model_copy(update={"stage_ref": True, "stage_index": index, "name": resolved.lower()})
        if resolved == "scratch":
            return base.model_copy(update={"scratch": True, "name": "scratch"})
        ref = parse_reference(resolved)
        if isinstance(ref, str):
            self._problem(instruction, f"{ref} in {resolved!r}")
            return base
        return base.model_copy(update={
            "registry": ref.registry, "name": ref.name, "tag": ref.tag, "digest": ref.digest,
            "repository": ref.repository, "normalized": ref.normalized})

    def stage_index(self, ref: str) -> int | None:
        """The earlier stage `ref` names (by name or index), else None."""
        for stage in self.stages:
            if stage.name is not None and stage.name == ref.lower():
                return stage.index
        if ref.isdigit() and int(ref) < len(self.stages):
            return int(ref)
        return None

    # --- per-stage instructions ---------------------------------------------

    def _on_arg(self, stage: Stage, instruction: Instruction, _line: Callable[[int], int]) -> None:
        for name, default in self._arg_pairs(instruction):
            stage.args[name] = default if default is not None else self.global_args.get(name)

    def _on_env(self, stage: Stage, instruction: Instruction, _line: Callable[[int], int]) -> None:
        words = instruction.args
        if not words:
            self._problem(instruction, "needs at least one name=value")
        elif "=" not in words[0]:  # legacy "ENV name value with spaces"
            parts = instruction.value.split(None, 1)
            if len(parts) < 2:
                self._problem(instruction, f"{parts[0]!r} has no value")
                return
            stage.env[parts[0]] = unquote(parts[1], self.escape)
        else:
            for word in words:
                name, eq, value = word.partition("=")
                if not eq:
                    self._problem(instruction, f"can't find = in {word!r}; must be name=value")
                    continue
                stage.env[unquote(name, self.escape)] = unquote(value, self.escape)

    def _on_user(self, stage: Stage, instruction: Instruction, _line: Callable[[int], int]) -> None:
        stage.user = instruction.value or None

    def _on_workdir(self, stage: Stage, instruction: Instruction, _line: Callable[[int], int]) -> None:
        path = unquote(instruction.value, self.escape)
        stage.workdir = posixpath.normpath(posixpath.join(stage.workdir or "/", path)) if path else stage.workdir

    def _on_expose(self, stage: Stage, instruction: Instruction, _line: Callable[[int], int]) -> None:
        for word in instruction.args:
            port = unquote(word, self.escape)
            if port not in stage.expose:
                stage.expose.append(port)

    def _command(self, stage: Stage, instruction: Instruction) -> CommandSpec | None:
        if instruction.form == "none":
            return None
        args = instruction.args if instruction.form == "exec" else [*stage.shell, instruction.value]
        return CommandSpec(line=instruction.line, form=instruction.form, value=instruction.value, args=args)

    def _on_cmd(self, stage: Stage, instruction: Instruction, _line: Callable[[int], int]) -> None:
        stage.cmd = self._command(stage, instruction)
        self._cmd_set = True

    def _on_entrypoint(self, stage: Stage, instruction: Instruction, _line: Callable[[int], int]) -> None:
        stage.entrypoint = self._command(stage, instruction)
        if not self._cmd_set:
            stage.cmd = None  # Docker drops a CMD inherited from the base when ENTRYPOINT is set

    def _on_shell(self, stage: Stage, instruction: Instruction, _line: Callable[[int], int]) -> None:
        if instruction.form != "exec" or not instruction.args:
            self._problem(instruction, "requires a JSON array, e.g. SHELL [\"/bin/bash\", \"-c\"]")
            return
        stage.shell = list(instruction.args)

    def _on_run(self, stage: Stage, instruction: Instruction, line: Callable[[int], int]) -> None:
        stage.packages.extend(run_packages(instruction, line))
        for flag in instruction.flags:
            if flag.name == "mount" and flag.value:
                options = dict(part.partition("=")[::2] for part in flag.value.split(","))
                if options.get("from"):
                    self._depends(stage, options["from"], instruction)

    def _on_copy(self, stage: Stage, instruction: Instruction, _line: Callable[[int], int]) -> None:
        source = next((f.value for f in instruction.flags if f.name == "from"), None)
        if source:
            self._depends(stage, source, instruction)

    _on_add = _on_copy

    def _depends(self, stage: Stage, ref: str, instruction: Instruction) -> None:
        index = self.stage_index(ref)
        if index is not None and index < stage.index:
            stage.depends_on = sorted({*stage.depends_on, index})
        elif index == stage.index:
            self._problem(instruction, f"stage {ref!r} refers to itself")
        elif ref not in stage.copy_from_images:
            stage.copy_from_images.append(ref)
            stage.copy_from_images.sort()
