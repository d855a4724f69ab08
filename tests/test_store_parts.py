"""The part store: round trips, lazy reads of split sections, sizes, clean-up, crash safety, old layouts."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from planner.bundle.builder import build
from planner.bundle.view import RepoView, open_view
from repocontext import encode, parts
from repocontext.gather import gather
from repocontext.globs import PathIndex
from repocontext.lazyjson import ChunkedList, Columns, LazyMember, LazySection, StoreError, plain
from repocontext.store import RepoContextStore
from tests.bundle_helpers import budget, tccm_from
from tests.conftest import commit_all, write_files

USES = "".join(f"yaml.safe_load('{i}')  # é\n" for i in range(12))
FILES = {
    "app/__init__.py": "",
    **{f"app/m{i}.py": f"import yaml\nimport requests\n{USES}requests.get('/{i}')\n" for i in range(6)},
    "requirements.txt": "pyyaml==6.0\nrequests==2.31.0\n",
}


@pytest.fixture
def small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thresholds small enough that a small repository gets split sections, chunks and columns."""
    monkeypatch.setattr(encode, "SPLIT_CHARS", 200)
    monkeypatch.setattr(encode, "CHUNK", 5)
    monkeypatch.setattr(encode, "COLUMNS_MIN", 3)


def _compact(value: object) -> str:
    return orjson.dumps(plain(value)).decode()


def test_split_sections_round_trip_exactly(small_parts: None, make_repo: Callable[..., Path],
                                           tmp_path: Path) -> None:
    repo = make_repo(FILES)
    store = RepoContextStore(tmp_path / "home")
    context = gather(repo)
    store.save(context)
    assert store.load_raw(repo) == context.model_dump(mode="json")
    lazy = store.load_lazy(repo)
    assert lazy is not None
    sites = lazy["call_sites"]
    assert isinstance(sites, LazySection) and isinstance(sites["yaml"], LazyMember)
    assert isinstance(sites["yaml"]["sites"], ChunkedList) and isinstance(lazy["files"], Columns)
    expected = context.call_sites["yaml"].model_dump(mode="json")
    assert list(sites["yaml"]) == list(expected)  # field order kept (a Python group stores no `via`)
    assert sites["yaml"]["sites"][7] == expected["sites"][7] and sites["yaml"]["sites"][-1] == expected["sites"][-1]
    assert sites["yaml"]["sites"][3:9] == expected["sites"][3:9]
    # Sizes come from the manifest, and are those of the compact JSON (characters, not bytes: "é").
    for value in (sites, sites["yaml"], sites["yaml"]["sites"], lazy["files"]):
        assert value.json_size() == len(_compact(value))


def _yaml_part(make_repo: Callable[..., Path], tmp_path: Path) -> tuple[Path, RepoContextStore, str]:
    """A stored repository and the digest of its `yaml` call-site group's part."""
    repo = make_repo(FILES)
    store = RepoContextStore(tmp_path / "home")
    store.save(gather(repo))
    lazy = store.load_lazy(repo)
    assert lazy is not None
    return repo, store, lazy.part_of("call_sites")["split"]["yaml"]["part"]


def test_reading_one_site_parses_only_its_chunk(small_parts: None, make_repo: Callable[..., Path],
                                                tmp_path: Path) -> None:
    repo, store, part = _yaml_part(make_repo, tmp_path)
    path = store.repo_dir(repo) / "parts" / f"{part}.json"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([*lines[:-1], b"[" + b"x" * (len(lines[-1]) - 1)]))  # corrupt the last chunk
    group = store.load_lazy(repo)["call_sites"]["yaml"]  # type: ignore[index]
    assert group["sites"][0]["symbol"] == "yaml"  # the first chunk still reads
    assert group["aliases"] == ["pyyaml"]
    with pytest.raises(StoreError, match=rf"{part}.json is unreadable .*re-run `planner gather`"):
        list(group["sites"])


def test_aliases_are_answered_without_reading_the_member(small_parts: None, make_repo: Callable[..., Path],
                                                         tmp_path: Path) -> None:
    repo, store, part = _yaml_part(make_repo, tmp_path)
    (store.repo_dir(repo) / "parts" / f"{part}.json").unlink()
    assert store.load_lazy(repo)["call_sites"]["yaml"].get("aliases") == ["pyyaml"]  # type: ignore[index]


def test_lazy_and_plain_snapshots_give_the_same_bundle(small_parts: None, make_repo: Callable[..., Path],
                                                       tmp_path: Path) -> None:
    repo = make_repo(FILES)
    store = RepoContextStore(tmp_path / "home")
    store.save(gather(repo))
    tccm = tccm_from(tmp_path, "should_read:\n  - key: call_sites.${inputs.package}\n  - key: call_sites\n"
                     "  - key: files\n" + budget(4000, 300))
    lazy_view = open_view(repo, store)
    whole = store.load_raw(repo)
    assert whole is not None
    plain_view = RepoView(root=lazy_view.root, context=whole, paths=PathIndex(lazy_view.paths.paths),
                          sizes=lazy_view.sizes, denied=lazy_view.denied)
    for inputs in ({"package": "pyyaml"}, {"package": "requests"}, {}):
        lazy_bundle, plain_bundle = build(tccm, lazy_view, inputs), build(tccm, plain_view, inputs)
        assert lazy_bundle.model_dump_json() == plain_bundle.model_dump_json()
        assert any(e.status == "truncated" for e in lazy_bundle.entries)
        orjson.dumps(lazy_bundle.slices)  # graph state: plain JSON only


