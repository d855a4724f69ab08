"""Secret detection: files that are never opened, and values never stored.

Two kinds of rule. Path rules deny a file by its name alone, so its content is
never read at all. Content rules flag a file whose text contains a
secret-looking value; the file is then denied and nothing of it is kept (not
even the matched value). `redact` scrubs the same values from any string that
is about to be logged or shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class PathRule:
    name: str
    pattern: re.Pattern[str]  # matched against the file's base name


PATH_RULES: tuple[PathRule, ...] = (
    PathRule("dotenv", re.compile(r"\.env.*|.*\.env")),
    PathRule("pem", re.compile(r".*\.pem")),
    PathRule("private-key-file", re.compile(r".*\.(key|p12|pfx|jks|keystore|kdbx|ppk|asc|gpg)")),
    PathRule("ssh-key", re.compile(r"id_(rsa|dsa|ecdsa|ed25519)(\..*)?")),
    PathRule(
        "credentials-file",
        re.compile(
            r"(credentials|credentials\.(json|ya?ml|xml|ini|toml)|\.git-credentials|\.netrc|_netrc"
            r"|\.pypirc|\.htpasswd|service[-_]account.*\.json|secrets?\.(json|ya?ml|toml|ini))"
        ),
    ),
)

# Directories whose every file is secret material.
SECRET_DIRS: frozenset[str] = frozenset({".ssh", ".aws", ".gnupg", ".docker"})


@dataclass(frozen=True)
class ContentRule:
    name: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...]  # literal substrings every match contains: a cheap `in` test first

    def search(self, text: str) -> bool:
        """Whether `pattern` matches anywhere in `text`.

        A pattern opening with `\\b` gets no literal-prefix scan from `re`, so it is tried at every offset
        (0.4 s over a lockfile whose integrity hashes hold "xox"): the rest of it is searched instead, and a
        hit counts only where the character before is not a word character, which is what `\\b` asks before
        the word character each such pattern starts with. A rejected hit resumes one character on, so an
        overlapping later match is still found.
        """
        tail = _TAILS.get(self.pattern)
        if tail is None:
            return self.pattern.search(text) is not None
        found = tail.search(text)
        while found is not None:
            start = found.start()
            if start == 0 or not _WORD.match(text, start - 1):
                return True
            found = tail.search(text, start + 1)
        return False


CONTENT_RULES: tuple[ContentRule, ...] = (
    ContentRule(
        "private-key-block",
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"), ("PRIVATE KEY",)),
    ContentRule("aws-access-key-id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), ("AKIA", "ASIA")),
    ContentRule(
        "aws-secret-access-key",
        re.compile(r"(?i:aws_?secret_?access_?key)\s*[:=]\s*['\"]?[A-Za-z0-9/+=]{40}"), ("ecret", "ECRET")),
    ContentRule("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
                ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ContentRule("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), ("glpat-",)),
    ContentRule("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), ("xox",)),
    ContentRule("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), ("AIza",)),
    ContentRule("stripe-secret-key", re.compile(r"\b[rs]k_live_[0-9A-Za-z]{20,}"), ("k_live_",)),
    ContentRule("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), ("npm_",)),
    ContentRule("pypi-token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}"), ("pypi-AgEIcHlwaS5vcmc",)),
    ContentRule("openai-key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}"), ("sk-",)),
)

_WORD = re.compile(r"\w")
_TAILS = {rule.pattern: re.compile(rule.pattern.pattern[2:]) for rule in CONTENT_RULES
          if rule.pattern.pattern.startswith(r"\b")}
_COMBINED = re.compile("|".join(f"(?:{r.pattern.pattern})" for r in CONTENT_RULES))


_PATH_COMBINED = re.compile("|".join(f"(?P<r{i}>{r.pattern.pattern})" for i, r in enumerate(PATH_RULES)))


def path_rule(path: str) -> str | None:
    """The name of the path rule that denies `path`, or None (runs once per file: kept cheap)."""
    directory, _, base = path.rpartition("/")
    if directory and not SECRET_DIRS.isdisjoint(directory.split("/")):
        return "secret-directory"
    hit = _PATH_COMBINED.fullmatch(base)
    if hit is None:
        return None
    return PATH_RULES[int(str(hit.lastgroup)[1:])].name


def content_rule(text: str) -> str | None:
    """The name of the first content rule `text` trips, or None.

    Runs on every file read, so each rule's regex only runs when one of its
    literal needles occurs (a C-speed substring scan).
    """
    for rule in CONTENT_RULES:
        if any(needle in text for needle in rule.needles) and rule.search(text):
            return f"content:{rule.name}"
    return None


_BYTE_NEEDLES = tuple((rule, tuple(needle.encode() for needle in rule.needles)) for rule in CONTENT_RULES)


def content_rule_of_bytes(data: bytes) -> str | None:
    """`content_rule` of a file's raw bytes, decoded (as UTF-8, errors replaced) only when a needle occurs.

    The same answer as decoding first: needles are ASCII, and the decoder never folds an ASCII byte into a
    replacement character. Most files hold no needle, and decoding every file was half the scan's time.
    """
    text: str | None = None
    for rule, needles in _BYTE_NEEDLES:
        if any(needle in data for needle in needles):
            text = data.decode("utf-8", errors="replace") if text is None else text
            if rule.search(text):
                return f"content:{rule.name}"
    return None


def redact(text: str) -> str:
    """`text` with every secret-looking value replaced by a marker."""
    return _COMBINED.sub("[REDACTED]", text)
