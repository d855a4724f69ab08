"""crates.io remediation: Cargo.toml edits, Cargo.lock commands and hints, and whole runs through the CLI on a
workspace locking real crates that real RustSec advisories affect, and on the ripgrep corpus tree."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from cargo_fixture import RUSTAPP
from conftest import run_cli
from test_remediation_edits import plan_for, write_back

from subgraphs.vulnerability_remediation.edits_cargo import cargo_capped, cargo_lock_command
from subgraphs.vulnerability_remediation.lockfiles import still_below
from subgraphs.vulnerability_remediation.regenerate import classify
from tests.datapaths import CORPUS, SHARED

ADVISORIES = SHARED / "advisories" / "crates.io"
needs_advisories = pytest.mark.skipif(not ADVISORIES.is_dir(), reason="the shared corpus advisories are absent")


def test_direct_crate_edits_its_requirement_and_names_the_precise_update(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(RUSTAPP)
    plan, after = plan_for(repo, "crates.io", "smallvec", "1.6.1")
    edits = [(e.file, e.line, e.old, e.new) for e in plan.edits]
    assert edits == [("Cargo.toml", 13, 'smallvec = "1.6"', 'smallvec = "1.6.1"')]
    assert 'smallvec = "1.6.1"\n' in after["Cargo.toml"]
    assert [(a.file, a.cwd, a.command) for a in plan.regenerate] == [
        ("Cargo.lock", ".", "cargo update --workspace && cargo update -p smallvec --precise 1.6.1")]
    assert "sha256" in plan.regenerate[0].why


def test_workspace_requirement_is_edited_at_the_root_and_members_inherit_it(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(RUSTAPP)
    plan, _ = plan_for(repo, "crates.io", "regex", "1.5.5")
    assert [(e.file, e.line, e.new) for e in plan.edits] == [("Cargo.toml", 10, 'regex = "1.5.5"')]
    inherited = [n for n in plan.notes if "[workspace.dependencies]" in n]
    assert sorted(n.split(":")[0] for n in inherited) == ["Cargo.toml", "cli/Cargo.toml"]
    assert plan.skipped == []
    assert plan.regenerate[0].command == "cargo update --workspace && cargo update -p regex --precise 1.5.5"


def test_member_requirement_and_an_already_fixed_one(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(RUSTAPP)
    plan, _ = plan_for(repo, "crates.io", "thread_local", "1.1.4")
    edits = [(e.file, e.line, e.old, e.new) for e in plan.edits]
    assert edits == [("cli/Cargo.toml", 8, 'thread_local = "1.1"', 'thread_local = "1.1.4"')]
    assert [a.file for a in plan.regenerate] == ["Cargo.lock"]  # the workspace root's lock, above the member
    fixed, _ = plan_for(repo, "crates.io", "notify", "6.1.0")
    assert fixed.edits == [] and fixed.regenerate == []


def test_transitive_crate_in_its_line_is_moved_by_a_precise_update(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(RUSTAPP)
    plan, _ = plan_for(repo, "crates.io", "crossbeam-channel", "0.5.15")
    assert plan.edits == []
    assert plan.regenerate[0].command == "cargo update -p crossbeam-channel --precise 0.5.15"
    assert "notify → crossbeam-channel" in plan.skipped[0]
    assert "`cargo update -p crossbeam-channel@0.5.12 --precise 0.5.15` at the repository root" in plan.skipped[0]


def test_transitive_crate_outside_its_line_names_the_parent(make_repo: Callable[..., Path]) -> None:
    """time 0.1.43 → 0.2.0: chrono's `^0.1` requirement excludes it, so no command that cannot reach it is named."""
    repo = make_repo(RUSTAPP)
    plan, _ = plan_for(repo, "crates.io", "time", "0.2.0")
    assert plan.edits == [] and plan.regenerate == []
    assert "--precise" not in " ".join(plan.skipped)
    assert "chrono most likely requires time 0.1.x" in plan.skipped[0] and "upgrade chrono" in plan.skipped[0]


def test_a_lock_out_of_step_with_its_requirement_names_the_resync(make_repo: Callable[..., Path]) -> None:
    """regex 0.2.11 locked under `regex = "1.9.5"`: the requirement already excludes every affected version and
    no crate caps it (the root package's own requirement is the manifest's), so `cargo update --workspace`
    brings the lock back in step; never a `--precise` the requirement refuses, nor a parent to upgrade."""
    lock = ('version = 3\n\n[[package]]\nname = "app"\nversion = "0.1.0"\ndependencies = [\n "regex",\n]\n\n'
            '[[package]]\nname = "regex"\nversion = "0.2.11"\n'
            'source = "registry+https://github.com/rust-lang/crates.io-index"\n')
    repo = make_repo({"Cargo.toml": '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\nregex = "1.9.5"\n',
                      "src/main.rs": "fn main() {}\n", "Cargo.lock": lock})
    plan, _ = plan_for(repo, "crates.io", "regex", "1.5.5")
    assert plan.edits == [] and plan.skipped == []
    assert [(a.file, a.command) for a in plan.regenerate] == [("Cargo.lock", "cargo update --workspace")]
    assert "which the requirement `1.9.5` at Cargo.toml:6 does not allow" in plan.regenerate[0].why
    assert sum("must be regenerated" in n for n in plan.notes) == 1


