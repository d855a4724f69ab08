"""The conventions probe: each tool source, CI files, test command priority, CODEOWNERS."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import write_files

from repocontext.gather import gather
from repocontext.index import build_index
from repocontext.probe import ProbeContext
from repocontext.probes.conventions import ConventionsProbe, verify_command


def conventions(root: Path, files: dict[str, str]) -> tuple[dict[str, Any], list]:
    write_files(root, files)
    output = ConventionsProbe().run(ProbeContext(root=root, files=build_index(root).files))
    return output.values["conventions"], output.diagnostics


def tools(root: Path, files: dict[str, str]) -> tuple[list[str], list[str], dict[str, list[str]]]:
    found, _ = conventions(root, files)
    return found["formatters"], found["linters"], found["sources"]


def test_pyproject_tool_tables(tmp_path: Path) -> None:
    assert tools(tmp_path, {"pyproject.toml": "[tool.black]\n[tool.isort]\n[tool.ruff]\nline-length = 99\n"
                                              "[tool.ruff.format]\n[tool.mypy]\n[tool.pylint.main]\n"}) == (
        ["black", "isort", "ruff"], ["mypy", "pylint", "ruff"],
        {t: ["pyproject.toml"] for t in ("black", "isort", "mypy", "pylint", "ruff")})


def test_setup_cfg_tox_ini_and_dedicated_files(tmp_path: Path) -> None:
    assert tools(tmp_path, {
        "setup.cfg": "[flake8]\nmax-line-length = 100\n[mypy-foo.*]\nignore_missing_imports = True\n",
        "tox.ini": "[tox]\nenvlist = py311\n[isort]\nprofile = black\n",
        ".flake8": "[flake8]\n", ".pylintrc": "[MAIN]\n",
    }) == (["isort"], ["flake8", "mypy", "pylint"],
           {"flake8": [".flake8", "setup.cfg"], "isort": ["tox.ini"], "mypy": ["setup.cfg"], "pylint": [".pylintrc"]})


def test_pre_commit_hooks(tmp_path: Path) -> None:
    assert tools(tmp_path, {".pre-commit-config.yaml": """\
repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.6.0
    hooks: [{id: ruff}, {id: ruff-format}]
  - repo: https://github.com/pre-commit/mirrors-prettier
    rev: v3.0.0
    hooks:
      - id: prettier
  - repo: local
    hooks:
      - id: something-else
