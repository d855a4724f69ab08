"""The dependencies section is dumped without pydantic's per-record serializer (sections.dump_json): the bytes
must be those the section's adapter writes, for any text a lockfile may hold and for real lockfiles."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext import sections
from repocontext.index import build_index
from repocontext.model import Dependency
from repocontext.probe import ProbeContext
from repocontext.probes.dependencies import DependenciesProbe
from tests.datapaths import AWESOME_COMPOSE

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)  # any text but lone surrogates
_RECORDS = st.builds(
    Dependency, ecosystem=st.sampled_from(["PyPI", "npm", "Go"]), name=_TEXT, file=_TEXT,
    version=st.none() | _TEXT, constraint=st.none() | _TEXT, direct=st.booleans(), path=st.lists(_TEXT, max_size=3),
    dev=st.booleans(), line=st.none() | st.integers(0, 2**40), kind=st.sampled_from(["manifest", "lockfile"]),
    section=st.none() | _TEXT, extras=st.lists(_TEXT, max_size=2), markers=st.none() | _TEXT,
    source=st.none() | _TEXT, checksummed=st.none() | st.booleans(), generated_by=st.none() | _TEXT,
    hashed=st.none() | st.booleans(),
)


def _adapter_bytes(value: dict[str, list[Dependency]]) -> bytes:
    return sections.adapter("dependencies").dump_json(value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_TEXT, st.lists(_RECORDS, max_size=3), max_size=4))
def test_any_records_dump_as_the_adapter_dumps_them(value: dict[str, list[Dependency]]) -> None:
    assert sections.dump_json("dependencies", value) == _adapter_bytes(value)


def test_control_characters_quotes_and_non_ascii() -> None:
    tricky = "a\"b\\c\n\t\r\b\f\x00\x1f\x7f/é中😀\u2028\u2029"
    value = {tricky: [Dependency(ecosystem="npm", name=tricky, file=tricky, version=tricky, path=[tricky])]}
    assert sections.dump_json("dependencies", value) == _adapter_bytes(value)


def test_a_lone_surrogate_is_refused_as_the_adapter_refuses_it() -> None:
    value = {"x": [Dependency(ecosystem="npm", name="x\ud800", file="package.json")]}
    with pytest.raises(Exception) as adapter_error:
        _adapter_bytes(value)
    with pytest.raises(type(adapter_error.value)):
        sections.dump_json("dependencies", value)


@pytest.mark.skipif(not AWESOME_COMPOSE.is_file(), reason=f"the corpus (AWESOME_COMPOSE) is not at {AWESOME_COMPOSE}")
def test_real_lockfiles_dump_as_the_adapter_dumps_them(tmp_path: Path) -> None:
    with tarfile.open(AWESOME_COMPOSE) as archive:
        archive.extractall(tmp_path, filter="data")
    ctx = ProbeContext(root=tmp_path, files=build_index(tmp_path).files, options={}, upstream={}, workers=1)
    value = sections.validate("dependencies", DependenciesProbe().run(ctx).values["dependencies"])
    assert sum(len(records) for records in value.values()) > 5_000
    assert sections.dump_json("dependencies", value) == _adapter_bytes(value)
