"""RUN outputs a restructured (shell-free) runtime would lose: a blocker for each, so the stage stays -dev.

The runtime stage copies only what artifacts.py found (COPY destinations, the WORKDIR, virtualenvs, pip's
site-packages, `go build -o` outputs, paths made by mkdir/chown/chmod/touch, accounts, known libraries).
A RUN command of the final image is accepted when its effect is inside that:
- it writes nothing (echo, export, cd, test, …; a redirection is still checked), or artifacts.py handles it
  (pip, venv, uv, poetry, go build, mkdir/chown/chmod/touch, user accounts, apk packages by role);
- it builds in its working directory (npm/yarn/pnpm without a global flag, cargo, mvn, gradle, make, go,
  python/node scripts, any other program) and that directory is copied;
- the paths it writes (cp/mv/ln/install destinations, curl -o, wget -O/-P, tar -C, unzip -d, git clone, sed -i,
  tee, `>` redirections) are copied, or under /tmp.
Blockers: global installs (npm -g, yarn global, gem install, cargo install, go install, composer global,
`python setup.py install`), writes outside the copied paths, a build in a directory that is not copied,
and `rm` of an absolute path outside them (the runtime's fresh base image would still have the file).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from repocontext.dockerfile.copies import walk
from repocontext.dockerfile.packages import SHELLS
from repocontext.model import Instruction, Stage
from subgraphs.distroless_migration.artifacts import Artifacts, command_index_of, run_commands
from subgraphs.distroless_migration.models import Blocker
from subgraphs.distroless_migration.unconverted import MANAGERS

SILENT = frozenset({"echo", "printf", "export", "set", "unset", "cd", "true", "false", ":", "test", "[", "sleep",
                    "which", "id", "whoami", "ls", "cat", "pwd", "exit", "umask", ".", "source", "type", "hash",
                    "uname", "date", "grep", "head", "tail", "wc", "env", "ldd", "file", "stat", "du", "df"})
HANDLED = frozenset({"pip", "pip3", "python", "python3", "virtualenv", "uv", "poetry", "mkdir", "chown", "chmod",
                     "touch", "useradd", "adduser", "groupadd", "addgroup", "usermod", "apk"})
_PIP = re.compile(r"(?:pip|python)(?:\d+(?:\.\d+)?)?\Z")
_OUT = re.compile(r"(?:\d*|&)>>?\|?(.*)\Z", re.DOTALL)
_IN = re.compile(r"\d*<(?!<)(.*)\Z", re.DOTALL)
_CACHE = re.compile(r"/var/(?:lib/apt|cache/(?:apt|yum|dnf|apk))(?:/.*)?\Z")
_SCRATCH = ("/tmp", "/var/tmp", "/dev", "/proc", "/root/.cache", "/root/.npm")
FIX = "move this step into a builder stage and COPY what it produces, or keep the -dev final stage"


class _Check:
    def __init__(self, path: str, artifacts: Artifacts) -> None:
        self.path, self.artifacts = path, artifacts
        self.blockers: list[Blocker] = []

    def block(self, line: int, what: str) -> None:
        self.blockers.append(Blocker(file=self.path, line=line, what=what, how=FIX))

    def command(self, argv: list[str], line: int, cwd: str) -> None:
        argv = self._redirects(argv, line, cwd)
        k = command_index_of(argv)
        if k is None or argv[k].startswith("<<"):
            return
        program, args = posixpath.basename(argv[k]), argv[k + 1:]
        if program in SILENT or program in MANAGERS or (program in SHELLS and not args):
            return  # a bare shell reads a heredoc script, judged command by command
        shown = " ".join(argv[k:k + 4])
        if self._global(program, args):
            self.block(line, f"`{shown}` installs outside the copied paths; a shell-free runtime would lack it")
        elif program == "rm":
            self._written(line, shown, [a for a in args if not a.startswith("-")], cwd, removed=True)
        elif program in HANDLED or (_PIP.match(program) and args[:1] == ["-m"]) or _no_output(program, args):
            return
        elif program in WRITERS:
            self._written(line, shown, WRITERS[program](args), cwd)
        elif not self.artifacts.covered(cwd):
            self.block(line, f"`{shown}` works in {cwd}, which the runtime does not copy: what it produces would "
                       "be lost")

    def _redirects(self, argv: list[str], line: int, cwd: str) -> list[str]:
        """argv without redirections; a redirection into a path the runtime lacks is a blocker."""
        kept: list[str] = []
        pending = ""  # "out" / "in": the next word is a redirection's target
        for word in argv:
            if pending:
                if pending == "out":
                    self._written(line, f"> {word}", [word], cwd)
                pending = ""
                continue
            out, into = _OUT.match(word), _IN.match(word)
            if out and not out.group(1).startswith("&"):
                if out.group(1):
                    self._written(line, f"> {out.group(1)}", [out.group(1)], cwd)
                pending = "" if out.group(1) else "out"
            elif into:
                pending = "" if into.group(1) else "in"
            elif not out:
                kept.append(word)
        return kept

    def _global(self, program: str, args: list[str]) -> bool:
        if program in ("npm", "pnpm") and ("-g" in args or "--global" in args):
            return True
        if program in ("yarn", "composer") and args[:1] == ["global"]:
            return True
        if program in ("cargo", "go", "gem") and args[:1] == ["install"]:
            return True
        return bool(_PIP.match(program)) and args[:2] == ["setup.py", "install"]

    def _written(self, line: int, shown: str, paths: list[str], cwd: str, removed: bool = False) -> None:
        for raw in paths:
            if "$" in raw:
                continue
            path = posixpath.normpath(posixpath.join(cwd, raw))
            if removed and not raw.startswith("/"):
                continue
            if _CACHE.match(path) or path.startswith(_SCRATCH) or self.artifacts.covered(path):
                continue
            if removed:
                self.block(line, f"`{shown}` removes {path}, which the runtime's fresh base image would still have")
            else:
                self.block(line, f"`{shown}` writes {path}, which the runtime does not copy")
            return


def _no_output(program: str, args: list[str]) -> bool:
    """Toolchain steps whose outputs only builds use (module caches, tests) or that artifacts.py copies."""
    if program == "go":
        return args[:1] in (["mod"], ["vet"], ["test"], ["version"], ["env"], ["list"]) or (
            args[:1] == ["build"] and "-o" in args)
    return program == "cargo" and args[:1] in (["fetch"], ["test"])


def _last(args: list[str]) -> list[str]:
    positional = [a for a in args if not a.startswith("-")]
    return positional[-1:]


def _option(*flags: str) -> Callable[[list[str]], list[str]]:
    def values(args: list[str]) -> list[str]:
        found: list[str] = []
        for i, arg in enumerate(args):
            for flag in flags:
                if arg == flag and i + 1 < len(args):
                    found.append(args[i + 1])
                elif arg.startswith(flag + "=") or (len(flag) == 2 and arg.startswith(flag) and len(arg) > 2
                                                    and not flag.startswith("--")):
                    found.append(arg.split("=", 1)[1] if "=" in arg else arg[2:])
        return [f for f in found if f != "-"]
    return values


def _git(args: list[str]) -> list[str]:
    positional = [a for a in args if not a.startswith("-")]
    if positional[:1] != ["clone"]:
        return []
    rest = positional[1:]
    return rest[1:2] if len(rest) > 1 else [posixpath.basename(rest[0]).removesuffix(".git")] if rest else []


def _files(args: list[str]) -> list[str]:
    positional = [a for a in args if not a.startswith("-")]
    return positional[1:]  # sed -i SCRIPT FILE…


WRITERS: dict[str, Callable[[list[str]], list[str]]] = {
    "cp": _last, "mv": _last, "ln": _last, "install": _last, "curl": _option("-o", "--output"),
    "wget": _option("-O", "--output-document", "-P", "--directory-prefix"), "tar": _option("-C", "--directory"),
    "unzip": _option("-d"), "git": _git, "sed": _files, "tee": lambda a: [x for x in a if not x.startswith("-")],
}


def lost_outputs(path: str, chain: list[Stage], run_lines: list[int], artifacts: Artifacts,
                 rewritten: dict[int, Instruction]) -> list[Blocker]:
    """Blockers for RUN commands (of RUNs that still run, as rewritten) whose outputs the runtime would lack."""
    check = _Check(path, artifacts)
    for _stage, instruction, cwd in walk(chain):
        if instruction.keyword == "RUN" and instruction.line in run_lines:
            for argv in run_commands(rewritten.get(instruction.line, instruction)):
                check.command(argv, instruction.line, cwd)
    return check.blockers
