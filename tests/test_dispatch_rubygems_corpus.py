"""Whole runs through the CLI on openstreetmap-website (a Rails app: Gemfile, Gemfile.lock) with the real RubySec
advisories, unpacked at run time (GPL data: never copied into the repository).

As shipped, it locks no gem an advisory affects (ruby's Gem::Requirement over each record's patched and
unaffected versions agrees): the run reads the Gemfile and Gemfile.lock and says nothing to do, not "not
evaluated". Its lock as it was before the maintainers' fixes (rack 3.2.5, uri 0.13.1, Rails 8.1.2: each
version rewritten in place) gives the lowest fixed versions and the `bundle lock` commands that reach them.
"""

from __future__ import annotations

import json
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
from conftest import run_cli

from tests.datapaths import CORPUS, SHARED

TARBALL = CORPUS / "openstreetmap-website.tar.gz"
ADVISORIES = SHARED / "advisories" / "RubyGems"
pytestmark = pytest.mark.skipif(not TARBALL.is_file() or not ADVISORIES.is_dir(),
                                reason="the openstreetmap-website corpus tarball or RubyGems advisories are absent")


def _tree(tmp_path: Path, lock_edits: dict[str, str] | None = None,
          gemfile_edits: dict[str, str] | None = None) -> Path:
    with tarfile.open(TARBALL) as tar:
        tar.extractall(tmp_path, filter="data")
    repo = tmp_path / "openstreetmap-website"
    for name, edits in (("Gemfile.lock", lock_edits or {}), ("Gemfile", gemfile_edits or {})):
        text = (repo / name).read_text()
        for old, new in edits.items():
            assert re.search(old, text, re.MULTILINE), old
            text = re.sub(old, new, text, flags=re.MULTILINE)
        (repo / name).write_text(text)
    for step in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "corpus"]):
        subprocess.run(["git", *step], cwd=repo, check=True)
    return repo


def _dispatch(repo: Path, *args: str) -> tuple[int, dict, str]:
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(ADVISORIES),
                   "--json", *args, env={"PLANNER_DAEMON": "off"})
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def _ruby_unread(result: dict) -> list[str]:
    """What the run says it did not evaluate among the Ruby files (the tree's package.json and yarn.lock are
    listed too: the source holds RubyGems advisories only)."""
    return [line for line in result["not_evaluated"] if "Gemfile" in line or "RubyGems" in line]


def test_as_shipped_every_gem_is_read_and_none_is_affected(tmp_path: Path, home: Path) -> None:
    code, result, err = _dispatch(_tree(tmp_path))
    assert code in (0, 2) and result["status"] in ("no_changes", "not_evaluated"), err
    assert _ruby_unread(result) == [] and result["items"] == []
    assert result["advisories"]["records"] == {"RubyGems": len(list(ADVISORIES.glob("*.json")))}


BEFORE_THE_FIXES = {r"^    rack \(3\.2\.7\)$": "    rack (3.2.5)", r"^    uri \(0\.13\.3\)$": "    uri (0.13.1)",
                    r"\(8\.1\.3\.1\)": "(8.1.2)", r"\(= 8\.1\.3\.1\)": "(= 8.1.2)"}


def test_before_the_fixes_each_gem_gets_its_fix_and_the_command_that_reaches_it(tmp_path: Path, home: Path) -> None:
    code, result, err = _dispatch(_tree(tmp_path, BEFORE_THE_FIXES))
    assert code == 7 and result["status"] == "needs_regeneration", err
    assert _ruby_unread(result) == []
    items = {i["data"]["package"]: i for i in result["items"]}
    assert sorted(items) == ["actionpack", "actionview", "activestorage", "activesupport", "rack", "uri"]
    targets = {name: (i["data"]["installed"], i["data"]["target"]) for name, i in items.items()}
    assert targets["rack"] == (["3.2.5"], "3.2.6")
    assert targets["uri"] == (["0.13.1"], "0.13.3")
    assert targets["activestorage"] == (["8.1.2"], "8.1.3.1")
    assert targets["actionpack"] == (["8.1.2"], "8.1.2.1")
    fixes = {name: [b["fix"] for b in i["blockers"]] for name, i in items.items()}
    assert fixes["rack"] == ["bundle lock --update rack --conservative"]
    assert fixes["uri"] == ["bundle lock --update uri --conservative"]  # Gemfile `< 1.0.0` admits 0.13.3
    # rails pins activestorage exactly (= 8.1.2): it moves only with rails and the gems pinning it
    assert fixes["activestorage"] == ["bundle lock --update actionmailbox actiontext rails activestorage"]
    assert result["patch"] == ""


def test_an_exact_pin_in_the_gemfile_is_edited_and_the_patch_applies(tmp_path: Path, home: Path) -> None:
    lock = {r"^    uri \(0\.13\.3\)$": "    uri (0.13.1)", r"^  uri \(< 1\.0\.0\)$": "  uri (= 0.13.1)"}
    repo = _tree(tmp_path, lock, {r'^gem "uri", "< 1\.0\.0"$': 'gem "uri", "0.13.1"'})
    code, result, err = _dispatch(repo, "--input", "package=uri")
    assert code == 7 and [i["data"]["target"] for i in result["items"]] == ["0.13.3"], err
    assert '-gem "uri", "0.13.1"\n+gem "uri", "0.13.3"' in result["patch"]
    check = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=result["patch"], text=True,
                           capture_output=True)
    assert check.returncode == 0, check.stderr
    assert [b["fix"] for b in result["items"][0]["blockers"]] == ["bundle lock --update uri --conservative"]
