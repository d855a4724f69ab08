"""Everything downstream of the probes, on crates.io, RubyGems, Packagist, Maven/Gradle and NuGet repositories
built from the real corpus trees (the few files each needs, one version moved back where the tree as published
is clean) with real advisories: a portfolio over them through the CLI (report as text, CSV and JSON, run
provenance), the UI's portfolio and run pages, the MCP tools, hot views on a real Redis, `advisories sync`'s
default ecosystems from a local bucket, and the distroless class on their Dockerfiles."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from conftest import run_cli
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from planner.advisories.sync import DEFAULT_ECOSYSTEMS
from planner.policy.kinds import kind_of
from repocontext.deps.files import EVALUATED_ECOSYSTEMS
from tests.datapaths import CORPUS, SHARED

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "advisories"
ADVISORIES = [SHARED / "advisories" / e for e in ("crates.io", "RubyGems", "Packagist")]
ADVISORIES += [FIXTURES / "Maven", FIXTURES / "NuGet"]
_GIT = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "core.autocrlf=false"]
DATASTORE = "core/datastore/src/main/kotlin/com/google/samples/apps/nowinandroid/core/datastore/"

# tarball -> (the files a small repository takes from it, {file: (old, new)} to move a version back)
TREES: dict[str, tuple[list[str], dict[str, tuple[str, str]]]] = {
    "ripgrep": (["Cargo.toml", "Cargo.lock", "crates/matcher/Cargo.toml", "crates/matcher/tests/util.rs"],
                {"Cargo.lock": ('name = "regex"\nversion = "1.13.1"', 'name = "regex"\nversion = "1.5.4"')}),
    "openstreetmap-website": (["Gemfile", "Gemfile.lock", "Dockerfile", "Rakefile"],
                              {"Gemfile.lock": ("    rack (3.2.7)\n", "    rack (3.2.5)\n")}),
    "BookStack": (["composer.json", "composer.lock", "dev/docker/Dockerfile"], {}),
    "nowinandroid": (["gradle/libs.versions.toml", "settings.gradle.kts", "core/datastore-proto/build.gradle.kts",
                      "core/datastore/build.gradle.kts", DATASTORE + "UserPreferencesSerializer.kt"],
                     {"gradle/libs.versions.toml": ('protobuf = "4.29.2"', 'protobuf = "4.28.1"')}),
    "eShopOnWeb": (["Directory.Packages.props", "src/ApplicationCore/ApplicationCore.csproj", "src/Web/Web.csproj",
                    "src/Web/Dockerfile", "Everything.sln"], {}),
}
pytestmark = pytest.mark.skipif(not all((CORPUS / f"{t}.tar.gz").is_file() for t in TREES)
                                or not all(a.is_dir() for a in ADVISORIES),
                                reason="the corpus tarballs or the shared advisories are absent")


def _small_repo(into: Path, tree: str) -> Path:
    files, edits = TREES[tree]
    with tarfile.open(CORPUS / f"{tree}.tar.gz") as tar:
        tar.extractall(into, members=[tar.getmember(f"{tree}/{f}") for f in files], filter="data")
    repo = into / tree
    for name, (old, new) in edits.items():
        text = (repo / name).read_text()
        assert text.count(old) == 1, (name, old)
        (repo / name).write_text(text.replace(old, new))
    for step in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "corpus"]):
        subprocess.run([*_GIT, *step], cwd=repo, check=True, capture_output=True)
    return repo


def _env(home: Path, **more: str) -> dict[str, str]:
    return {"PLANNER_HOME": str(home), "PLANNER_DAEMON": "off", "PLANNER_REDIS_URL": "off",
            "PLANNER_ADVISORIES": os.pathsep.join(map(str, ADVISORIES)), "PLANNER_TASK_CLASS_PATH": "", **more}


def _cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    done = run_cli(*args, env=_env(home, **env))
    assert "Traceback" not in done.stderr, done.stderr
    return done


class Fleet:
    def __init__(self, home: Path, repos: Path, portfolio: dict[str, Any]) -> None:
        self.home, self.repos, self.portfolio = home, repos, portfolio
        self.by_repo = {Path(r["repo"]).name: r for r in portfolio["repositories"]}

    def report(self, tree: str) -> str:
        return (self.home / "runs" / str(self.by_repo[tree]["run_id"]) / "report.md").read_text()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """One portfolio over the five small repositories (the slow part, shared by the tests below)."""
    base = tmp_path_factory.mktemp("fleet")
    repos, home = base / "repos", base / "home"
    repos.mkdir()
    for tree in TREES:
        _small_repo(repos, tree)
    done = _cli(home, "portfolio", "dispatch", "vulnerability-remediation", "--repos", str(repos), "--workers", "2")
    portfolio_id = done.stdout.split()[1]
    shown = json.loads(_cli(home, "portfolio", "report", portfolio_id, "--json").stdout)
    return Fleet(home, repos, shown)


def _items(repo: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(i["id"]): i for i in repo.get("items_detail") or [] if i["id"]}


def test_the_portfolio_report_names_each_ecosystem_its_versions_and_commands(fleet: Fleet) -> None:
    rows = fleet.by_repo
    assert rows["ripgrep"]["status"] == "needs_regeneration"
    assert _items(rows["ripgrep"])["crates.io:regex"]["columns"] == {
        "package": "regex", "from": "1.5.4", "to": "1.5.5", "advisories": "RUSTSEC-2022-0013"}
    rack = _items(rows["openstreetmap-website"])["RubyGems:rack"]
    assert (rack["columns"]["from"], rack["columns"]["to"]) == ("3.2.5", "3.2.6")
    assert rack["fix"] == "bundle lock --update rack --conservative"
    protobuf = _items(rows["nowinandroid"])["Maven:com.google.protobuf:protobuf-kotlin-lite"]
    assert (protobuf["status"], protobuf["columns"]["to"]) == ("succeeded", "4.28.2")
    nuget = _items(rows["eShopOnWeb"])
    assert nuget["NuGet:System.Text.Json"]["columns"]["to"] == "8.0.5"
    assert nuget["NuGet:Azure.Identity"]["columns"]["to"] == "1.11.4"
    bookstack = rows["BookStack"]
    if "Packagist" in EVALUATED_ECOSYSTEMS:
        assert bookstack["status"] != "not_evaluated" and all(i.startswith("Packagist:") for i in _items(bookstack))
    else:  # found, and said not read, never a green "nothing to do"
        assert bookstack["status"] == "not_evaluated"
        assert {i["where"] for i in bookstack["items_detail"]} == {"composer.json", "composer.lock"}
    text = _cli(fleet.home, "portfolio", "report", fleet.portfolio["id"], COLUMNS="250").stdout
    # the tree is rewound in Cargo.lock only: crates/matcher still requires regex 1.9.5, so a `--precise 1.5.5`
    # would be refused by cargo; the lock is brought back in step with its manifests instead
    assert "cargo update --workspace" in text and "bundle lock --update rack --conservative" in text
    table = _cli(fleet.home, "portfolio", "report", fleet.portfolio["id"], "--csv").stdout
    ids = {line.split(",")[3] for line in table.splitlines()[1:]}
    header = table.splitlines()[0].split(",")
    assert len(header) == len(set(header)) and header[-1] == "advisory_source", header
    assert {"crates.io:regex", "RubyGems:rack", "NuGet:System.Text.Json",
            "Maven:com.google.protobuf:protobuf-kotlin-lite"} <= ids


def test_a_run_shows_its_provenance_with_the_lockfile_excerpt(fleet: Fleet) -> None:
    run_id = str(fleet.by_repo["ripgrep"]["run_id"])
    shown = json.loads(_cli(fleet.home, "runs", "show", run_id, "--json").stdout)
    assert shown["status"] == "needs_regeneration"
    record = json.loads(_cli(fleet.home, "provenance", run_id, "--json").stdout)
    (bundle,) = record["item_bundles"]
    assert (bundle["item"], bundle["inputs"]) == ("crates.io:regex", {"package": "regex"})
    statuses = {e["id"]: e["status"] for e in bundle["entries"]}
    assert statuses["must_read:1:dependencies.regex"] == "included"
    assert statuses["must_read:2:Cargo.lock"] == "excerpt"  # the lock's lines, as a lockfile's are


def test_call_sites_under_a_file_that_sets_every_projects_version_are_to_review(fleet: Fleet) -> None:
    """A Cargo workspace's one lock and a Gradle version catalog set the version of every project below them: the
    member crate's and the Gradle module's uses are call sites to review, not "elsewhere"."""
    for tree, site in (("ripgrep", "crates/matcher/tests/util.rs"),
                       ("nowinandroid", DATASTORE + "UserPreferencesSerializer.kt")):
        report = fleet.report(tree)
        review = report.split("#### Call sites to review", 1)[1].split("####", 1)[0]
        assert site in review, report
        assert "Elsewhere in the repository" not in report


@pytest.mark.parametrize(("path", "kind"), [
    ("Cargo.lock", "lockfile"), ("Gemfile.lock", "lockfile"), ("composer.lock", "lockfile"),
    ("packages.lock.json", "lockfile"), ("gradle.lockfile", "lockfile"), ("pom.xml", "manifest"),
    ("src/Web/Web.csproj", "manifest"), ("Directory.Packages.props", "manifest"),
    ("gradle/libs.versions.toml", "manifest"), ("crates/matcher/Cargo.toml", "manifest"), ("Gemfile", "manifest")])
def test_policy_file_kinds(path: str, kind: str) -> None:
    assert kind_of(path) == kind


def test_the_ui_shows_the_portfolio_and_each_run(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    from planner.config import Settings
    from planner.ui.app import create_app

    for name, value in _env(fleet.home).items():
        monkeypatch.setenv(name, value)
    client = TestClient(create_app(Settings.from_env()), raise_server_exceptions=False)
    page = client.get(f"/portfolios/{fleet.portfolio['id']}")
    assert page.status_code == 200
    for shown in ("crates.io:regex", "RubyGems:rack", "NuGet:System.Text.Json", "protobuf-kotlin-lite"):
        assert shown in page.text
    csv = client.get(f"/portfolios/{fleet.portfolio['id']}/report.csv").text
    assert "crates.io:regex" in csv and "Maven:com.google.protobuf:protobuf-kotlin-lite" in csv
    for tree, shown in (("ripgrep", "cargo update --workspace"),
                        ("eShopOnWeb", "Directory.Packages.props")):
        body = client.get(f"/runs/{fleet.by_repo[tree]['run_id']}").text
        assert shown in body and "Traceback" not in body


def test_the_mcp_tools_serve_a_nuget_and_a_cargo_repository(fleet: Fleet) -> None:
    anyio.run(_mcp, fleet)


async def _mcp(fleet: Fleet) -> None:
    env = {**os.environ, **_env(fleet.home), "PYTHONPATH": str(ROOT), "PLANNER_REPO_ROOTS": str(fleet.repos)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "planner", "mcp"], env=env, cwd=ROOT)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        context = await session.call_tool("get_agent_context", {
            "task_class": "vulnerability-remediation", "repo": str(fleet.repos / "ripgrep"),
            "inputs": {"package": "regex"}})
        assert not context.is_error, context.content
        loaded = {e["id"]: e["status"] for e in (context.structured_content or {})["entries"]}
        assert loaded["must_read:0:vulnerabilities[package=regex]"] == "included"
        assert loaded["must_read:2:Cargo.lock"] == "excerpt"
        run = await session.call_tool("dispatch", {"task_class": "vulnerability-remediation",
                                                   "repo": str(fleet.repos / "eShopOnWeb")})
        assert not run.is_error, run.content
        result = run.structured_content or {}
        assert result["status"] == "succeeded"
        assert '-    <PackageVersion Include="System.Text.Json" Version="8.0.3" />' in result["patch"]
        found = await session.call_tool("search_prior_decisions", {"query": "System.Text.Json"})
        assert result["run_id"] in {h["run_id"] for h in (found.structured_content or {})["results"]}


def test_hot_views_on_a_real_redis_serve_maven_and_cargo_slices(fleet: Fleet) -> None:
    url = os.environ.get("PLANNER_TEST_REDIS_URL")
    if not url:
        pytest.skip("PLANNER_TEST_REDIS_URL is not set: hot views need a real Redis server")
    from hotviews_support import clear_namespace

    clear_namespace(url)
    home = fleet.home  # gathered by the portfolio
    for tree, package in (("nowinandroid", "com.google.protobuf:protobuf-kotlin-lite"), ("ripgrep", "regex")):
        repo = fleet.repos / tree
        warmed = _cli(home, "hotviews", "warm", str(repo), PLANNER_REDIS_URL=url)
        assert warmed.returncode == 0 and "backend: redis://" in warmed.stdout + warmed.stderr, warmed.stderr
        bundle = json.loads(_cli(home, "bundle", "vulnerability-remediation", "--repo", str(repo), "-i",
                                 f"package={package}", "--json", PLANNER_REDIS_URL=url).stdout)
        sources = {e["id"]: e.get("source") for e in bundle["entries"] if e["band"] == "must_read"}
        assert sources[f"must_read:1:dependencies.{package}"] == "hot_view", sources
    clear_namespace(url)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def bucket(tmp_path: Path) -> Iterator[str]:
    """osv.dev's bucket layout on a real loopback HTTP server: a few real records per default ecosystem."""
    folder = tmp_path / "bucket"
    sources = {"crates.io": SHARED / "advisories" / "crates.io", "RubyGems": SHARED / "advisories" / "RubyGems",
               "Packagist": SHARED / "advisories" / "Packagist", "npm": SHARED / "advisories" / "npm",
               "Maven": FIXTURES / "Maven", "NuGet": FIXTURES / "NuGet"}
    for ecosystem in DEFAULT_ECOSYSTEMS:
        members: dict[str, bytes] = {}
        if ecosystem == "PyPI":
            members = {f"{p.stem}.json": json.dumps(yaml.safe_load(p.read_text())).encode()
                       for p in sorted((ROOT / "examples" / "advisories").glob("*.yaml"))}
        elif ecosystem == "Go":  # GHSA-m5vv-6r4h-3vj9 names a Go module as well as its NuGet packages
            members = {"GHSA-m5vv-6r4h-3vj9.json": (FIXTURES / "NuGet" / "GHSA-m5vv-6r4h-3vj9.json").read_bytes()}
        else:
            members = {p.name: p.read_bytes() for p in sorted(sources[ecosystem].glob("*.json"))[:3]}
        (folder / ecosystem).mkdir(parents=True)
        with zipfile.ZipFile(folder / ecosystem / "all.zip", "w") as archive:
            for name, data in members.items():
                archive.writestr(name, data)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_advisories_sync_fetches_every_ecosystem_read_and_adds_them_to_an_older_snapshot(
        bucket: str, tmp_path: Path) -> None:
    assert {"crates.io", "RubyGems", "Maven", "NuGet"} <= set(DEFAULT_ECOSYSTEMS)
    assert set(DEFAULT_ECOSYSTEMS) == {e for e in EVALUATED_ECOSYSTEMS if e != "conda"}
    home = tmp_path / "home"
    env = {"PLANNER_ADVISORIES": ""}
    # a snapshot synced when the defaults were PyPI, npm and Go: a bare sync adds what is read since
    first = _cli(home, "advisories", "sync", "--source", bucket, "--ecosystem", "PyPI", "--ecosystem", "npm",
                 "--ecosystem", "Go", **env)
    assert first.returncode == 0, first.stderr
    again = _cli(home, "advisories", "sync", "--source", bucket, **env)
    assert again.returncode == 0, again.stderr
    shown = json.loads(_cli(home, "advisories", "show", "--json", **env).stdout)
    assert sorted(shown["records"]) == sorted(DEFAULT_ECOSYSTEMS)
    listed = _cli(home, "advisories", "show", **env).stdout
    for ecosystem in ("crates.io", "RubyGems", "Maven", "NuGet"):
        assert re.search(rf"\b{re.escape(ecosystem)}\b", listed), listed
    # narrowed below those: kept as chosen
    narrow = tmp_path / "narrow"
    assert _cli(narrow, "advisories", "sync", "--source", bucket, "--ecosystem", "crates.io", **env).returncode == 0
    assert _cli(narrow, "advisories", "sync", "--source", bucket, **env).returncode == 0
    assert sorted(json.loads(_cli(narrow, "advisories", "show", "--json", **env).stdout)["records"]) == ["crates.io"]


