"""OS package installs found in RUN commands (apt, apt-get, yum, dnf, microdnf, tdnf, apk, zypper).

The command text is tokenised by `shellwords` (script mode): quotes, escapes,
`$(...)` and `${...}` keep a word together; `&&`, `||`, `;`, `|`, `&`,
parentheses and newlines separate commands; `#` at a word start comments to end
of line; redirections such as `2>&1` stay inside their word. Each
simple command is checked after skipping variable assignments, `sudo`/`env` and
shell keywords. Variable package lists (`$PKGS`) are kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from repocontext.dockerfile.shellwords import Token, commands
from repocontext.dockerfile.shellwords import tokenize as shell_tokenize
from repocontext.model import InstalledPackage, Instruction

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh", "mksh"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_REDIRECT = re.compile(r"\d*(?:[<>]|&>)")
_PREFIX_WORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{", "time", "command", "exec"})
_HEREDOC_TOKEN = re.compile(r"\d*<<-?(.+)\Z", re.DOTALL)
_APK_SPEC = re.compile(r"([^=<>~@]+)(@[^=<>~]+)?(?:([=<>~]+)(.*))?\Z")


@dataclass(frozen=True)
class Grammar:
    installs: frozenset[str]  # subcommands that install
    takes_value: frozenset[str]  # options whose value is the next word
    skip_value: frozenset[str] = frozenset()  # options whose value names no package (apk --virtual)


_APT = Grammar(frozenset({"install"}), frozenset({"-o", "-c", "-t", "--option", "--config-file", "--target-release",
                                                  "--default-release"}))
_RPM = Grammar(frozenset({"install", "localinstall"}),
               frozenset({"-x", "--exclude", "--setopt", "--enablerepo", "--disablerepo", "--repo", "--releasever",
                          "-c", "--config", "--installroot", "--repofrompath"}))
_APK = Grammar(frozenset({"add"}), frozenset({"-X", "--repository", "-p", "--root", "--arch", "--keys-dir",
                                              "--cache-dir", "--repositories-file"}), frozenset({"-t", "--virtual"}))
_ZYPPER = Grammar(frozenset({"install", "in"}), frozenset({"-r", "--repo", "--from", "-t", "--type"}))
MANAGERS: dict[str, Grammar] = {"apt-get": _APT, "apt": _APT, "yum": _RPM, "dnf": _RPM, "microdnf": _RPM,
                                "tdnf": _RPM, "apk": _APK, "zypper": _ZYPPER}


def tokenize(text: str) -> list[Token | None]:
    """Words with their offsets; None marks a command separator (operators and newlines)."""
    return [None if token.kind == "op" else token for token in shell_tokenize(text, "script")]


def simple_commands(text: str) -> list[list[Token]]:
    return [command.words for command in commands(shell_tokenize(text, "script"))]


def _command_words(tokens: list[Token]) -> list[Token]:
    """The command without leading assignments, sudo/env and shell keywords, nor redirections."""
    words = list(tokens)
    while words:
        head = words[0].text
        if _ASSIGNMENT.match(head) or head in _PREFIX_WORDS or head == "env":
            words = words[1:]
        elif head == "sudo":
            words = words[1:]
            while words and words[0].text.startswith("-"):
                words = words[1:]
        else:
            break
    kept: list[Token] = []
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
        elif _REDIRECT.match(word.raw):
            skip_next = _REDIRECT.fullmatch(word.raw) is not None  # target is the next word
        else:
            kept.append(word)
    return kept


def _specs(args: list[Token], grammar: Grammar) -> list[Token]:
    """Package words after an install subcommand; [] when the command installs nothing."""
    found: list[Token] = []
    subcommand: str | None = None
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        text = word.text
        if text.startswith("-"):
            skip = "=" not in text and text in grammar.takes_value | grammar.skip_value
            continue
        if subcommand is None:
            subcommand = text
            if subcommand not in grammar.installs:
                return []
            continue
        found.append(word)
    return found


def _split_spec(manager: str, spec: str) -> tuple[str, str | None]:
    if manager in ("apt-get", "apt"):
        name, eq, version = spec.partition("=")
        return name, (version if eq else None)
    if manager in ("apk", "zypper"):
        m = _APK_SPEC.match(spec)
        if m and m.group(3):
            op, version = m.group(3), m.group(4)
            return m.group(1), version if op == "=" else op + version
        return (m.group(1) if m else spec), None
    return spec, None  # rpm names carry versions as "name-1.2", which cannot be split reliably


def packages_in_shell(text: str, line: int, line_of: Callable[[int], int]) -> list[InstalledPackage]:
    found: list[InstalledPackage] = []
    for tokens in simple_commands(text):
        words = _command_words(tokens)
        if not words:
            continue
        manager = PurePosixPath(words[0].text).name
        grammar = MANAGERS.get(manager)
        if grammar is None:
            continue
        for word in _specs(words[1:], grammar):
            spec = word.raw if "$(" in word.raw or "`" in word.raw else word.text  # keep substitutions intact
            name, version = _split_spec(manager, spec)
            found.append(InstalledPackage(manager=manager, name=name, version=version, spec=spec,
                                          line=line, source_line=line_of(word.start)))
    return found


def shell_script_of(argv: list[str]) -> str | None:
    """The script text an exec-form `sh -c "…"` runs, else None."""
    if len(argv) >= 3 and PurePosixPath(argv[0]).name in SHELLS:
        for index, arg in enumerate(argv[1:-1], start=1):
            if arg.startswith("-") and "c" in arg[1:]:
                return argv[index + 1]
    return None


def script_heredocs(value: str, names: list[str]) -> set[str]:
    """Heredoc names whose body a shell runs: `RUN <<EOF`, `RUN bash -e <<EOF`, `… && <<B sh`."""
    scripts: set[str] = set()
    for tokens in simple_commands(value):
        opened = [m.group(1) for t in tokens if (m := _HEREDOC_TOKEN.match(t.text))]
        words = _command_words(tokens)
        if opened and (not words or PurePosixPath(words[0].text).name in SHELLS):
            scripts.update(name for name in opened if name in names)
    return scripts


def run_packages(instruction: Instruction, value_line_of: Callable[[int], int]) -> list[InstalledPackage]:
    """Packages installed by one RUN instruction (exec or shell form, heredoc scripts included)."""
    line = instruction.line
    if instruction.form == "exec":
        script = shell_script_of(instruction.args)
        if script is not None:
            return packages_in_shell(script, line, lambda _offset: line)
        return packages_in_shell(" ".join(_quote(a) for a in instruction.args), line, lambda _offset: line)
    found = packages_in_shell(instruction.value, line, value_line_of)
    scripts = script_heredocs(instruction.value, [d.name for d in instruction.heredocs])
    for doc in instruction.heredocs:
        if doc.name in scripts:
            found += packages_in_shell(doc.content, line, _body_lines(doc.line, doc.content))
    return found


def _body_lines(first: int, content: str) -> Callable[[int], int]:
    return lambda offset: first + content.count("\n", 0, offset)


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"
