"""Packagist version order, the way Composer orders versions.

Composer first normalises a version (composer/semver's VersionParser::normalize: `v1.2` → `1.2.0.0`,
`2.3.2-p2` → `2.3.2.0-patch2`, `6.4.x-dev` → `6.4.9999999.9999999-dev`, `1.0RC1` → `1.0.0.0-RC1`) and then
compares the normalised strings with PHP's `version_compare`. aboutcode's univers reads Packagist versions
as SemVer, which is wrong for real advisories: a patch release (`2.3.2-p2`, Magento's) is *newer* than
`2.3.2` to Composer, a fourth number (`1.14.4.1`, Drupal's) counts, and `RC` ranks above `beta`. Both
steps are written here from their documented behaviour; tests/test_composer_versions_oracle.py holds them to
PHP's composer/semver.

A branch (`dev-main`) has no place in the order (Composer matches branches only by name) and is an
InvalidVersion here, as is anything Composer itself rejects.
"""

from __future__ import annotations

import re
from functools import lru_cache

_MODIFIER = r"[._-]?(?:(stable|beta|b|RC|alpha|a|patch|pl|p)((?:[.-]?\d+)*+)?)?([.-]?dev)?"
_CLASSIC = re.compile(r"v?(\d{1,5})(\.\d++)?(\.\d++)?(\.\d++)?" + _MODIFIER, re.IGNORECASE)
_DATE = re.compile(r"v?(\d{4}(?:[.:-]?\d{2}){1,6}(?:[.:-]?\d{1,3})?)" + _MODIFIER, re.IGNORECASE)
_BRANCH = re.compile(r"v?(\d++)(\.(?:\d++|[xX*]))?(\.(?:\d++|[xX*]))?(\.(?:\d++|[xX*]))?", re.IGNORECASE)
_ALIAS = re.compile(r"([^,\s]++) ++as ++[^,\s]++")
_FLAG = re.compile(r"@(?:stable|RC|beta|alpha|dev)$", re.IGNORECASE)
_BUILD = re.compile(r"([^,\s+]++)\+\S++")
_DEV_SUFFIX = re.compile(r"(.*?)[.-]?dev", re.IGNORECASE | re.DOTALL)
_STABILITY = {"a": "alpha", "b": "beta", "p": "patch", "pl": "patch", "rc": "RC"}
# PHP version_compare's ranks of a word part (matched as a prefix, in this order); a number ranks 4, and any
# other word -1, below `dev`.
_WORD_RANKS = (("dev", 0), ("alpha", 1), ("a", 1), ("beta", 2), ("b", 2), ("RC", 3), ("rc", 3), ("#", 4),
               ("pl", 5), ("p", 5))
_NUMBER = 4
_END = (_NUMBER, -1)  # where one version runs out: below any further number, above a pre-release word
_PARTS = re.compile(r"[0-9]+|[A-Za-z]+|#")  # version_compare keeps these; the rest only separates


class ComposerVersionError(ValueError):
    """A string Composer does not accept as a version, or a branch, which has no order."""


@lru_cache(maxsize=16384)
def normalize(version: str) -> str:
    """VersionParser::normalize's answer; branches come back as `dev-NAME`; raises ComposerVersionError."""
    text = version.strip()
    alias = _ALIAS.fullmatch(text)
    if alias:
        text = alias.group(1)
    flag = _FLAG.search(text)
    if flag:
        text = text[: flag.start()]
    if text in ("master", "trunk", "default"):
        text = "dev-" + text
    if text[:4].lower() == "dev-":
        return "dev-" + text[4:]
    build = _BUILD.fullmatch(text)
    if build:
        text = build.group(1)
    found = _CLASSIC.fullmatch(text)
    if found:
        numbers = found.group(1) + "".join(found.group(i) or ".0" for i in (2, 3, 4))
        return _with_modifier(numbers, found.group(5), found.group(6), found.group(7))
    found = _DATE.fullmatch(text)
    if found:
        return _with_modifier(re.sub(r"\D", ".", found.group(1)), found.group(2), found.group(3), found.group(4))
    dev = _DEV_SUFFIX.fullmatch(text)
    if dev:
        branch = _branch(dev.group(1))
        if branch is not None:
            return branch
    raise ComposerVersionError(f"invalid Composer version {version!r}")


def _with_modifier(numbers: str, stability: str | None, number: str | None, dev: str | None) -> str:
    if stability:
        if stability == "stable":
            return numbers
        numbers += "-" + _STABILITY.get(stability.lower(), stability.lower()) + (number or "").lstrip(".-")
    return numbers + "-dev" if dev else numbers


def _branch(name: str) -> str | None:
    """A numeric branch (`6.4.x`) as Composer orders it: its x parts are 9999999; None for a named branch."""
    found = _BRANCH.fullmatch(name.strip())
    if found is None:
        return None
    parts = [found.group(i) if found.group(i) is not None else ".x" for i in range(1, 5)]
    joined = "".join(parts).replace("*", "x").replace("X", "x")
    return joined.replace("x", "9999999") + "-dev"


def is_branch(version: str) -> bool:
    try:
        return normalize(version).startswith("dev-")
    except ComposerVersionError:
        return False


@lru_cache(maxsize=16384)
def compare_key(normalized: str) -> tuple[tuple[int, int], ...]:
    """PHP version_compare's order as a tuple: each part is (rank, number), and the end of the version
    (_END) sorts below a further number but above a further pre-release word."""
    parts: list[tuple[int, int]] = []
    for token in _PARTS.findall(normalized):
        if token.isdigit():
            parts.append((_NUMBER, int(token)))
        else:
            parts.append((next((rank for word, rank in _WORD_RANKS if token.startswith(word)), -1), 0))
    return (*parts, _END)


def key(version: str) -> tuple[tuple[int, int], ...]:
    """The order key of a Packagist version as written (`v1.2.3`, `2.3.2-p2`); raises ComposerVersionError for
    a branch or anything Composer rejects."""
    normalized = normalize(version)
    if normalized.startswith("dev-"):
        raise ComposerVersionError(f"{version!r} is a branch, which has no version order")
    return compare_key(normalized)
