"""`useradd` / `groupadd` / `usermod -aG` (shadow) → BusyBox `adduser` / `addgroup`, which Wolfi -dev images have.

BusyBox syntax: `adduser -D [-S] [-u UID] [-G GROUP] [-h HOME] [-s SHELL] [-g GECOS] [-H] NAME`
(-D: no password, so it never prompts), `addgroup [-S] [-g GID] NAME`, and `addgroup USER GROUP` (add an
existing user to an existing group: what `usermod -aG GROUP USER` does, for one group). Options with no
BusyBox equivalent (supplementary groups, non-unique ids, expiry, …) make the conversion fail
with a reason instead of guessing.
"""

from __future__ import annotations

import shlex

# shadow option → (BusyBox option or None to drop, takes a value)
_USERADD: dict[str, tuple[str | None, bool]] = {
    "-u": ("-u", True), "--uid": ("-u", True), "-g": ("-G", True), "--gid": ("-G", True),
    "-d": ("-h", True), "--home-dir": ("-h", True), "-s": ("-s", True), "--shell": ("-s", True),
    "-c": ("-g", True), "--comment": ("-g", True), "-k": ("-k", True), "--skel": ("-k", True),
    "-r": ("-S", False), "--system": ("-S", False), "-M": ("-H", False), "--no-create-home": ("-H", False),
    "-m": (None, False), "--create-home": (None, False), "-l": (None, False), "--no-log-init": (None, False),
    "-U": (None, False), "--user-group": (None, False),
}
_GROUPADD: dict[str, tuple[str | None, bool]] = {
    "-g": ("-g", True), "--gid": ("-g", True), "-r": ("-S", False), "--system": ("-S", False),
    "-f": (None, False), "--force": (None, False),
}


def _options(args: list[str], table: dict[str, tuple[str | None, bool]]) -> tuple[list[tuple[str, str | None]], str]:
    """[(shadow option, value)] and the single positional name; ValueError with a reason otherwise."""
    found: list[tuple[str, str | None]] = []
    names: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if not word.startswith("-") or word == "-":
            names.append(word)
            continue
        option, eq, value = word.partition("=")
        letters = [f"-{c}" for c in option[1:]] if not option.startswith("--") and len(option) > 2 else [option]
        for j, flag in enumerate(letters):
            if flag not in table:
                raise ValueError(f"option {flag} has no BusyBox equivalent")
            if not table[flag][1]:
                found.append((flag, None))
                continue
            rest = "".join(c[1] for c in letters[j + 1:]) if len(letters) > 1 else value if eq else ""
            if not rest:
                if i >= len(args):
                    raise ValueError(f"option {flag} needs a value")
                rest, i = args[i], i + 1
            found.append((flag, rest))
            break
    if len(names) != 1:
        raise ValueError(f"expected one name, found {len(names)}")
    return found, names[0]


def _render(command: str, first: list[str], options: list[tuple[str, str | None]], name: str,
            table: dict[str, tuple[str | None, bool]]) -> str:
    words = [command, *first]
    for flag, value in options:
        target = table[flag][0]
        if target is None or target in words:
            continue
        words.append(target)
        if value is not None:
            words.append(value)
    words.append(name)
    return " ".join(shlex.quote(w) for w in words)


def convert_useradd(args: list[str]) -> str:
    """BusyBox adduser for `useradd ARGS` (args unquoted); ValueError with the reason when it cannot."""
    options, name = _options(args, _USERADD)
    fixed: list[tuple[str, str | None]] = []
    for flag, value in options:
        if _USERADD[flag][0] == "-G" and value is not None and value.isdigit():
            if value != "0":
                raise ValueError(f"primary group given by number ({value}): BusyBox adduser needs a group name")
            value = "root"
        fixed.append((flag, value))
    return _render("adduser", ["-D"], fixed, name, _USERADD)


def convert_groupadd(args: list[str]) -> str:
    options, name = _options(args, _GROUPADD)
    return _render("addgroup", [], options, name, _GROUPADD)


def convert_usermod(args: list[str]) -> str:
    """`addgroup USER GROUP` for `usermod -aG GROUP USER` (one group); ValueError with the reason otherwise."""
    append = groups = None
    names: list[str] = []
    i = 0
    while i < len(args):
        word, i = args[i], i + 1
        if word in ("-a", "--append"):
            append = True
        elif word in ("-aG", "-Ga", "-G", "--groups") or word.startswith("--groups="):
            append = append or word in ("-aG", "-Ga")
            if "=" in word:
                groups = word.split("=", 1)[1]
            elif i < len(args):
                groups, i = args[i], i + 1
        elif word.startswith("-"):
            raise ValueError(f"option {word} has no BusyBox equivalent")
        else:
            names.append(word)
    if not append or groups is None or len(names) != 1:
        raise ValueError("only `usermod -aG GROUP USER` converts (to BusyBox addgroup USER GROUP)")
    if "," in groups:
        raise ValueError("several groups at once: BusyBox addgroup adds one group per call")
    return " ".join(shlex.quote(w) for w in ("addgroup", names[0], groups))
