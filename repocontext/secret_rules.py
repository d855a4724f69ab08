"""The secret rules as data: `secret_rules.yaml` (shipped with the package), validated and compiled once.

Kept apart from the matching code so that adding a kind of secret is an edit to a YAML file and a test,
never a change to a probe. See the YAML file's header for what each field means.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Literal

from ahocorasick_rs import AhoCorasick, BytesAhoCorasick
from pydantic import BaseModel, ConfigDict, Field, field_validator

Pattern = str | list[str]  # a list is one pattern, its parts joined (YAML folding would add spaces)
_SECRET_GROUPS = ("s", "b")  # the named groups that hold the secret, first matched wins
# Beside this module (the package is installed unzipped): importlib.resources would cost every process ~6 ms.
SHIPPED = Path(__file__).with_name("secret_rules.yaml")
# The shipped YAML's data as JSON, with the digest of the text it was read from: every process loads the rules,
# and PyYAML's import alone is ~12 ms of a bare start. Written by `python -m repocontext.secret_rules`; a
# stale copy (the YAML edited since) is ignored, so editing the YAML is all a change of rules needs.
COMPILED = SHIPPED.with_suffix(".json")


def _joined(value: Pattern) -> str:
    return "".join(value) if isinstance(value, list) else value


class ValueRuleSpec(BaseModel):
    # Built on first validation: every process loads the shipped rules, from COMPILED, which skips it (trusted).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str = Field(pattern=r"^[a-z0-9-]+$")
    pattern: str
    needles: tuple[str, ...] = Field(min_length=1)
    min_entropy: float = 0.0
    anchor: str | None = None
    deny: Literal["always", "file", "never"]

    @field_validator("pattern", mode="before")
    @classmethod
    def _join(cls, value: Pattern) -> str:
        return _joined(value)


class RulesSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    files: dict[str, str]
    directories: tuple[str, ...]
    must_read: tuple[str, ...]
    values: tuple[ValueRuleSpec, ...]

    @field_validator("files", mode="before")
    @classmethod
    def _join_files(cls, value: dict[str, Pattern]) -> dict[str, str]:
        return {name: _joined(pattern) for name, pattern in value.items()}


class ValueRule:
    """One value rule; its regexes are compiled on first use (a process that reads no file never pays)."""

    def __init__(self, spec: ValueRuleSpec, lazy: bool = True) -> None:
        self.spec = spec
        self.name = spec.name
        self.needles = spec.needles
        self.deny = spec.deny
        self.min_entropy = spec.min_entropy
        if not lazy:  # a rule file being checked: a bad pattern is an error now
            _ = self.pattern, self.tail, self.anchor

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.spec.pattern)

    @cached_property
    def tail(self) -> re.Pattern[str] | None:
        """A pattern opening with `\\b` gets no literal-prefix scan from `re` and is tried at every offset
        (0.4 s over a lockfile whose integrity hashes hold "xox"): its rest is searched instead, and a hit
        counts only where the character before is not a word character, which is what `\\b` asks before the
        word character each such pattern starts with."""
        return re.compile(self.spec.pattern[2:]) if self.spec.pattern.startswith(r"\b") else None

    @cached_property
    def anchor(self) -> re.Pattern[str] | None:
        """A case-insensitive alternation is tried at every offset (0.4 s over a 6 MB tree); the same words
        found in the lowercased text by a plain one cost a tenth of that, and the pattern runs only there."""
        return re.compile(self.spec.anchor) if self.spec.anchor else None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the secret values this rule finds lie in `text` (the `s`/`b` group, else the whole match)."""
        if self.tail is not None:
            matches: Iterator[re.Match[str]] = self._tail_matches(text)
        elif self.anchor is not None:
            matches = self._anchored_matches(text)
        else:
            matches = self.pattern.finditer(text)
        spans = [_secret_span(match) for match in matches]
        if self.min_entropy:
            spans = [(start, end) for start, end in spans if entropy(text[start:end]) >= self.min_entropy]
        return spans

    def search(self, text: str) -> bool:
        if self.min_entropy:
            return bool(self.spans(text))
        if self.tail is None and self.anchor is None:
            return self.pattern.search(text) is not None
        return bool(self.spans(text))

    @cached_property
    def anchor_words(self) -> AhoCorasick | None:
        """The anchor's words, when it is an alternation of plain words (see `literal_words`): their starts,
        found in one Aho-Corasick pass, are exactly where the anchor regex matches, and scanning a large file
        for an alternation of common first letters was most of its redaction."""
        words = literal_words(self.spec.anchor) if self.spec.anchor else None
        return AhoCorasick(sorted(set(words))) if words else None

    def _anchor_starts(self, lowered: str) -> Iterator[int]:
        """Where the anchor matches in `lowered`, in order."""
        if self.anchor_words is not None:
            try:
                found = self.anchor_words.find_matches_as_indexes(lowered, overlapping=True)
            except UnicodeEncodeError:  # a lone surrogate: not UTF-8, so the regex finds the starts
                found = None
            if found is not None:
                yield from sorted({start for _, start, _ in found})
                return
        assert self.anchor is not None
        at = 0
        while (hit := self.anchor.search(lowered, at)) is not None:
            yield hit.start()
            at = hit.start() + 1

    def _anchored_matches(self, text: str) -> Iterator[re.Match[str]]:
        """`pattern.finditer(text)`, trying the pattern only where `anchor` finds a start in the lowercased text."""
        lowered = text.lower()
        if len(lowered) != len(text):  # a character whose lowercase is longer: offsets would not line up
            yield from self.pattern.finditer(text)
            return
        resume = 0
        for start in self._anchor_starts(lowered):
            if start < resume:  # inside the previous match
                continue
            match = self.pattern.match(text, start)
            if match is not None:
                yield match
                resume = max(match.end(), start + 1)

    def _tail_matches(self, text: str) -> Iterator[re.Match[str]]:
        assert self.tail is not None
        found = self.tail.search(text)
        while found is not None:
            start = found.start()
            if start == 0 or not _WORD.match(text, start - 1):
                yield found
                found = self.tail.search(text, found.end())
            else:  # a rejected hit resumes one character on, so an overlapping later match is still found
                found = self.tail.search(text, start + 1)


