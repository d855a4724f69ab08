"""RubyGems remediation: Gemfile and gemspec edits, Gemfile.lock commands and hints, the rewrite rule held to
`ruby`, and a real offline `bundle lock --update` whose result `still_below` reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.patch.plan import apply_edits
from repocontext.deps.gemfile import parse_gemfile, parse_gemspec
from repocontext.deps.gemfile_lock import parse_gemfile_lock
from repocontext.model import Dependency
from subgraphs.vulnerability_remediation.commandline import refusal
from subgraphs.vulnerability_remediation.edits import UpgradePlan, plan_upgrade
from subgraphs.vulnerability_remediation.lockfiles import still_below
from subgraphs.vulnerability_remediation.ranges_gem import require_gem

LOCK = textwrap.dedent('''\
    GEM
      remote: https://rubygems.org/
      specs:
        actionpack (6.1.0)
          rack (~> 2.0, >= 2.0.9)
        pg (1.4.5)
        rack (2.2.3)
        rails (6.1.0)
          actionpack (= 6.1.0)
        sinatra (3.0.0)
          rack (~> 2.2)

    PLATFORMS
      ruby

    DEPENDENCIES
      pg (= 1.4.5)
      rails (~> 6.1.0)
      sinatra

    BUNDLED WITH
       2.4.6
''')
GEMFILE = 'source "https://rubygems.org"\n\ngem "rails", \'~> 6.1.0\'\ngem "pg", "1.4.5"\ngem "sinatra"\n'


def _plan(files: dict[str, str], package: str, target: str) -> UpgradePlan:
    deps: list[Dependency] = []
    for path, text in files.items():
        if path.endswith("Gemfile"):
            deps += parse_gemfile(path, text).deps
        elif path.endswith(".gemspec"):
            deps += parse_gemspec(path, text).deps
    manifest = {d.name: d.dev for d in deps}
    for path, text in files.items():
        if path.endswith("Gemfile.lock"):
            deps += parse_gemfile_lock(path, text, manifest).deps
    return plan_upgrade("RubyGems", package, target, deps, files.get)


def _applied(files: dict[str, str], plan: UpgradePlan) -> dict[str, str]:
    return {path: new for path, (_, new) in apply_edits(files.get, plan.edits).items()}


def test_exact_pin_is_moved_and_the_lock_regenerated() -> None:
    files = {"Gemfile": GEMFILE, "Gemfile.lock": LOCK}
    plan = _plan(files, "pg", "1.4.6")
    assert _applied(files, plan)["Gemfile"].splitlines()[3] == 'gem "pg", "1.4.6"'
    assert [(a.file, a.command) for a in plan.regenerate] == [("Gemfile.lock",
                                                               "bundle lock --update pg --conservative")]
    assert all(refusal(a.command) is None for a in plan.regenerate)


def test_a_requirement_admitting_the_target_is_left_to_the_lock() -> None:
    plan = _plan({"Gemfile": GEMFILE, "Gemfile.lock": LOCK}, "rails", "6.1.7")
    assert plan.edits == [] and not plan.skipped
    assert any("`~> 6.1.0` admits 6.1.7 and Gemfile.lock pins" in note for note in plan.notes)
    # rails pins actionpack (= 6.1.0): --conservative would keep actionpack, and so rails, where they are
    assert [a.command for a in plan.regenerate] == ["bundle lock --update rails"]


def test_requirement_excluding_the_target_keeps_its_quotes_and_operator() -> None:
    files = {"Gemfile": GEMFILE, "Gemfile.lock": LOCK}
    plan = _plan(files, "rails", "7.0.8")
    assert _applied(files, plan)["Gemfile"].splitlines()[2] == "gem \"rails\", '~> 7.0.8'"


def test_clauses_keep_their_spacing_and_untouched_ones_their_text() -> None:
    files = {"Gemfile": "gem 'haml-rails', '~>2.0'\ngem \"json\", \">= 2.0.0\", \"!=2.7.0\"\n"}
    applied = _applied(files, _plan(files, "haml-rails", "3.0.1"))["Gemfile"]
    assert applied.splitlines()[0] == "gem 'haml-rails', '~>3.0', '>=3.0.1'"
    applied = _applied(files, _plan(files, "json", "2.7.2"))["Gemfile"]
    assert applied.splitlines()[1] == 'gem "json", ">= 2.7.2", "!=2.7.0"'


def test_without_a_lockfile_a_loose_lower_bound_is_raised() -> None:
    files = {"Gemfile": 'gem "rails", "~> 5.2.0"\n'}
    plan = _plan(files, "rails", "5.2.8")
    assert _applied(files, plan)["Gemfile"] == 'gem "rails", "~> 5.2.8"\n'
    assert plan.regenerate == []


def test_gemspec_generated_style() -> None:
    text = ('Gem::Specification.new do |s|\n  s.add_runtime_dependency(%q<rack>.freeze, ["~> 2.0", ">= 2.0.1"])\n'
            '  s.add_development_dependency "rake", "!= 13.0.1"\nend\n')
    files = {"mygem.gemspec": text}
    plan = _plan(files, "rack", "3.0.1")
    assert '(%q<rack>.freeze, ["~> 3.0", ">= 3.0.1"])' in _applied(files, plan)["mygem.gemspec"]
    plan = _plan(files, "rake", "13.0.1")
    assert '"rake", ">= 13.0.1"\n' in _applied(files, plan)["mygem.gemspec"]


def test_transitive_gem_within_its_parents_requirements() -> None:
    plan = _plan({"Gemfile": GEMFILE, "Gemfile.lock": LOCK}, "rack", "2.2.8")
    assert plan.edits == []
    assert [a.command for a in plan.regenerate] == ["bundle lock --update rack --conservative"]
    assert any("transitive dependency only (via sinatra → rack)" in s for s in plan.skipped)


def test_transitive_gem_capped_by_parents_names_them() -> None:
    plan = _plan({"Gemfile": GEMFILE, "Gemfile.lock": LOCK}, "rack", "3.0.1")
    # actionpack (~> 2.0) and sinatra (~> 2.2) exclude 3.0.1; rails pins actionpack exactly
    assert [a.command for a in plan.regenerate] == ["bundle lock --update actionpack rails sinatra rack"]
    assert all(refusal(a.command) is None for a in plan.regenerate)


def test_a_requirement_that_is_not_a_literal_is_left_to_a_person() -> None:
    files = {"Gemfile": 'gem "rails", ENV.fetch("RAILS_VERSION", "~> 5.2.0")\n'}
    plan = _plan(files, "rails", "6.0.1")
    assert plan.edits == [] and any("change it by hand" in s for s in plan.skipped)


def test_git_sourced_gem_is_not_edited() -> None:
    files = {"Gemfile": 'gem "rails", "~> 5.2.0", github: "rails/rails"\n'}
    plan = _plan(files, "rails", "6.0.1")
    assert plan.edits == [] and any("github: rails/rails" in s for s in plan.skipped)


# --- the rewrite rule against ruby ------------------------------------------------------------------------------------

_ORACLE = r"""
require "json"
STDOUT.sync = true
STDIN.each_line do |line|
  reqs, versions = JSON.parse(line)
  puts JSON.generate(versions.map { |v| Gem::Requirement.new(*reqs).satisfied_by?(Gem::Version.new(v)) })
