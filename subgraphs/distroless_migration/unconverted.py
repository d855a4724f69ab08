"""Commands in a RUN that cannot simply become their Wolfi form, judged a whole pipeline at a time.

A pipeline (`a | b | c`) is judged as one: `curl … | bash` is an installer, `cat list | xargs apt-get install`
a package list read at build time, `curl …/gpg | gpg --dearmor -o /usr/share/keyrings/…` a repository key.
Verdicts:
- "drop": apt/dpkg configuration (debconf-set-selections, /etc/apt/apt.conf.d, /etc/dpkg): it configures a
  package manager Wolfi does not have, so it is removed with a note.
- "repo": it sets up an apt/yum repository or its key (add-apt-repository, apt-key, yum-config-manager,
  `rpm --import`, sources.list(.d) / keyrings / yum.repos.d writes, the NodeSource setup script). Decision:
  removed with a note when every package the stage installs after it has a Wolfi name (Wolfi then serves
  them; the repository only existed for them), else a blocker.
- "block": kept as written and reported: remote installer scripts (`curl|wget … | sh` or into python/perl/…,
  `sh -c "$(curl …)"`),
  dynamic package lists given to a package manager through xargs, and Debian/RHEL-only tools (dpkg,
  locale-gen, update-alternatives, rpm -i, the official php image's docker-php-ext-* helpers, …).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from repocontext.dockerfile.packages import SHELLS
from repocontext.dockerfile.shellwords import Command, Token, command_index
from subgraphs.distroless_migration.packages import APT_MANAGERS, RPM_MANAGERS

MANAGERS = APT_MANAGERS | RPM_MANAGERS
_FETCHERS = frozenset({"curl", "wget"})
_INTERPRETERS = SHELLS | {"python", "python3", "perl", "ruby", "node", "php"}  # what a piped-in installer runs in
_SUBSTITUTED_FETCH = re.compile(r"(?:\$\(|`)\s*(?:curl|wget)\b")
_NODESOURCE = re.compile(r"(?:deb|rpm)\.nodesource\.com/setup")
_REPO_PATH = re.compile(r"/etc/apt/(?:sources\.list|keyrings|trusted\.gpg)|/usr/share/keyrings/|/etc/yum\.repos\.d"
                        r"|/etc/pki/rpm-gpg|/etc/zypp/repos\.d")
_APT_CONFIG = re.compile(r"/etc/apt/(?:apt\.conf|preferences)|/etc/dpkg/")
_REPO_PROGRAMS = frozenset({"add-apt-repository", "apt-add-repository", "apt-key", "yum-config-manager"})
_KEY_IMPORTERS = frozenset({"rpm", "rpmkeys"})
_APT_CONFIG_PROGRAMS = frozenset({"debconf-set-selections"})

_FIX_GENERIC = "replace it with its Wolfi equivalent, or remove it if the image does not need it"
_FIX_LOCALE = "add glibc-locales (or one glibc-locale-<lang> package) to apk add and set ENV LANG"
_FIX_PHP = "install the extension from Wolfi (apk add php-<version>-<extension>) in the -dev stage"
DISTRO_ONLY: dict[str, tuple[str, str]] = {  # program → (what it is, suggested fix)
    "dpkg": ("installs or inspects Debian .deb packages", "install the software from a Wolfi package (apk add) "
             "or from its release archive"),
    "dpkg-reconfigure": ("reconfigures a Debian package", _FIX_GENERIC),
    "dpkg-divert": ("diverts a file owned by a Debian package", _FIX_GENERIC),
    "apt-cache": ("queries apt's package cache", "remove it (use `apk info` / `apk search` on Wolfi)"),
    "apt-mark": ("marks Debian packages manual/auto/held", "remove it (apk has no such marks)"),
    "locale-gen": ("generates glibc locales the Debian way", _FIX_LOCALE),
    "update-locale": ("sets the Debian system locale", _FIX_LOCALE),
    "update-alternatives": ("picks a default program the Debian way", "call the wanted program by its path, or "
                            "link it with `ln -sf`"),
    "alternatives": ("picks a default program the RHEL way", "call the wanted program by its path, or link it "
                     "with `ln -sf`"),
    "rpm": ("installs or inspects RPM packages", "install the software from a Wolfi package (apk add)"),
    "rpmkeys": ("manages RPM signing keys", _FIX_GENERIC),
    "subscription-manager": ("registers a RHEL subscription", "remove it: Wolfi packages need no subscription"),
    "update-rc.d": ("enables a SysV service", "start the program from CMD/ENTRYPOINT instead"),
    "a2enmod": ("enables a Debian Apache module", _FIX_GENERIC),
    "a2dismod": ("disables a Debian Apache module", _FIX_GENERIC),
    "a2ensite": ("enables a Debian Apache site", _FIX_GENERIC),
    "a2dissite": ("disables a Debian Apache site", _FIX_GENERIC),
    "a2enconf": ("enables a Debian Apache config", _FIX_GENERIC),
    "docker-php-ext-install": ("is a helper of the official php image", _FIX_PHP),
    "docker-php-ext-configure": ("is a helper of the official php image", _FIX_PHP),
    "docker-php-ext-enable": ("is a helper of the official php image", _FIX_PHP),
    "docker-php-source": ("is a helper of the official php image", _FIX_PHP),
    "install-php-extensions": ("installs PHP extensions with apt", _FIX_PHP),
}


@dataclass(frozen=True)
class Verdict:
    action: str  # "drop" | "repo" | "block"
    kind: str = ""
    message: str = ""
    fix: str = ""


def program_at(words: list[Token]) -> int | None:
    """The program word's index, skipping assignments, sudo, shell keywords and `env` with its options."""
    k = command_index(words)
    while k is not None and words[k].text == "env":
        k += 1
        while k < len(words) and (words[k].text.startswith("-") or "=" in words[k].text):
            k += 1
        k = k if k < len(words) else None
    return k


