"""`planner advisories sync` updating a synced ecosystem from the records changed since (the bucket's
`<ECOSYSTEM>/modified_id.csv` and `<ECOSYSTEM>/<ID>.json`), against the real http.server on loopback that
tests/test_advisories_sync.py serves osv.dev's layout with, its requests logged."""

from __future__ import annotations

import json
import threading
import zipfile
from collections.abc import Iterator
from functools import partial
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import run_cli
from test_advisories_sync import _Bucket, _records, _snapshot, _sync, _zip

CHANGED = "PYSEC-2021-142"  # pyyaml, in examples/advisories: gains a range and a newer `modified`
ADDED = "PYSEC-2024-999"  # a record the first sync did not have
OLD_MODIFIED = "2023-06-05T01:13:00.534973Z"  # the newest `modified` in examples/advisories


class _Logged(_Bucket):
    requested: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.requested.append(self.path)
        super().do_GET()


@pytest.fixture
def bucket(tmp_path: Path) -> Iterator[tuple[str, Path, set[str], list[str]]]:
    """(URL, folder, paths to cut short, paths requested) of a real HTTP server serving PyPI in osv.dev's layout."""
    folder = tmp_path / "bucket"
    _zip(folder / "PyPI" / "all.zip", _records("PyPI"))
    cut: set[str] = set()
    requested: list[str] = []
    handler = type("Handler", (_Logged,), {"cut": cut, "requested": requested})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder, cut, requested
    finally:
        server.shutdown()
        server.server_close()


def _changed_record() -> dict:
    record = json.loads(_records("PyPI")[f"{CHANGED}.json"])
    record["modified"] = "2024-02-01T00:00:00.123456789Z"
    record["affected"][0]["ranges"].append({"type": "ECOSYSTEM", "events": [{"introduced": "6.0"},
                                                                            {"fixed": "6.0.1"}]})
    return record


def _added_record() -> dict:
    return {"id": ADDED, "modified": "2024-02-02T00:00:00Z", "details": "a new one",
            "affected": [{"package": {"name": "flask", "ecosystem": "PyPI"},
                          "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.3.2"}]}]}]}


def _publish(folder: Path, records: dict[str, dict], listed: list[tuple[str, str]]) -> None:
    """Write records as `PyPI/<ID>.json`, all.zip as it would be now, and modified_id.csv (newest first: `listed`,
    then the newest record the first sync had, which an incremental sync reads but does not fetch)."""
    members = {**_records("PyPI")}
    for ident, record in records.items():
        data = json.dumps(record).encode()
        (folder / "PyPI" / f"{ident}.json").write_bytes(data)
        members[f"{ident}.json"] = data
    _zip(folder / "PyPI" / "all.zip", members)
    lines = [*listed, (OLD_MODIFIED, "PYSEC-2023-74")]  # what the first sync had: where reading stops
    (folder / "PyPI" / "modified_id.csv").write_text("".join(f"{t},{i}\n" for t, i in lines))


def _manifest(home: Path) -> dict:
    return json.loads((home / "advisories" / "manifest.json").read_text())["ecosystems"]["PyPI"]