end
"""


@pytest.fixture(scope="module")
def ruby() -> Iterator[subprocess.Popen[str]]:
    if shutil.which("ruby") is None:
        pytest.skip("ruby is not installed (apt-get install -y ruby)")
    proc = subprocess.Popen(["ruby", "-e", _ORACLE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=10)


def _ask(proc: subprocess.Popen[str], requirements: list[str], versions: list[str]) -> list[bool]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps([requirements, versions]) + "\n")
    proc.stdin.flush()
    answer: list[bool] = json.loads(proc.stdout.readline())
    return answer


_RELEASE = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(lambda ps: ".".join(map(str, ps)))
_CLAUSE = st.tuples(st.sampled_from(["", "= ", "!= ", "> ", "< ", ">= ", "<= ", "~> "]), _RELEASE).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(requirements=st.lists(_CLAUSE, min_size=1, max_size=3), target=_RELEASE,
       others=st.lists(_RELEASE, min_size=1, max_size=6), pinned=st.booleans())
def test_rewrite_requires_the_target_per_ruby(ruby: subprocess.Popen[str], requirements: list[str], target: str,
                                              others: list[str], pinned: bool) -> None:
    result = require_gem(requirements, target, "Gemfile.lock" if pinned else None)
    if result.status == "unsupported":
        return
    if result.status in ("fixed", "loose"):
        assert _ask(ruby, requirements, [target]) == [True] or not requirements
        return
    new = result.text.split(", ")
    below = [v for v in others if _ask(ruby, [f"< {target}"], [v]) == [True]]
    assert _ask(ruby, new, [target, *below]) == [True] + [False] * len(below), (requirements, target, new)


# --- a real, offline `bundle lock --update` ---------------------------------------------------------------------------


def _gem(tmp: Path, home: Path, version: str, name: str = "tinygem", needs: tuple[str, ...] = (),
         requirement: str | None = None) -> None:
    """Build and install `name` `version` into `home`; it requires each of `needs` at `requirement` (default:
    exactly its own version, as Rails' parts pin each other)."""
    src = tmp / f"src-{name}-{version}"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / f"{name}.rb").write_text("module Tinygem; end\n")
    lines = "".join(f'  s.add_dependency "{need}", "{requirement or "= " + version}"\n' for need in needs)
    (src / f"{name}.gemspec").write_text(
        f'Gem::Specification.new do |s|\n  s.name = "{name}"\n  s.version = "{version}"\n  s.summary = "t"\n'
        f'  s.authors = ["t"]\n  s.files = ["lib/{name}.rb"]\n{lines}end\n')
    env = {**os.environ, "GEM_HOME": str(home), "GEM_PATH": str(home)}
    subprocess.run(["gem", "build", f"{name}.gemspec"], cwd=src, check=True, capture_output=True, env=env)
    subprocess.run(["gem", "install", "--local", "--ignore-dependencies", "--no-document", f"{name}-{version}.gem"],
                   cwd=src, check=True, capture_output=True, env=env)


