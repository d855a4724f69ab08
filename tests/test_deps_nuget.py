"""NuGet parsers: MSBuild project files and Directory.*.props, packages.config, packages.lock.json; and the
dependencies probe reading them in a real repository (NuGet evaluated, nothing "not evaluated")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from repocontext.deps.nuget import parse_msbuild, parse_packages_config
from repocontext.deps.nuget_lock import parse_packages_lock
from repocontext.deps.nuget_ranges import lowest_applicable, parse_range
from repocontext.osv.versions import normalize_name

PROJECT = """\ufeff<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <AspNetVersion>8.0.1</AspNetVersion>
    <AspNetVersion>8.0.2</AspNetVersion>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Npgsql" Version="4.1.9" />
    <PackageReference Include="Microsoft.AspNetCore.Mvc.Testing" Version="$(AspNetVersion)" />
    <PackageReference Include="Serilog">
      <Version>[3.1.0, 4.0)</Version>
    </PackageReference>
    <PackageReference Include="Azure.Identity" VersionOverride="1.10.4" />
    <PackageReference Include="Polly" Version="$(PollyVersion)" />
    <PackageReference Include="MediatR" />
    <PackageReference Include="Floaty" Version="1.2.*" />
    <PackageReference Include="A;B" Version="(1.0,)" />
  </ItemGroup>
