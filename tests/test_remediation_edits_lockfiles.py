"""Lockfiles are never edited: which ones must be regenerated, with which command, and transitive-only packages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_remediation_edits import plan_for

PYPROJECT = '[project]\nname = "svc"\nversion = "1.0"\ndependencies = ["flask>=3"]\n'

UV_LOCK = """\
version = 1
requires-python = ">=3.11"

[[package]]
name = "svc"
version = "1.0"
source = { editable = "." }
dependencies = [{ name = "flask" }]

[[package]]
name = "flask"
version = "3.0.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "werkzeug" }]
sdist = { url = "https://files.example/flask-3.0.0.tar.gz", hash = "sha256:cfadcdb638b609361d29ec22360d6070a7" }

[[package]]
name = "werkzeug"
version = "3.0.1"
source = { registry = "https://pypi.org/simple" }
sdist = { url = "https://files.example/werkzeug-3.0.1.tar.gz", hash = "sha256:507e811ecea72b18a404947aded4b3" }
"""


def test_uv_transitive_only_package(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"pyproject.toml": PYPROJECT, "uv.lock": UV_LOCK})
    plan, after = plan_for(repo, "PyPI", "Werkzeug", "3.0.3")
    assert after == {} and plan.edits == []
    assert plan.skipped == [
        "uv.lock:17: werkzeug 3.0.1 is a transitive dependency only (via flask → werkzeug); no manifest declares "
        "it, so there is no manifest line to edit. `uv lock --upgrade-package 'werkzeug==3.0.3'` moves it if its "
        'dependents allow; otherwise add `constraint-dependencies = ["werkzeug>=3.0.3"]` under [tool.uv] in '
        "pyproject.toml, or upgrade flask"]
    assert [a.model_dump() for a in plan.regenerate] == [{
        "file": "uv.lock", "cwd": ".", "command": "uv lock --upgrade-package 'werkzeug==3.0.3'",
        "why": "it locks werkzeug 3.0.1; it records the sha256 and URL of every locked distribution, which cannot "
               "be computed offline"}]
    assert plan.notes == [
        "uv.lock must be regenerated: it locks werkzeug 3.0.1, and it records the sha256 and URL of every locked "
        "distribution, which cannot be computed offline. Run `uv lock --upgrade-package 'werkzeug==3.0.3'` at the "
        "repository root."]


def test_lock_already_at_target_needs_nothing(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"pyproject.toml": PYPROJECT, "uv.lock": UV_LOCK})
    plan, after = plan_for(repo, "PyPI", "flask", "3.0.0")
    assert after == {} and plan.regenerate == [] and plan.skipped == []
    assert plan.notes == ["pyproject.toml:4: `flask>=3`: `>=3` already excludes every version below 3.0.0; no edit",
                          "uv.lock already locks flask 3.0.0 (3.0.0 or later); nothing to regenerate there"]


def test_transitive_package_already_fixed_is_not_skipped(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"pyproject.toml": PYPROJECT, "uv.lock": UV_LOCK})
    plan, _ = plan_for(repo, "PyPI", "werkzeug", "3.0.1")
    assert plan.skipped == [] and plan.regenerate == []
    assert plan.notes == ["uv.lock already locks werkzeug 3.0.1 (3.0.1 or later); nothing to regenerate there"]


def test_stale_lock_under_a_fixed_manifest_is_regenerated(make_repo: Callable[..., Path]) -> None:
    lock = ('{"lockfileVersion": 3, "packages": {"": {"dependencies": {"lodash": "^4.17.21"}}, '
            '"node_modules/lodash": {"version": "4.17.20", "integrity": "sha512-abc"}}}\n')
    repo = make_repo({"package.json": '{"dependencies": {"lodash": "^4.17.21"}}\n', "package-lock.json": lock})
    plan, after = plan_for(repo, "npm", "lodash", "4.17.21")
    assert after == {}
    assert [(a.file, a.command) for a in plan.regenerate] == [("package-lock.json",
                                                               "npm update lodash --package-lock-only")]
    assert plan.regenerate[0].why.startswith("it locks lodash 4.17.20; it records each tarball's resolved URL")


YARN_V1 = '# yarn lockfile v1\n\nlodash@*:\n  version "4.17.20"\n'
YARN_BERRY = '__metadata:\n  version: 6\n\n"lodash@npm:*":\n  version: 4.17.20\n  resolution: "lodash@npm:4.17.20"\n'
PNPM_6 = ("lockfileVersion: '6.0'\n\ndependencies:\n  lodash:\n    specifier: '*'\n    version: 4.17.20\n\n"
          "packages:\n\n  /lodash@4.17.20:\n    resolution: {integrity: sha512-abc}\n")
PNPM_WORKSPACE = PNPM_6.replace("dependencies:\n  lodash:\n    specifier: '*'\n    version: 4.17.20\n",
                                "importers:\n\n  .:\n    dependencies:\n      lodash:\n        specifier: '*'\n"
                                "        version: 4.17.20\n\n  packages/a: {}\n")


@pytest.mark.parametrize(("lock", "text", "spec", "command"), [
    ("yarn.lock", YARN_V1, "*", "yarn upgrade lodash --ignore-scripts"),
    ("yarn.lock", YARN_V1, "4.17.20", "yarn install --ignore-scripts"),
    ("yarn.lock", YARN_BERRY, "*", "yarn up -R lodash --mode=update-lockfile"),
    ("yarn.lock", YARN_BERRY, "4.17.20", "yarn install --mode=update-lockfile"),
    ("yarn.lock", YARN_BERRY.replace("version: 6", "version: 4"), "4.17.20", "YARN_ENABLE_SCRIPTS=0 yarn install"),
    ("yarn.lock", YARN_BERRY.replace("version: 6", "version: 4"), "*", "YARN_ENABLE_SCRIPTS=0 yarn up -R lodash"),
    ("pnpm-lock.yaml", PNPM_6, "*", "pnpm update lodash --lockfile-only"),
    ("pnpm-lock.yaml", PNPM_WORKSPACE, "*", "pnpm update -r lodash --lockfile-only"),
    ("pnpm-lock.yaml", PNPM_6, "4.17.20", "pnpm install --lockfile-only"),
])
def test_js_lockfiles(make_repo: Callable[..., Path], lock: str, text: str, spec: str, command: str) -> None:
    """A loose manifest leaves the manifest alone: the lock that holds the old version moves by itself."""
    repo = make_repo({"web/package.json": f'{{"dependencies": {{"lodash": "{spec}"}}}}\n', f"web/{lock}": text})
    plan, _ = plan_for(repo, "npm", "lodash", "4.17.21")
    assert [(a.file, a.cwd, a.command) for a in plan.regenerate] == [(f"web/{lock}", "web", command)]
    assert plan.notes[-1].startswith(f"web/{lock} must be regenerated: ")
    assert plan.notes[-1].endswith(f"Run `{command}` in web.")


def test_js_lock_that_does_not_lock_the_package_is_left_alone(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"package.json": '{"dependencies": {"lodash": "*"}}\n',
                      "pnpm-lock.yaml": "lockfileVersion: '9.0'\n\nimporters:\n\n  .: {}\n"})
    plan, after = plan_for(repo, "npm", "lodash", "4.17.21")
    assert after == {} and plan.regenerate == []


def test_requirements_files_have_no_lockfile(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"requirements.txt": "flask==2.0.0\n", "uv.lock": UV_LOCK})
    plan, after = plan_for(repo, "PyPI", "flask", "3.0.0")
    assert after == {"requirements.txt": "flask==3.0.0\n"}
    # uv.lock belongs to a pyproject.toml, not to requirements.txt, and it locks flask 3.0.0 already
    assert plan.regenerate == []