def _bundler_env(tmp_path: Path) -> dict[str, str]:
    if shutil.which("bundle") is None or shutil.which("gem") is None:
        pytest.skip("bundler is not installed (apt-get install -y ruby bundler)")
    home = tmp_path / "gems"
    return {**os.environ, "GEM_HOME": str(home), "GEM_PATH": str(home), "HOME": str(tmp_path),
            "BUNDLE_USER_HOME": str(tmp_path / "bundle")}


def test_bundle_lock_reaches_the_target_offline(tmp_path: Path) -> None:
    env = _bundler_env(tmp_path)
    home, app = tmp_path / "gems", tmp_path / "app"
    app.mkdir()
    _gem(tmp_path, home, "1.0.0")
    (app / "Gemfile").write_text('source "https://rubygems.org"\ngem "tinygem"\n')
    subprocess.run(["bundle", "lock", "--local"], cwd=app, check=True, capture_output=True, env=env)
    before = (app / "Gemfile.lock").read_text()
    assert "tinygem (1.0.0)" in before
    _gem(tmp_path, home, "1.0.2")
    records = parse_gemfile_lock("Gemfile.lock", before, {"tinygem": False}).deps
    plan = plan_upgrade("RubyGems", "tinygem", "1.0.2", records, {"Gemfile.lock": before}.get)
    command = plan.regenerate[0].command
    assert command == "bundle lock --update tinygem --conservative"
    done = subprocess.run([*command.split(), "--local"], cwd=app, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    after = (app / "Gemfile.lock").read_text()
    assert still_below("Gemfile.lock", before, "RubyGems", "tinygem", "1.0.2") != []
    assert still_below("Gemfile.lock", after, "RubyGems", "tinygem", "1.0.2") == []


def test_a_gem_pinning_its_parts_exactly_is_updated_with_them(tmp_path: Path) -> None:
    """Like rails and actionpack: --conservative keeps the shared part where it is, so the gem cannot move."""
    env = _bundler_env(tmp_path)
    home, app = tmp_path / "gems", tmp_path / "app"
    app.mkdir()
    for version in ("1.0.0", "1.0.2"):
        _gem(tmp_path, home, version, "tinypart")
    _gem(tmp_path, home, "1.0.0", "tinyother", ("tinypart",), ">= 1.0")  # shares the part, as page_caching does
    _gem(tmp_path, home, "1.0.0", "tinyframe", ("tinypart",))
    (app / "Gemfile").write_text('source "https://rubygems.org"\ngem "tinyframe"\ngem "tinyother"\n')
    subprocess.run(["bundle", "lock", "--local"], cwd=app, check=True, capture_output=True, env=env)
    _gem(tmp_path, home, "1.0.2", "tinyframe", ("tinypart",))
    before = (app / "Gemfile.lock").read_text()
    assert "tinyframe (1.0.0)" in before and "tinypart (1.0.0)" in before
    records = parse_gemfile_lock("Gemfile.lock", before, None).deps
    command = plan_upgrade("RubyGems", "tinyframe", "1.0.2", records, {"Gemfile.lock": before}.get).regenerate[0]
    assert command.command == "bundle lock --update tinyframe"
    for words, reaches in ((["bundle", "lock", "--update", "tinyframe", "--conservative"], False),
                           (command.command.split(), True)):
        (app / "Gemfile.lock").write_text(before)
        subprocess.run([*words, "--local"], cwd=app, capture_output=True, text=True, env=env)
        after = (app / "Gemfile.lock").read_text()
        assert (still_below("Gemfile.lock", after, "RubyGems", "tinyframe", "1.0.2") == []) is reaches, words


def test_an_unreachable_gem_server_reads_as_a_network_failure(tmp_path: Path) -> None:
    """What Bundler prints when it cannot reach the gem server (a .invalid host never resolves) is told apart
    from a failed build."""
    from subgraphs.vulnerability_remediation.regenerate import classify

    env = _bundler_env(tmp_path)
    (tmp_path / "Gemfile").write_text('source "https://gems.invalid"\ngem "rack"\n')
    (tmp_path / "Gemfile.lock").write_text(LOCK.replace("https://rubygems.org/", "https://gems.invalid/"))
    done = subprocess.run(["bundle", "lock", "--update", "rack", "--conservative"], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode != 0
    assert classify("bundle", done.returncode, done.stdout + done.stderr).startswith(
        "the package index could not be reached (bundle exited")