def test_old_snapshots_and_unused_parts_are_removed(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo(FILES)
    store = RepoContextStore(tmp_path / "home")
    directory = store.repo_dir(repo)
    (directory / "old.sections-1").mkdir(parents=True)
    (directory / "0123.json").write_text("{}")  # the one-file layout of earlier versions
    for round_ in range(3):
        write_files(repo, {f"app/n{round_}.py": "import yaml\n"})
        commit_all(repo, f"round {round_}")
        store.save(gather(repo))
    manifests = sorted(p.name for p in directory.glob(f"*{parts.SUFFIX}"))
    assert len(manifests) == 2 and parts.current(directory) in manifests
    used = {sha for name in manifests for sha in parts._referenced(orjson.loads((directory / name).read_bytes()))}
    assert {p.stem for p in (directory / "parts").glob("*.json")} == used
    assert not (directory / "0123.json").exists() and not (directory / "old.sections-1").exists()


def test_a_failed_write_keeps_the_previous_snapshot(make_repo: Callable[..., Path], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(FILES)
    store = RepoContextStore(tmp_path / "home")
    first = gather(repo)
    store.save(first)
    write_files(repo, {"app/extra.py": "import requests\n"})
    commit_all(repo, "more")
    real = parts.atomic_write

    def failing(path: Path, data: bytes | str) -> None:
        if path.name.endswith(parts.SUFFIX):
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(parts, "atomic_write", failing)
    with pytest.raises(StoreError, match=r"cannot write RepoContext .*No space left on device"):
        store.save(gather(repo))
    assert store.load_raw(repo) == first.model_dump(mode="json")


def test_an_older_layout_asks_for_a_regather(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo(FILES)
    store = RepoContextStore(tmp_path / "home")
    directory = store.repo_dir(repo)
    directory.mkdir(parents=True)
    (directory / "latest").write_text("0123abcd\n")
    with pytest.raises(StoreError, match=r"older layout; re-run `planner gather`"):
        store.load_lazy(repo)
    store.save(gather(repo))  # a gather replaces it
    assert store.load_raw(repo) is not None


def test_chunked_lists_index_and_slice_like_lists() -> None:
    items = [{"i": i} for i in range(23)]
    chunks = [orjson.dumps(items[i: i + 5]) for i in range(0, 23, 5)]
    fetched: list[int] = []

    def fetch(index: int) -> bytes:
        fetched.append(index)
        return chunks[index]

    lazy = ChunkedList(fetch, len(chunks), 23, 5, len(orjson.dumps(items)), "test")
    assert lazy[7] == items[7] and lazy[-1] == items[-1] and fetched == [1, 4]
    for window in (slice(3, 17), slice(0, 23), slice(20, 99), slice(-4, None), slice(1, 20, 3), slice(9, 2)):
        assert lazy[window] == items[window]
    assert list(lazy) == items and lazy == items and lazy != items[:-1]
    with pytest.raises(IndexError):
        lazy[23]


def test_dependency_records_are_stored_without_null_fields(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    """A lockfile's thousands of records mostly leave their optional fields unset: stored nulls made the
    RepoContext larger than the repository. They are left out, and loading gives the same models back."""
    repo = make_repo({**FILES, "requirements.txt": "pyyaml==6.0\nrequests>=2.31\n"})
    store = RepoContextStore(tmp_path / "home")
    context = gather(repo)
    store.save(context)
    raw = store.load_raw(repo)
    assert raw is not None
    records = [record for group in raw["dependencies"].values() for record in group]
    assert records and all(None not in record.values() for record in records)
    requests = raw["dependencies"]["requests"][0]
    assert "version" not in requests and requests["constraint"] == ">=2.31"  # unset fields omitted, set ones kept
    assert store.load(repo).dependencies == context.dependencies


def test_atomic_write_replaces_whole_and_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "store" / "x.json"
    parts.atomic_write(target, "first")
    # A temp file a killed process left under the name this process would pick next (a recycled pid):
    # O_EXCL refuses it and the next name is taken; the leftover is not this write's to remove.
    serial = next(parts._TEMP_SERIAL)
    stale = target.parent / f".x.json.{os.getpid()}-{serial + 1}.tmp"
    stale.write_text("left by a killed process")
    parts.atomic_write(target, b"second")
    assert target.read_text() == "second"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # private, as tempfile.mkstemp made it
    assert sorted(p.name for p in target.parent.iterdir()) == [stale.name, "x.json"]

    def full_disk(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(parts.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space"):  # the rename fails: the old file stands, the temp file goes
        parts.atomic_write(target, b"third")
    assert target.read_text() == "second"
    assert sorted(p.name for p in target.parent.iterdir()) == [stale.name, "x.json"]
