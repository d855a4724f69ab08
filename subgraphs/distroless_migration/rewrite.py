"""RUN instructions rewritten for Wolfi, in place: only the changed words change. Nothing is dropped silently.

- `apt-get`/`apt`/`yum`/`dnf`/`microdnf`/`tdnf install` → `apk add --no-cache` with each name
  mapped where it stands (so one-package-per-line layouts, comments and continuations stay);
  `-y`, `--no-install-recommends` and other options go; version pins go (Wolfi versions differ).
  A leading `env`, `sudo` or assignment goes with the command it prefixes.
- update/upgrade/clean/purge/remove/makecache and `rm -rf /var/lib/apt/lists/*` (and the yum/dnf
  caches) are dropped, with the operator that joined them, and noted: removals only make the image
  smaller, apk needs no index update. Other subcommands of those managers stay and are blockers.
- A name with no known Wolfi package stays in the apk line as written and is a blocker (the caller puts a
  `# TODO(planner):` comment above the RUN); so is a `$VARIABLE` package list.
- Pipelines are judged whole (shell.py): remote installers and `xargs apt-get` stay and are
  blockers; apt configuration is dropped with a note; repository setup is dropped with a note when the
  stage's later installs all map to Wolfi, else a blocker. A package manager left anywhere in a command
  the rewriter did not convert is a blocker too (never an apt-get silently left in the RUN).
- `useradd`/`groupadd` → BusyBox `adduser -D`/`addgroup`; `usermod -aG GROUP USER` → `addgroup USER GROUP`;
  one that cannot be converted stays and is a blocker (shell.py). Debian/RHEL-only tools (dpkg, locale-gen, …)
  too.
- Alpine `apk add` names go through the same table (`rewrite_add`, below: g++ → gcc, musl-dev → glibc-dev,
  the musl compatibility shims removed with the reason); other apk commands stay as written. BuildKit cache mounts
  of apt's cache are adapted (shell.py).

Exec-form RUNs and files with a non-backslash escape directive are left alone (the caller reports them).

`apk add` on a stage that moves from Alpine to Wolfi (`rewrite_add`): each name through the same table as
apt/rpm names.

Wolfi shares most of Alpine's names, not all: `g++` is `gcc`, `musl-dev` is `glibc-dev`, and the musl
compatibility shims (`gcompat`, `libc6-compat`) are not needed on a glibc system. Each package word is
mapped where it stands (data/wolfi-map.yaml `apk:`, else the name itself when the Wolfi index has it):
- mapped to other names: replaced; mapped to nothing: removed, with the table's reason in the note;
- a version pin (`=1.2-r0`, `~1.2`, `>1`) or a repository tag (`@edge`) is removed and stated in the note:
  Alpine versions and repositories are not Wolfi's, so apk would not resolve them;
- an unknown name or a `$VARIABLE` list stays as written and is a blocker (the caller reports it).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from repocontext.dockerfile.packages import MANAGERS as GRAMMARS
from repocontext.dockerfile.packages import script_heredocs
from repocontext.dockerfile.parser import parse
from repocontext.dockerfile.shellwords import Command, Token, command_index, commands, tokenize
from repocontext.lines import split_lines
from repocontext.model import Instruction
from subgraphs.distroless_migration.models import ItemBlocker, PackageChange, UnmappedPackage
from subgraphs.distroless_migration.shell import (
    KEYWORDS,
    MANAGERS,
    Verdict,
    adapt_mounts,
    classify,
    convert_groupadd,
    convert_useradd,
    convert_usermod,
    pipelines,
    program_at,
    removal_edits,
    shown,
)
from subgraphs.distroless_migration.wolfi import APT_MANAGERS, RPM_MANAGERS, wolfi_names

_SPEC = re.compile(r"([^=<>~@]+)(@[^=<>~]+)?(?:([=<>~]+)(.*))?\Z")
NOT_NEEDED = {  # why an Alpine package has no counterpart on Wolfi (the table maps these to [])
    "gcompat": "a glibc compatibility layer for musl: Wolfi is glibc-based, so it is not needed",
    "libc6-compat": "a glibc compatibility layer for musl: Wolfi is glibc-based, so it is not needed",
    "fortify-headers": "musl's fortify headers: glibc has its own, so it is not needed",
    "libintl": "part of glibc on Wolfi, so it is not needed",
}
Edit = tuple[int, int, str]


@dataclass
class Mapped:
    name: str  # the Alpine name
    new: list[str]  # the Wolfi names written (empty: removed)
    note: str
    start: int  # offset of the word (for its line)


@dataclass
class ApkAdd:
    """The edits for one `apk add` command and what each package became."""

    edits: list[Edit]
    mapped: list[Mapped]
    unmapped: list[tuple[str, int, str]]  # (word as written, offset, kind: unmapped-package | dynamic-package-list)
    kept: int  # package words left in the command


def _split(word: str) -> tuple[str, str]:
    """(name, what is removed: tag and pin as written, or '')."""
    m = _SPEC.match(word)
    if not m:
        return word, ""
    return m.group(1), (m.group(2) or "") + ((m.group(3) or "") + (m.group(4) or ""))


def _note(name: str, new: list[str], removed: str) -> str:
    parts = []
    if removed:
        parts.append(f"{removed!r} removed: Alpine versions and repositories are not Wolfi's")
    if not new:
        parts.append(NOT_NEEDED.get(name, "not needed on Wolfi"))
    elif new != [name]:
        parts.append("Wolfi's name")
    return "; ".join(parts)


def rewrite_add(words: list[Token], before: Callable[[Token], int], overrides: dict[str, list[str]]) -> ApkAdd | None:
    """`words`: the command from `apk` on; None when it is not `apk add` (left alone)."""
    grammar = GRAMMARS["apk"]
    out = ApkAdd([], [], [], 0)
    sub: str | None = None
    skip, emitted = False, set[str]()
    for word in words[1:]:
        if skip:
            skip = False
        elif word.text.startswith("-"):
            skip = "=" not in word.text and word.text in grammar.takes_value | grammar.skip_value
        elif sub is None:
            sub = word.text
            if sub != "add":
                return None
        else:
            out.kept += _package(word, before, overrides, emitted, out)
    return out if sub == "add" else None


def _package(word: Token, before: Callable[[Token], int], overrides: dict[str, list[str]], emitted: set[str],
             out: ApkAdd) -> int:
    if "$" in word.raw or "`" in word.raw:
        out.unmapped.append((word.raw, word.start, "dynamic-package-list"))
        return 1
    if "/" in word.text or word.text.endswith(".apk"):
        return 1  # a local package file or URL: installed as it is
    name, removed = _split(word.text)
    names = wolfi_names(name, "apk", overrides)
    if names is None:
        out.unmapped.append((word.text, word.start, "unmapped-package"))
        return 1
    fresh = [n for n in names if n not in emitted]
    emitted.update(fresh)
    out.mapped.append(Mapped(name, names, _note(name, names, removed), word.start))
    if not fresh:
        out.edits.append((before(word), word.end, ""))
        return 0
    if fresh != [word.text]:
        out.edits.append((word.start, word.end, " ".join(fresh)))
    return 1


DROPPED = frozenset({"update", "upgrade", "dist-upgrade", "full-upgrade", "clean", "autoclean", "autoremove",
                     "purge", "remove", "erase", "makecache", "check-update", "distro-sync"})
INSTALLS = frozenset({"install", "localinstall", "groupinstall"})
HELPERS = frozenset({"install_packages", "clean-install"})  # apt-get install wrappers of minideb and kind
_USERS = {"useradd": convert_useradd, "groupadd": convert_groupadd, "usermod": convert_usermod}
_USERS_FIX = ("add shadow to an apk add line (Wolfi's shadow package has useradd/usermod), or use BusyBox "
              "adduser/addgroup")
_CACHE = re.compile(r"/var/(?:lib/apt/lists|cache/(?:apt|yum|dnf))(?:/.*)?\Z")
_REMOVALS = frozenset({"purge", "remove", "erase", "autoremove"})
_REDIRECT = re.compile(r"\d*(?:[<>]|&>)")


@dataclass
class RunContext:
    overrides: dict[str, list[str]]
    provided: dict[str, str]  # source package → the image that provides it (language runtime packages)
    convert_users: bool = True
    path: str = "Dockerfile"
    later: list[tuple[int, str, str]] = field(default_factory=list)  # the stage's apt/rpm installs: line, manager, name
    wolfi_source: bool = False  # the stage already was on a Wolfi image: its apk lines are Wolfi's, left alone

    def maps(self, manager: str, name: str) -> bool:
        return name in self.provided or ("$" not in name and wolfi_names(name, manager, self.overrides) is not None)


@dataclass
class RunResult:
    raw: str | None  # None: the instruction is dropped (nothing left to run)
    packages: list[PackageChange] = field(default_factory=list)
    unmapped: list[UnmappedPackage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    blockers: list[ItemBlocker] = field(default_factory=list)  # what stays unconverted (unmapped names included)
    failed: bool = False  # left as written: the edit would not have parsed back
    converted: bool = False  # a package manager call became apk


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

    def block(self, kind: str, line: int, message: str, fix: str) -> None:
        self.result.blockers.append(ItemBlocker(kind=kind, file=self.ctx.path, line=line, message=message, fix=fix))

    def run(self) -> RunResult:
        regions = self._regions()
        remaining = 0
        for region in regions:
            remaining += self._region(region)
        if self.result.converted:
            self._mounts(regions[0])
        raw = self.instruction.raw
        for start, end, text in sorted(self.edits, reverse=True):
            raw = raw[:start] + text + raw[end:]
        self.result.raw = raw if remaining or not self.edits else None
        return self.result

    def _regions(self) -> list[_Region]:
        ins = self.instruction
        lines = split_lines(ins.raw)
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

    def _mounts(self, head: _Region) -> None:
        words = [t for t in head.tokens if t.kind == "word"][1:1 + len(self.instruction.flags)]
        edits, notes = adapt_mounts(words, [head.before(w) for w in words], self.instruction.line)
        self.edits += edits
        self.result.notes += notes

    def _region(self, region: _Region) -> int:
        """Edits for one region; returns how many of its commands still run something."""
        dropped: set[int] = set()
        for group in pipelines(region.commands):
            members = [region.commands[i] for i in group]
            verdict = classify(members)
            if verdict is None:
                dropped.update(i for i in group if not self._command(region, region.commands[i]))
            elif self._judged(verdict, members):
                dropped.update(group)
        self._drop(region, dropped)
        kept = [c for i, c in enumerate(region.commands) if i not in dropped]
        return sum(1 for c in kept if not all(w.text.startswith("<<") or w.text in ("sh", "bash") for w in c.words))

    def _drop(self, region: _Region, dropped: set[int]) -> None:
        """Remove dropped commands, keeping the program's structure (py)."""
        parens = [t.start for t in region.tokens if t.kind == "op" and t.text == "("]
        self.edits += removal_edits(region.commands, dropped, parens)

    def _judged(self, verdict: Verdict, members: list[Command]) -> bool:
        """Apply a pipeline verdict; True when the pipeline is to be dropped."""
        line = self.line_of(members[0].start)
        if verdict.action == "repo":
            mapped = [f"{n}" for at, m, n in self.ctx.later if at >= self.instruction.line and self.ctx.maps(m, n)]
            if mapped and len(mapped) == sum(1 for at, _m, _n in self.ctx.later if at >= self.instruction.line):
                self.result.notes.append(f"line {line}: {verdict.message}: removed, since the packages installed after "
                                         f"it ({', '.join(mapped)}) all come from Wolfi")
                return True
            self.block("unconverted-command", line, f"{verdict.message}, and not every package installed after it is "
                       "known on Wolfi",
                       "install the packages from Wolfi (apk add) and remove the repository setup, or map them in "
                       "the mapping file's packages:")
            return False
        if verdict.action == "drop":
            self.result.notes.append(f"line {line}: {verdict.message}: removed")
            return True
        self.block(verdict.kind, line, verdict.message, verdict.fix)
        return False

    def _command(self, region: _Region, command: Command) -> bool:
        """Edit one command; False when it is to be dropped."""
        words = command.words
        k = program_at(words)
        if k is None:
            return True
        program = posixpath.basename(words[k].text)
        line = self.line_of(words[k].start)
        if program in APT_MANAGERS | RPM_MANAGERS:
            return self._manager(region, command, k, program, line)
        if program == "apk":
            return self._apk(region, command, k, line)
        if program in HELPERS:
            return self._helper(region, command, k, line)
        if program == "rm":
            return self._rm(region, words[k + 1:])
        if program in _USERS:
            self._users(words[k:], program, line)
        elif any(posixpath.basename(w.text) in MANAGERS for w in words[k + 1:]):
            self.block("not-rewritten", line, f"`{shown([command])}` calls a package manager in a way the rewriter "
                       "cannot convert", "write the install as a plain `apk add --no-cache NAMES` with Wolfi names")
        return True

    def _apk(self, region: _Region, command: Command, k: int, line: int) -> bool:
        """Alpine's `apk add` with Wolfi names (py); False when none of its packages is needed."""
        done = rewrite_add(command.words[k:], region.before, self.ctx.overrides)
        if done is None:
            return True
        if self.ctx.wolfi_source:  # already Wolfi names and pins: recorded for the roles, never edited
            self.result.packages += [PackageChange(manager="apk", old=m.name, new=[m.name], line=self.line_of(m.start))
                                     for m in done.mapped]
            return True
        for m in done.mapped:
            self._record("apk", m.name, m.new, self.line_of(m.start), m.note)
        for word, offset, kind in done.unmapped:
            self._unmapped(word, "apk", self.line_of(offset), kind,
                           "no Wolfi package known: kept as written" if kind == "unmapped-package" else
                           "a variable or command substitution: its packages cannot be checked, kept as written")
        virtual = any(w.text in ("-t", "--virtual") or w.text.startswith("--virtual=") for w in command.words[k:])
        if not done.kept and not virtual:
            self.result.notes.append(f"line {line}: `apk add` removed: none of its packages is needed on Wolfi")
            return False
        self.edits += done.edits
        return True

    def _helper(self, region: _Region, command: Command, k: int, line: int) -> bool:
        """`install_packages NAMES` (bitnami/minideb), `clean-install NAMES` (kind): apt-get installs that clean
        up after themselves, so they become `apk add --no-cache` with the names mapped like apt's."""
        words = command.words
        edits: list[Edit] = [(w.start, words[i + 1].start, "") for i, w in enumerate(words[:k])
                             if w.text not in KEYWORDS]
        edits.append((words[k].start, words[k].end, "apk add --no-cache"))
        emitted: set[str] = set()
        kept = sum(self._package(region, w, "apt-get", emitted, edits) for w in words[k + 1:]
                   if not w.text.startswith("-") and not _REDIRECT.match(w.raw))
        edits += [(region.before(w), w.end, "") for w in words[k + 1:] if w.text.startswith("-")]
        self.result.converted = True
        self.result.notes.append(f"line {line}: `{words[k].text}` (an apt-get install helper) converted to apk add")
        if not kept:
            return False
        self.edits.extend(edits)
        return True

    def _users(self, words: list[Token], program: str, line: int) -> None:
        try:
            if not self.ctx.convert_users:
                raise ValueError("conversion turned off")
            if any(_REDIRECT.match(w.raw) for w in words):
                raise ValueError("it has a redirection")
            text = _USERS[program]([w.text for w in words[1:]])
        except ValueError as exc:
            self.block("unconverted-command", line, f"`{shown([Command(words)])}`: {program} is not in Wolfi's -dev "
                       f"images and cannot be converted to BusyBox ({exc})", _USERS_FIX)
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
        grammar = GRAMMARS[manager]
        # sudo, env and assignments go with the command; shell keywords before it (then, do, …) stay
        keep = KEYWORDS
        edits: list[Edit] = [(w.start, words[i + 1].start, "") for i, w in enumerate(words[:k]) if w.text not in keep]
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
                    return self._not_install(command, manager, subcommand, line)
                edits.append((word.start, word.end, "add --no-cache"))
            else:
                kept += self._package(region, word, manager, emitted, edits)
        self.result.converted = True
        if not kept:
            return False
        self.edits.extend(edits)
        return True

    def _not_install(self, command: Command, manager: str, subcommand: str | None, line: int) -> bool:
        """Drop what apk needs no counterpart of (index updates, cleaning, removals); block on the rest."""
        if subcommand in DROPPED:
            self.result.notes.append(f"line {line}: dropped `{manager} {subcommand}` (apk add --no-cache needs none"
                                     f"{'; the packages stay installed' if subcommand in _REMOVALS else ''})")
            self.result.converted = True
            return False
        self.block("unconverted-command", line, f"`{shown([command])}`: there is no {manager} on Wolfi and "
                   f"`{manager} {subcommand}` has no apk counterpart here", "replace it with the apk command that does "
                   "the same, or remove it")
        return True

    def _package(self, region: _Region, word: Token, manager: str, emitted: set[str], edits: list[Edit]) -> int:
        """Map one package word; returns 1 when something stays in the apk line."""
        line = self.line_of(word.start)
        if "$" in word.raw or "`" in word.raw:
            self._unmapped(word.raw, manager, line, "dynamic-package-list",
                           "a variable or command substitution: its packages cannot be mapped, kept as written")
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
            self._unmapped(name, manager, line, "unmapped-package", "no Wolfi package known: kept as written")
            return 1
        fresh = [n for n in names if n not in emitted]
        emitted.update(fresh)
        self._record(manager, name, names, line, note or ("not needed on Wolfi" if not names else ""))
        if not fresh:
            edits.append(delete)
            return 0
        edits.append((word.start, word.end, " ".join(fresh)))
        return 1

    def _unmapped(self, name: str, manager: str, line: int, kind: str, reason: str) -> None:
        self.result.unmapped.append(UnmappedPackage(name=name, manager=manager, line=line, reason=reason))
        if kind == "unmapped-package":
            self.block(kind, line, f"{manager} package {name} has no known Wolfi package; it is kept as written in "
                       "the apk line, where apk fails unless Wolfi has that exact name",
                       f"map {name} in the mapping file's packages: (to its Wolfi name, or [] if not needed)")
        else:
            self.block(kind, line, f"{manager} package list {name} is {reason.split(':')[0]}",
                       "name the packages in the Dockerfile (they are then mapped to Wolfi names)")

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


def reparsed(raw: str, line: int) -> Instruction | None:
    """The rewritten RUN as an instruction (numbered from `line`), or None when it is not one clean RUN."""
    parsed = parse("\n" * (line - 2) + f"FROM scratch\n{raw}", "Dockerfile") if line > 1 else None
    instructions = parsed.dockerfile.stages[0].instructions[1:] if parsed and parsed.dockerfile.stages else []
    ok = parsed is not None and not parsed.problems and [i.keyword for i in instructions] == ["RUN"]
    return instructions[0] if ok else None


def _parses_as_one_run(raw: str) -> bool:
    return reparsed(raw, 2) is not None


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
