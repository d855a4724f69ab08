"""Composer version constraints (`^1.2`, `~1.2.3`, `1.2.*`, `>=1.0 <2.0`, `1.0 - 2.0`, `^5.4 || ^6.0`, `@dev`):
which versions they admit, as composer/semver's `Semver::satisfies` answers.

A constraint is read the way VersionParser::parseConstraints reads it: `||` (or `|`) separates
alternatives, a comma or a space inside one separates clauses that must all hold, and each clause becomes
one or two bounds on a normalised version (repocontext/osv/composer_versions.py), which compare with PHP's
version_compare. Upper bounds of ranges are `-dev` versions (`^1.2` is `>=1.2.0.0-dev <2.0.0.0-dev`), so a
range admits the pre-releases of its own versions; stability (minimum-stability, `@beta`) is the solver's
business and `satisfies` ignores it, as Composer's does. tests/test_composer_versions_oracle.py holds this
to PHP's composer/semver.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from repocontext.osv.composer_versions import _MODIFIER, ComposerVersionError, compare_key, normalize

_VR = (r"v?(\d++)(?:\.(\d++))?(?:\.(\d++))?(?:\.(\d++))?(?:" + _MODIFIER + r"|\.([xX*][.-]?dev))(?:\+\S+)?")
_OR = re.compile(r"\s*\|\|?\s*")
_AND = re.compile(r"(?<!^)(?<!as)(?<![=>< ,]) *(?<!-)[, ](?!-) *(?!,|as|$)")
_ALIAS = re.compile(r"([^,\s]++) ++as ++([^,\s]++)")
_FLAG = re.compile(r"([^,\s]*?)@(stable|RC|beta|alpha|dev)", re.IGNORECASE)
_REF = re.compile(r"(dev-[^,\s@]+?|[^,\s@]+?\.x-dev)#.+", re.IGNORECASE)
_ANY = re.compile(r"(v)?[xX*](\.[xX*])*", re.IGNORECASE)
_TILDE = re.compile(r"~>?" + _VR, re.IGNORECASE)
_CARET = re.compile(r"\^" + _VR, re.IGNORECASE)
_XRANGE = re.compile(r"v?(\d++)(?:\.(\d++))?(?:\.(\d++))?(?:\.[xX*])++")
_HYPHEN = re.compile("(" + _VR + ") +- +(" + _VR + ")", re.IGNORECASE)
_BASIC = re.compile(r"(<>|!=|>=?|<=?|==?)?\s*(.*)", re.DOTALL)
_ENDS_MODIFIED = re.compile("-" + _MODIFIER + "$")
_BRANCHY = re.compile(r"[0-9a-zA-Z./-]+")


@dataclass(frozen=True)
class Bound:
    op: str  # "==", "!=", "<", "<=", ">", ">=", or "*" (anything)
    version: str  # normalised

    def admits(self, version: str) -> bool:
        """Does the normalised `version` meet this bound (Constraint::matchSpecific against `== version`)?"""
        if self.op == "*":
            return True
        if self.op == "!=" and (version.startswith("dev-") or self.version.startswith("dev-")):
            return version != self.version
        if version.startswith("dev-") or self.version.startswith("dev-"):
            return self.op == "==" and version == self.version
        a, b = compare_key(version), compare_key(self.version)
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[self.op]


Constraint = tuple[tuple[Bound, ...], ...]  # alternatives, each the bounds that must all hold


@lru_cache(maxsize=4096)
def parse(constraint: str) -> Constraint:
    """The alternatives of a constraint; raises ComposerVersionError where Composer rejects it."""
    groups: list[tuple[Bound, ...]] = []
    for alternative in _OR.split(constraint.strip()):
        clauses = _AND.split(alternative)
        groups.append(tuple(bound for clause in clauses for bound in _clause(clause)))
    return tuple(groups)


def satisfies(version: str, constraint: str) -> bool:
    """`Semver::satisfies(version, constraint)`; raises ComposerVersionError for an unreadable either."""
    normalized = normalize(version)
    return any(all(b.admits(normalized) for b in group) for group in parse(constraint))


def _clause(text: str) -> list[Bound]:
    alias = _ALIAS.fullmatch(text)
    if alias:
        text = alias.group(1)
    modifier = ""
    flag = _FLAG.fullmatch(text)
    if flag:
        text = flag.group(1) or "*"
        modifier = "" if flag.group(2) == "stable" else flag.group(2)
    ref = _REF.fullmatch(text)
    if ref:
        text = ref.group(1)
    anything = _ANY.fullmatch(text)
    if anything:
        return [Bound(">=", "0.0.0.0-dev")] if anything.group(1) or anything.group(2) else [Bound("*", "")]
    for reader in (_tilde, _caret, _xrange, _hyphen):
        found = reader(text)
        if found is not None:
            return found
    return [_basic(text, modifier)]


def _numbers(found: re.Match[str], first: int) -> list[str]:
    """The four numeric groups from `first` on, '' where unmatched (PHP's empty matches)."""
    return [found.group(first + i) or "" for i in range(4)]


def _set(numbers: list[str], position: int, increment: int = 0) -> str:
    """VersionParser::manipulateVersionString: zero the parts after `position`, add `increment` at it."""
    out = list(numbers)
    for index in range(3, -1, -1):
        if index + 1 > position:
            out[index] = "0"
        elif index + 1 == position and increment:
            out[index] = str(int(out[index] or "0") + increment)
    return ".".join(out)


def _tilde(text: str) -> list[Bound] | None:
    found = _TILDE.fullmatch(text)
    if found is None:
        return None
    if text.startswith("~>"):
        raise ComposerVersionError(f"invalid operator `~>` in {text!r}; Composer's is `~`")
    numbers = _numbers(found, 1)
    position = max((i + 1 for i in range(1, 4) if numbers[i]), default=1) + (1 if found.group(8) else 0)
    suffix = "" if found.group(5) or found.group(7) or found.group(8) else "-dev"
    return [Bound(">=", normalize(text[1:] + suffix)), Bound("<", _set(numbers, max(1, position - 1), 1) + "-dev")]


def _caret(text: str) -> list[Bound] | None:
    found = _CARET.fullmatch(text)
    if found is None:
        return None
    numbers = _numbers(found, 1)
    if numbers[0] != "0" or not numbers[1]:
        position = 1
    elif numbers[1] != "0" or not numbers[2]:
        position = 2
    else:
        position = 3
    suffix = "" if found.group(5) or found.group(7) or found.group(8) else "-dev"
    return [Bound(">=", normalize(text[1:] + suffix)), Bound("<", _set(numbers, position, 1) + "-dev")]


def _xrange(text: str) -> list[Bound] | None:
    found = _XRANGE.fullmatch(text)
    if found is None:
        return None
    numbers = [found.group(i) or "" for i in (1, 2, 3)] + [""]
    position = 3 if numbers[2] else 2 if numbers[1] else 1
    low, high = _set(numbers, position) + "-dev", _set(numbers, position, 1) + "-dev"
    return [Bound("<", high)] if low == "0.0.0.0-dev" else [Bound(">=", low), Bound("<", high)]


def _hyphen(text: str) -> list[Bound] | None:
    found = _HYPHEN.fullmatch(text)
    if found is None:
        return None
    # groups: 1 the from version (2-5 numbers, 6 stability, 7 its number, 8 dev, 9 x-dev), 10 the to version
    suffix = "" if found.group(6) or found.group(8) or found.group(9) else "-dev"
    low = Bound(">=", normalize(found.group(1)) + suffix)
    to = _numbers(found, 11)
    if (to[1] and to[2]) or found.group(15) or found.group(17) or found.group(18):
        return [low, Bound("<=", normalize(found.group(10)))]
    normalize(found.group(10))  # Composer validates it
    return [low, Bound("<", _set(to, 1 if not to[1] else 2, 1) + "-dev")]


def _basic(text: str, modifier: str) -> Bound:
    found = _BASIC.fullmatch(text)
    assert found is not None  # the pattern matches any text
    op, written = found.group(1) or "=", found.group(2)
    try:
        version = normalize(written)
    except ComposerVersionError:
        if not (written.endswith("-dev") and _BRANCHY.fullmatch(written)):
            raise ComposerVersionError(f"cannot read the Composer constraint {text!r}") from None
        version = normalize("dev-" + written[:-4])
    if op not in ("==", "=") and modifier and _stable(version):
        version += "-" + modifier
    elif op in ("<", ">=") and not _ENDS_MODIFIED.search(written.lower()) and not written.startswith("dev-"):
        version += "-dev"
    return Bound({"=": "==", "<>": "!="}.get(op, op), version)


def _stable(version: str) -> bool:
    """VersionParser::parseStability(version) == 'stable' for a normalised version."""
    if version.startswith("dev-") or version.endswith("-dev"):
        return False
    found = re.search(_MODIFIER + r"(?:\+.*)?$", version.lower())
    return not (found and (found.group(3) or found.group(1) in ("beta", "b", "alpha", "a", "rc")))
