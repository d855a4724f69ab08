"""NuGet edits: the range rule, the MSBuild and packages.config editors (attribute, child element, property,
central version), and packages.lock.json: regenerated with `dotnet restore --force-evaluate`, never edited;
a transitive package gets the pinning hint with its exact id; `still_below` re-reads a regenerated lockfile."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from planner.patch.plan import apply_edits
from repocontext.deps.nuget import parse_msbuild, parse_packages_config
from repocontext.deps.nuget_lock import parse_packages_lock
from subgraphs.vulnerability_remediation.commandline import refusal
from subgraphs.vulnerability_remediation.edits import plan_upgrade
from subgraphs.vulnerability_remediation.edits_nuget import require_nuget
from subgraphs.vulnerability_remediation.lockfiles import still_below


@pytest.mark.parametrize(("spec", "status", "text"), [
    ("8.0.3", "edited", "8.0.5"),  # a bare version is the floor NuGet restores
    ("8.0.5", "fixed", "8.0.5"),
    ("9.0.0", "fixed", "9.0.0"),
    ("[8.0.3]", "edited", "[8.0.5]"),
    ("[8.0.5]", "fixed", "[8.0.5]"),
    ("[8.0.0, 9.0)", "edited", "[8.0.5, 9.0)"),
    ("[8.0.0,9.0]", "edited", "[8.0.5,9.0]"),
    ("(8.0.4,)", "edited", "[8.0.5,)"),  # 8.0.4 excluded, but 8.0.4.1 would not be
    ("(8.0.5,)", "fixed", "(8.0.5,)"),
    ("(,8.0.4]", "edited", "[8.0.5,9.0)"),  # no floor restores the oldest; the cap moves above the target
    ("[7.0, 8.0)", "edited", "[8.0.5, 9.0)"),
    ("8.0.*", "loose", "8.0.*"),  # floats to the newest 8.0.x
    ("7.*", "edited", "8.*"),
    ("*", "loose", "*"),
    ("not a range", "unsupported", "not a range"),
])
def test_range_rule(spec: str, status: str, text: str) -> None:
    result = require_nuget(spec, "8.0.5")
    assert (result.status, result.text) == (status, text)
    assert result.reasons


PROJECT = """<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <JsonVersion>8.0.3</JsonVersion>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="System.Text.Json" Version="$(JsonVersion)" />
    <PackageReference Include="System.Text.Json.Extra" Version="$(JsonVersion)" />
    <PackageReference Include="Npgsql"
                      Version="4.1.9" />
    <PackageReference Include="Azure.Identity">
      <Version>1.10.4</Version>
    </PackageReference>
    <PackageReference Include="MediatR" />
  </ItemGroup>