def test_distroless_on_ruby_php_and_dotnet_dockerfiles_migrates_or_blocks_with_a_reason(fleet: Fleet) -> None:
    outcomes: dict[str, str] = {}
    for tree in ("openstreetmap-website", "BookStack", "eShopOnWeb"):
        done = _cli(fleet.home, "dispatch", "distroless-migration", "--repo", str(fleet.repos / tree), "--json")
        result = json.loads(done.stdout)
        for item in result["items"]:
            outcomes[f"{tree}/{item['id']}"] = item["status"]
            assert item["status"] in ("succeeded", "blocked"), item
            if item["status"] == "blocked":
                assert item["blockers"] and all(b.get("message") and b.get("file") for b in item["blockers"])
    assert outcomes == {"openstreetmap-website/Dockerfile": "blocked", "BookStack/dev/docker/Dockerfile": "blocked",
                        "eShopOnWeb/src/Web/Dockerfile": "succeeded"}


def test_a_bundle_before_any_gather_loads_each_ecosystems_manifests(fleet: Fleet, tmp_path: Path) -> None:
    """Bootstrap mode (no RepoContext yet) reads the manifests by name: Cargo, Bundler, Gradle and MSBuild's too."""
    for tree, manifests in (("ripgrep", {"Cargo.toml", "crates/matcher/Cargo.toml"}),
                            ("openstreetmap-website", {"Gemfile"}),
                            ("nowinandroid", {"gradle/libs.versions.toml", "core/datastore/build.gradle.kts"}),
                            ("eShopOnWeb", {"Directory.Packages.props", "src/Web/Web.csproj"})):
        shown = json.loads(_cli(tmp_path / "fresh", "bundle", "vulnerability-remediation", "--repo",
                                str(fleet.repos / tree), "--json").stdout)
        assert shown["mode"] == "bootstrap"
        loaded = {e["target"] for e in shown["entries"] if e["status"] == "included"}
        assert manifests <= loaded, (tree, loaded)


