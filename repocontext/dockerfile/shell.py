"""Evidence that a Dockerfile's final image needs a shell.

The final image is the last stage plus the stages it is built FROM. Only the
effective CMD, ENTRYPOINT and HEALTHCHECK count (an overridden one never runs).
Stable `kind` strings, which later tasks decide from:

- "shell-form-run": a RUN in shell form.
- "shell-form-cmd" / "shell-form-entrypoint" / "shell-form-healthcheck": the effective
  CMD / ENTRYPOINT / HEALTHCHECK CMD is in shell form (Docker wraps it in SHELL, /bin/sh -c).
- "exec-form-shell": an exec-form RUN, CMD, ENTRYPOINT or HEALTHCHECK whose program is a
  shell (`["sh", "-c", …]`, `["/bin/bash", "x"]`, also behind tini/dumb-init/gosu).
- "shell-instruction": a SHELL instruction.
- "entrypoint-script" / "cmd-script": the effective ENTRYPOINT / CMD runs a script: a `*.sh`
  argument, or a program copied into the image whose content starts with a shebang
  (recorded in `shebang`; a non-shell interpreter such as python is reported too).
- "shell-script-copied": COPY/ADD puts a shell script into the image: `*.sh`/`*.bash`, or a
  directly named file or heredoc whose shebang names a shell.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence

from repocontext.dockerfile.copies import Copied, Listing, chain, copied_files, walk
from repocontext.dockerfile.packages import SHELLS
from repocontext.dockerfile.words import split_words, unquote
from repocontext.model import CommandSpec, Dockerfile, Instruction, ShellEvidence, Stage

Reader = Callable[[str], str | None]
SCRIPT_SUFFIXES = (".sh", ".bash")
INIT_WRAPPERS = frozenset({"tini", "tini-static", "dumb-init", "catatonit", "exec"})
USER_WRAPPERS = frozenset({"gosu", "su-exec"})  # take a user argument before the program
MAX_SCRIPTS_PER_INSTRUCTION = 50
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def shebang_of(text: str | None) -> str | None:
    if not text or not text.startswith("#!"):
        return None
    return text.split("\n", 1)[0].rstrip("\r").strip()


def shebang_is_shell(shebang: str | None) -> bool:
    if not shebang:
        return False
    words = shebang[2:].split()
    if words and posixpath.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    if words and posixpath.basename(words[0]) == "busybox":
        words = words[1:]
    return bool(words) and posixpath.basename(words[0]) in SHELLS


def program_index(argv: list[str]) -> int | None:
    """Index of the program actually executed, skipping assignments and init/user wrappers."""
    k = 0
    while k < len(argv):
        name = posixpath.basename(argv[k])
        if _ASSIGNMENT.match(argv[k]) or name == "env":
            k += 1
        elif name in INIT_WRAPPERS:
            k += 1
            while k < len(argv) and argv[k].startswith("-"):
                k += 1
        elif name in USER_WRAPPERS:
            k += 2
        else:
            return k
    return None


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Evidence:
    def __init__(self, dockerfile: Dockerfile, path: str, files: Sequence[str] | Listing, read: Reader,
                 copied: list[Copied] | None = None) -> None:
        self.dockerfile, self.path, self.read = dockerfile, path, read
        self.stages = chain(dockerfile)
        self.copied = copied_files(dockerfile, path, files) if copied is None else copied
        self.found: list[ShellEvidence] = []
        self._shebangs: dict[str, str | None] = {}

    def add(self, line: int, kind: str, detail: str, stage: int | None, **extra: str | None) -> None:
        self.found.append(ShellEvidence(file=self.path, line=line, kind=kind, detail=_short(detail), stage=stage,
                                        **extra))

    def shebang(self, item: Copied) -> str | None:
        if item.inline is not None:
            return shebang_of(item.inline)
        if item.repo_path is None:
            return None
        if item.repo_path not in self._shebangs:
            self._shebangs[item.repo_path] = shebang_of(self.read(item.repo_path))
        return self._shebangs[item.repo_path]

    def run(self) -> list[ShellEvidence]:
        if not self.stages:
            return []
        final = self.stages[-1]
        for stage, instruction, _workdir in walk(self.stages):
            self._instruction(stage, instruction, final)
        self._scripts_copied()
        self._program_scripts(final)
        return sorted(self.found, key=lambda e: (e.file, e.line, e.kind, e.detail))

    def _instruction(self, stage: Stage, instruction: Instruction, final: Stage) -> None:
        keyword = instruction.keyword
        effective = {"CMD": final.cmd, "ENTRYPOINT": final.entrypoint}
        if keyword in effective:
            spec = effective[keyword]
            if spec is None or spec.line != instruction.line:
                return  # overridden or reset: never runs
        elif keyword == "HEALTHCHECK":
            last = [i for s in self.stages for i in s.instructions if i.keyword == "HEALTHCHECK"][-1]
            if last is not instruction or not instruction.value.upper().startswith("CMD"):
                return
        elif keyword == "SHELL":
            self.add(instruction.line, "shell-instruction", f"SHELL {instruction.value}", stage.index)
            return
        elif keyword != "RUN":
            return
        if instruction.form == "shell":
            self.add(instruction.line, f"shell-form-{keyword.lower()}", f"{keyword} {instruction.value}", stage.index)
        elif instruction.form == "exec":
            k = program_index(instruction.args)
            if k is not None and posixpath.basename(instruction.args[k]) in SHELLS:
                self.add(instruction.line, "exec-form-shell", f"{keyword} {instruction.value}", stage.index)

    def _scripts_copied(self) -> None:
        per_line: dict[int, int] = {}
        for item in self.copied:
            source = item.repo_path or item.image_path or "heredoc"
            by_name = item.container.endswith(SCRIPT_SUFFIXES) or source.endswith(SCRIPT_SUFFIXES)
            shebang = self.shebang(item) if (item.explicit or by_name) else None
            if not (by_name or shebang_is_shell(shebang)):
                continue
            per_line[item.line] = per_line.get(item.line, 0) + 1
            if per_line[item.line] > MAX_SCRIPTS_PER_INSTRUCTION:
                continue
            self.add(item.line, "shell-script-copied", f"{item.keyword} {source} -> {item.container}", item.stage,
                     script=item.repo_path or item.image_path, shebang=shebang)
        for line, count in sorted(per_line.items()):
            if count > MAX_SCRIPTS_PER_INSTRUCTION:
                stage = next(c.stage for c in self.copied if c.line == line)
                self.add(line, "shell-script-copied",
                         f"{count - MAX_SCRIPTS_PER_INSTRUCTION} more scripts copied (not listed)", stage)

    def _program_scripts(self, final: Stage) -> None:
        workdirs = {i.line: w for _s, i, w in walk(self.stages)}
        for keyword, spec in (("ENTRYPOINT", final.entrypoint), ("CMD", final.cmd)):
            if spec is None:
                continue
            argv = spec.args if spec.form == "exec" else [unquote(w.text) for w in split_words(spec.value)]
            runs_program = keyword == "ENTRYPOINT" or final.entrypoint is None
            self._check_argv(keyword, spec, argv, workdirs.get(spec.line, "/"), runs_program)

    def _check_argv(self, keyword: str, spec: CommandSpec, argv: list[str], workdir: str, runs: bool) -> None:
        k = program_index(argv) if runs else None
        for index, token in enumerate(argv):
            if token.startswith("-") or _ASSIGNMENT.match(token):
                continue
            item = self._resolve(token, workdir)
            shebang = self.shebang(item) if item is not None and index == k else None
            if not (token.endswith(SCRIPT_SUFFIXES) or shebang):
                continue
            origin = (item.repo_path or item.image_path or "heredoc") if item else "not copied from the repository"
            detail = f"{keyword} runs {token} ({origin}{', ' + shebang if shebang else ''})"
            self.add(spec.line, f"{keyword.lower()}-script", detail, self.stages[-1].index,
                     script=(item.repo_path or item.image_path) if item else token, shebang=shebang)

    def _resolve(self, token: str, workdir: str) -> Copied | None:
        """The copied file a CMD/ENTRYPOINT token names: a path by container path, a bare name (found on
        PATH at run time) by a unique file name."""
        if "/" in token:
            target = posixpath.normpath(posixpath.join(workdir, token))
            exact = [c for c in self.copied if c.container == target]
            return exact[-1] if exact else None
        named = [c for c in self.copied if posixpath.basename(c.container) == posixpath.basename(token)]
        return named[-1] if named and len({c.container for c in named}) == 1 else None


def evidence(dockerfile: Dockerfile, path: str, files: Sequence[str] | Listing, read: Reader,
             copied: list[Copied] | None = None) -> list[ShellEvidence]:
    """`copied`: `copied_files` of the same Dockerfile and listing, when the caller has it already."""
    return _Evidence(dockerfile, path, files, read, copied).run()


def files_to_read(dockerfile: Dockerfile, path: str, files: Sequence[str] | Listing,
                  copied: list[Copied] | None = None) -> list[str]:
    """Repository files whose content the evidence depends on (for the probe's fingerprint).

    Which files are read never depends on their content, so a dry run that records
    the reads and returns nothing finds exactly that set.
    """
    read: set[str] = set()
    _Evidence(dockerfile, path, files, lambda p: read.add(p), copied).run()
    return sorted(read)