</Project>
"""


def _by_name(parsed):
    return {d.name: d for d in parsed.deps}


def test_project_versions_lines_and_constraints() -> None:
    parsed = parse_msbuild("src/Web/Web.csproj", PROJECT)
    deps = _by_name(parsed)
    assert [(d.name, d.version, d.constraint, d.line) for d in parsed.deps] == [
        ("Npgsql", "4.1.9", "4.1.9", 8),
        ("Microsoft.AspNetCore.Mvc.Testing", "8.0.2", "$(AspNetVersion)", 9),  # the last definition wins
        ("Serilog", "3.1.0", "[3.1.0, 4.0)", 11),  # the child element's line: where the version is written
        ("Azure.Identity", "1.10.4", "1.10.4", 13),
        ("Polly", None, "$(PollyVersion)", 14),
        ("MediatR", None, None, 15),
        ("Floaty", None, "1.2.*", 16),
        ("A", None, "(1.0,)", 17),
        ("B", None, "(1.0,)", 17),
    ]
    assert {d.ecosystem for d in parsed.deps} == {"NuGet"} and not any(d.dev for d in parsed.deps)
    assert deps["Npgsql"].section == "PackageReference" and deps["Npgsql"].kind == "manifest"
    assert [(i.line, "PollyVersion" in i.message) for i in parsed.issues] == [(14, True)]


def test_test_projects_are_dev() -> None:
    sdk = '<Project><ItemGroup><PackageReference Include="microsoft.net.test.sdk" Version="17.9.0" />' \
          '<PackageReference Include="xunit" Version="2.7.0" /></ItemGroup></Project>'
    flagged = ('<Project><PropertyGroup><IsTestProject>True</IsTestProject></PropertyGroup>'
               '<ItemGroup><PackageReference Include="xunit" Version="2.7.0" /></ItemGroup></Project>')
    assert all(d.dev for d in parse_msbuild("t/T.csproj", sdk).deps)
    assert all(d.dev for d in parse_msbuild("t/T.fsproj", flagged).deps)
    assert not any(d.dev for d in parse_msbuild("Directory.Build.props", sdk).deps)  # props serve every project


def test_central_package_versions() -> None:
    text = Path(__file__).parent.joinpath("fixtures", "nuget", "Directory.Packages.props").read_text()
    deps = _by_name(parse_msbuild("Directory.Packages.props", text))
    assert (deps["System.Text.Json"].version, deps["System.Text.Json"].section) == ("8.0.3", "PackageVersion")
    assert deps["Microsoft.AspNetCore.Identity.UI"].version == "8.0.2"
    assert deps["Microsoft.AspNetCore.Identity.UI"].constraint == "$(AspNetVersion)"
    assert deps["StyleCop.Analyzers"].section == "GlobalPackageReference"


def test_bad_xml_is_one_issue_with_its_line() -> None:
    parsed = parse_msbuild("a.csproj", "<Project>\n  <ItemGroup>\n</Project>\n")
    assert not parsed.deps and [(i.line, i.level) for i in parsed.issues] == [(3, "error")]
    bomb = ('<?xml version="1.0"?>\n<!DOCTYPE p [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]>\n'
            '<Project><ItemGroup><PackageReference Include="X" Version="&b;" /></ItemGroup></Project>')
    parsed = parse_msbuild("b.csproj", bomb)
    assert not parsed.deps and "entity" in parsed.issues[0].message


def test_packages_config() -> None:
    text = ('<?xml version="1.0" encoding="utf-8"?>\n<packages>\n'
            '  <package id="Newtonsoft.Json" version="12.0.3" targetFramework="net472" />\n'
            '  <package id="StyleCop.Analyzers" version="1.1.118" developmentDependency="true" />\n</packages>\n')
    parsed = parse_packages_config("App/packages.config", text)
    assert [(d.name, d.version, d.line, d.dev, d.section) for d in parsed.deps] == [
        ("Newtonsoft.Json", "12.0.3", 3, False, "packages.config"),
        ("StyleCop.Analyzers", "1.1.118", 4, True, "packages.config")]


LOCK = {"version": 1, "dependencies": {
    "net8.0": {
        "Microsoft.EntityFrameworkCore.SqlServer": {
            "type": "Direct", "requested": "[8.0.0, )", "resolved": "8.0.0", "contentHash": "x",
            "dependencies": {"microsoft.data.sqlclient": "5.1.1"}},
        "Microsoft.Data.SqlClient": {"type": "Transitive", "resolved": "5.1.1", "contentHash": "y",
                                     "dependencies": {"System.Text.Json": "4.7.2"}},
        "System.Text.Json": {"type": "CentralTransitive", "requested": "[8.0.5, )", "resolved": "8.0.5"},
        "Core": {"type": "Project", "dependencies": {"Ardalis.GuardClauses": "[4.0.1, )"}},
        "Ardalis.GuardClauses": {"type": "Transitive", "resolved": "4.0.1"},
    },
    "net8.0/linux-x64": {
        "Microsoft.Data.SqlClient": {"type": "Transitive", "resolved": "5.1.1"},
        "Microsoft.Data.SqlClient.SNI.runtime": {"type": "Transitive", "resolved": "5.1.1"},
    },
}}


def test_packages_lock_records_chains_and_lines() -> None:
    text = json.dumps(LOCK, indent=2)
    parsed = parse_packages_lock("src/Api/packages.lock.json", text, None)
    got = {(d.name, d.version): d for d in parsed.deps}
    assert sorted(got) == [("Ardalis.GuardClauses", "4.0.1"), ("Microsoft.Data.SqlClient", "5.1.1"),
                           ("Microsoft.Data.SqlClient.SNI.runtime", "5.1.1"),
                           ("Microsoft.EntityFrameworkCore.SqlServer", "8.0.0"), ("System.Text.Json", "8.0.5")]
    ef = got["Microsoft.EntityFrameworkCore.SqlServer", "8.0.0"]
    assert (ef.direct, ef.constraint, ef.kind, ef.section) == (True, "[8.0.0, )", "lockfile", "Direct")
    sql = got["Microsoft.Data.SqlClient", "5.1.1"]
    assert not sql.direct and sql.path == ["Microsoft.EntityFrameworkCore.SqlServer", "Microsoft.Data.SqlClient"]
    assert text.splitlines()[sql.line - 1].strip().startswith('"Microsoft.Data.SqlClient"')
    assert sql.line < got["System.Text.Json", "8.0.5"].line  # the first framework's entry
    assert got["Ardalis.GuardClauses", "4.0.1"].path == ["Core", "Ardalis.GuardClauses"]  # through the project
    assert got["System.Text.Json", "8.0.5"].section == "CentralTransitive"
    assert not any(d.dev for d in parsed.deps)


def test_packages_lock_of_a_test_project_is_dev() -> None:
    lock = {"version": 1, "dependencies": {"net8.0": {
        "Microsoft.NET.Test.Sdk": {"type": "Direct", "requested": "[17.9.0, )", "resolved": "17.9.0",
                                   "dependencies": {"Microsoft.CodeCoverage": "17.9.0"}},
        "Microsoft.CodeCoverage": {"type": "Transitive", "resolved": "17.9.0"}}}}
    text = json.dumps(lock, indent=2)
    assert all(d.dev for d in parse_packages_lock("t/packages.lock.json", text, None).deps)
    declared = {"Microsoft.NET.Test.Sdk": False}
    assert not any(d.dev for d in parse_packages_lock("t/packages.lock.json", text, declared).deps)
    broken = parse_packages_lock("t/packages.lock.json", "{\n  \"version\": 1,\n", None)
    assert not broken.deps and broken.issues[0].level == "error"


def test_ranges_and_names() -> None:
    assert [lowest_applicable(s) for s in ("1.0", "[1.0]", "[1.0, 2.0)", "(1.0,)", "(,2.0]", "1.*", "*", "x y")] == [
        "1.0", "1.0", "1.0", None, None, None, None, None]
    interval = parse_range("[1.0, 2.0)")
    assert [interval.admits(v) for v in ("0.9", "1.0", "1.5.3", "2.0", "2.0.1")] == [False, True, True, False, False]
    assert parse_range("(1.0,2.0]").admits("2.0") and not parse_range("(1.0,2.0]").admits("1.0")
    assert parse_range("1.2.*").admits("1.2.9") and not parse_range("1.2.*").admits("1.3.0")
    assert not parse_range("1.2.*").admits("1.2.9-beta") and parse_range("1.2.*-*").admits("1.2.9-beta")
    assert normalize_name("NuGet", " Newtonsoft.Json ") == normalize_name("nuget", "newtonsoft.json")


def test_dependencies_probe_reads_dotnet_files(tmp_path: Path) -> None:
    from repocontext.deps.files import EVALUATED_ECOSYSTEMS, classify
    from repocontext.gather import gather
    from repocontext.probes.dependencies import DependenciesProbe

    files = {"src/Api/Api.csproj": PROJECT, "src/Api/packages.lock.json": json.dumps(LOCK, indent=2),
             "Directory.Packages.props": (Path(__file__).parent / "fixtures" / "nuget" / "Directory.Packages.props")
             .read_text()}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run([*git, *args], cwd=tmp_path, check=True)
    assert "NuGet" in EVALUATED_ECOSYSTEMS
    assert {(classify(p) or ("", None))[1] for p in ("a/B.fsproj", "C.vbproj", "packages.config",
                                                     "Directory.Build.props")} == {"NuGet"}
    deps = gather(tmp_path, probes=[DependenciesProbe()]).dependencies
    found = {d.file for records in deps.values() for d in records if d.ecosystem == "NuGet"}
    assert found == set(files)
    chain = ["Microsoft.EntityFrameworkCore.SqlServer", "Microsoft.Data.SqlClient"]
    assert [(d.file, d.version, d.path) for d in deps["Microsoft.Data.SqlClient"]] == [
        ("src/Api/packages.lock.json", "5.1.1", chain)]
