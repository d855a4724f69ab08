"""Call sites in Rust, Ruby, PHP, Java/Kotlin and C#: the scanners, the module → locked package mapping, and
real gathers (a small repository of each, and the real corpus trees)."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import write_files
from datapaths import CORPUS

from repocontext.callsites.csharp import scan_csharp
from repocontext.callsites.jvm import scan_jvm
from repocontext.callsites.packages import VIA, PackageIndex, reference
from repocontext.callsites.php import autoload_prefixes, scan_php
from repocontext.callsites.ruby import scan_ruby
from repocontext.callsites.rust import scan_rust
from repocontext.gather import gather
from repocontext.probes.call_sites import CallSitesProbe
from repocontext.probes.dependencies import DependenciesProbe

Row = tuple[str, str, int, int, str]


def rows(scan: Any) -> list[Row]:
    return [(s.module, s.symbol, s.line, s.col, s.kind) for s in scan.sites]


# --- scanners -----------------------------------------------------------------------------------------------------


def test_rust_use_trees_crate_paths_and_bound_names() -> None:
    source = textwrap.dedent("""\
        use ::serde::{Serialize, de::{self, Deserialize as D}};
        pub use regex::*;
        extern crate regex_automata;
        use crate::conf::Load;
        use std::fs;
        fn f() -> serde_json::Value { let d: D = D::new(); de::Error::custom(1); fs::read("x"); conf::x(); }
        // serde_json::from_str in a comment
        """)
    assert rows(scan_rust(source)) == [
        ("serde", "serde::Serialize", 1, 14, "import"), ("serde", "serde::de", 1, 30, "import"),
        ("serde", "serde::de::Deserialize", 1, 36, "import"), ("regex", "regex", 2, 8, "import"),
        ("regex_automata", "regex_automata", 3, 13, "import"),
        ("serde_json", "serde_json::Value", 6, 10, "use"), ("serde", "serde::de::Deserialize", 6, 37, "use"),
        ("serde", "serde::de::Deserialize::new", 6, 41, "use"), ("serde", "serde::de::Error::custom", 6, 51, "use"),
        ("conf", "conf::x", 6, 88, "use")]  # a local module path, dropped when no crate has the name


def test_ruby_requires_and_constant_paths() -> None:
    source = textwrap.dedent("""\
        require 'nokogiri'
        require "active_support/core_ext"
        require_relative 'local'
        doc = Nokogiri::HTML(html)
        Nokogiri::XML::Document.parse(x)
        class Page < ActiveRecord::Base; end
        module Rack::Test; end
        LIMITER&.update(1)
        s = "Foo::Bar"
        """)
    assert rows(scan_ruby(source)) == [
        ("nokogiri", "nokogiri", 1, 0, "import"),
        ("active_support/core_ext", "active_support/core_ext", 2, 0, "import"),
        ("Nokogiri", "Nokogiri::HTML", 4, 6, "use"), ("Nokogiri", "Nokogiri::XML::Document.parse", 5, 0, "use"),
        ("ActiveRecord", "ActiveRecord::Base", 6, 13, "use"), ("LIMITER", "LIMITER.update", 8, 0, "use")]


def test_php_use_clauses_resolve_aliases_and_fully_qualified_names() -> None:
    source = textwrap.dedent("""\
        <?php
        namespace App\\Http;
        use Symfony\\Component\\HttpFoundation\\Request;
        use Monolog\\{Logger, Handler\\StreamHandler as SH};
        use function GuzzleHttp\\json_decode;
        class K extends Local implements \\Psr\\Log\\LoggerInterface { use SomeTrait; }
        $r = request::createFromGlobals();
        $l = new Logger('x'); $h = SH::DEBUG;
        json_decode('1'); strlen('x'); $Logger = 1;
        """)
    request, logger, handler = ("Symfony\\Component\\HttpFoundation\\Request", "Monolog\\Logger",
                                "Monolog\\Handler\\StreamHandler")
    assert rows(scan_php(source)) == [
        (request, request, 3, 4, "import"), (logger, logger, 4, 13, "import"), (handler, handler, 4, 21, "import"),
        ("GuzzleHttp\\json_decode", "GuzzleHttp\\json_decode", 5, 4, "import"),
        ("Psr\\Log\\LoggerInterface", "Psr\\Log\\LoggerInterface", 6, 33, "use"),
        (request, request + "::createFromGlobals", 7, 5, "use"),  # PHP class names ignore case
        (logger, logger, 8, 9, "use"), (handler, handler + "::DEBUG", 8, 27, "use"),
        ("GuzzleHttp\\json_decode", "GuzzleHttp\\json_decode", 9, 0, "use")]


def test_java_and_kotlin_imports_and_uses() -> None:
    java = textwrap.dedent("""\
        package a.b;
        import com.fasterxml.jackson.databind.ObjectMapper;
        import static org.junit.Assert.assertEquals;
        import org.springframework.web.bind.annotation.*;
        class A { void f(ObjectMapper p) { ObjectMapper.builder(); assertEquals(1, 1); p.ObjectMapper(); } }
        """)
    mapper = "com.fasterxml.jackson.databind.ObjectMapper"
    assert rows(scan_jvm(java)) == [
        (mapper, mapper, 2, 0, "import"),
        ("org.junit.Assert.assertEquals", "org.junit.Assert.assertEquals", 3, 0, "import"),
        ("org.springframework.web.bind.annotation", "org.springframework.web.bind.annotation", 4, 0, "import"),
        (mapper, mapper, 5, 17, "use"), (mapper, mapper + ".builder", 5, 35, "use"),
        ("org.junit.Assert.assertEquals", "org.junit.Assert.assertEquals", 5, 59, "use")]
    kotlin = "import com.fasterxml.jackson.databind.ObjectMapper as OM\nimport org.foo.*\n\nfun f() = OM.builder()\n"
    assert rows(scan_jvm(kotlin, "kotlin")) == [
        (mapper, mapper, 1, 0, "import"), ("org.foo", "org.foo", 2, 0, "import"),
        (mapper, mapper + ".builder", 4, 10, "use")]


def test_csharp_usings_aliases_and_qualified_names() -> None:
    source = textwrap.dedent("""\
        using System;
        using Newtonsoft.Json;
        using J = Newtonsoft.Json.JsonConvert;
        global using Microsoft.EntityFrameworkCore;
        class A { void F() { J.SerializeObject(1); Newtonsoft.Json.Linq.JObject.Parse(""); JsonConvert.X(); } }
        """)
    assert rows(scan_csharp(source)) == [
        ("System", "System", 1, 0, "import"), ("Newtonsoft.Json", "Newtonsoft.Json", 2, 0, "import"),
        ("Newtonsoft.Json.JsonConvert", "Newtonsoft.Json.JsonConvert", 3, 0, "import"),
        ("Microsoft.EntityFrameworkCore", "Microsoft.EntityFrameworkCore", 4, 0, "import"),
        ("Newtonsoft.Json.JsonConvert", "Newtonsoft.Json.JsonConvert.SerializeObject", 5, 21, "use"),
        ("Newtonsoft.Json", "Newtonsoft.Json.Linq.JObject.Parse", 5, 43, "use")]


def test_a_syntax_error_is_parsed_around_and_reported() -> None:
    scan = scan_rust("use serde::Serialize;\nfn f( {\nserde_json::to_string(1);\n")
    assert scan.partial_line is not None and ("serde", "serde::Serialize", 1, 4, "import") in rows(scan)


# --- module → package --------------------------------------------------------------------------------------------


def _records(*pairs: tuple[str, str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for ecosystem, name in pairs:
        out.setdefault(name, []).append({"ecosystem": ecosystem, "name": name, "file": "x"})
    return out


def test_mapping_onto_locked_packages() -> None:
    index = PackageIndex(_records(
        ("crates.io", "regex-automata"), ("RubyGems", "activesupport"), ("RubyGems", "rack"),
        ("RubyGems", "rack-test"), ("Maven", "com.fasterxml.jackson.core:jackson-databind"),
        ("Maven", "com.fasterxml.jackson.core:jackson-core"), ("Maven", "com.google.guava:guava"),
        ("Maven", "org.springframework.boot:spring-boot-starter-web"),
        ("Maven", "org.springframework.boot:spring-boot-starter-test"),
        ("Maven", "com.google.dagger:hilt-core"), ("Maven", "com.google.truth:truth"),
        ("Maven", "androidx.compose:compose-bom"),
        ("NuGet", "Newtonsoft.Json"), ("NuGet", "Newtonsoft.Json.Bson"), ("npm", "rack")),
        [("Monolog\\", "monolog/monolog"), ("Symfony\\Component\\", "symfony/symfony"),
         ("Symfony\\Component\\HttpFoundation\\", "symfony/http-foundation"), ("Twig_", "twig/twig")])
    assert index.match("rust", "regex_automata") == "regex-automata" and index.match("rust", "std") is None
    assert [index.match("ruby", reference("ruby", s)) for s in (
        "active_support/core_ext", "ActiveSupport::Concern", "rack/test", "Rack::Test.new", "Rack::Utils.escape",
        "json")] == ["activesupport", "activesupport", "rack-test", "rack-test", "rack", None]
    assert [index.match("php", reference("php", s)) for s in (
        "Symfony\\Component\\HttpFoundation\\Request::create", "symfony\\component\\yaml\\Yaml", "Twig_Environment",
        "Monolog", "Psr\\Log\\LoggerInterface")] == [
        "symfony/http-foundation", "symfony/symfony", "twig/twig", "monolog/monolog", None]
    assert [index.match("jvm", s) for s in (
        "com.fasterxml.jackson.databind.ObjectMapper.readValue", "com.fasterxml.jackson.core.JsonParser",
        "com.google.common.collect.ImmutableList", "org.springframework.boot.SpringApplication",
        "org.springframework.boot.test.context.SpringBootTest", "java.util.List", "com.example.Own",
        "com.google.samples.apps.core.Theme", "com.google.common.truth.Truth.assertThat",
        "androidx.compose.ui.Modifier")] == [
        "com.fasterxml.jackson.core:jackson-databind", "com.fasterxml.jackson.core:jackson-core",
        "com.google.guava:guava", None,  # several starters tie: none is named
        "org.springframework.boot:spring-boot-starter-test", None, None,
        None,  # com.google.dagger is one segment off, but `samples` is no word of hilt-core
        "com.google.truth:truth", None]  # a BOM holds no code
    assert [index.match("csharp", s) for s in (
        "newtonsoft.json.linq", "Newtonsoft.Json.Bson.BsonReader", "Newtonsoft.JsonX", "System")] == [
        "Newtonsoft.Json", "Newtonsoft.Json.Bson", None, None]


def test_autoload_prefixes_of_a_lockfile() -> None:
    lock = {"packages": [
        {"name": "monolog/monolog", "autoload": {"psr-4": {"Monolog\\": "src/Monolog"}}},
        {"name": "twig/twig", "autoload": {"psr-0": {"Twig_": "lib/"}, "psr-4": {"Twig\\": "src/"}}},
        {"name": "odd/fallback", "autoload": {"psr-4": {"": "src/"}, "classmap": ["lib/"]}}],
        "packages-dev": [{"name": "mockery/mockery", "autoload": {"psr-4": {"Mockery\\": "library/Mockery"}}}]}
    assert autoload_prefixes(lock) == [("Mockery\\", "mockery/mockery"), ("Monolog\\", "monolog/monolog"),
                                       ("Twig\\", "twig/twig"), ("Twig_", "twig/twig")]
    assert autoload_prefixes(["not", "a", "lock"]) == []


# --- a real gather -------------------------------------------------------------------------------------------------

REGISTRY = 'source = "registry+https://github.com/rust-lang/crates.io-index"'
FILES = {
    "Cargo.toml": '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
                  'serde_json = "1"\nregex-automata = "0.4"\nutil = { path = "util" }\n',
    "Cargo.lock": 'version = 3\n\n[[package]]\nname = "app"\nversion = "0.1.0"\ndependencies = ["regex-automata", '
                  f'"serde_json", "util"]\n\n[[package]]\nname = "regex-automata"\nversion = "0.4.3"\n{REGISTRY}\n\n'
                  f'[[package]]\nname = "serde_json"\nversion = "1.0.100"\n{REGISTRY}\n\n'
                  '[[package]]\nname = "util"\nversion = "0.1.0"\n',
    "util/Cargo.toml": '[package]\nname = "util"\nversion = "0.1.0"\n',
    "util/src/lib.rs": "pub fn helper() {}\n",
    "src/main.rs": "use std::fs;\nuse regex_automata::meta::Regex;\nuse util::helper;\n\nfn main() {\n"
                   "    let re = Regex::new(\"a\");\n    let v = serde_json::to_string(&1);\n    helper();\n}\n",
    "Gemfile": 'source "https://rubygems.org"\ngem "nokogiri"\ngem "rack-test"\n',
    "Gemfile.lock": "GEM\n  remote: https://rubygems.org/\n  specs:\n    nokogiri (1.15.4)\n    rack (3.0.8)\n"
                    "    rack-test (2.1.0)\n      rack (>= 1.3)\n\nPLATFORMS\n  ruby\n\nDEPENDENCIES\n  nokogiri\n"
                    "  rack-test\n\nBUNDLED WITH\n   2.4.10\n",
    "app/page.rb": "require 'nokogiri'\nrequire 'set'\n\nNokogiri::HTML(body).css('a')\nRack::Test::Session.new(app)\n",
    "composer.json": '{"require": {"monolog/monolog": "^3.0"}}\n',
    "composer.lock": json.dumps({"packages": [
        {"name": "monolog/monolog", "version": "3.5.0", "autoload": {"psr-4": {"Monolog\\": "src/Monolog"}}}]}),
    "web/log.php": "<?php\nuse Monolog\\Logger;\nuse App\\Own;\n$log = new Logger('app');\nOwn::run();\n",
    "pom.xml": "<project><modelVersion>4.0.0</modelVersion><groupId>a</groupId><artifactId>b</artifactId>"
               "<version>1</version><dependencies><dependency><groupId>com.fasterxml.jackson.core</groupId>"
               "<artifactId>jackson-databind</artifactId><version>2.15.0</version></dependency></dependencies>"
               "</project>\n",
    "src/main/java/a/App.java": "package a;\nimport com.fasterxml.jackson.databind.ObjectMapper;\n"
                                "import java.util.List;\nclass App { Object m = ObjectMapper.builder(); }\n",
    "svc/Svc.csproj": '<Project Sdk="Microsoft.NET.Sdk"><ItemGroup><PackageReference Include="Newtonsoft.Json" '
                      'Version="13.0.1" /></ItemGroup></Project>\n',
    "svc/Program.cs": "using System;\nusing J = Newtonsoft.Json.JsonConvert;\n\n"
                      "Console.WriteLine(J.SerializeObject(1));\n",
}


def _summary(context: Any) -> dict[str, tuple[bool, str | None, list[tuple[str, int, str, str]]]]:
    return {key: (group.first_party, group.via, [(s.file, s.line, s.symbol, s.kind) for s in group.sites])
            for key, group in context.call_sites.items()}


def test_gather_groups_sites_by_locked_package(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    probes = [DependenciesProbe(), CallSitesProbe()]
    found = _summary(gather(repo, probes=probes))
    assert found == {
        "Newtonsoft.Json": (False, VIA["csharp"], [
            ("svc/Program.cs", 2, "Newtonsoft.Json.JsonConvert", "import"),
            ("svc/Program.cs", 4, "Newtonsoft.Json.JsonConvert.SerializeObject", "use")]),
        "com.fasterxml.jackson.core:jackson-databind": (False, VIA["jvm"], [
            ("src/main/java/a/App.java", 2, "com.fasterxml.jackson.databind.ObjectMapper", "import"),
            ("src/main/java/a/App.java", 4, "com.fasterxml.jackson.databind.ObjectMapper.builder", "use")]),
        "monolog/monolog": (False, VIA["php"], [
            ("web/log.php", 2, "Monolog\\Logger", "import"), ("web/log.php", 4, "Monolog\\Logger", "use")]),
        "nokogiri": (False, VIA["ruby"], [
            ("app/page.rb", 1, "nokogiri", "import"), ("app/page.rb", 4, "Nokogiri::HTML", "use")]),
        "rack-test": (False, VIA["ruby"], [("app/page.rb", 5, "Rack::Test::Session.new", "use")]),
        "regex-automata": (False, VIA["rust"], [
            ("src/main.rs", 2, "regex_automata::meta::Regex", "import"),
            ("src/main.rs", 6, "regex_automata::meta::Regex::new", "use")]),
        "serde_json": (False, VIA["rust"], [("src/main.rs", 7, "serde_json::to_string", "use")]),
        "util": (True, VIA["rust"], [  # a path dependency: the workspace's own crate
            ("src/main.rs", 3, "util::helper", "import"), ("src/main.rs", 8, "util::helper", "use")]),
    }


def test_an_edit_updates_incrementally_as_a_fresh_gather(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    probes = [DependenciesProbe(), CallSitesProbe()]
    cache: dict[str, Any] = {}
    first = gather(repo, probes=probes, cache=cache)
    write_files(repo, {"src/main.rs": "fn main() {\n    serde_json::from_str(\"1\");\n}\n",
                       "app/page.rb": "Rack::Test::Session.new(app)\nNokogiri::XML(x)\n",
                       "svc/Program.cs": "using Newtonsoft.Json;\nclass P {}\n",
                       "composer.lock": json.dumps({"packages": [  # a new autoload prefix: the layout changes
                           {"name": "monolog/monolog", "autoload": {"psr-4": {"Monolog\\": "src/Monolog"}}},
                           {"name": "psr/log", "autoload": {"psr-4": {"Psr\\Log\\": "src"}}}]}),
                       "web/log.php": "<?php\nclass L implements \\Psr\\Log\\LoggerInterface {}\n"})
    second = gather(repo, previous=first.model_dump(), probes=probes, cache=json.loads(json.dumps(cache)))
    fresh = gather(repo, probes=probes)
    assert second.call_sites == fresh.call_sites
    assert "regex-automata" not in second.call_sites and "util" not in second.call_sites
    assert [s.symbol for s in second.call_sites["nokogiri"].sites] == ["Nokogiri::XML"]
    assert second.call_sites["nokogiri"].via == VIA["ruby"]
    assert [s.symbol for s in second.call_sites["psr/log"].sites] == ["Psr\\Log\\LoggerInterface"]


def test_a_gather_without_these_languages_imports_none_of_their_grammars(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"app.py": "import yaml\nyaml.safe_load('')\n", "web/a.js": "import _ from 'lodash';\n_.map();\n"})
    program = ("import sys; from pathlib import Path; from repocontext.gather import gather; "
               "from repocontext.probes.call_sites import CallSitesProbe; "
               "print(sorted(gather(Path(sys.argv[1]), probes=[CallSitesProbe()]).call_sites))")
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", program, str(repo)], capture_output=True,
                          text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
    assert done.stdout.strip() == "['lodash', 'yaml']"
    imported = {line.rpartition("|")[2].strip().partition(".")[0] for line in done.stderr.splitlines()
                if line.startswith("import time")}
    assert "tree_sitter_javascript" in imported  # the check can see a grammar's import
    assert imported.isdisjoint({"tree_sitter_rust", "tree_sitter_ruby", "tree_sitter_php", "tree_sitter_java",
                                "tree_sitter_kotlin", "tree_sitter_c_sharp"})


# --- the real corpus -----------------------------------------------------------------------------------------------


def _corpus(name: str, tmp_path: Path, keep: tuple[str, ...] = ()) -> Path:
    """The corpus tree `name`, unpacked (only the paths under `keep` when given); skips when it is absent."""
    tarball = CORPUS / f"{name}.tar.gz"
    if not tarball.is_file():
        pytest.skip(f"the real-world corpus is absent ({tarball})")
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers()
                   if not keep or any(m.name.partition("/")[2].startswith(k) for k in keep)]
        tar.extractall(tmp_path, members=members, filter="data")
    return tmp_path / name


def _gather_corpus(root: Path) -> Any:
    return gather(root, probes=[DependenciesProbe(), CallSitesProbe()])


def test_ripgrep_crates(tmp_path: Path) -> None:
    context = _gather_corpus(_corpus("ripgrep", tmp_path))
    groups = context.call_sites
    assert groups["regex-automata"].via == VIA["rust"] and not groups["regex-automata"].first_party
    assert ("crates/globset/src/lib.rs", "regex_automata::meta::Regex") in {
        (s.file, s.symbol) for s in groups["regex-automata"].sites}
    assert groups["grep-matcher"].first_party and groups["grep-matcher"].aliases == []  # a workspace crate
    assert "std" not in groups and "crate" not in groups


def test_bookstack_composer_packages(tmp_path: Path) -> None:
    context = _gather_corpus(_corpus("BookStack", tmp_path, keep=("composer.", "app/Http/", "app/Util/")))
    groups = context.call_sites
    assert groups["laravel/framework"].via == VIA["php"]
    assert any(s.symbol.startswith("Illuminate\\Http\\Request") for s in groups["laravel/framework"].sites)
    assert not any(key.startswith("BookStack") for key in groups)  # the app's own namespace is no package


def test_spring_petclinic_maven_guesses(tmp_path: Path) -> None:
    context = _gather_corpus(_corpus("spring-petclinic", tmp_path))
    groups = context.call_sites
    assert groups["jakarta.xml.bind:jakarta.xml.bind-api"].via == VIA["jvm"]
    assert {s.symbol for s in groups["jakarta.xml.bind:jakarta.xml.bind-api"].sites} >= {
        "jakarta.xml.bind.annotation.XmlElement"}
    everything = {s.symbol for group in groups.values() for s in group.sites}
    assert not any(symbol.startswith("java.") for symbol in everything)
    assert "org.springframework.boot.SpringApplication.run" not in everything  # starters tie: no guess


def test_eshoponweb_nuget_namespaces(tmp_path: Path) -> None:
    context = _gather_corpus(_corpus("eShopOnWeb", tmp_path))
    groups = context.call_sites
    assert groups["Ardalis.GuardClauses"].via == VIA["csharp"]
    assert all(s.symbol.startswith("Ardalis.GuardClauses") for s in groups["Ardalis.GuardClauses"].sites)
    assert "System" not in groups


def test_openstreetmap_gems(tmp_path: Path) -> None:
    context = _gather_corpus(_corpus("openstreetmap-website", tmp_path, keep=("Gemfile", "app/controllers/")))
    groups = context.call_sites
    assert groups["activerecord"].via == VIA["ruby"]
    assert any(s.symbol == "ActiveRecord::RecordNotFound" for s in groups["activerecord"].sites)


# --- the report's evidence ---------------------------------------------------------------------------------------


def test_evidence_marks_sites_of_a_guessed_package_and_matches_rust_paths() -> None:
    from planner.bundle.model import Bundle
    from planner.chain.work import WorkItem
    from subgraphs.vulnerability_remediation.evidence import call_sites, calls
    from subgraphs.vulnerability_remediation.report import _site

    def group(module: str, via: str, symbol: str) -> dict[str, Any]:
        return {"module": module, "aliases": [module], "first_party": False, "via": via,
                "sites": [{"file": "a", "line": 1, "col": 0, "symbol": symbol, "kind": "import"},
                          {"file": "a", "line": 2, "col": 4, "symbol": symbol + ".x", "kind": "use"}]}

    artifact = "com.fasterxml.jackson.core:jackson-databind"
    bundle = Bundle.model_construct(slices={
        f"must:0:call_sites.{artifact}": group(artifact, VIA["jvm"], "com.fasterxml.jackson.databind.ObjectMapper"),
        "must:1:call_sites.smallvec": group("smallvec", VIA["rust"], "smallvec::SmallVec")})
    jackson = call_sites(bundle, WorkItem(id="1", title="t", data={"package": artifact, "ecosystem": "Maven"}))
    assert [(s["symbol"], s.get("guessed")) for s in jackson] == [
        ("com.fasterxml.jackson.databind.ObjectMapper.x", True)]
    assert "a guess" in _site(jackson[0])
    smallvec = call_sites(bundle, WorkItem(id="2", title="t", data={"package": "smallvec", "ecosystem": "crates.io"}))
    assert [s.get("guessed") for s in smallvec] == [None] and "guess" not in _site(smallvec[0])
    assert calls({"symbol": "smallvec::SmallVec::insert_many", "kind": "use"}, ["smallvec::SmallVec"])
    assert not calls({"symbol": "smallvec::SmallVecX", "kind": "use"}, ["smallvec::SmallVec"])


def test_rust_paths_among_a_macros_tokens() -> None:
    source = ('use regex::Regex;\n'
              'fn f() { println!("{}", serde_json::to_string(&x)?); vec![Regex, other::Regex, v.Regex]; }\n')
    assert rows(scan_rust(source)) == [
        ("regex", "regex::Regex", 1, 4, "import"), ("serde_json", "serde_json::to_string", 2, 24, "use"),
        ("regex", "regex::Regex", 2, 58, "use"), ("other", "other::Regex", 2, 65, "use")]