def test_several_locked_versions_name_the_stale_one() -> None:
    lock = ('[[package]]\nname = "app"\nversion = "0.1.0"\ndependencies = [\n "a",\n "syn 1.0.109",\n]\n\n'
            '[[package]]\nname = "a"\nversion = "1.0.0"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n'
            'dependencies = [\n "syn 2.0.10",\n]\n\n'
            '[[package]]\nname = "syn"\nversion = "1.0.109"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n\n'
            '[[package]]\nname = "syn"\nversion = "2.0.10"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n')
    def command(target: str, edited: bool) -> str:
        return cargo_lock_command("Cargo.lock", "syn", target, edited, lock)

    assert command("2.0.20", False) == "cargo update -p syn@2.0.10 --precise 2.0.20"
    assert command("1.0.110", False) == "cargo update -p syn@1.0.109 --precise 1.0.110"
    assert command("1.0.110", True) == "cargo update --workspace"  # the edited requirement decides
    assert cargo_capped(lock, "syn", "3.0.0")  # no `^2` or `^1` requirement admits 3.0.0: no command named
    assert not cargo_capped(lock, "syn", "2.0.20") and not cargo_capped(lock, "syn", "1.0.110")
    assert command("1.0.0", True) == "cargo update --workspace"
    stale = still_below("Cargo.lock", lock, "crates.io", "syn", "2.0.0")
    assert [d.version for d in stale or []] == ["1.0.109"]


def _dispatch(repo: Path, *args: str) -> tuple[int, dict, str]:
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(ADVISORIES),
                   "--json", *args, env={"PLANNER_DAEMON": "off"})
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


@needs_advisories
def test_run_on_a_workspace_with_real_advisories(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo(RUSTAPP)
    code, result, err = _dispatch(repo)
    assert code == 8 and result["status"] == "blocked", err  # the worst item: time, capped by chrono
    assert result["not_evaluated"] == []
    got = {i["data"]["package"]: (i["data"]["installed"], i["data"]["target"], i["data"]["advisories"])
           for i in result["items"]}
    assert got == {
        "chrono": (["0.4.19"], "0.4.20", ["RUSTSEC-2020-0159"]),
        "crossbeam-channel": (["0.5.12"], "0.5.15", ["RUSTSEC-2025-0024"]),
        "regex": (["1.5.4"], "1.5.5", ["RUSTSEC-2022-0013"]),
        "smallvec": (["1.6.0"], "1.6.1", ["RUSTSEC-2021-0003"]),
        "thread_local": (["1.1.3"], "1.1.4", ["RUSTSEC-2022-0006"]),
        "time": (["0.1.43"], "0.2.0", ["RUSTSEC-2020-0071"]),
    }
    fixes = {i["data"]["package"]: [b["fix"] for b in i["blockers"]] for i in result["items"]}
    statuses = {i["data"]["package"]: i["status"] for i in result["items"]}
    assert fixes["smallvec"] == ["cargo update --workspace && cargo update -p smallvec --precise 1.6.1"]
    assert fixes["crossbeam-channel"] == ["cargo update -p crossbeam-channel --precise 0.5.15"]
    assert statuses["time"] == "blocked" and statuses["smallvec"] == "needs_regeneration"
    time_blocker = next(i for i in result["items"] if i["data"]["package"] == "time")["blockers"][0]
    assert "upgrade chrono" in time_blocker["message"] and "cargo update -p time" not in time_blocker["message"]
    check = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=result["patch"], text=True,
                           capture_output=True)
    assert check.returncode == 0, check.stderr
    assert '+smallvec = "1.6.1"' in result["patch"] and '+thread_local = "1.1.4"' in result["patch"]
    one_code, one, _ = _dispatch(repo, "--input", "package=regex")
    assert one_code == 7 and [i["data"]["package"] for i in one["items"]] == ["regex"]
    assert '+regex = "1.5.5"' in one["patch"] and "workspace = true" not in one["patch"]