def test_the_test_command_of_each_build_is_known_for_verify(fleet: Fleet) -> None:
    """`--verify` runs the repository's test command: each of these builds names its own."""
    expected = {"ripgrep": ("cargo test", "Cargo.toml"), "openstreetmap-website": ("bundle exec rake test", "Rakefile"),
                "nowinandroid": ("gradle test", "settings.gradle.kts"), "eShopOnWeb": ("dotnet test", "Everything.sln")}
    for tree, (command, source) in expected.items():
        context = json.loads(_cli(fleet.home, "gather", str(fleet.repos / tree), "--json").stdout)
        conventions = context["conventions"]
        assert (conventions["test_command"], conventions["test_command_source"]) == (command, source), tree


def test_verify_with_a_test_tool_that_is_absent_is_not_run_rather_than_failed(fleet: Fleet) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed: --verify runs the tests in its sandbox")
    if shutil.which("dotnet") is not None:
        pytest.skip("dotnet is installed here: `dotnet test` would run")
    done = _cli(fleet.home, "dispatch", "vulnerability-remediation", "--repo", str(fleet.repos / "eShopOnWeb"),
                "--verify", "--json")
    result = json.loads(done.stdout)
    assert result["status"] == "succeeded", done.stderr
    check = result["verification"]
    assert (check["command"], check["passed"], check["reason"]) == ("dotnet test", None, "dotnet is not installed")


