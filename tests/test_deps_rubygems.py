"""Gemfile, *.gemspec and Gemfile.lock parsers, and the dependencies probe over a Ruby project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from repocontext.deps.common import declared
from repocontext.deps.gemfile import parse_gemfile, parse_gemspec
from repocontext.deps.gemfile_lock import parse_gemfile_lock, read_lock
from repocontext.deps.locks import group_of, parse_lock
from repocontext.gather import gather
from repocontext.model import Dependency
from repocontext.osv.gem_requirements import parse, split
from repocontext.probes.dependencies import DependenciesProbe
from tests.datapaths import CORPUS

GEMFILE = textwrap.dedent('''\
    source "https://rubygems.org"
    git_source(:github) { |repo| "https://github.com/#{repo}.git" }

    gem "rails", "~> 7.0.4" # the framework
    gem 'rack', '~> 2.2', '>= 2.2.3', require: false
    gem "nokogiri", [">= 1.13", "< 2"]
    gem "pg", "1.4.5"
    gem "sidekiq",
        "~> 6.5"
    gem "canonical-rails", :github => "commonlit/canonical-rails", :ref => "abc"
    gem "local_gem", path: "vendor/local_gem"
    gem "rubocop", group: :development
    gem "version_from_env", ENV.fetch("V", "1.0")
    gem "only_on_ci", "~> 1.0" if ENV["CI"]

    group :development, :test do
      gem "rspec-rails", "~> 6.0"
      if RUBY_VERSION >= "3"
        gem "debug"
      end
    end

    group :production do
      group :test do
        gem "mixed"
      end
      gem "puma"
    end

    platforms :jruby do
      gem "jruby-openssl"
    end

    git "https://github.com/rails/rails.git", branch: "main" do
      gem "activestorage"
    end
''')

LOCK = textwrap.dedent('''\
    GIT
      remote: https://github.com/commonlit/canonical-rails.git
      revision: 97bcb28b910b08ce4dc0169eae55a8cd3d4f26ff
      ref: abc
      specs:
        canonical-rails (0.2.17)
          actionview (>= 4.1, < 8.2)

    PATH
      remote: .
      specs:
        myapp (0.1.0)
          rack (~> 2.2)

    GEM
      remote: https://rubygems.org/
      specs:
        actionview (7.0.4)
          rack (>= 2.0)
        mini_portile2 (2.8.1)
        nokogiri (1.14.2)
          mini_portile2 (~> 2.8.0)
          racc (~> 1.4)
        nokogiri (1.14.2-x86_64-linux)
          racc (~> 1.4)
        racc (1.6.2)
        rack (2.2.6)
        rspec-rails (6.0.1)
          nokogiri (>= 1.0)

    GEM
      remote: https://gems.example.com/
      specs:
        private_gem (1.0.0)

    PLATFORMS
      ruby
      x86_64-linux

    DEPENDENCIES
      canonical-rails!
      myapp!
      nokogiri (>= 1.13, < 2)
      private_gem
      rspec-rails (~> 6.0)

    CHECKSUMS
      rack (2.2.6) sha256=0123

    BUNDLED WITH
       2.4.6
''')


def _by_name(deps: list[Dependency]) -> dict[str, Dependency]:
    return {d.name: d for d in deps}


def test_gemfile_requirements_groups_and_sources() -> None:
    parsed = parse_gemfile("Gemfile", GEMFILE)
    deps = _by_name(parsed.deps)
    assert deps["rails"].constraint == "~> 7.0.4" and deps["rails"].line == 4 and deps["rails"].version is None
    assert deps["rack"].constraint == "~> 2.2, >= 2.2.3"
    assert deps["nokogiri"].constraint == ">= 1.13, < 2"
    assert deps["pg"].version == "1.4.5"
    assert deps["sidekiq"].constraint == "~> 6.5" and deps["sidekiq"].line == 8  # continued call: its first line
    assert deps["canonical-rails"].source == "github: commonlit/canonical-rails"
    assert deps["local_gem"].source == "path: vendor/local_gem"
    assert deps["activestorage"].source == "git: https://github.com/rails/rails.git"
    assert deps["rubocop"].dev and deps["rspec-rails"].dev and deps["debug"].dev
    assert not deps["puma"].dev and not deps["mixed"].dev  # production (and test): ships
    assert not deps["jruby-openssl"].dev and not deps["rails"].dev
    assert deps["version_from_env"].constraint == 'ENV.fetch("V", "1.0")' and deps["version_from_env"].version is None
    assert any("version_from_env" in issue.message for issue in parsed.issues)
    assert deps["only_on_ci"].constraint == "~> 1.0"  # a trailing modifier is not an argument
    assert all(d.ecosystem == "RubyGems" and d.kind == "manifest" for d in parsed.deps)


def test_gemspec_runtime_and_development() -> None:
    text = textwrap.dedent('''\
        Gem::Specification.new do |spec|
          spec.name = "mygem"
          spec.add_dependency "rack", ">= 2.0", "< 4"
          spec.add_runtime_dependency(%q<nokogiri>.freeze, ["~> 1.14"])
          s.add_development_dependency 'rspec', '~> 3.12' # tests
          spec.add_dependency "thor"
        end
    ''')
    deps = _by_name(parse_gemspec("mygem.gemspec", text).deps)
    assert deps["rack"].constraint == ">= 2.0, < 4" and not deps["rack"].dev and deps["rack"].line == 3
    assert deps["nokogiri"].constraint == "~> 1.14" and deps["nokogiri"].section == "add_runtime_dependency"
    assert deps["rspec"].dev and deps["rspec"].constraint == "~> 3.12"
    assert deps["thor"].constraint is None


def test_lock_records_chains_platforms_and_sources() -> None:
    parsed = parse_gemfile_lock("Gemfile.lock", LOCK, {"rspec-rails": True, "nokogiri": False})
    deps = _by_name(parsed.deps)
    assert parsed.issues == []
    assert [d.name for d in parsed.deps].count("nokogiri") == 1  # the platform variant is the same version
    assert deps["nokogiri"].version == "1.14.2" and deps["nokogiri"].line == 21 and deps["nokogiri"].direct
    assert "myapp" not in deps  # the project's own gemspec
    assert deps["rack"].direct  # what the project's gemspec depends on is direct
    assert deps["canonical-rails"].source == ("git: https://github.com/commonlit/canonical-rails.git"
                                              "@97bcb28b910b08ce4dc0169eae55a8cd3d4f26ff")
    assert deps["private_gem"].source == "source: https://gems.example.com/"
    assert deps["actionview"].path == ["canonical-rails", "actionview"] and not deps["actionview"].direct
    assert deps["racc"].path == ["nokogiri", "racc"] and not deps["racc"].dev
    assert deps["rspec-rails"].dev  # a dev group's gem
    assert deps["mini_portile2"].kind == "lockfile" and deps["mini_portile2"].section == "GEM"


def test_lock_dev_only_chain() -> None:
    lock = LOCK.replace("\n  nokogiri (>= 1.13, < 2)\n", "\n")
    deps = _by_name(parse_gemfile_lock("Gemfile.lock", lock, {"rspec-rails": True}).deps)
    assert deps["nokogiri"].dev and deps["nokogiri"].path == ["rspec-rails", "nokogiri"]
    assert deps["racc"].dev


def test_lock_without_dependencies_guesses_roots() -> None:
    lock = LOCK.split("PLATFORMS")[0]
    parsed = parse_gemfile_lock("Gemfile.lock", lock, None)
    assert any("treating packages that nothing depends on as direct" in i.message for i in parsed.issues)
    assert _by_name(parsed.deps)["rspec-rails"].direct


def test_lock_takes_the_gemfile_beside_it() -> None:
    gemfile = parse_gemfile("app/Gemfile", GEMFILE).deps
    manifests = {"Gemfile": {"app": gemfile}}
    result = parse_lock("Gemfile.lock", "app/Gemfile.lock", LOCK, manifests, set())
    rows = {name: record for _, name, record in result.rows}
    assert rows["rspec-rails"]["dev"] is True and rows["nokogiri"].get("dev") is not True
    assert declared(gemfile)["rspec-rails"] is True
    assert group_of("mygem.gemspec") == "*.gemspec" and group_of("Gemfile.lock") == "Gemfile.lock"


def test_a_gems_lock_takes_its_gemspecs_development_dependencies() -> None:
    gemspec = ('Gem::Specification.new do |s|\n  s.add_dependency "rack", "~> 2.2"\n'
               '  s.add_development_dependency "rspec-rails", "~> 6.0"\nend\n')
    manifests = {"Gemfile": {".": parse_gemfile("Gemfile", 'source "https://rubygems.org"\ngemspec\n').deps},
                 "*.gemspec": {".": parse_gemspec("myapp.gemspec", gemspec).deps}}
    parsed = parse_lock("Gemfile.lock", "Gemfile.lock", LOCK, manifests, set())
    rows = {name: record for _, name, record in parsed.rows}
    assert rows["rspec-rails"].get("dev") is True
    assert rows["rack"].get("dev") is not True and rows["nokogiri"].get("dev") is not True


def test_dependencies_probe_reads_a_ruby_project(tmp_path: Path) -> None:
    (tmp_path / "Gemfile").write_text(GEMFILE)
    (tmp_path / "Gemfile.lock").write_text(LOCK)
    (tmp_path / "mygem.gemspec").write_text('Gem::Specification.new do |s|\n  s.add_dependency "rack", "~> 2.2"\nend\n')
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run([*git, *args], cwd=tmp_path, check=True)
    deps = gather(tmp_path, probes=[DependenciesProbe()]).dependencies
    assert sorted((d.file, d.line) for d in deps["rack"]) == [("Gemfile", 5), ("Gemfile.lock", 27),
                                                            ("mygem.gemspec", 2)]
    assert [d.dev for d in deps["rspec-rails"] if d.file == "Gemfile.lock"] == [True]  # the Gemfile's group


_BUNDLER_READS = r"""
require "bundler"
require "json"
lock = Bundler::LockfileParser.new(STDIN.read)
specs = Hash.new { |h, k| h[k] = [] }
lock.specs.each { |s| specs[[s.name, s.version.to_s]] |= s.dependencies.map(&:name) }
puts JSON.generate({"specs" => specs.map { |(n, v), d| [n, v, d.sort] }.sort, "direct" => lock.dependencies.keys.sort})
"""


def _bundler_reads(tmp_path: Path, text: str) -> dict[str, list[Any]]:
    if shutil.which("ruby") is None or subprocess.run(["ruby", "-e", 'require "bundler"'],
                                                      capture_output=True).returncode != 0:
        pytest.skip("bundler is not installed (apt-get install -y ruby bundler)")
    (tmp_path / "Gemfile").write_text("")  # Bundler looks for a project root before it parses anything
    done = subprocess.run(["ruby", "-e", _BUNDLER_READS], input=text, capture_output=True, text=True, cwd=tmp_path,
                          check=True)
    found: dict[str, list[Any]] = json.loads(done.stdout)
    return found


def _ours(text: str) -> dict[str, list[Any]]:
    lock = read_lock("Gemfile.lock", text, [])
    return {"specs": sorted([s.name, s.version, sorted(s.deps)] for s in lock.specs.values()),
            "direct": sorted(lock.direct)}


def test_lock_reader_agrees_with_bundlers_own_parser(tmp_path: Path) -> None:
    """Every locked gem (platform variants as one version), what it depends on, and the DEPENDENCIES, as
    Bundler::LockfileParser reads them."""
    assert _ours(LOCK) == _bundler_reads(tmp_path, LOCK)


@pytest.mark.skipif(not (CORPUS / "openstreetmap-website.tar.gz").is_file(),
                    reason="the openstreetmap-website corpus tarball is absent")
def test_the_corpus_lock_reads_as_bundler_reads_it(tmp_path: Path) -> None:
    with tarfile.open(CORPUS / "openstreetmap-website.tar.gz") as tar:
        member = tar.extractfile("openstreetmap-website/Gemfile.lock")
        assert member is not None
        text = member.read().decode()
    ours = _ours(text)
    assert len(ours["specs"]) == 329 and len(ours["direct"]) == 118
    assert ours == _bundler_reads(tmp_path, text)


_BUNDLER_EVALUATES = r"""
require "bundler"
require "json"
dsl = Bundler::Dsl.new
dsl.eval_gemfile("Gemfile")
puts JSON.generate(dsl.instance_variable_get(:@dependencies).map { |d|
  [d.name, d.requirement.as_list, d.groups.map(&:to_s), d.source.nil? ? nil : d.source.class.name.split("::").last] })