@needs_advisories
@pytest.mark.skipif(not (CORPUS / "ripgrep.tar.gz").is_file(), reason="the ripgrep corpus tarball is absent")
def test_ripgrep_is_evaluated_and_clean(tmp_path: Path, home: Path) -> None:
    """ripgrep locks no crate any advisory affects: the run reads both lockfiles and says so, not 'not evaluated'."""
    with tarfile.open(CORPUS / "ripgrep.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    repo = tmp_path / "ripgrep"
    for step in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "corpus"]):
        subprocess.run(["git", *step], cwd=repo, check=True)
    code, result, err = _dispatch(repo)
    assert code == 0 and result["status"] == "no_changes", err
    assert result["not_evaluated"] == [] and result["items"] == []


def _cargo() -> str | None:
    home = Path.home() / ".cargo" / "bin" / "cargo"
    return shutil.which("cargo") or (str(home) if home.is_file() else None)


CARGO = _cargo()


def _local_registry(root: Path, versions: list[str]) -> Path:
    """A cargo local registry holding smallvec at `versions` (packaged by cargo itself, empty libraries)."""
    registry = root / "registry"
    (registry / "index" / "sm" / "al").mkdir(parents=True)
    lines = []
    for version in versions:
        crate = root / "crates" / f"smallvec-{version}"
        (crate / "src").mkdir(parents=True)
        (crate / "src" / "lib.rs").write_text("")
        (crate / "Cargo.toml").write_text(f'[package]\nname = "smallvec"\nversion = "{version}"\nedition = "2018"\n'
                                          'license = "MIT"\ndescription = "test"\n')
        subprocess.run([str(CARGO), "package", "--offline", "--allow-dirty", "--no-verify", "-q"], cwd=crate,
                       env=_env(root), check=True, capture_output=True)
        packed = crate / "target" / "package" / f"smallvec-{version}.crate"
        shutil.copy(packed, registry / packed.name)
        digest = hashlib.sha256(packed.read_bytes()).hexdigest()
        lines.append(json.dumps({"name": "smallvec", "vers": version, "deps": [], "cksum": digest, "features": {},
                                 "yanked": False}))
    (registry / "index" / "sm" / "al" / "smallvec").write_text("\n".join(lines) + "\n")
    return registry


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "CARGO_HOME": str(root / "cargo-home"), "CARGO_NET_OFFLINE": "true",
            "PATH": f"{Path(str(CARGO)).parent}:{os.environ.get('PATH', '')}"}