</Project>
"""


def _plan(package: str, target: str, files: dict[str, str]):
    records = []
    for path, text in files.items():
        if path.endswith("packages.lock.json"):
            records += parse_packages_lock(path, text, None).deps
        elif path.endswith("packages.config"):
            records += parse_packages_config(path, text).deps
        else:
            records += parse_msbuild(path, text).deps
    return plan_upgrade("NuGet", package, target, records, files.get)


def _applied(plan, files: dict[str, str]) -> dict[str, str]:
    return {path: new for path, (_, new) in apply_edits(files.get, plan.edits).items()}


def test_attribute_on_a_later_line_and_child_element() -> None:
    files = {"src/App.csproj": PROJECT}
    plan = _plan("npgsql", "4.1.13", files)
    assert plan.package == "Npgsql"  # matched case-insensitively, written back as the file spells it
    assert [(e.line, e.old, e.new) for e in plan.edits] == [(9, 'Version="4.1.9"', 'Version="4.1.13"')]
    plan = _plan("Azure.Identity", "1.11.4", files)
    assert [(e.line, e.old, e.new) for e in plan.edits] == [(11, "<Version>1.10.4</", "<Version>1.11.4</")]
    new = _applied(plan, files)["src/App.csproj"]
    assert new == PROJECT.replace("<Version>1.10.4</Version>", "<Version>1.11.4</Version>")


def test_property_version_moves_where_it_is_defined() -> None:
    files = {"src/App.csproj": PROJECT}
    plan = _plan("System.Text.Json", "8.0.5", files)
    assert [(e.line, e.old, e.new) for e in plan.edits] == [(3, "<JsonVersion>8.0.3</", "<JsonVersion>8.0.5</")]
    assert any("also sets the version of System.Text.Json.Extra" in n for n in plan.notes)
    elsewhere = PROJECT.replace("    <JsonVersion>8.0.3</JsonVersion>\n", "")
    plan = _plan("System.Text.Json", "8.0.5", {"src/App.csproj": elsewhere})
    assert not plan.edits and "defined outside this file" in plan.skipped[0]


def test_central_version_is_edited_and_the_reference_left() -> None:
    props = ('<Project>\n  <ItemGroup>\n    <PackageVersion Include="MediatR" Version="[12.0.1]" />\n'
             '  </ItemGroup>\n</Project>\n')
    files = {"Directory.Packages.props": props, "src/App.csproj": PROJECT}
    plan = _plan("MediatR", "12.2.0", files)
    assert [(e.file, e.old, e.new) for e in plan.edits] == [
        ("Directory.Packages.props", 'Version="[12.0.1]"', 'Version="[12.2.0]"')]
    assert any("src/App.csproj:13" in n and "Directory.Packages.props" in n for n in plan.notes)


def test_packages_config() -> None:
    text = '<packages>\n  <package id="Newtonsoft.Json" version="12.0.3" targetFramework="net472" />\n</packages>\n'
    plan = _plan("newtonsoft.json", "13.0.1", {"packages.config": text})
    assert [(e.line, e.old, e.new) for e in plan.edits] == [(2, 'version="12.0.3"', 'version="13.0.1"')]
    assert any("HintPath" in n for n in plan.notes)


LOCK = json.dumps({"version": 1, "dependencies": {"net8.0": {
    "Npgsql": {"type": "Direct", "requested": "[4.1.9, )", "resolved": "4.1.9", "contentHash": "x",
               "dependencies": {"System.Text.Json": "4.6.0"}},
    "System.Text.Json": {"type": "Transitive", "resolved": "4.6.0", "contentHash": "y"}}}}, indent=2)


def test_lockfile_is_regenerated_with_dotnet() -> None:
    files = {"src/App.csproj": PROJECT, "src/packages.lock.json": LOCK}
    plan = _plan("Npgsql", "4.1.13", files)
    assert [(a.file, a.cwd, a.command) for a in plan.regenerate] == [
        ("src/packages.lock.json", "src", "dotnet restore --force-evaluate")]
    assert refusal(plan.regenerate[0].command) is None  # dotnet is a lock tool the sandbox runs
    assert all(e.file == "src/App.csproj" for e in plan.edits)  # the lockfile itself is never edited


def test_transitive_package_gets_the_pinning_hint() -> None:
    plan = _plan("system.text.json", "8.0.5", {"src/packages.lock.json": LOCK})
    assert not plan.edits
    assert [a.command for a in plan.regenerate] == ["dotnet restore --force-evaluate"]
    hint = plan.skipped[0]
    assert "via Npgsql → System.Text.Json" in hint
    assert '<PackageVersion Include="System.Text.Json" Version="8.0.5" />' in hint
    assert "<CentralPackageTransitivePinningEnabled>true</CentralPackageTransitivePinningEnabled>" in hint
    assert '<PackageReference Include="System.Text.Json" Version="8.0.5" />' in hint


def test_still_below_reads_a_regenerated_lockfile() -> None:
    below = still_below("src/packages.lock.json", LOCK, "NuGet", "npgsql", "4.1.13")
    assert [(d.name, d.version) for d in below or []] == [("Npgsql", "4.1.9")]
    moved = LOCK.replace('"resolved": "4.1.9"', '"resolved": "4.1.13"')
    assert still_below("src/packages.lock.json", moved, "NuGet", "Npgsql", "4.1.13") == []


@pytest.mark.skipif(shutil.which("dotnet") is None, reason="dotnet is not installed")
def test_dotnet_restore_writes_a_lockfile_the_parser_reads(tmp_path: Path) -> None:
    """The real tool, offline: a project with no package references restores from the SDK alone."""
    (tmp_path / "App.csproj").write_text(
        '<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup><TargetFramework>net8.0</TargetFramework>'
        "<RestorePackagesWithLockFile>true</RestorePackagesWithLockFile></PropertyGroup></Project>\n")
    env = {**os.environ, "DOTNET_CLI_TELEMETRY_OPTOUT": "1", "DOTNET_NOLOGO": "1"}
    done = subprocess.run(["dotnet", "restore", "--force-evaluate"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    parsed = parse_packages_lock("packages.lock.json", (tmp_path / "packages.lock.json").read_text(), None)
    assert parsed.issues == [] and parsed.deps == []
