"""RUN instructions rewritten for Wolfi, in place: only the changed words change.

- `apt-get`/`apt`/`yum`/`dnf`/`microdnf`/`tdnf install` → `apk add --no-cache` with each name
  mapped where it stands (so one-package-per-line layouts, comments and continuations stay);
  `-y`, `--no-install-recommends` and other options go; version pins go (Wolfi versions differ).
- update/upgrade/clean/purge/remove/makecache and `rm -rf /var/lib/apt/lists/*` (and the yum/dnf
  caches) are dropped, with the operator that joined them; other subcommands of those package
  managers are dropped and reported (they cannot run on Wolfi).
- A name with no known Wolfi package is left out of the apk line and reported as unmapped
  (the caller also puts a comment above the RUN); a `$VARIABLE` is kept as written and reported.
- `useradd`/`groupadd` → BusyBox `adduser -D`/`addgroup`; one that cannot be converted stays and
  is reported. Debian/RHEL-only commands (dpkg, apt-key, rpm, …) stay and are reported.
- Alpine `apk` commands stay as written.

Exec-form RUNs and files with a non-backslash escape directive are left alone and reported.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from repocontext.dockerfile.lexer import physical_lines
from repocontext.dockerfile.packages import MANAGERS, script_heredocs
from repocontext.dockerfile.parser import parse
from repocontext.dockerfile.shellwords import Command, Token, command_index, commands, tokenize
from repocontext.model import Instruction
from subgraphs.distroless_migration.models import PackageChange, UnmappedPackage
from subgraphs.distroless_migration.packages import APT_MANAGERS, RPM_MANAGERS, wolfi_names
from subgraphs.distroless_migration.users import convert_groupadd, convert_useradd

DROPPED = frozenset({"update", "upgrade", "dist-upgrade", "full-upgrade", "clean", "autoclean", "autoremove",
                     "purge", "remove", "erase", "makecache", "check-update", "distro-sync"})
INSTALLS = frozenset({"install", "localinstall", "groupinstall"})
DISTRO_ONLY = frozenset({"dpkg", "dpkg-reconfigure", "apt-key", "add-apt-repository", "apt-cache", "apt-mark",
                         "debconf-set-selections", "locale-gen", "update-locale", "update-alternatives", "rpm",
                         "rpmkeys", "yum-config-manager", "subscription-manager", "alternatives", "usermod"})
_CACHE = re.compile(r"/var/(?:lib/apt/lists|cache/(?:apt|yum|dnf))(?:/.*)?\Z")
_REDIRECT = re.compile(r"\d*(?:[<>]|&>)")
Edit = tuple[int, int, str]


@dataclass
class RunContext:
    overrides: dict[str, list[str]]
    provided: dict[str, str]  # source package → the image that provides it (language runtime packages)
    convert_users: bool = True


@dataclass
class RunResult:
    raw: str | None  # None: the instruction is dropped (nothing left to run)
    packages: list[PackageChange] = field(default_factory=list)
    unmapped: list[UnmappedPackage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # unmapped names left out of an apk line
    failed: bool = False  # left as written: the edit would not have parsed back


class _Region:
    """A part of the RUN's raw text that a shell reads: the instruction head, or a script heredoc body."""

    def __init__(self, offset: int, text: str, mode: str, skip_words: int) -> None:
        tokens = tokenize(text, "head" if mode == "head" else "script")
        self.offset = offset
        self.tokens = [Token(t.kind, t.text, t.raw, t.start + offset, t.end + offset) for t in tokens]
        words = [i for i, t in enumerate(self.tokens) if t.kind == "word"][:skip_words]
        body_start = words[-1] + 1 if words else 0
        self.start = self.tokens[body_start - 1].end if body_start else offset
        self.commands = commands(self.tokens[body_start:])
        self._index = {id(t): i for i, t in enumerate(self.tokens)}

    def before(self, token: Token) -> int:
        i = self._index[id(token)]
        return self.tokens[i - 1].end if i > 0 else self.start


