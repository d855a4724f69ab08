"""Secret detection: files that are never opened, files that are denied, values that are never kept.

The rules are data (`secret_rules.yaml`, compiled once by `repocontext.secret_rules`). Three outcomes:
- a path rule denies a file by its name alone, so its content is never read at all;
- a value rule with `deny: always` (a private key), or `deny: file` in a file the tool need not read,
  denies the file once read: nothing of it is kept, not even the matched value;
- every other value found is redacted: the secret itself is replaced by `REDACTED-<rule>`, the rest of
  the line kept, so a manifest whose URL holds a password is still read and its key stays visible.
Patches are made from exact reads of the real files (`planner.bundle.view.read_repo_file(exact=True)`);
an edit written on redacted text is mapped back to the real one (`planner.patch.unredact`), so what is applied
to a repository is exact. `redact_tree` scrubs whole values (states, records) before they are encoded.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

from repocontext.secret_rules import Rules, ValueRule, shipped

_RULES: Rules = shipped()
CONTENT_RULES: tuple[ValueRule, ...] = _RULES.values
_NEEDLES = _RULES.needles  # which rules could hit a text: the cheap test before any regex runs
MARKER = "REDACTED-{}"


RULES_DIGEST = _RULES.digest  # in every probe's fingerprint and cache slot: new rules, new reads


def marker(rule: str) -> str:
    """What replaces a secret value found by `rule`."""
    return MARKER.format(rule)


def path_rule(path: str) -> str | None:
    """The name of the path rule that denies `path`, or None (runs once per file: kept cheap)."""
    directory, _, base = path.rpartition("/")
    if directory and not _RULES.directories.isdisjoint(directory.split("/")):
        return "secret-directory"
    hit = _RULES.path_pattern.fullmatch(base)
    if hit is None:
        return None
    return _RULES.path_names[int(str(hit.lastgroup)[1:])]


def must_read(path: str) -> bool:
    """Whether `path` is a file the tool reads to do its work (a manifest, Dockerfile, YAML): one holding a
    `deny: file` value is redacted, not denied, so the task still sees it."""
    return _RULES.must_read.fullmatch(path.rpartition("/")[2]) is not None


def _denies(rule: ValueRule, path: str | None) -> bool:
    return rule.deny == "always" or (path is None or not must_read(path))


def content_rule(text: str, path: str | None = None) -> str | None:
    """The name (`content:<rule>`) of the first value rule that denies `text` as the content of `path`
    (None: a file whose name is unknown, held to the strictest reading), or None.

    Runs on every file read, so a rule's regex only runs when one of its literal needles occurs.
    """
    for rule in _NEEDLES.rules_in(text):
        if rule.deny != "never" and _denies(rule, path) and rule.search(text):
            return f"content:{rule.name}"
    return None


def content_rule_of_bytes(data: bytes, path: str | None = None) -> str | None:
    """`content_rule` of a file's raw bytes, decoded (as UTF-8, errors replaced) only when a needle occurs.

    The same answer as decoding first: needles are ASCII, and the decoder never folds an ASCII byte into a
    replacement character. Most files hold no needle, and decoding every file was half the scan's time.
    """
    text: str | None = None
    for rule in _NEEDLES.rules_in(data):
        if rule.deny != "never" and _denies(rule, path):
            text = data.decode("utf-8", errors="replace") if text is None else text
            if rule.search(text):
                return f"content:{rule.name}"
    return None


_SHORTEST = min((len(n) for rule in CONTENT_RULES for n in rule.needles), default=1)  # shorter holds none


def secret_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, rule) of every secret value in `text`, in order, overlaps merged (the first rule names it)."""
    return _merged([(start, end, rule.name) for rule in _NEEDLES.rules_in(text)
                    for start, end in rule.spans(text) if end > start])


def _merged(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`found` (in rule order) sorted by position, overlapping spans merged into the first one's rule."""
    if len(found) < 2:
        return found
    found.sort(key=lambda span: (span[0], -span[1]))
    merged = [found[0]]
    for start, end, name in found[1:]:
        last_start, last_end, last_name = merged[-1]
        if start < last_end:
            merged[-1] = (last_start, max(last_end, end), last_name)
        else:
            merged.append((start, end, name))
    return merged


def redact(text: str) -> str:
    """`text` with every secret-looking value replaced by its marker (the rest kept: lines stay lines)."""
    if len(text) < _SHORTEST:
        return text
    return _redacted(text)


@lru_cache(maxsize=1 << 16)
def _redacted(text: str) -> str:
    # Memoised: a run's checkpoints hold the same bundle texts, reports and data again at every step, and
    # scanning them anew each time made a 52-Dockerfile run 4x slower.
    return _replaced(text, secret_spans(text))


def _replaced(text: str, spans: list[tuple[int, int, str]]) -> str:
    """`text` with each of `spans` (merged, in order) replaced by its rule's marker."""
    if not spans:
        return text
    parts: list[str] = []
    at = 0
    for start, end, name in spans:
        parts.append(text[at:start])
        parts.append(marker(name))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def redact_tree(value: Any) -> Any:
    """`value` with every string in it (dict keys and values, list and tuple items) redacted; other objects
    are kept as they are. Unchanged containers are returned as they were (no copy)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        pairs = [(redact_tree(k), redact_tree(v)) for k, v in value.items()]
        same = all(a is k and b is v for (a, b), (k, v) in zip(pairs, value.items(), strict=True))
        return value if same else dict(pairs)
    if isinstance(value, list | tuple):
        items = [redact_tree(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)  # a named tuple stays one
    return value


def scrub(data: bytes, path: str) -> tuple[str | None, str | None]:
    """(text, denying rule) of a file's bytes: (None, rule) when the file is denied, else its text decoded
    (errors replaced) with every secret value redacted.

    The same answer as `content_rule_of_bytes`, then `redact` of the decoded text, in one pass over the
    needles, and each rule's regex run once (a lockfile's needles were searched three times)."""
    rules = _NEEDLES.rules_in(data)
    text = data.decode("utf-8", errors="replace")
    if not rules:  # the common case: nothing to deny or redact
        return text, None
    spans = [(rule, rule.spans(text)) for rule in rules]
    for rule, found in spans:  # `search` finds a value exactly when `spans` does
        if found and rule.deny != "never" and _denies(rule, path):
            return None, f"content:{rule.name}"
    return _replaced(text, _merged([(start, end, rule.name) for rule, found in spans
                                    for start, end in found if end > start])), None


@cache
def markers() -> re.Pattern[str]:
    """A marker as `redact` writes it, its rule's name the group; longer names first, so
    `REDACTED-secret-key-value` is never read as a shorter rule's marker followed by text. Compiled on first
    use: only a patch needs it, never a gather."""
    names = sorted((re.escape(rule.name) for rule in CONTENT_RULES), key=len, reverse=True)
    return re.compile("REDACTED-(" + "|".join(names) + ")")