def test_a_second_sync_fetches_only_the_records_changed_since(bucket: tuple[str, Path, set[str], list[str]],
                                                              home: Path) -> None:
    url, folder, _, requested = bucket
    code, _, err = _sync(url, "PyPI")
    assert code == 0, err
    first = _manifest(home)
    assert first["update"] == "full" and first["modified"] == OLD_MODIFIED and first["records"] == 2
    _publish(folder, {CHANGED: _changed_record(), ADDED: _added_record()},
             [("2024-02-02T00:00:00Z", ADDED), ("2024-02-01T00:00:00.123456789Z", CHANGED)])
    requested.clear()
    code, _, err = _sync(url, "PyPI")
    assert code == 0, err
    assert sorted(requested) == ["/PyPI/PYSEC-2021-142.json", "/PyPI/PYSEC-2024-999.json", "/PyPI/modified_id.csv"]
    assert "PyPI: 3 records verified (incremental: 2 fetched)" in err
    second = _manifest(home)
    assert second["update"] == "incremental" and second["changed"] == 2 and second["records"] == 3
    assert second["modified"] == "2024-02-02T00:00:00Z" and second["synced_at"] >= first["synced_at"]
    assert second["file"] != first["file"]
    with zipfile.ZipFile(home / "advisories" / second["file"]) as archive:
        assert sorted(archive.namelist()) == [f"{CHANGED}.json", "PYSEC-2023-74.json", f"{ADDED}.json"]
        changed = json.loads(archive.read(f"{CHANGED}.json"))
    assert changed == _changed_record()
    shown = json.loads(run_cli("advisories", "show", "--json").stdout)
    assert shown["records"] == {"PyPI": 3}
    # nothing modified since: only the list is read, the zip stays, the time moves on
    requested.clear()
    code, _, err = _sync(url, "PyPI")
    assert code == 0 and requested == ["/PyPI/modified_id.csv"], err
    third = _manifest(home)
    assert third["file"] == second["file"] and third["records"] == 3 and third["changed"] == 0
    # --full: all.zip, as the first sync did
    requested.clear()
    done = run_cli("advisories", "sync", "--source", url, "--full", env={"PLANNER_DAEMON": "off"})
    assert done.returncode == 0 and requested == ["/PyPI/all.zip"], done.stderr
    assert _manifest(home)["update"] == "full" and _manifest(home)["records"] == 3


def test_many_changes_fetch_all_zip(bucket: tuple[str, Path, set[str], list[str]], home: Path) -> None:
    url, folder, _, requested = bucket
    assert _sync(url, "PyPI")[0] == 0
    _publish(folder, {ADDED: _added_record()},
             [(f"2024-03-01T00:{n // 60:02d}:{n % 60:02d}Z", f"PYSEC-2024-{n}") for n in range(501, 0, -1)])
    requested.clear()
    code, _, err = _sync(url, "PyPI")
    assert code == 0, err
    assert requested == ["/PyPI/modified_id.csv", "/PyPI/all.zip"]
    assert _manifest(home)["update"] == "full" and _manifest(home)["records"] == 3


@pytest.mark.parametrize("failure", ["corrupt", "missing", "cut", "bad-list"])
def test_a_failed_incremental_update_replaces_nothing(bucket: tuple[str, Path, set[str], list[str]], home: Path,
                                                      failure: str) -> None:
    url, folder, cut, requested = bucket
    assert _sync(url, "PyPI")[0] == 0
    before = _snapshot(home)
    broken = {"id": CHANGED, "modified": "2024-02-01T00:00:00Z", "affected": "everything"}
    _publish(folder, {ADDED: _added_record(), CHANGED: broken if failure == "corrupt" else _changed_record()},
             [("2024-02-02T00:00:00Z", ADDED), ("2024-02-01T00:00:00Z", CHANGED)])
    if failure == "missing":
        (folder / "PyPI" / f"{CHANGED}.json").unlink()
    elif failure == "cut":
        (folder / "PyPI" / f"{CHANGED}.json").write_text(json.dumps(_changed_record()) + " " * 20000)
        cut.add(f"/PyPI/{CHANGED}.json")
    elif failure == "bad-list":
        (folder / "PyPI" / "modified_id.csv").write_text(f"yesterday,{ADDED}\n")
    requested.clear()
    code, _, err = _sync(url, "PyPI")
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 6 and len(lines) == 1, err
    assert lines[0].endswith("the advisory snapshot is unchanged")
    expected = {"corrupt": f"{url}/PyPI/{CHANGED}.json is not a valid OSV record: malformed {CHANGED}: affected",
                "missing": f"{url}/PyPI/{CHANGED}.json (listed in PyPI/modified_id.csv) answered HTTP 404",
                "cut": f"the download of {url}/PyPI/{CHANGED}.json was interrupted after",
                "bad-list": f"{url}/PyPI/modified_id.csv line 1 is not `<RFC3339 time>,<ID>`"}[failure]
    assert expected in lines[0]
    assert "/PyPI/all.zip" not in requested
    assert _snapshot(home) == before  # the manifest and the zip it names, byte for byte; nothing partial left