class RunRewriter:
    def __init__(self, instruction: Instruction, ctx: RunContext) -> None:
        self.instruction = instruction
        self.ctx = ctx
        self.result = RunResult(raw=instruction.raw)
        self.edits: list[Edit] = []

    def line_of(self, offset: int) -> int:
        return self.instruction.line + self.instruction.raw.count("\n", 0, offset)

    def run(self) -> RunResult:
        regions = self._regions()
        remaining = 0
        for region in regions:
            remaining += self._region(region)
        raw = self.instruction.raw
        for start, end, text in sorted(self.edits, reverse=True):
            raw = raw[:start] + text + raw[end:]
        self.result.raw = raw if remaining or not self.edits else None
        return self.result

    def _regions(self) -> list[_Region]:
        ins = self.instruction
        lines = physical_lines(ins.raw)
        if not ins.heredocs:
            return [_Region(0, ins.raw, "head", 1 + len(ins.flags))]
        head_len = sum(len(x) for x in lines[: ins.heredocs[0].line - ins.line])
        regions = [_Region(0, ins.raw[:head_len], "head", 1 + len(ins.flags))]
        scripts = script_heredocs(ins.value, [d.name for d in ins.heredocs])
        for doc in ins.heredocs:
            if doc.name in scripts:
                offset = sum(len(x) for x in lines[: doc.line - ins.line])
                regions.append(_Region(offset, doc.content, "script", 0))
        return regions

    def _region(self, region: _Region) -> int:
        """Edits for one region; returns how many of its commands still run something."""
        dropped: set[int] = set()
        for index, command in enumerate(region.commands):
            if not self._command(region, command):
                dropped.add(index)
        self._drop(region, dropped)
        kept = [c for i, c in enumerate(region.commands) if i not in dropped]
        return sum(1 for c in kept if not all(w.text.startswith("<<") or w.text in ("sh", "bash") for w in c.words))

    def _drop(self, region: _Region, dropped: set[int]) -> None:
        """Remove dropped commands with the operators joining them, as runs of consecutive commands."""
        cmds = region.commands
        i = 0
        while i < len(cmds):
            if i not in dropped:
                i += 1
                continue
            j = i
            while j + 1 < len(cmds) and j + 1 in dropped:
                j += 1
            if j + 1 < len(cmds):
                self.edits.append((cmds[i].start, cmds[j + 1].start, ""))
            elif i > 0:
                self.edits.append((cmds[i - 1].end, cmds[j].end, ""))
            else:
                self.edits.append((cmds[i].start, cmds[j].end, ""))
            i = j + 1

    def _command(self, region: _Region, command: Command) -> bool:
        """Edit one command; False when it is to be dropped."""
        words = command.words
        k = command_index(words)
        if k is None:
            return True
        program = posixpath.basename(words[k].text)
        line = self.line_of(words[k].start)
        if program in APT_MANAGERS | RPM_MANAGERS:
            return self._manager(region, command, k, program, line)
        if program == "rm":
            return self._rm(region, words[k + 1:])
        if program in ("useradd", "groupadd") and self.ctx.convert_users:
            self._users(words[k:], program, line)
        elif program in DISTRO_ONLY:
            self.result.notes.append(f"line {line}: `{program}` is Debian/RHEL-specific and will fail on Wolfi: review")
        return True

    def _users(self, words: list[Token], program: str, line: int) -> None:
        if any(_REDIRECT.match(w.raw) for w in words):
            self.result.notes.append(f"line {line}: `{program}` with a redirection was not converted: review")
            return
        try:
            args = [w.text for w in words[1:]]
            text = convert_useradd(args) if program == "useradd" else convert_groupadd(args)
        except ValueError as exc:
            self.result.notes.append(f"line {line}: `{program}` kept ({exc}); BusyBox has adduser/addgroup")
            return
        self.edits.append((words[0].start, words[-1].end, text))

    def _rm(self, region: _Region, args: list[Token]) -> bool:
        paths = [w for w in args if not w.text.startswith("-")]
        caches = [w for w in paths if _CACHE.match(w.text)]
        if not caches:
            return True
        if len(caches) == len(paths):
            self.result.notes.append(f"line {self.line_of(args[0].start) if args else self.instruction.line}: "
                                     f"dropped `rm {' '.join(w.raw for w in args)}` (no apt/yum cache on Wolfi)")
            return False
        for word in caches:
            self.edits.append((region.before(word), word.end, ""))
        return True

    def _manager(self, region: _Region, command: Command, k: int, manager: str, line: int) -> bool:
        words = command.words
        grammar = MANAGERS[manager]
        edits: list[Edit] = [(w.start, words[i + 1].start, "") for i, w in enumerate(words[:k])]
        edits.append((words[k].start, words[k].end, "apk"))
        subcommand: str | None = None
        kept = 0
        emitted: set[str] = set()
        skip = False
        for word in words[k + 1:]:
            if skip:
                skip = False
                edits.append((region.before(word), word.end, ""))
            elif word.text.startswith("-"):
                skip = "=" not in word.text and word.text in grammar.takes_value
                edits.append((region.before(word), word.end, ""))
            elif _REDIRECT.match(word.raw):
                continue
            elif subcommand is None:
                subcommand = word.text
                if subcommand not in INSTALLS:
                    self._not_install(manager, subcommand, line)
                    return False
                edits.append((word.start, word.end, "add --no-cache"))
            else:
                kept += self._package(region, word, manager, emitted, edits)
        if not kept:
            return False
        self.edits.extend(edits)
        return True

    def _not_install(self, manager: str, subcommand: str, line: int) -> None:
        if subcommand in DROPPED:
            self.result.notes.append(f"line {line}: dropped `{manager} {subcommand}` (apk add --no-cache needs none)")
        else:
            self.result.notes.append(f"line {line}: dropped `{manager} {subcommand}`: there is no {manager} on Wolfi")

    def _package(self, region: _Region, word: Token, manager: str, emitted: set[str], edits: list[Edit]) -> int:
        """Map one package word; returns 1 when something stays in the apk line."""
        line = self.line_of(word.start)
        if "$" in word.raw or "`" in word.raw:
            self.result.unmapped.append(UnmappedPackage(name=word.raw, manager=manager, line=line,
                                                        reason="a variable: cannot be mapped, kept as written"))
            return 1
        name, pin = _split_pin(word.text, manager)
        note = f"version pin {pin!r} dropped" if pin else ""
        delete = (region.before(word), word.end, "")
        if name in self.ctx.provided:
            self._record(manager, name, [], line, f"provided by {self.ctx.provided[name]}")
            edits.append(delete)
            return 0
        names = wolfi_names(name, manager, self.ctx.overrides)
        if names is None:
            self.result.unmapped.append(UnmappedPackage(name=name, manager=manager, line=line,
                                                        reason="no Wolfi package known: left out of apk add"))
            self.result.removed.append(name)
            edits.append(delete)
            return 0
        fresh = [n for n in names if n not in emitted]
        emitted.update(fresh)
        self._record(manager, name, names, line, note or ("not needed on Wolfi" if not names else ""))
        if not fresh:
            edits.append(delete)
            return 0
        edits.append((word.start, word.end, " ".join(fresh)))
        return 1

    def _record(self, manager: str, old: str, new: list[str], line: int, note: str) -> None:
        self.result.packages.append(PackageChange(manager=manager, old=old, new=new, line=line, note=note))


