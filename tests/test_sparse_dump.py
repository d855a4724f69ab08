"""`repocontext.model.sparse_dump` is `model_dump` of a Dependency, without pydantic's serializer: checked on
every record the dependency probe makes of awesome-compose's real lockfiles and on records with every field set."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from repocontext.model import Dependency, sparse_dump
from repocontext.probe import ProbeContext
from repocontext.probes.dependencies import DependenciesProbe
from tests.datapaths import AWESOME_COMPOSE


def _same(dep: Dependency) -> None:
    dumped = sparse_dump(dep)
    assert dumped == dep.model_dump()
    assert list(dumped) == list(dep.model_dump())  # field order too: the stored JSON is byte-compared
    for key, value in dumped.items():
        if isinstance(value, list):
            assert value is not getattr(dep, key)  # a copy: editing the output never edits the record


def test_every_field_set_and_every_optional_one_unset() -> None:
    full = Dependency(ecosystem="PyPI", name="django", version="4.2.1", constraint="==4.2.1", direct=False,
                      path=["wagtail", "django"], dev=True, file="requirements/base.txt", line=3,
                      kind="constraint", section="project.dependencies", extras=["argon2"],
                      markers='python_version >= "3.10"', source="git+https://example.org/d.git",
                      checksummed=True, generated_by="pip-compile", hashed=False)
    _same(full)
    _same(Dependency(ecosystem="npm", name="left-pad", file="package.json"))


@pytest.mark.skipif(not AWESOME_COMPOSE.is_file(), reason=f"the corpus (AWESOME_COMPOSE) is not at {AWESOME_COMPOSE}")
def test_every_record_of_real_lockfiles(tmp_path: Path) -> None:
    with tarfile.open(AWESOME_COMPOSE) as archive:
        archive.extractall(tmp_path, filter="data")
    from repocontext.index import build_index

    index = build_index(tmp_path)
    ctx = ProbeContext(root=tmp_path, files=index.files, options={}, upstream={}, workers=1)
    values = DependenciesProbe().run(ctx).values["dependencies"]
    records = [record for group in values.values() for record in group]
    assert len(records) > 5_000  # nine npm lockfiles and a yarn.lock
    for record in records:
        _same(Dependency.model_validate(record))
