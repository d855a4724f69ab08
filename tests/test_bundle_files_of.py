"""`files_of: KEY` entries: the files a RepoContext slice's records name, with the key that led to each."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from bundle_helpers import budget, make_bundle, tccm_from

from planner.bundle import files_of
from planner.errors import TCCMError
from planner.tccm.model import TCCMDocument
from planner.tccm.registry import Registry

REPO = {
    "requirements.txt": "-r requirements/base.txt\n-r requirements/dev.in\n",
    "requirements/base.txt": "flask==3.0.0\nrequests==2.30.0  # http\n",
    "requirements/dev.in": "requests>=2.0\npytest\n",
    "base-requirements.txt": "requests==2.30.0\n",
    "app.py": "import requests\n",
}


def test_declaring_files_load_in_record_order_with_their_key(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(REPO)
    tccm = tccm_from(tmp_path, "must_read:\n  - files_of: dependencies.${inputs.package}\n    reason: declarations\n"
                     + budget(4000, 1000))
    bundle = make_bundle(repo, tmp_path / "h", tccm, {"package": "requests"})
    files = [(e.target, e.status, e.detail) for e in bundle.entries]
    assert files == [
        ("base-requirements.txt", "included", "via dependencies.requests → base-requirements.txt:1"),
        ("requirements/base.txt", "included", "via dependencies.requests → requirements/base.txt:2"),
        ("requirements/dev.in", "included", "via dependencies.requests → requirements/dev.in:1"),
    ]
    assert all(e.id == f"must_read:0:{e.target}" and e.selector == "files_of:dependencies.${inputs.package}"
               for e in bundle.entries)
    assert bundle.files["requirements/base.txt"] == REPO["requirements/base.txt"]
    assert "### must_read:0:requirements/dev.in" in bundle.text


def test_a_file_reached_twice_is_loaded_once(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(REPO)
    tccm = tccm_from(tmp_path, "must_read:\n  - glob: \"**/*requirements*.txt\"\nshould_read:\n"
                     "  - files_of: dependencies.requests\n" + budget(4000, 1000))
    bundle = make_bundle(repo, tmp_path / "h", tccm)
    status = {(e.band, e.target): e.status for e in bundle.entries}
    assert status[("should_read", "base-requirements.txt")] == "duplicate"
    assert status[("should_read", "requirements/dev.in")] == "included"
    assert bundle.totals.files == 4  # base-requirements, requirements.txt, requirements/base.txt, requirements/dev.in


def test_missing_key_and_recordless_slices_are_recorded(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(REPO)
    tccm = tccm_from(tmp_path, "should_read:\n  - files_of: dependencies.django\n  - files_of: languages\n"
                     + budget(4000, 1000))
    bundle = make_bundle(repo, tmp_path / "h", tccm)
    assert [(e.status, e.kind) for e in bundle.entries] == [("missing", "selector"), ("missing", "selector")]
    assert "key not present" in (bundle.entries[0].detail or "")
    assert "its records name no file" in (bundle.entries[1].detail or "")


def test_secrets_named_by_a_slice_are_denied(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"Dockerfile": "FROM python:3.12\nCOPY id_rsa /root/.ssh/id_rsa\n", "id_rsa": "x\n"})
    tccm = tccm_from(tmp_path, "must_read:\n  - files_of: denied\n" + budget(4000, 1000))
    bundle = make_bundle(repo, tmp_path / "h", tccm)
    [entry] = bundle.entries
    assert entry.target == "id_rsa" and entry.status == "denied" and entry.rule
    assert "id_rsa" not in bundle.files


def test_records_name_files_through_every_file_field() -> None:
    value = {"b": [{"file": "x.txt", "line": 3}, {"file": "./x.txt", "line": 1}],
             "a": {"path": "Dockerfile", "script": "bin/run.sh"},
             "c": {"files": ["req.txt:7", "req.txt:2"], "script": "/usr/local/bin/in-image.sh"}}
    named = [(n.path, n.lines) for n in files_of.named_files(value)]
    assert named == [("Dockerfile", []), ("bin/run.sh", []), ("x.txt", [1, 3]), ("req.txt", [2, 7])]


def test_validation_and_schema_know_files_of(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "bad.yaml").write_text("task_class: bad\nversion: 1\ndescription: d\nmust_read:\n"
                                  "  - files_of: nosuchsection.x\n" + budget(100, 50))
    with pytest.raises(TCCMError) as caught:
        Registry([bad]).get("bad")
    assert ":5: must_read[0].files_of: unknown RepoContext key 'nosuchsection'" in str(caught.value)
    schema = json.dumps(TCCMDocument.model_json_schema())
    assert "files_of" in schema and "records name repo files" in schema
