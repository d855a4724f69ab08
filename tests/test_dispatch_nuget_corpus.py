"""vulnerability-remediation on real .NET trees (eShopOnWeb: central package management; example-voting-app: a
worker's PackageReferences) and on a project with packages.lock.json, through the real CLI, with real GitHub
NuGet advisories (tests/fixtures/advisories/NuGet): the lowest unaffected version, a patch `git apply
--check` accepts, the lockfile's regeneration named, nothing "not evaluated"."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from corpus_dispatch import assert_applies, corpus_tree, dispatch_json

ADVISORIES = Path(__file__).parent / "fixtures" / "advisories" / "NuGet"



def _dispatch(repo: Path, *args: str) -> tuple[int, dict, str]:
    return dispatch_json(repo, ADVISORIES, *args)



def test_eshop_central_versions(tmp_path: Path, home: Path) -> None:
    repo = corpus_tree(tmp_path, "eShopOnWeb.tar.gz")
    code, result, err = _dispatch(repo)
    assert code == 0 and result["status"] == "succeeded", err
    assert result["not_evaluated"] == []
    got = {i["data"]["package"]: (i["data"]["installed"], i["data"]["target"], sorted(i["data"]["advisories"]))
           for i in result["items"]}
    assert got == {"Azure.Identity": (["1.10.4"], "1.11.4", ["GHSA-m5vv-6r4h-3vj9", "GHSA-wvxc-855f-jvrv"]),
                   "System.Text.Json": (["8.0.3"], "8.0.5", ["GHSA-8g4q-xg66-9fp4", "GHSA-hh2w-p6rv-4g7w"])}
    assert_applies(repo, result["patch"])
    assert '+    <PackageVersion Include="System.Text.Json" Version="8.0.5" />' in result["patch"]
    assert result["patch"].count("+++ ") == 1  # the projects' version-less PackageReferences are left
    one_code, one, _ = _dispatch(repo, "--input", "package=system.text.json")
    assert one_code == 0 and [i["data"]["package"] for i in one["items"]] == ["System.Text.Json"]


def test_voting_app_worker(tmp_path: Path, home: Path) -> None:
    repo = corpus_tree(tmp_path, "example-voting-app.tar.gz")
    code, result, err = _dispatch(repo, "--input", "package=Npgsql")
    assert code == 0 and result["status"] == "succeeded", err
    item, = result["items"]
    assert (item["data"]["installed"], item["data"]["target"]) == (["4.1.9"], "4.1.13")  # same line, not 8.0.3
    assert_applies(repo, result["patch"])
    assert '+    <PackageReference Include="Npgsql" Version="4.1.13" />' in result["patch"]
    code, result, err = _dispatch(repo, "--input", "package=Newtonsoft.Json")  # 13.0.1 is the fixed release
    assert code == 0 and result["status"] in ("no_changes", "not_affected"), err


PROJECT = """<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <RestorePackagesWithLockFile>true</RestorePackagesWithLockFile>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Microsoft.EntityFrameworkCore.SqlServer" Version="8.0.0" />
    <PackageReference Include="System.Text.Json" Version="8.0.3" />
  </ItemGroup>
</Project>
"""
LOCK = {"version": 1, "dependencies": {"net8.0": {
    "Microsoft.EntityFrameworkCore.SqlServer": {
        "type": "Direct", "requested": "[8.0.0, )", "resolved": "8.0.0", "contentHash": "x",
        "dependencies": {"Microsoft.Data.SqlClient": "5.1.1"}},
    "System.Text.Json": {"type": "Direct", "requested": "[8.0.3, )", "resolved": "8.0.3", "contentHash": "y"},
    "Microsoft.Data.SqlClient": {"type": "Transitive", "resolved": "5.1.1", "contentHash": "z"}}}}


def test_lockfile_needs_dotnet_restore(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo({"src/Api/Api.csproj": PROJECT, "src/Api/packages.lock.json": json.dumps(LOCK, indent=2)})
    code, result, err = _dispatch(repo)
    assert code == 7 and result["status"] == "needs_regeneration", err
    fixes = {i["data"]["package"]: (i["data"]["target"], [b["fix"] for b in i["blockers"]]) for i in result["items"]}
    assert fixes == {"Microsoft.Data.SqlClient": ("5.1.3", ["cd src/Api && dotnet restore --force-evaluate"]),
                     "System.Text.Json": ("8.0.5", ["cd src/Api && dotnet restore --force-evaluate"])}
    sql = next(i for i in result["items"] if i["data"]["package"] == "Microsoft.Data.SqlClient")
    assert any('<PackageReference Include="Microsoft.Data.SqlClient" Version="5.1.3" />' in s
               for s in sql["plan_data"]["skipped"])
    assert_applies(repo, result["patch"])
    assert "packages.lock.json" not in result["patch"]
    if shutil.which("dotnet") is None:  # --regenerate ends where the tool is missing, naming it
        code, again, err = _dispatch(repo, "--input", "package=System.Text.Json", "--regenerate")
        assert code == 7 and again["status"] == "needs_regeneration", err
        ran, = again["items"][0]["plan_data"]["regeneration"]
        assert (ran["command"], ran["status"]) == ("dotnet restore --force-evaluate", "failed")
        assert "dotnet is not installed" in ran["detail"]
