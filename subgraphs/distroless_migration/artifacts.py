"""What a restructured final stage must copy from its -dev builder (`collect`, `package_blockers`), read from
the build steps, and what its RUNs make that the copy would miss (`lost_outputs`).

Copied, in order of appearance, then de-duplicated (a path inside another copied path goes):
- every COPY/ADD destination and the final WORKDIR (the app, node_modules, a project .venv);
- virtualenvs (`python -m venv DIR`, `virtualenv DIR`, `uv venv`, `uv sync`), `pip install
  --target/--prefix DIR`, and site-packages (`/usr/lib/pythonX.Y/site-packages`: Chainguard's python
  lives in /usr) when pip installs outside a virtualenv;
- `go build -o PATH` outputs, and absolute paths made or changed by mkdir/chown/chmod/touch;
- /etc/passwd and /etc/group when the final USER was created by a RUN;
- the shared libraries of -dev packages a native extension may link (libpq, libxml2, …).
What cannot be told safely becomes a blocker: `pip install --user`, Poetry's cache virtualenv,
a COPY into /, a package of unknown or runtime role.

RUN outputs a restructured (shell-free) runtime would lose: a blocker for each, so the stage stays -dev.

The runtime stage copies only what `collect` found (COPY destinations, the WORKDIR, virtualenvs, pip's
site-packages, `go build -o` outputs, paths made by mkdir/chown/chmod/touch, accounts, known libraries).
A RUN command of the final image is accepted when its effect is inside that:
- it writes nothing (echo, export, cd, test, …; a redirection is still checked), or `collect` handles it
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
from dataclasses import dataclass, field

from repocontext.dockerfile.copies import walk
from repocontext.dockerfile.packages import SHELLS, script_heredocs, shell_script_of
from repocontext.dockerfile.shellwords import Token, command_index, commands, tokenize
from repocontext.dockerfile.words import unquote
from repocontext.model import Instruction, Stage
from subgraphs.distroless_migration.models import Blocker
from subgraphs.distroless_migration.shell import MANAGERS
from subgraphs.distroless_migration.wolfi import DATA_PACKAGES, RUNTIME_LIBS, role

_PIP = re.compile(r"pip(?:\d+(?:\.\d+)?)?\Z")
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?\Z")
_TOUCHERS = frozenset({"mkdir", "chown", "chmod", "touch"})
_USER_MAKERS = frozenset({"useradd", "adduser", "groupadd", "addgroup"})
_ARCHIVE = re.compile(r".*\.(?:tar|tgz|tar\.\w+)\Z")


@dataclass(frozen=True)
class Copy:
    source: str
    dest: str
    order: int = 4  # 0 accounts, 1 Python packages, 2 libraries, 3 programs, 4 the rest (in order of appearance)


@dataclass(frozen=True)
class Installed:
    name: str  # Wolfi name (or the source name when unmapped)
    line: int
    mapped: bool = True
    variable: bool = False  # a $VARIABLE package list


@dataclass
class Artifacts:
    copies: list[Copy] = field(default_factory=list)
    blockers: list[Blocker] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    venvs: list[str] = field(default_factory=list)
    system_pip: bool = False
    pip_line: int | None = None  # the first system-wide pip install
    users: set[str] = field(default_factory=set)
    cgo_disabled: bool = False
    # the programs the RUNs run, git too where a package manager may run it: evidence that a build tool
    # installed in the final stage is used by the build (wolfi.TOOLS)
    programs: set[str] = field(default_factory=set)

    def add(self, source: str, dest: str | None = None, order: int = 4) -> None:
        copy = Copy(source, dest or source, order)
        if copy not in self.copies:
            self.copies.append(copy)

    def minimized(self) -> list[Copy]:
        """Copies without those inside another copied path, grouped by `order` (stable)."""
        roots = [c for c in self.copies if c.source == c.dest and not _glob(c.source)]
        kept = [c for c in self.copies if _glob(c.source) or c.source != c.dest
                or not any(o.dest != c.dest and _inside(c.dest, o.dest) for o in roots)]
        return sorted(kept, key=lambda c: c.order)

    def covered(self, path: str) -> bool:
        return any(_inside(path, c.dest) for c in self.copies)


def _glob(path: str) -> bool:
    return any(c in path for c in "*?[")


def _inside(path: str, parent: str) -> bool:
    parent = parent.rstrip("/") or "/"
    return path == parent or path.startswith(parent + "/") or parent == "/"


def _resolve(path: str, workdir: str) -> str:
    return posixpath.normpath(posixpath.join(workdir, path))


# Package managers that fetch git-sourced dependencies with the git program (pip only for a git+ URL it is given)
GIT_FETCHERS = frozenset({"npm", "yarn", "pnpm", "go", "bundle", "composer", "cargo"})


class _Collector:
    def __init__(self, path: str, chain: list[Stage], escape: str) -> None:
        self.path, self.chain, self.escape = path, chain, escape
        self.out = Artifacts()
        self.env = chain[-1].env if chain else {}
        self._poetry_in_project = self.env.get("POETRY_VIRTUALENVS_IN_PROJECT", "").lower() in ("1", "true")
        self._poetry_system = self.env.get("POETRY_VIRTUALENVS_CREATE", "").lower() in ("0", "false")

    def block(self, line: int, what: str, how: str) -> None:
        self.out.blockers.append(Blocker(file=self.path, line=line, what=what, how=how))

    def collect(self) -> Artifacts:
        for _stage, instruction, workdir in walk(self.chain):
            if instruction.keyword in ("COPY", "ADD"):
                self._copy(instruction, workdir)
            elif instruction.keyword == "RUN":
                for argv in run_commands(instruction):
                    self._command(argv, instruction.line, workdir)
        self.out.cgo_disabled = self.out.cgo_disabled or self.env.get("CGO_ENABLED") == "0"
        return self.out

    def _copy(self, instruction: Instruction, workdir: str) -> None:
        words = instruction.args if instruction.form == "exec" else [unquote(w, self.escape) for w in instruction.args]
        if len(words) < 2:
            return
        sources, dest = words[:-1], words[-1]
        as_dir = dest.endswith("/") or dest in (".", "./") or len(sources) > 1
        base = _resolve(dest, workdir)
        for source in sources:
            name = posixpath.basename(source.rstrip("/"))
            whole = source.rstrip("/") in (".", "") or source.endswith("/") or any(c in source for c in "*?[")
            archive = instruction.keyword == "ADD" and _ARCHIVE.match(source) is not None
            target = base if whole or archive or not as_dir else posixpath.join(base, name)
            if target == "/":
                self.block(instruction.line, f"{instruction.keyword} into / puts files everywhere in the image",
                           "copy into a directory of its own (e.g. WORKDIR /app + COPY . .)")
                return
            self.out.add(target)

    def _command(self, argv: list[str], line: int, workdir: str) -> None:
        if any(w == "CGO_ENABLED=0" for w in argv):
            self.out.cgo_disabled = True
        if any("git+" in word or word.endswith(".git") for word in argv):
            self.out.programs.add("git")  # pip, npm … fetch a git URL with git
        k = command_index_of(argv)
        if k is None:
            return
        program, args = posixpath.basename(argv[k]), argv[k + 1:]
        self.out.programs.add(program)
        if program in GIT_FETCHERS:
            self.out.programs.add("git")
        if _PYTHON.match(program) and args[:2] == ["-m", "venv"]:
            self._venv(_positional(args[2:]), workdir)
        elif _PYTHON.match(program) and args[:2] == ["-m", "pip"]:
            self._pip(argv[k], args[2:], line, workdir)
        elif _PIP.match(program):
            self._pip(argv[k], args, line, workdir)
        elif program == "virtualenv":
            self._venv(_positional(args), workdir)
        elif program == "uv":
            self._uv(args, line, workdir)
        elif program == "poetry" and args[:1] == ["config"]:
            self._poetry_config(args[1:])
        elif program == "poetry" and args[:1] == ["install"]:
            self._poetry(line, workdir)
        elif program == "go" and args[:1] == ["build"] and "-o" in args[:-1]:
            self.out.add(_resolve(args[args.index("-o") + 1], workdir), order=3)
        elif program in _TOUCHERS:
            paths = _positional(args)[1 if program in ("chown", "chmod") else 0:]
            for path in paths:
                if path.startswith("/") and not self.out.covered(path) and not path.startswith("/tmp"):
                    self.out.add(posixpath.normpath(path))
        elif program in _USER_MAKERS and _positional(args):
            self.out.users.add(_positional(args)[-1])

    def _venv(self, dirs: list[str], workdir: str) -> None:
        if dirs:
            venv = _resolve(dirs[0], workdir)
            self.out.venvs.append(venv)
            self.out.add(venv, order=1)

    def _pip(self, pip: str, args: list[str], line: int, workdir: str) -> None:
        if "install" not in args:
            return
        if "--user" in args:
            self.block(line, "pip install --user puts packages in the build user's home, which the runtime user lacks",
                       "install into a virtualenv (python -m venv /opt/venv; ENV PATH=/opt/venv/bin:$PATH)")
            return
        for flag in ("-t", "--target", "--prefix"):
            value = _option(args, flag)
            if value:
                self.out.add(_resolve(value, workdir), order=1)
                return
        path = _resolve(pip, workdir) if "/" in pip else pip
        if any(_inside(path, v) for v in self.out.venvs) or self._venv_active():
            return
        self._system(line)

    def _system(self, line: int) -> None:
        self.out.system_pip = True
        self.out.pip_line = self.out.pip_line or line

    def _venv_active(self) -> bool:
        if self.env.get("VIRTUAL_ENV"):
            return True
        path = self.env.get("PATH", "")
        return any(f"{v}/bin" in path.split(":") for v in self.out.venvs)

    def _uv(self, args: list[str], line: int, workdir: str) -> None:
        if args[:1] == ["venv"]:
            self._venv(_positional(args[1:]) or [".venv"], workdir)
        elif args[:1] == ["sync"]:
            self._venv([self.env.get("UV_PROJECT_ENVIRONMENT") or ".venv"], workdir)
        elif args[:2] == ["pip", "install"]:
            if "--system" in args:
                self._system(line)
            else:
                self._pip("uv", args[1:], line, workdir)

    def _poetry_config(self, args: list[str]) -> None:
        if args[:2] == ["virtualenvs.in-project", "true"]:
            self._poetry_in_project = True
        elif args[:2] == ["virtualenvs.create", "false"]:
            self._poetry_system = True

    def _poetry(self, line: int, workdir: str) -> None:
        if self._poetry_system:
            self._system(line)
        elif self._poetry_in_project:
            self._venv([".venv"], workdir)
        else:
            self.block(line, "poetry install puts its virtualenv in Poetry's cache directory",
                       "set POETRY_VIRTUALENVS_IN_PROJECT=true (the venv is then copied with the project)")


def command_index_of(argv: list[str]) -> int | None:
    """command_index for plain strings."""
    return command_index([Token("word", w, w, 0, 0) for w in argv])


def _positional(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _option(args: list[str], flag: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def run_commands(instruction: Instruction) -> list[list[str]]:
    """The simple commands a RUN runs, as unquoted words (heredoc scripts included)."""
    texts: list[str] = []
    if instruction.form == "exec":
        script = shell_script_of(instruction.args)
        if script is None:
            return [list(instruction.args)]
        texts.append(script)
    else:
        texts.append(instruction.value)
        scripts = script_heredocs(instruction.value, [d.name for d in instruction.heredocs])
        texts += [d.content for d in instruction.heredocs if d.name in scripts]
    return [[w.text for w in c.words] for text in texts for c in commands(tokenize(text, "script"))]


def package_blockers(path: str, installed: list[Installed], build_only: list[str], out: Artifacts) -> None:
    """Copy the libraries of -dev packages; block on packages the runtime may need and cannot have
    (`out` is what `collect` found, whose `programs` tell a build tool the build runs)."""
    for item in installed:
        kind = role(item.name, build_only, frozenset(out.programs)) if item.mapped else "unmapped"
        if kind == "library":
            for glob in RUNTIME_LIBS[item.name]:
                out.add(glob, posixpath.dirname(glob) + "/", order=2)
            out.notes.append(f"{item.name} (line {item.line}): its shared library is copied into the runtime; "
                             "libraries it depends on in turn are not (check with ldd)")
        elif kind == "data":
            tree = DATA_PACKAGES[item.name]
            out.add(tree, tree + "/", order=2)
            out.notes.append(f"{item.name} (line {item.line}): {tree} is copied into the runtime (most Chainguard "
                             "images do not have it, per the catalog data)")
        elif kind == "unmapped" and item.variable:
            out.blockers.append(Blocker(
                file=path, line=item.line, what=f"package list {item.name} is a variable: what it installs is unknown",
                how="name the packages in the Dockerfile (Wolfi names) or keep the -dev final stage"))
        elif kind == "unmapped":
            out.blockers.append(Blocker(
                file=path, line=item.line, what=f"package {item.name} has no known Wolfi name, so its role is unknown",
                how="map it in the mapping file's packages: (and list it under build_only: if only builds need it)"))
        elif kind == "runtime":
            out.blockers.append(Blocker(
                file=path, line=item.line,
                what=f"package {item.name} is installed in the final image; a shell-free runtime cannot install it",
                how=f"if only the build needs {item.name}, list it under build_only: in the mapping file; "
                    "otherwise keep the -dev final stage"))


def collect(path: str, chain: list[Stage], escape: str) -> Artifacts:
    return _Collector(path, chain, escape).collect()


SILENT = frozenset({"echo", "printf", "export", "set", "unset", "cd", "true", "false", ":", "test", "[", "sleep",
                    "which", "id", "whoami", "ls", "cat", "pwd", "exit", "umask", ".", "source", "type", "hash",
                    "uname", "date", "grep", "head", "tail", "wc", "env", "ldd", "file", "stat", "du", "df"})
HANDLED = frozenset({"pip", "pip3", "python", "python3", "virtualenv", "uv", "poetry", "mkdir", "chown", "chmod",
                     "touch", "useradd", "adduser", "groupadd", "addgroup", "usermod", "apk"})
_PIP_OR_PYTHON = re.compile(r"(?:pip|python)(?:\d+(?:\.\d+)?)?\Z")
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
        elif program in HANDLED or (_PIP_OR_PYTHON.match(program) and args[:1] == ["-m"]) or _no_output(program, args):
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
        return bool(_PIP_OR_PYTHON.match(program)) and args[:2] == ["setup.py", "install"]

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
    """Toolchain steps whose outputs only builds use (module caches, tests) or that `collect` copies."""
    if program == "go":
        return args[:1] in (["mod"], ["vet"], ["test"], ["version"], ["env"], ["list"]) or (
            args[:1] == ["build"] and "-o" in args)
    return program == "cargo" and args[:1] in (["fetch"], ["test"])


def _last(args: list[str]) -> list[str]:
    positional = [a for a in args if not a.startswith("-")]
    return positional[-1:]


def _values_of(*flags: str) -> Callable[[list[str]], list[str]]:
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
    "cp": _last, "mv": _last, "ln": _last, "install": _last, "curl": _values_of("-o", "--output"),
    "wget": _values_of("-O", "--output-document", "-P", "--directory-prefix"), "tar": _values_of("-C", "--directory"),
    "unzip": _values_of("-d"), "git": _git, "sed": _files, "tee": lambda a: [x for x in a if not x.startswith("-")],
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