def test_a_lockfile_only_upgrade_across_a_major_version_is_refused_unless_allowed(tmp_path: Path) -> None:
    """json locked at 1.8.6 (a transitive gem: only Gemfile.lock names it) has its fix in 2.x: the policy's
    `version_bump: minor` blocks the `bundle lock` it would name, as it blocks an edited major bump."""
    repo = tmp_path / "openstreetmap-website"
    with tarfile.open(CORPUS / "openstreetmap-website.tar.gz") as tar:
        tar.extractall(tmp_path, members=[tar.getmember(f"openstreetmap-website/{f}") for f in ("Gemfile",
                                                                                              "Gemfile.lock")],
                       filter="data")
    lock = repo / "Gemfile.lock"
    assert lock.read_text().count("    json (2.21.2)\n") == 1
    lock.write_text(lock.read_text().replace("    json (2.21.2)\n", "    json (1.8.6)\n"))
    for step in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "corpus"]):
        subprocess.run([*_GIT, *step], cwd=repo, check=True, capture_output=True)
    home, rubygems = tmp_path / "home", str(SHARED / "advisories" / "RubyGems")
    done = _cli(home, "dispatch", "vulnerability-remediation", "--repo", str(repo), "-i", "package=json", "--json",
                PLANNER_ADVISORIES=rubygems)
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"]) == (8, "blocked"), done.stderr
    (item,) = result["items"]
    assert item["data"]["installed"] == ["1.8.6"] and item["data"]["target"].startswith("2.")
    assert item["blockers"][0]["kind"] == "policy" and "major bump" in item["blockers"][0]["message"]
    assert item["blockers"][0]["fix"] == "pass --input allow_major=true to allow it"
    allowed = _cli(home, "dispatch", "vulnerability-remediation", "--repo", str(repo), "-i", "package=json",
                   "-i", "allow_major=true", "--json", PLANNER_ADVISORIES=rubygems)
    assert (allowed.returncode, json.loads(allowed.stdout)["status"]) == (7, "needs_regeneration"), allowed.stderr


def test_no_gather_without_a_repocontext_is_not_evaluated_rather_than_nothing_to_do(fleet: Fleet,
                                                                                     tmp_path: Path) -> None:
    """Bootstrap mode parses no manifest or lockfile: a vulnerable Cargo.lock must not read as "no changes"."""
    done = _cli(tmp_path / "fresh", "dispatch", "vulnerability-remediation", "--repo", str(fleet.repos / "ripgrep"),
                "--no-gather", "--json")
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"]) == (2, "not_evaluated"), done.stderr
    assert "no RepoContext" in done.stdout and "planner gather" in done.stdout
