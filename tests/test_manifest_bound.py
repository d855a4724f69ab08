"""A manifest over the size bound (1 MiB, PLANNER_MANIFEST_MAX_BYTES) is skipped with a note instead of parsed:
the note is in the RepoContext, in `planner gather`'s summary and in a run's report."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
ADVISORIES = str(ROOT / "examples" / "advisories")


def _pins(count: int) -> str:
    return "".join(f"package-{n}==1.{n % 50}.{n % 7}  # via app\n" for n in range(count))


def _gather(repo: Path, env: dict[str, str] | None = None) -> tuple[str, dict]:
    summary = run_cli("gather", str(repo), env={"PLANNER_DAEMON": "off", **(env or {})})
    assert summary.returncode == 0, summary.stderr
    data = run_cli("gather", str(repo), "--json", env={"PLANNER_DAEMON": "off", **(env or {})})
    assert data.returncode == 0, data.stderr
    return summary.stdout, json.loads(data.stdout)


def _skips(context: dict) -> list[str]:
    return [d["message"] for d in context["diagnostics"] if d["message"].startswith("skipped: ")]


def test_a_manifest_over_the_bound_is_skipped_with_a_note(make_repo: Callable[..., Path], home: Path) -> None:
    big = _pins(40_000)  # ~1.3 MB: over 1 MiB, under the probes' 2 MB read limit
    repo = make_repo({"requirements.txt": big, "api/requirements.txt": "requests==2.30.0\n"})
    size = len(big.encode())
    started = time.monotonic()
    summary, context = _gather(repo)
    note = f"skipped: requirements.txt ({size} bytes over the 1048576-byte bound)"
    assert f"  {note}\n" in summary
    assert _skips(context) == [note]
    assert [d["level"] for d in context["diagnostics"] if d["message"] == note] == ["warning"]
    assert not any("unreadable" in d["message"] and d["file"] == "requirements.txt" for d in context["diagnostics"])
    declared = {name for name, records in context["dependencies"].items()
                for r in records if r["file"] == "requirements.txt"}
    assert declared == set()  # not one of its 40,000 pins was parsed
    assert "requests" in context["dependencies"]  # the small one still is
    assert time.monotonic() - started < 60  # (it took 13 s and 700 MB for a 2 MB file, per gather)


def test_the_bound_comes_from_the_environment_and_changes_the_answer(make_repo: Callable[..., Path],
                                                                    home: Path) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\nPyYAML==5.3.1\n", "base.txt": _pins(20),
                      "dev-requirements.txt": "-r base.txt\npytest==8.0.0\n"})
    summary, context = _gather(repo)
    assert _skips(context) == [] and "skipped:" not in summary and "requests" in context["dependencies"]
    # a smaller bound: the next gather must not reuse the answer the larger one gave
    size = (repo / "base.txt").stat().st_size
    summary, context = _gather(repo, {"PLANNER_MANIFEST_MAX_BYTES": "100"})
    assert _skips(context) == [f"skipped: base.txt ({size} bytes over the 100-byte bound)"]  # included, once
    assert "package-1" not in context["dependencies"] and "pytest" in context["dependencies"]
    for bad in ("0", "-5", "lots"):  # not a positive number: the default bound
        _, context = _gather(repo, {"PLANNER_MANIFEST_MAX_BYTES": bad})
        assert _skips(context) == [] and "package-1" in context["dependencies"]


def test_a_runs_report_names_the_skipped_manifest(make_repo: Callable[..., Path], home: Path) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "legacy-requirements.txt": _pins(20)})
    env = {"PLANNER_DAEMON": "off", "PLANNER_MANIFEST_MAX_BYTES": "200"}
    size = (repo / "legacy-requirements.txt").stat().st_size
    note = f"- RepoContext note: skipped: legacy-requirements.txt ({size} bytes over the 200-byte bound)"
    for _ in range(2):  # gathered by the run, then reused fresh by the next one
        done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", ADVISORIES,
                       "--json", env=env)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert note in Path(result["report_path"]).read_text()
        assert "requirements.txt" in result["patch"] and "legacy-requirements.txt" not in result["patch"]
