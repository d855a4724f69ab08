"""The probes' costly work starts in forked workers before the first probe runs (Probe.start): lockfile parses,
per-file analyses. The snapshot is the one a serial gather makes, and a probe whose start fails still runs."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from repocontext import gather as gather_module
from repocontext import parallel
from repocontext.deps import locks
from repocontext.gather import gather
from repocontext.probe import Probe, ProbeContext, ProbeOutput, Started
from repocontext.probes import ALL_PROBES
from tests.test_parallel import REPO_FILES


def _lockfile(names: list[str]) -> str:
    """A package-lock.json (lockfileVersion 1) as npm writes it: two-space JSON, nested dependencies."""
    dependencies = {name: {"version": "1.0.0", "requires": {"left-pad": "^1.0.0"},
                           "dependencies": {"left-pad": {"version": "1.3.0"}}} for name in names}
    return json.dumps({"name": "web", "lockfileVersion": 1, "requires": True, "dependencies": dependencies},
                      indent=2) + "\n"


FILES = {
    **REPO_FILES,
    "web/package-lock.json": _lockfile([f"pkg-{i}" for i in range(40)]),
    "api/package.json": '{"name": "api", "dependencies": {"express": "4.17.1"}}\n',
    "api/package-lock.json": _lockfile(["express", "debug", "ms"]),
}


def _json(context: Any) -> str:
    return re.sub(r'"gathered_at":"[^"]*"', '"gathered_at":""', context.model_dump_json())


@pytest.fixture
def no_break_even(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "BREAK_EVEN_S", 0.0)  # the small test repository's work takes the fork path


def test_lockfiles_parse_in_workers_and_the_snapshot_is_the_serial_one(
        make_repo: Callable[..., Path], no_break_even: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parallel.can_fork(), "another thread is running: the process path cannot be tested"
    log = tmp_path / "parsed-by"
    original = locks.parse_lock

    def logged(kind: str, path: str, *rest: Any) -> locks.LockResult:
        with log.open("a") as out:  # the workers are other processes: they tell through a file
            out.write(f"{os.getpid()} {path}\n")
        return original(kind, path, *rest)

    monkeypatch.setattr(locks, "parse_lock", logged)
    started: list[tuple[int, bool]] = []
    original_start = parallel.start_map

    def recorded(*args: Any, **kwargs: Any) -> parallel.Pending:
        pending = original_start(*args, **kwargs)
        started.append((len(args[1]), pending.forked))
        return pending

    monkeypatch.setattr(parallel, "start_map", recorded)
    repo = make_repo(FILES)
    serial = gather(repo, workers=1)
    assert {line.split()[0] for line in log.read_text().splitlines()} == {str(os.getpid())}
    assert not any(forked for _, forked in started)
    log.unlink()
    early = gather(repo, workers=2)
    parsed_by = dict(reversed(line.split()) for line in log.read_text().splitlines())
    assert set(parsed_by) == {"api/package-lock.json", "web/package-lock.json"}  # each parsed once
    assert (2, True) in started  # the two lockfiles' parses were started in a forked worker
    assert _json(early) == _json(serial)
    assert len(serial.dependencies["left-pad"]) == 43  # the lockfiles were read: one nested copy per package


def test_a_first_gather_records_the_fingerprints_a_later_one_computes(make_repo: Callable[..., Path],
                                                                     no_break_even: None) -> None:
    """A first gather fingerprints each probe after its run (the containers probe's parses are known then); the
    hashes are those worked out before any run, so the next gather reuses every probe."""
    repo = make_repo(FILES)
    first = gather(repo, workers=2)
    ctx = ProbeContext(root=repo.resolve(), files=first.files, options={}, upstream={})
    ahead = gather_module._fingerprints(ALL_PROBES, ctx)
    assert {name: run.inputs_hash for name, run in first.meta.probes.items()} == ahead
    again = gather(repo, previous=first.model_dump(mode="json"), workers=2)
    assert all(run.reused for run in again.meta.probes.values())


class _StartFails(Probe):
    name = "start_fails"
    version = "1"
    produces = ("conventions",)

    def start(self, ctx: ProbeContext, cache: Any, nice: int = 0) -> Started | None:
        raise OSError("the index could not be opened")

    def warm(self, ctx: ProbeContext) -> None:
        raise OSError("the index could not be opened")

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        return ProbeOutput(values={"conventions": {"formatters": ["black"]}})


class _RunFails(_StartFails):
    name = "run_fails"

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        raise OSError("the index could not be opened")


def test_a_probe_whose_start_or_warm_fails_still_runs_and_its_failure_is_its_own(
        make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.md": "# x\n"})
    ran = gather(repo, probes=[_StartFails()])
    assert ran.conventions.formatters == ["black"]
    failed = gather(repo, probes=[_RunFails()])
    assert [d.message for d in failed.diagnostics if d.probe == "run_fails"] == [
        "probe failed: OSError: the index could not be opened"]