def _split_pin(spec: str, manager: str) -> tuple[str, str | None]:
    if manager in APT_MANAGERS:
        name, eq, version = spec.partition("=")
        return name.split(":", 1)[0], (version if eq else None)
    return spec, None


def installs_only(raw: str, flags: int) -> bool:
    """The (rewritten) RUN text does nothing but `apk add`."""
    region = _Region(0, raw, "head", 1 + flags)
    for command in region.commands:
        k = command_index(command.words)
        words = [w.text for w in command.words[k or 0:]]
        if k is None or words[0] != "apk" or "add" not in words[1:2]:
            return False
    return bool(region.commands)


def _parses_as_one_run(raw: str) -> bool:
    parsed = parse(f"FROM scratch\n{raw}", "Dockerfile")
    instructions = parsed.dockerfile.stages[0].instructions[1:] if parsed.dockerfile.stages else []
    return not parsed.problems and [i.keyword for i in instructions] == ["RUN"]


def rewrite_run(instruction: Instruction, ctx: RunContext) -> RunResult:
    """The RUN rewritten; an edit that would not parse back as one clean RUN is not made (`failed`)."""
    if instruction.form == "exec":
        return RunResult(raw=instruction.raw)
    result = RunRewriter(instruction, ctx).run()
    if result.raw is None or result.raw == instruction.raw or _parses_as_one_run(result.raw) \
            or not _parses_as_one_run(instruction.raw):
        return result
    return RunResult(raw=instruction.raw, failed=True, notes=[
        f"line {instruction.line}: RUN not rewritten: its shell text could not be edited safely; review it"])
