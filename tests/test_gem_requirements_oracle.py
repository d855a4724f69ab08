"""RubyGems ordering (versions.py "gem") and requirements (repocontext.osv.gem_requirements) held to `ruby`.

One ruby process per test reads generated cases on stdin, one JSON line each, and answers
`Gem::Version.new(a) <=> Gem::Version.new(b)` or `Gem::Requirement.new(*reqs).satisfied_by?(Gem::Version.new(v))`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repocontext.osv.evaluate import affects
from repocontext.osv.gem_requirements import satisfied_by
from repocontext.osv.load import load
from repocontext.osv.versions import compare
from tests.datapaths import SHARED

_ORACLE = r"""
require "json"
STDOUT.sync = true
STDIN.each_line do |line|
  kind, a, b = JSON.parse(line)
  begin
    if kind == "cmp"
      puts(Gem::Version.new(a) <=> Gem::Version.new(b))
    else
      puts(Gem::Requirement.new(*a).satisfied_by?(Gem::Version.new(b)))
    end
  rescue ArgumentError => e
    puts "error"
  end
end
"""


class Ruby:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(["ruby", "-e", _ORACLE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def ask(self, *case: object) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(case) + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def ruby() -> Iterator[Ruby]:
    if shutil.which("ruby") is None:
        pytest.skip("ruby is not installed (apt-get install -y ruby)")
    oracle = Ruby()
    yield oracle
    oracle.close()


_NUMBER = st.one_of(st.integers(0, 12), st.sampled_from([0, 1, 10, 99, 2024, 10**12])).map(str)
_WORD = st.sampled_from(["a", "b", "rc", "pre", "alpha", "beta", "dev", "RC", "z"])
_SEGMENT = st.one_of(_NUMBER, _NUMBER, _WORD, st.tuples(_WORD, _NUMBER).map("".join), _NUMBER.map(lambda n: "0" + n))


@st.composite
def gem_versions(draw: st.DrawFn) -> str:
    head = draw(_NUMBER)
    rest = draw(st.lists(_SEGMENT, max_size=4))
    text = ".".join([head, *rest])
    if draw(st.integers(0, 5)) == 0:
        text += "-" + ".".join(draw(st.lists(st.one_of(_NUMBER, _WORD), min_size=1, max_size=2)))
    return text


def _near(draw: st.DrawFn, base: str) -> str:
    """A version close to `base` (so clauses often sit at their boundaries)."""
    parts = base.split(".")
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return base
    if choice == 1:
        return base + ".0"
    if choice == 2 and parts[-1].isdigit():
        return ".".join([*parts[:-1], str(int(parts[-1]) + draw(st.integers(-1, 1)) if int(parts[-1]) else 1)])
    return draw(gem_versions())


@st.composite
def requirement_cases(draw: st.DrawFn) -> tuple[list[str], str]:
    clauses = []
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["", "= ", "!= ", "> ", "< ", ">= ", "<= ", "~> ", "~>"]))
        clauses.append(op + draw(gem_versions()))
    version = _near(draw, clauses[0].split()[-1].removeprefix("~>"))
    return clauses, version


_SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_SETTINGS
@given(a=gem_versions(), b=gem_versions())
def test_gem_order_matches_ruby(ruby: Ruby, a: str, b: str) -> None:
    assert compare("gem", a, b) == int(ruby.ask("cmp", a, b)), (a, b)


@_SETTINGS
@given(case=requirement_cases())
def test_gem_requirement_matches_ruby(ruby: Ruby, case: tuple[list[str], str]) -> None:
    requirements, version = case
    assert str(satisfied_by(requirements, version)).lower() == ruby.ask("sat", requirements, version), case


@pytest.mark.parametrize(("requirements", "version", "expected"), [
    (["~> 5.2.0"], "5.2.8", True), (["~> 5.2.0"], "5.3.0", False), (["~> 5.2"], "5.9", True),
    (["~> 5.2"], "6.0", False), (["~> 5"], "5.99", True), (["~> 1.0.0"], "1.1.0.rc1", False),
    (["~> 1.0.0"], "1.0.1.rc1", True), ([">= 1.0", "< 2"], "2.0.0.a", True), (["!= 1.3.0"], "1.3", False),
    (["1.2"], "1.2.0", True),
])
def test_known_answers(ruby: Ruby, requirements: list[str], version: str, expected: bool) -> None:
    assert satisfied_by(requirements, version) is expected
    assert ruby.ask("sat", requirements, version) == str(expected).lower()


RUBYSEC = SHARED / "advisories" / "RubyGems"
_PATCHED = r"""
require "json"
STDIN.each_line do |line|
  requirements, version = JSON.parse(line)
  v = Gem::Version.new(version)
  puts(requirements.none? { |r| Gem::Requirement.new(*r.split(/\s*,\s*/)).satisfied_by?(v) })
end
"""


@pytest.mark.skipif(not RUBYSEC.is_dir(), reason="the shared corpus RubyGems advisories are absent")
def test_osv_ranges_agree_with_rubysec_requirements(ruby: Ruby) -> None:
    """Each RubySec record's OSV ranges, as evaluate reads them, against the record's own patched and unaffected
    requirements as ruby reads them (bundler-audit's rule), at every release its events name and just above.
    The records write some fixes in a pre-release of the line they open (introduced 3.1, fixed 3.1.0.rc6): read
    as the schema's sorted walk, Rails 8 was affected by 2011 advisories (44 disagreements, now none).
    Pre-release event versions are left out: there the converter's bounds and RubySec's own differ."""
    db = load(RUBYSEC)
    cases: list[tuple[Any, str, str, list[str]]] = []
    for path in sorted(RUBYSEC.glob("*.json")):
        raw = json.loads(path.read_text())
        extra = raw.get("database_specific") or {}
        requirements = (extra.get("patched_versions") or []) + (extra.get("unaffected_versions") or [])
        advisory = db.get(raw["id"])
        for entry in raw["affected"]:
            named = {v for r in entry.get("ranges", []) for e in r["events"] for v in e.values() if v != "0"}
            cases += [(advisory, entry["package"]["name"], version, requirements)
                      for v in sorted(named) if not re.search(r"[a-zA-Z]", v) for version in (v, v + ".1")]
    lines = "".join(json.dumps([c[3], c[2]]) + "\n" for c in cases)
    verdicts = subprocess.run(["ruby", "-e", _PATCHED], input=lines, capture_output=True, text=True,
                              check=True).stdout.split()
    disagree = [(a.id, name, version) for (a, name, version, _), verdict in zip(cases, verdicts, strict=True)
                if affects(a, "RubyGems", name, version) != (verdict == "true")]
    assert len(cases) > 5000 and disagree == [], disagree
