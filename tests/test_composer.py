"""Packagist: composer.json / composer.lock parsing, the composer.json editor and lock rules, and the real
BookStack tree dispatched through the CLI with the real Packagist advisories."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from repocontext.deps.common import declared
from repocontext.deps.composer import parse_composer_json, parse_composer_lock
from repocontext.model import Dependency
from subgraphs.vulnerability_remediation.edits import plan_upgrade
from subgraphs.vulnerability_remediation.edits_composer import composer_capped, composer_hint
from tests.conftest import run_cli
from tests.datapaths import CORPUS, SHARED

MANIFEST = """{
    "require": {
        "php": "^8.1",
        "ext-json": "*",
        "Vendor/Lib": "^1.2",
        "acme/exact": "v1.0.3",
        "acme/tilde": "~1.2.3",
        "acme/branch": "6.4.x-dev",
        "acme/union": "^5.4 || ^6.0"
    },
    "require-dev": {"acme/tool": ">=1.0 <2.0"}
}
"""


def _lock(entries: list[dict[str, object]], dev: list[dict[str, object]] | None = None) -> str:
    return json.dumps({"packages": entries, "packages-dev": dev or []}, indent=4) + "\n"


def test_manifest_skips_platform_and_keeps_constraints() -> None:
    parsed = parse_composer_json("composer.json", MANIFEST)
    got = {d.name: (d.constraint, d.version, d.dev, d.line) for d in parsed.deps}
    assert got == {"vendor/lib": ("^1.2", None, False, 5), "acme/exact": ("v1.0.3", "v1.0.3", False, 6),
                   "acme/tilde": ("~1.2.3", None, False, 7), "acme/branch": ("6.4.x-dev", None, False, 8),
                   "acme/union": ("^5.4 || ^6.0", None, False, 9), "acme/tool": (">=1.0 <2.0", None, True, 11)}


def test_lock_chains_dev_lines_and_parent_constraint() -> None:
    text = _lock([{"name": "vendor/lib", "version": "v1.2.0", "require": {"php": ">=7", "acme/deep": "~2.1"}},
                  {"name": "acme/deep", "version": "2.1.4"}],
                 [{"name": "acme/tool", "version": "1.1.0"}])
    deps = {d.name: d for d in parse_composer_lock("composer.lock", text,
                                                   {"vendor/lib": False, "acme/tool": True}).deps}
    assert deps["acme/deep"].path == ["vendor/lib", "acme/deep"] and deps["acme/deep"].constraint == "~2.1"
    assert deps["vendor/lib"].direct and deps["acme/tool"].dev and not deps["acme/deep"].dev
    lines = text.splitlines()
    assert all('"name": "' + name in lines[d.line - 1] for name, d in deps.items() if d.line)
    compact = json.dumps(json.loads(text))  # any other layout: tokenized, same answers
    assert [d.line for d in parse_composer_lock("composer.lock", compact, None).deps] == [1, 1, 1]


def _plan(name: str, target: str, lock: str | None = None) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    files = {"composer.json": MANIFEST, **({"composer.lock": lock} if lock else {})}
    decls: list[Dependency] = list(parse_composer_json("composer.json", MANIFEST).deps)
    if lock:
        decls += parse_composer_lock("composer.lock", lock, declared(decls)).deps
    plan = plan_upgrade("Packagist", name, target, decls, files.get)
    return [(e.old, e.new) for e in plan.edits], plan.skipped, [a.command for a in plan.regenerate]


@pytest.mark.parametrize(("name", "target", "new"), [
    ("vendor/lib", "2.0.1", '"Vendor/Lib": "^2.0.1"'),
    ("vendor/lib", "1.2.5", '"Vendor/Lib": "^1.2.5"'),  # no lockfile pins it: the floor moves
    ("acme/exact", "1.0.4", '"acme/exact": "v1.0.4"'),
    ("acme/tilde", "1.3.1", '"acme/tilde": "~1.3.1"'),
    ("acme/tool", "1.4.2", '"acme/tool": ">=1.4.2 <2.0"'),
])
def test_constraint_raised_keeping_style(name: str, target: str, new: str) -> None:
    edits, skipped, _ = _plan(name, target)
    assert [n for _, n in edits] == [new] and not skipped


def test_branch_and_excluding_union_are_left_to_a_person() -> None:
    assert "branch" in " ".join(_plan("acme/branch", "6.4.9")[1])
    assert "union" in " ".join(_plan("acme/union", "7.0.1")[1])


def test_allowed_range_with_lock_regenerates_only() -> None:
    lock = _lock([{"name": "vendor/lib", "version": "v1.2.0"}])
    edits, skipped, commands = _plan("vendor/lib", "1.2.5", lock)
    assert not edits and not skipped
    assert commands == ["composer update vendor/lib --with-dependencies --no-install --no-scripts --no-plugins"]


def test_capped_transitive_names_the_parent() -> None:
    lock = _lock([{"name": "vendor/lib", "version": "1.2.0", "require": {"acme/deep": "~2.1.0"}},
                  {"name": "acme/deep", "version": "2.1.4"}])
    assert composer_capped(lock, "acme/deep", "2.2.0") and not composer_capped(lock, "acme/deep", "2.1.5")
    dep = next(d for d in parse_composer_lock("composer.lock", lock, {"vendor/lib": False}).deps
               if d.name == "acme/deep")
    assert "vendor/lib requires acme/deep `~2.1.0`, which excludes 2.2.0" in composer_hint(dep, "acme/deep", "2.2.0")
    allowed = composer_hint(dep, "acme/deep", "2.1.5")
    assert "composer require acme/deep:^2.1.5" in allowed


# Every locked package of BookStack's composer.lock a Packagist advisory affects, with the lowest version no
# advisory affects (same major first; laravel/framework's CVE-2026-48019 is fixed only in 12.60.0), read from
# the records.
BOOKSTACK_AFFECTED = {
    "aws/aws-sdk-php": ("3.322.6", "3.368.0"), "guzzlehttp/guzzle": ("7.9.2", "7.12.1"),
    "guzzlehttp/psr7": ("2.7.0", "2.12.1"), "laravel/framework": ("v10.48.22", "12.60.0"),
    "mtdowling/jmespath.php": ("2.8.0", "2.9.1"), "phpunit/phpunit": ("10.5.35", "10.5.62"),
    "squizlabs/php_codesniffer": ("3.10.3", "3.13.6"), "symfony/dom-crawler": ("v6.4.12", "6.4.40"),
    "symfony/http-foundation": ("v6.4.12", "6.4.41"), "symfony/mime": ("v6.4.12", "6.4.40"),
    "symfony/polyfill-intl-idn": ("v1.31.0", "1.38.1"), "symfony/process": ("v6.4.12", "6.4.14"),
    "symfony/routing": ("v6.4.12", "6.4.41"),
}
BOOKSTACK = CORPUS / "BookStack.tar.gz"
ADVISORIES = SHARED / "advisories"


@pytest.fixture(scope="module")
def bookstack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not BOOKSTACK.exists() or not (ADVISORIES / "Packagist").is_dir():
        pytest.skip("the BookStack corpus tarball or the Packagist advisories are absent (../shared/corpus)")
    root = tmp_path_factory.mktemp("bookstack")
    with tarfile.open(BOOKSTACK) as tar:
        tar.extractall(root, filter="data")
    repo = root / "BookStack"
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


def test_bookstack_symfony_process_through_the_cli(bookstack: Path) -> None:
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(bookstack), "--advisories",
                   str(ADVISORIES), "--input", "package=symfony/process", "--json")
    out = json.loads(done.stdout)
    assert out["status"] == "needs_regeneration" and not out["not_evaluated"], done.stderr[-2000:]
    (item,) = out["items"]
    assert item["data"]["target"] == "6.4.14" and item["data"]["installed"] == ["v6.4.12"]
    fixes = [b["fix"] for b in item["blockers"]]
    assert fixes == ["composer update symfony/process --with-dependencies --no-install --no-scripts --no-plugins"]


def test_bookstack_every_vulnerable_package(bookstack: Path) -> None:
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(bookstack), "--advisories",
                   str(ADVISORIES), "--json")
    out = json.loads(done.stdout)
    assert not out["not_evaluated"]
    got = {i["data"]["package"]: (i["data"]["installed"][0], i["data"]["target"]) for i in out["items"]}
    assert got == BOOKSTACK_AFFECTED
    if out["patch"]:
        check = subprocess.run(["git", "apply", "--check"], input=out["patch"], text=True, cwd=bookstack,
                               capture_output=True)
        assert check.returncode == 0, check.stderr


def test_the_named_command_moves_the_lock_offline(tmp_path: Path) -> None:
    """The real composer runs the command this planner names, on a path repository (no registry needed)."""
    import os
    import shutil

    from subgraphs.vulnerability_remediation.lockfiles import lock_command

    if shutil.which("composer") is None:
        pytest.skip("composer is not installed (apt-get install -y composer php-cli)")
    lib = tmp_path / "pkgs" / "lib"
    lib.mkdir(parents=True)
    (lib / "composer.json").write_text('{"name": "acme/lib", "version": "1.2.3", "type": "library"}')
    (tmp_path / "composer.json").write_text(json.dumps({"name": "acme/app", "require": {"acme/lib": "^1.2"},
                                                        "repositories": [{"type": "path", "url": "pkgs/lib"},
                                                                         {"packagist.org": False}]}))
    env = {**os.environ, "COMPOSER_HOME": str(tmp_path / ".home"), "COMPOSER_ALLOW_SUPERUSER": "1"}

    def run(command: str) -> None:
        subprocess.run(["sh", "-c", command + " -n"], cwd=tmp_path, env=env, check=True, capture_output=True,
                       timeout=120)

    run("composer update --no-install --no-scripts --no-plugins")
    (lib / "composer.json").write_text('{"name": "acme/lib", "version": "1.2.5", "type": "library"}')
    lock = tmp_path / "composer.lock"
    command = lock_command("composer.lock", "acme/lib", "1.2.5", False, lock.read_text())
    run(command)
    (dep,) = parse_composer_lock("composer.lock", lock.read_text(), {"acme/lib": False}).deps
    assert command.startswith("composer update acme/lib --with-dependencies") and dep.version == "1.2.5"