def pipelines(commands: list[Command]) -> list[list[int]]:
    """Indexes of the commands, grouped into pipelines (commands joined by `|`)."""
    groups: list[list[int]] = []
    joined = False
    for index, command in enumerate(commands):
        if joined:
            groups[-1].append(index)
        else:
            groups.append([index])
        joined = command.op is not None and command.op.text == "|"
    return groups


def shown(commands: list[Command], limit: int = 70) -> str:
    text = " | ".join(" ".join(w.raw for w in c.words) for c in commands)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def classify(commands: list[Command]) -> Verdict | None:
    """The verdict on one pipeline, or None when each command can be handled on its own."""
    programs = [_program(c) for c in commands]
    text = shown(commands)
    if _installer(commands, programs):
        if any(_NODESOURCE.search(w.text) for c in commands for w in c.words):
            return Verdict("repo", message=f"`{text}` sets up the NodeSource package repository")
        return Verdict("block", "unconverted-command", f"`{text}` runs a remote installer script, which may assume "
                       "Debian (apt, bash, glibc paths) and cannot be checked here",
                       "install the tool from a Wolfi package (apk add) or download its release binary")
    if "xargs" in programs and any(posixpath.basename(w.text) in MANAGERS for c in commands for w in c.words):
        return Verdict("block", "dynamic-package-list", f"`{text}` installs a package list read at build time: its "
                       "Debian/RPM names cannot be mapped here",
                       "list the packages in the Dockerfile (they are then mapped to Wolfi names), or translate the "
                       "list file to Wolfi names and install it with `apk add --no-cache`")
    if _repo(commands, programs):
        return Verdict("repo", message=f"`{text}` sets up a package repository or its signing key")
    if any(p in _APT_CONFIG_PROGRAMS for p in programs) or _names(commands, _APT_CONFIG):
        return Verdict("drop", message=f"`{text}` configures apt/dpkg, which Wolfi does not have")
    for program in programs:
        if program in DISTRO_ONLY:
            what, fix = DISTRO_ONLY[program]
            return Verdict("block", "unconverted-command", f"`{text}`: {program} {what}; it does not exist on Wolfi",
                           fix)
    return None


def _program(command: Command) -> str:
    k = program_at(command.words)
    return posixpath.basename(command.words[k].text) if k is not None else ""


def _installer(commands: list[Command], programs: list[str]) -> bool:
    fetched = next((i for i, p in enumerate(programs) if p in _FETCHERS), None)
    if fetched is not None and any(p in _INTERPRETERS for p in programs[fetched + 1:]):
        return True
    return any(p in SHELLS and any(_SUBSTITUTED_FETCH.search(w.raw) for w in c.words)
               for p, c in zip(programs, commands, strict=True))


def _repo(commands: list[Command], programs: list[str]) -> bool:
    if any(p in _REPO_PROGRAMS for p in programs):
        return True
    for program, command in zip(programs, commands, strict=True):
        words = [w.text for w in command.words]
        if program in _KEY_IMPORTERS and "--import" in words:
            return True
        if program in ("dnf", "zypper") and any(w in ("config-manager", "addrepo", "ar") for w in words):
            return True
    return _names(commands, _REPO_PATH)


def _names(commands: list[Command], pattern: re.Pattern[str]) -> bool:
    return any(pattern.search(w.text) for c in commands for w in c.words)