@pytest.mark.skipif(CARGO is None, reason="cargo is not installed")
def test_the_named_commands_lock_exactly_the_target_with_real_cargo(tmp_path: Path,
                                                                     make_repo: Callable[..., Path]) -> None:
    """cargo, offline against a local registry holding 1.6.0, 1.6.1 and 1.7.0: after the requirement edit the
    action's command locks 1.6.1 (alone, `--precise` would give 1.7.0); without an edit `--precise` does."""
    registry = _local_registry(tmp_path, ["1.6.0", "1.6.1", "1.7.0"])
    config = f'[source.crates-io]\nreplace-with = "local"\n\n[source.local]\nlocal-registry = "{registry}"\n'
    package = '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    repo = make_repo({"Cargo.toml": package + 'smallvec = "=1.6.0"\n', "src/lib.rs": "", ".cargo/config.toml": config},
                     commit=False)
    subprocess.run([str(CARGO), "generate-lockfile"], cwd=repo, env=_env(tmp_path), check=True, capture_output=True)
    (repo / "Cargo.toml").write_text(package + 'smallvec = "1.6"\n')
    for step in (["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "lock"]):
        subprocess.run(["git", *step], cwd=repo, check=True)
    lock = (repo / "Cargo.lock").read_text()
    plain = cargo_lock_command("Cargo.lock", "smallvec", "1.6.1", False, lock)
    subprocess.run(["sh", "-c", plain], cwd=repo, env=_env(tmp_path), check=True, capture_output=True)
    assert 'name = "smallvec"\nversion = "1.6.1"' in (repo / "Cargo.lock").read_text()
    (repo / "Cargo.lock").write_text(lock)
    plan, after = plan_for(repo, "crates.io", "smallvec", "1.6.1")
    write_back(repo, after)
    assert (repo / "Cargo.toml").read_text().endswith('smallvec = "1.6.1"\n')
    command = plan.regenerate[0].command
    subprocess.run(["sh", "-c", command], cwd=repo, env=_env(tmp_path), check=True, capture_output=True)
    regenerated = (repo / "Cargo.lock").read_text()
    assert 'name = "smallvec"\nversion = "1.6.1"' in regenerated
    assert still_below("Cargo.lock", regenerated, "crates.io", "smallvec", "1.6.1") == []


@pytest.mark.skipif(CARGO is None, reason="cargo is not installed")
def test_cargo_failures_read_as_network_and_toolchain(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    """Real cargo output: a registry it cannot connect to is the network; a lockfile newer than the cargo is
    the toolchain (that message is cargo's own, quoted)."""
    config = ('[source.crates-io]\nreplace-with = "nowhere"\n\n'
              '[source.nowhere]\nregistry = "sparse+http://127.0.0.1:9/index/"\n')
    repo = make_repo({**RUSTAPP, ".cargo/config.toml": config})
    done = subprocess.run(["sh", "-c", "cargo update -p smallvec --precise 1.6.1"], cwd=repo, capture_output=True,
                          text=True, env={**_env(tmp_path), "CARGO_NET_OFFLINE": "false", "CARGO_NET_RETRY": "0"},
                          timeout=120)
    assert done.returncode != 0
    assert classify("cargo", done.returncode, done.stderr).startswith("the package index could not be reached")
    newer = ("error: failed to parse lock file at: /x/Cargo.lock\n\nCaused by:\n  lock file version `4` was found, "
             "but this version of Cargo does not understand this lock file, perhaps Cargo needs to be updated?\n")
    assert classify("cargo", 101, newer).startswith("the toolchain is too old")


@needs_advisories
@pytest.mark.skipif(CARGO is None, reason="cargo is not installed")
def test_regenerate_runs_cargo_in_the_sandbox_and_locks_the_target(tmp_path: Path, make_repo: Callable[..., Path],
                                                                   home: Path) -> None:
    """`dispatch --regenerate` end to end: the edit, then the named command run by real cargo in bubblewrap on a
    throwaway copy (a local registry inside the repository stands in for crates.io), and a patch whose
    Cargo.lock locks exactly the target: the run succeeds."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    registry = _local_registry(tmp_path, ["1.6.0", "1.6.1", "1.7.0"])
    package = '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    files = {"Cargo.toml": package + 'smallvec = "=1.6.0"\n', "src/lib.rs": "",
             ".cargo/config.toml": '[source.crates-io]\nreplace-with = "local"\n\n[source.local]\n'
                                   'local-registry = "vendor-registry"\n'}
    repo = make_repo(files, commit=False)
    shutil.copytree(registry, repo / "vendor-registry")
    subprocess.run([str(CARGO), "generate-lockfile"], cwd=repo, env=_env(tmp_path), check=True, capture_output=True)
    (repo / "Cargo.toml").write_text(package + 'smallvec = "1.6"\n')
    for step in (["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "lock"]):
        subprocess.run(["git", *step], cwd=repo, check=True)
    env = {"PATH": _env(tmp_path)["PATH"], "PLANNER_DAEMON": "off"}
    rustup = Path.home() / ".rustup"
    if Path(str(CARGO)).parent == Path.home() / ".cargo" / "bin" and rustup.is_dir():  # rustup's proxy needs it
        env.update({"RUSTUP_HOME": str(rustup), "PLANNER_SANDBOX_RO": str(rustup),
                    "PLANNER_SANDBOX_ENV": "RUSTUP_HOME,RUSTUP_TOOLCHAIN"})
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(ADVISORIES),
                   "--regenerate", "--json", env=env)
    assert "Traceback" not in done.stderr, done.stderr
    result = json.loads(done.stdout)
    assert done.returncode == 0 and result["status"] == "succeeded", done.stderr
    assert '-version = "1.6.0"\n+version = "1.6.1"' in result["patch"]
    assert '+smallvec = "1.6.1"' in result["patch"]


def test_editor_dotted_keys_quotes_and_sources() -> None:
    from repocontext.deps.cargo import parse_cargo_toml
    from subgraphs.vulnerability_remediation.edits_cargo import edit_cargo_toml
    from subgraphs.vulnerability_remediation.model import UpgradePlan

    text = ('[dependencies]\nfoo.version = "1.2"\nfoo.features = ["x"]\n'
            "bar = { version = '0.3.1', default-features = false }\n"
            'baz = { version = "1.0", path = "../baz" }\nqux = "*"\n"quoted-key" = "1.0"\n')
    got = {}
    for dep in parse_cargo_toml("Cargo.toml", text).deps:
        plan = UpgradePlan(ecosystem="crates.io", package=dep.name, target="1.2.5" if dep.name != "bar" else "0.3.4")
        got[dep.name] = (edit_cargo_toml(plan, dep, text), [(e.line, e.old, e.new) for e in plan.edits])
    assert got == {"foo": ("edited", [(2, 'foo.version = "1.2"', 'foo.version = "1.2.5"')]),
                   "bar": ("edited", [(4, "version = '0.3.1'", "version = '0.3.4'")]),
                   "baz": ("skipped", []), "qux": ("loose", []),
                   "quoted-key": ("edited", [(7, '"quoted-key" = "1.0"', '"quoted-key" = "1.2.5"')])}