"""}) == (["prettier", "ruff"], ["ruff"],
           {"prettier": [".pre-commit-config.yaml"], "ruff": [".pre-commit-config.yaml"]})


def test_js_and_go_tools(tmp_path: Path) -> None:
    assert tools(tmp_path, {
        "web/package.json": '{"devDependencies": {"eslint": "9", "@biomejs/biome": "1"}, "prettier": {}}',
        "web/.prettierrc.json": "{}", "web/eslint.config.mjs": "export default [];",
        "go.mod": "module example.com/m\n", ".golangci.yml": "linters:\n  enable:\n    - govet\n    - gofumpt\n",
    }) == (["biome", "gofmt", "gofumpt", "prettier"], ["biome", "eslint", "golangci-lint"], {
        "biome": ["web/package.json"], "eslint": ["web/eslint.config.mjs", "web/package.json"],
        "gofmt": ["go.mod"], "gofumpt": [".golangci.yml"], "golangci-lint": [".golangci.yml"],
        "prettier": ["web/.prettierrc.json", "web/package.json"]})


def test_ci_files_and_codeowners_order(tmp_path: Path) -> None:
    found, _ = conventions(tmp_path, {
        ".github/workflows/ci.yml": "on: push\n", ".github/workflows/release.yaml": "on: push\n",
        ".gitlab-ci.yml": "test: {}\n", ".circleci/config.yml": "version: 2\n", "Jenkinsfile": "pipeline {}\n",
        "azure-pipelines.yml": "trigger: [main]\n", "vendor/x/.gitlab-ci.yml": "x: {}\n",
        "CODEOWNERS": "* @a\n", "docs/CODEOWNERS": "* @b\n",
    })
    assert found["ci"] == [".circleci/config.yml", ".github/workflows/ci.yml", ".github/workflows/release.yaml",
                           ".gitlab-ci.yml", "Jenkinsfile", "azure-pipelines.yml"]
    assert found["codeowners"] == "CODEOWNERS"
    found, _ = conventions(tmp_path / "b", {".github/CODEOWNERS": "* @c\n", "docs/CODEOWNERS": "* @b\n"})
    assert found["codeowners"] == ".github/CODEOWNERS"


def command(root: Path, files: dict[str, str]) -> tuple[str | None, str | None]:
    found, _ = conventions(root, files)
    return found["test_command"], found["test_command_source"]


def test_test_command_priority(tmp_path: Path) -> None:
    everything = {
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n",
        "tox.ini": "[tox]\nenvlist = py311\n",
        "package.json": '{"scripts": {"test": "jest"}}',
        "Makefile": "test:\n\tpytest\n",
        "go.mod": "module example.com/m\n",
    }
    assert command(tmp_path / "a", everything) == ("python -m pytest", "pyproject.toml")
    rest = {k: v for k, v in everything.items() if k != "pyproject.toml"}
    assert command(tmp_path / "b", rest) == ("tox", "tox.ini")
    rest.pop("tox.ini")
    assert command(tmp_path / "c", rest) == ("npm test", "package.json")
    rest["package.json"] = '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'
    assert command(tmp_path / "d", rest) == ("make test", "Makefile")
    rest["Makefile"] = "TEST := 1\ntest := x\nbuild:\n\tgo build\n"
    assert command(tmp_path / "e", rest) == ("go test ./...", "go.mod")
    assert command(tmp_path / "f", {"README.md": "hi\n"}) == (None, None)


def test_a_fix_is_verified_by_the_suite_of_its_ecosystem(tmp_path: Path) -> None:
    """BookStack's layout: a jest suite in package.json and phpunit for the PHP code; a Composer fix is
    verified by phpunit, an npm fix by jest, a run fixing both by the repository's first command."""
    found, _ = conventions(tmp_path, {"package.json": '{"scripts": {"test": "jest"}}', "composer.json": "{}",
                                      "phpunit.xml": "<phpunit/>\n", "Makefile": "test:\n\tmake -C t\n"})
    assert (found["test_command"], found["test_command_source"]) == ("npm test", "package.json")
    assert found["test_commands"] == {"npm": "npm test", "Packagist": "vendor/bin/phpunit"}
    assert verify_command(found, ["Packagist"]) == "vendor/bin/phpunit"
    assert verify_command(found, ["npm"]) == "npm test"
    assert verify_command(found, ["npm", "Packagist"]) == "npm test"
    assert verify_command(found, ["crates.io"]) == "npm test"  # none of its own: the repository's command


def test_pytest_sections_in_ini_files(tmp_path: Path) -> None:
    assert command(tmp_path / "a", {"pytest.ini": "[pytest]\n"}) == ("python -m pytest", "pytest.ini")
    assert command(tmp_path / "b", {"setup.cfg": "[tool:pytest]\ntestpaths = t\n"}) == ("python -m pytest",
                                                                                        "setup.cfg")
    assert command(tmp_path / "c", {"tox.ini": "[tox]\nenvlist = py3\n[pytest]\n"}) == ("python -m pytest", "tox.ini")
    assert command(tmp_path / "d", {"pyproject.toml": "[tool.pytest]\n"}) == (None, None)  # no ini_options table


def test_broken_config_is_a_diagnostic(tmp_path: Path) -> None:
    found, diagnostics = conventions(tmp_path, {"pyproject.toml": "[tool.black\n", "setup.cfg": "[flake8]\n"})
    assert found["linters"] == ["flake8"]
    assert [(d.probe, d.file) for d in diagnostics] == [("conventions", "pyproject.toml")]
    assert diagnostics[0].message.startswith("invalid TOML")


def test_gather_end_to_end(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"pyproject.toml": "[tool.ruff]\n[tool.pytest.ini_options]\n",
                      ".github/workflows/ci.yml": "on: push\n", ".github/CODEOWNERS": "* @team\n"})
    ctx = gather(repo, probes=[ConventionsProbe()])
    assert ctx.conventions.model_dump() == {
        "formatters": [], "linters": ["ruff"], "sources": {"ruff": ["pyproject.toml"]},
        "ci": [".github/workflows/ci.yml"], "test_command": "python -m pytest",
        "test_command_source": "pyproject.toml", "test_commands": {"PyPI": "python -m pytest"},
        "codeowners": ".github/CODEOWNERS"}