_WORD = re.compile(r"\w")
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_- ")


def literal_words(pattern: str) -> list[str] | None:
    """The words an alternation of plain words matches (`api[_-]?key|token` → apikey, api_key, api-key,
    token), or None when `pattern` is anything else (then the regex itself is used). Understood: lowercase
    letters, digits, `_`, `-` and space, a class of those (`[_-]`) and `?` after one of them or a class."""
    words: list[str] = []
    for alternative in pattern.split("|"):
        found = [""]
        at = 0
        while at < len(alternative):
            if alternative[at] == "[":
                close = alternative.find("]", at)
                chars = list(alternative[at + 1:close]) if close > at else []
                if not chars or not set(chars) <= _PLAIN or "-" in chars[1:-1]:
                    return None  # a range, a negation, an escape: not plain
                at = close + 1
            elif alternative[at] in _PLAIN:
                chars = [alternative[at]]
                at += 1
            else:
                return None
            if alternative[at:at + 1] == "?":
                chars.append("")
                at += 1
            found = [word + char for word in found for char in chars]
        if not all(found):
            return None  # an empty alternative matches everywhere
        words.extend(found)
    return words


def entropy(value: str) -> float:
    """Shannon entropy of `value`, in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values()) if value else 0.0


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    """The span of the first secret group that matched, else of the whole match."""
    for group in _SECRET_GROUPS:
        if group in match.re.groupindex and match.group(group) is not None:
            return match.span(group)
    return match.span()


class NeedleIndex:
    """Which value rules have a needle in a text, found in one pass over it (an Aho-Corasick automaton over
    every rule's needles): testing each of the ~50 needles with `in` was most of the secret checks' time on
    large files (a lockfile was scanned 50 times over), and it is the test every file read goes through."""

    def __init__(self, rules: tuple[ValueRule, ...]) -> None:
        needles = sorted({needle for rule in rules for needle in rule.needles})
        self._owners = [tuple(i for i, rule in enumerate(rules) if needle in rule.needles) for needle in needles]
        self._rules = rules
        self._needles = needles

    @cached_property
    def _text(self) -> AhoCorasick:  # each built on first use: a gather scans bytes, a bundle text
        return AhoCorasick(self._needles)

    @cached_property
    def _bytes(self) -> BytesAhoCorasick:
        return BytesAhoCorasick([needle.encode() for needle in self._needles])

    def rules_in(self, data: str | bytes) -> list[ValueRule]:
        """The rules one of whose needles occurs in `data` (str, or bytes: needles are ASCII), in rule order."""
        if isinstance(data, bytes):
            matches = self._bytes.find_matches_as_indexes(data, overlapping=True)
        else:
            try:
                matches = self._text.find_matches_as_indexes(data, overlapping=True)
            except UnicodeEncodeError:  # a lone surrogate (a surrogateescape'd text) is not UTF-8: the same
                # needles, ASCII, are in its surrogatepass bytes exactly where they are in the text
                matches = self._bytes.find_matches_as_indexes(data.encode("utf-8", "surrogatepass"), overlapping=True)
        found = {owner for needle, _, _ in matches for owner in self._owners[needle]}
        return [self._rules[i] for i in sorted(found)]


class Rules:
    """The compiled rule set."""

    def __init__(self, spec: RulesSpec, lazy: bool = True) -> None:
        self.path_names = tuple(spec.files)
        self.path_pattern = re.compile("|".join(f"(?P<r{i}>{p})" for i, p in enumerate(spec.files.values())))
        self.directories = frozenset(spec.directories)
        self.must_read = re.compile("|".join(f"(?:{p})" for p in spec.must_read))
        self.values = tuple(ValueRule(v, lazy) for v in spec.values)
        self.needles = NeedleIndex(self.values)
        self.digest = ""  # of the YAML text: what a probe read through these rules is only reused under them


def parse(text: str, lazy: bool = False, data: Any = None) -> Rules:
    """Rules from a YAML document (raises pydantic's ValidationError, or re.error on a bad pattern unless
    `lazy`: then a pattern is compiled when first used). `data`: the document already read."""
    return _rules(RulesSpec.model_validate(yaml_data(text) if data is None else data), text, lazy)


def _rules(spec: RulesSpec, text: str, lazy: bool) -> Rules:
    rules = Rules(spec, lazy)
    rules.digest = _source_digest(text)[:16]
    return rules


def trusted_spec(data: dict[str, Any]) -> RulesSpec:
    """The spec COMPILED's data makes, without validating it again: write_compiled wrote it only after it
    validated (and its patterns compiled), and the digest ties it to the YAML text. What validation would
    change is done here: patterns joined, lists made tuples, defaults filled (model_construct).
    tests/test_secret_rules.py holds it equal to the validated spec."""
    values = tuple(ValueRuleSpec.model_construct(**{**value, "pattern": _joined(value["pattern"]),
                                                    "needles": tuple(value["needles"])})
                   for value in data["values"])
    return RulesSpec.model_construct(files={name: _joined(p) for name, p in data["files"].items()},
                                     directories=tuple(data["directories"]), must_read=tuple(data["must_read"]),
                                     values=values)


def yaml_data(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _source_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def compiled_data(text: str) -> Any:
    """The data COMPILED holds when it was written from exactly `text`, else None (missing, unreadable, stale)."""
    try:
        stored = json.loads(COMPILED.read_bytes())
    except (OSError, ValueError):
        return None
    fresh = isinstance(stored, dict) and stored.get("source_sha256") == _source_digest(text)
    return stored.get("rules") if fresh else None


def write_compiled() -> Path:
    """Write COMPILED from SHIPPED (refusing data that JSON would not carry unchanged)."""
    text = SHIPPED.read_text(encoding="utf-8")
    data = yaml_data(text)
    parse(text, data=data)  # a rule file that does not load is not compiled
    # Keys in the YAML's order: a file rule's place is its precedence.
    body = json.dumps({"source_sha256": _source_digest(text), "rules": data}, indent=1)
    if json.loads(body)["rules"] != data:
        raise ValueError(f"{SHIPPED.name} holds data JSON cannot carry unchanged")
    COMPILED.write_text(body + "\n", encoding="utf-8")
    return COMPILED


@cache
def shipped() -> Rules:
    """The rules shipped with the package, read and compiled once per process."""
    # Lazy: the shipped patterns are each compiled by the tests (tests/test_secret_rules.py).
    text = SHIPPED.read_text(encoding="utf-8")
    data = compiled_data(text)
    return parse(text, lazy=True) if data is None else _rules(trusted_spec(data), text, lazy=True)


if __name__ == "__main__":
    print(f"wrote {write_compiled()}")
