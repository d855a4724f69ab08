"""`--verify` on suites that need the network: the sandbox has none, so a suite whose dependencies must be
downloaded never reaches its tests. That is said ("not run", with the line that shows it), never shown as
FAILED (the fix is not blamed) nor as passed; a suite that runs and fails is still FAILED.

Real cargo (through rustup's proxy, which needs its toolchains inside the sandbox) and real Maven."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from planner import sandbox
from planner.patch import verify

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
CARGO = shutil.which("cargo")
MVN = shutil.which("mvn")


def _crate(root: Path, dependencies: str, test: str) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(f'[package]\nname = "v"\nversion = "0.1.0"\nedition = "2021"\n\n'
                                     f'[dependencies]\n{dependencies}')
    (root / "src" / "lib.rs").write_text(f"#[cfg(test)]\nmod tests {{\n    #[test]\n    fn t() {{ {test} }}\n}}\n")
    return root


@pytest.mark.skipif(CARGO is None, reason="cargo is not installed (apt-get install -y cargo)")
def test_cargo_needing_crates_io_is_not_run_and_says_why(tmp_path: Path) -> None:
    done = verify.run(_crate(tmp_path, 'smallvec = "1"\n', "assert!(true);"), {}, "cargo test", [], timeout=120)
    assert done["passed"] is None and done["exit_code"] != 0, done
    assert done["reason"].startswith("not run: `cargo test` needed the network"), done
    assert "index.crates.io" in done["reason"]


@pytest.mark.skipif(CARGO is None, reason="cargo is not installed (apt-get install -y cargo)")
def test_cargo_runs_in_the_sandbox_and_a_failing_test_still_fails(tmp_path: Path) -> None:
    """No dependency to fetch: the suite runs (rustup's proxy finds its toolchain), and its failure is FAILED."""
    good = verify.run(_crate(tmp_path / "good", "", "assert_eq!(1, 1);"), {}, "cargo test", [], timeout=300)
    assert good["passed"] is True, good["output_tail"]
    bad = verify.run(_crate(tmp_path / "bad", "", "assert_eq!(1, 2);"), {}, "cargo test", [], timeout=300)
    assert bad["passed"] is False and "reason" not in bad and "panicked" in bad["output_tail"], bad


@pytest.mark.skipif(MVN is None, reason="maven is not installed (apt-get install -y maven)")
def test_maven_needing_central_is_not_run_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>x</groupId><artifactId>y</artifactId><version>1</version><dependencies><dependency>"
        "<groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope>"
        "</dependency></dependencies></project>\n")
    done = verify.run(tmp_path, {}, "mvn test", [], timeout=200)
    assert done["passed"] is None and "needed the network" in done["reason"], done
    assert ("\x1b" not in done["reason"] and "repo.maven.apache.org" in done["reason"]) or "Unknown host" in \
        done["reason"] or "could not be resolved" in done["reason"], done


def test_a_program_missing_from_the_copy_is_not_a_test_failure(tmp_path: Path) -> None:
    """Composer's `vendor/bin/phpunit` before `composer install`: nothing ran."""
    (tmp_path / "composer.json").write_text("{}\n")
    done = verify.run(tmp_path, {}, "vendor/bin/phpunit", [], timeout=60)
    assert done["passed"] is None and done["reason"].startswith("not run: vendor/bin/phpunit is not in"), done


def test_rustups_toolchains_are_named_for_its_proxies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir, home = tmp_path / "cargo" / "bin", tmp_path / "rustup"
    bin_dir.mkdir(parents=True)
    (home / "toolchains").mkdir(parents=True)
    (bin_dir / "rustup").write_text("#!/bin/sh\n")
    (bin_dir / "cargo").symlink_to("rustup")
    monkeypatch.setenv("RUSTUP_HOME", str(home))
    assert sandbox.shim_roots(f"/usr/bin:{bin_dir}") == {"RUSTUP_HOME": str(home)}
    monkeypatch.setenv("RUSTUP_HOME", str(tmp_path / "nowhere"))  # no toolchains there: nothing named
    assert sandbox.shim_roots(f"/usr/bin:{bin_dir}") == {}
