"""End-to-end remediation dispatches through the recipe path on real fixture repos."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import POETRY_REQUESTS, git, run_cli, write_files

from planner.config import Settings
from planner.errors import ExitCode
from planner.run.dispatch import dispatch
from planner.store.provenance import ProvenanceStore


def osv(path: Path, ident: str, ecosystem: str, package: str, events: list[list[dict[str, str]]],
        aliases: tuple[str, ...] = ()) -> None:
    record = {"id": ident, "modified": "2024-01-01T00:00:00Z", "aliases": list(aliases), "summary": f"{package} bug",
              "affected": [{"package": {"ecosystem": ecosystem, "name": package},
                            "ranges": [{"type": "ECOSYSTEM", "events": e} for e in events]}]}
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{ident}.json").write_text(json.dumps(record))


@pytest.fixture
def advisories(tmp_path: Path) -> Path:
    root = tmp_path / "advisories"
    osv(root, "GHSA-dj01-0000-0001", "PyPI", "django",
        [[{"introduced": "3.2"}, {"fixed": "3.2.20"}, {"introduced": "4.0"}, {"fixed": "4.1.10"}]],
        aliases=("CVE-2023-0001",))
    osv(root, "PYSEC-2023-74", "PyPI", "requests", [[{"introduced": "2.3.0"}, {"fixed": "2.31.0"}]],
        aliases=("CVE-2023-32681",))
    osv(root, "GHSA-35jh-r3h4-6jhm", "npm", "lodash", [[{"introduced": "0"}, {"fixed": "4.17.21"}]])
    osv(root, "GO-2022-1059", "Go", "golang.org/x/text", [[{"introduced": "0"}, {"fixed": "0.3.8"}]])
    return root


def _run(repo: Path, advisories: Path, status: str = "succeeded", **inputs: str) -> dict:
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, inputs,
                     {"advisories": str(advisories)})
    assert state["status"] == status, (state.get("error"), state.get("outcomes"))
    return state


def _fixes(state: dict) -> list[tuple[str, str | None]]:
    """The regenerate blockers of every item: (file, the exact command)."""
    return [(b["file"], b["fix"]) for r in state["outcomes"] for b in r["blockers"] if b["kind"] == "regenerate"]


def test_requirements_stays_in_release_line(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({"requirements.txt": "django==3.2.19  # web\nrequests>=2.0\n",
                      "app/views.py": "from django.http import HttpResponse\n\ndef index(r):\n"
                                      "    return HttpResponse('ok')\n",
                      "tests/test_views.py": "from app import views\n\ndef test_index():\n    assert views\n"})
    state = _run(repo, advisories, advisory="CVE-2023-0001")
    assert "-django==3.2.19  # web\n+django==3.2.20  # web\n" in state["patch"]
    assert "+requests" not in state["patch"] and "Upgrade requests" not in state["report"]  # only the advised one
    report = state["report"]
    assert "3.2.19 → 3.2.20" in report and "GHSA-dj01-0000-0001" in report and "CVE-2023-0001" in report
    assert "app/views.py:4" in report and "tests/test_views.py" in report
    assert "4.1.10" in report  # the other release line's fix is named, and not chosen
    record = ProvenanceStore(Settings.from_env().home).get(state["run_id"])
    assert [(s.stage, s.outcome) for s in record.stages] == [("scope_bundle", "built"), ("recipe_match", "matched")]
    assert [(b["item"], b["inputs"]) for b in record.item_bundles] == [
        ("PyPI:django", {"advisory": "CVE-2023-0001", "package": "django"})]


def test_poetry_pyproject_and_lockfile_note(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo(POETRY_REQUESTS)
    state = _run(repo, advisories, "needs_regeneration", package="requests")  # never a silent success
    assert _fixes(state) == [("poetry.lock", "poetry update --lock requests")]
    assert not state["patch"]  # `^2.30.0` allows 2.31.0: left as written, only the lock moves (issue 22 §3)
    assert state["report"].count("poetry.lock must be regenerated") == 1  # said once, not by two layers
    assert "poetry update --lock requests" in state["report"]


def test_package_json_with_lockfile(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    package_json = '{\n  "name": "web",\n  "version": "1.0.0",\n  "dependencies": {\n    "lodash": "^4.17.20"\n  }\n}\n'
    lock = {"name": "web", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
            "packages": {"": {"name": "web", "version": "1.0.0", "dependencies": {"lodash": "^4.17.20"}},
                         "node_modules/lodash": {"version": "4.17.20", "resolved": "https://r/lodash-4.17.20.tgz",
                                                 "integrity": "sha512-x"}}}
    repo = make_repo({"package.json": package_json, "package-lock.json": json.dumps(lock, indent=2) + "\n",
                      "src/index.js": "const _ = require('lodash');\n_.pick({}, ['a']);\n"})
    state = _run(repo, advisories, "needs_regeneration")
    assert _fixes(state) == [("package-lock.json", "npm update lodash --package-lock-only")]
    assert not state["patch"]  # `^4.17.20` allows 4.17.21: left as written, only the lock moves (issue 22 §3)
    assert "package-lock.json" in state["report"] and "must be regenerated" in state["report"]
    assert "diff --git a/package-lock.json" not in state["patch"]
    assert "src/index.js:2" in state["report"]


def test_go_mod(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({"go.mod": "module example.com/svc\n\ngo 1.22\n\nrequire (\n"
                                "\tgolang.org/x/text v0.3.7 // indirect\n\tgithub.com/pkg/errors v0.9.1\n)\n",
                      "main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hi") }\n'})
    state = _run(repo, advisories, "needs_regeneration")
    assert _fixes(state) == [("go.sum", "go get golang.org/x/text@v0.3.8 && go mod tidy")]
    assert "-\tgolang.org/x/text v0.3.7 // indirect\n+\tgolang.org/x/text v0.3.8 // indirect\n" in state["patch"]


def test_nothing_vulnerable_is_no_changes(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({"requirements.txt": "django==3.2.20\n"})
    state = dispatch(Settings.from_env(), "vulnerability-remediation", repo, {}, {"advisories": str(advisories)})
    assert state["status"] == "no_changes" and not state.get("patch")


def test_cli_json_verify_and_apply(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n",
                      "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
                      "app/client.py": "import requests\n\ndef get():\n    return requests.Session\n",
                      "tests/test_client.py": "from app import client\n\ndef test_get():\n"
                                              "    assert client.get() is not None\n",
                      "app/__init__.py": ""})
    write_files(repo, {"requirements.txt": "requests==2.30.0\n# local edit\n"})  # uncommitted work
    refused = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                      "--apply", "--json")
    assert refused.returncode == ExitCode.BAD_INPUT and "uncommitted changes" in refused.stderr
    assert (repo / "requirements.txt").read_text().endswith("# local edit\n")  # nothing lost
    git(repo, "checkout", "--", "requirements.txt")
    result = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                     "--verify", "--apply", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["status"] == "succeeded" and out["verification"]["passed"] is True
    assert out["verification"]["tests"] == ["tests/test_client.py"]
    assert Path(out["report_path"]).is_file() and Path(out["patch_path"]).read_text() == out["patch"]
    branch = out["branch"]
    assert git(repo, "show", f"{branch}:requirements.txt") == "requests==2.31.0\n"
    assert (repo / "requirements.txt").read_text() == "requests==2.30.0\n"  # work tree untouched
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def test_requirements_split_like_pythondotorg(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({
        "base-requirements.txt": 'Django[argon2]==3.2.19 ; python_version >= "3.6"\nPillow==10.4.0  # images\n',
        "prod-requirements.txt": "gunicorn==22.0.0\n",
        "dev-requirements.txt": "-r base-requirements.txt\n\nfactory-boy==3.2.1\n",
        "requirements.txt": "-r base-requirements.txt\n-r prod-requirements.txt\n",
    })
    state = _run(repo, advisories, package="django")
    assert ('-Django[argon2]==3.2.19 ; python_version >= "3.6"\n'
            '+Django[argon2]==3.2.20 ; python_version >= "3.6"\n') in state["patch"]
    assert "diff --git a/requirements.txt" not in state["patch"]


def test_monorepo_evidence_puts_the_affected_projects_code_first(home: Path, make_repo: Callable[..., Path],
                                                                  advisories: Path) -> None:
    uses = "import requests\n\ndef fetch(u):\n    return requests.get(u)\n"
    test = "import requests\n\ndef test_{pkg}():\n    assert requests.get\n"
    repo = make_repo({
        "pyproject.toml": '[project]\nname = "tool"\nversion = "1"\ndependencies = ["requests>=2.31.0"]\n',
        "tool/client.py": uses, "tests/test_tool.py": test.format(pkg="tool"),
        "services/shop/requirements/base.txt": "requests==2.30.0\n",  # the project around requirements/
        "services/shop/shop/client.py": uses, "services/shop/tests/test_shop.py": test.format(pkg="shop"),
    })
    state = _run(repo, advisories, package="requests")
    assert "+requests==2.31.0" in state["patch"] and "pyproject.toml" not in state["patch"]
    item = state["outcomes"][0]
    assert item["covering_tests"] == ["services/shop/tests/test_shop.py"]
    review, elsewhere = item["report"].split("_Planned by")[0].split("#### Elsewhere in the repository")
    assert "services/shop/shop/client.py:4" in review and "tool/client.py" not in review
    assert "`tool/client.py:4" in elsewhere and "`tests/test_tool.py`" in elsewhere  # reported, not dropped
    assert "services/shop" not in elsewhere


def test_single_project_evidence_is_not_split(home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n",
                      "app/client.py": "import requests\n\ndef fetch(u):\n    return requests.get(u)\n",
                      "scripts/sync.py": "import requests\nrequests.post('x')\n"})
    report = _run(repo, advisories, package="requests")["outcomes"][0]["report"]
    assert "app/client.py:4" in report and "scripts/sync.py:2" in report and "Elsewhere" not in report


def test_one_reason_per_installed_version_each_a_sentence(home: Path, make_repo: Callable[..., Path],
                                                           advisories: Path) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "requirements-dev.txt": "requests==2.29.0\n"})
    report = _run(repo, advisories, package="requests")["outcomes"][0]["report"]
    why = next(line for line in report.splitlines() if line.startswith("**Why this version:**"))
    sentences = why.removeprefix("**Why this version:** ").split(". ")
    assert len(sentences) == 2 and "2.29.0" in why and "2.30.0" in why and why.endswith(".")