"""


def _gemfile_as_bundler_evaluates(tmp_path: Path, text: str) -> dict[str, list[Any]]:
    """What Bundler's DSL makes of a Gemfile by running it (the oracle; the parser never runs Ruby)."""
    if shutil.which("ruby") is None or subprocess.run(["ruby", "-e", 'require "bundler"'],
                                                      capture_output=True).returncode != 0:
        pytest.skip("bundler is not installed (apt-get install -y ruby bundler)")
    (tmp_path / "Gemfile").write_text(text)
    done = subprocess.run(["ruby", "-e", _BUNDLER_EVALUATES], capture_output=True, text=True, cwd=tmp_path,
                          check=True, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    return {name: [requirement, groups, source] for name, requirement, groups, source in json.loads(done.stdout)}


def _gemfile_as_we_read_it(text: str) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for dep in parse_gemfile("Gemfile", text).deps:
        clauses = parse(split(dep.constraint)) if dep.constraint and "(" not in dep.constraint else []
        groups = dep.section.removeprefix("group ").split(", ") if dep.section else ["default"]
        source = {"git": "Git", "github": "Git", "path": "Path"}.get((dep.source or "").split(":")[0])
        found[dep.name] = [[f"{c.op} {c.version}" for c in clauses] or [">= 0"], groups, source]
    return found


@pytest.mark.parametrize("which", ["fixture", "corpus"])
def test_gemfile_reads_as_bundler_evaluates_it(tmp_path: Path, which: str) -> None:
    """Names, requirements, groups and git/path sources as Bundler's DSL gives them; a gem declared under a
    condition Ruby would decide (`if ENV["CI"]`) is read anyway, and a computed requirement is left unread."""
    if which == "corpus":
        if not (CORPUS / "openstreetmap-website.tar.gz").is_file():
            pytest.skip("the openstreetmap-website corpus tarball is absent")
        with tarfile.open(CORPUS / "openstreetmap-website.tar.gz") as tar:
            member = tar.extractfile("openstreetmap-website/Gemfile")
            assert member is not None
            text = member.read().decode()
    else:
        text = GEMFILE
    ours, theirs = _gemfile_as_we_read_it(text), _gemfile_as_bundler_evaluates(tmp_path, text)
    assert set(theirs) <= set(ours) and set(ours) - set(theirs) <= {"only_on_ci"}
    computed = {"version_from_env"}
    assert {n: v for n, v in ours.items() if n in theirs and n not in computed} == \
        {n: v for n, v in theirs.items() if n not in computed}


GEMSPEC = textwrap.dedent('''\
    # -*- encoding: utf-8 -*-
    Gem::Specification.new do |s|
      s.name = "mygem".freeze
      s.version = "0.1.0"
      s.summary = "t"
      s.authors = ["t"]
      s.add_runtime_dependency(%q<nokogiri>.freeze, [">= 1.13", "< 2".freeze])
      s.add_dependency "rack", "~> 2.2", ">= 2.2.3"
      s.add_dependency 'thor'
      s.add_development_dependency "rspec",
                                   "~> 3.12"
      s.add_development_dependency("rake", "!= 13.0.1") if RUBY_VERSION >= "2"
    end
''')


def test_gemspec_reads_as_rubygems_loads_it(tmp_path: Path) -> None:
    if shutil.which("ruby") is None:
        pytest.skip("ruby is not installed (apt-get install -y ruby)")
    (tmp_path / "mygem.gemspec").write_text(GEMSPEC)
    script = ('require "json"; s = Gem::Specification.load(ARGV[0]); '
              'puts JSON.generate(s.dependencies.map { |d| [d.name, d.requirement.as_list, d.type.to_s] })')
    done = subprocess.run(["ruby", "-e", script, str(tmp_path / "mygem.gemspec")], capture_output=True, text=True,
                          check=True)
    theirs = sorted(json.loads(done.stdout))
    ours = sorted([d.name, [f"{c.op} {c.version}" for c in parse(split(d.constraint))] or [">= 0"],
                   "development" if d.dev else "runtime"] for d in parse_gemspec("mygem.gemspec", GEMSPEC).deps)
    assert ours == theirs
