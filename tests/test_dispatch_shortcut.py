"""A run with no work item is finished without LangGraph (planner/run/shortcut.py), and leaves the same record
as a run of the graph: report, `--json` output, exit code, run store, provenance, the UI's state."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, run_main
from test_cli_startup import HEAVY, imported, probed, through_entry

from planner import tokens
from planner.run import shortcut
from planner.run.graph import build_graph
from planner.store.runs import read_state

ADVISORIES = Path(__file__).resolve().parent.parent / "examples" / "advisories"  # pyyaml, requests
SAFE = {"requirements.txt": "requests==2.32.3\n", "app.py": "import requests\n"}  # nothing vulnerable
VULNERABLE = {"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"}
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")


def test_the_shortcut_runs_the_graphs_nodes_in_the_graphs_order() -> None:
    """HEAD + TAIL is the graph's path when `split` fans out nothing (`fan_out` goes to `join`)."""
    edges = build_graph().get_graph().edges
    following: dict[str, list[str]] = {}
    for edge in edges:
        following.setdefault(edge.source, []).append(edge.target)
    path, node = [], "__start__"
    while node != "__end__":
        targets = following[node]
        node = "join" if node == "split" else targets[0]
        assert node in targets and (node == "__end__" or len(targets) == 1 or node == "join"), (node, targets)
        path.append(node)
    assert path[:-1] == [name for name, _ in (*shortcut.HEAD, *shortcut.TAIL)]
    assert set(following["split"]) == {"work", "join"}


def _encodings(*args: str) -> tuple[int, int]:
    """(whole encodings, subset counters) a `planner ARGS` process built."""
    whole, subset = probed(*args)["ENCODING "]
    return whole, subset


def test_a_no_op_dispatch_counts_its_bundle_without_the_whole_encoding(home: Path,
                                                                       make_repo: Callable[..., Path]) -> None:
    tokens._ranks()  # the sealed caches the subset counter loads are in place (a first process writes them)
    args = ["dispatch", "vulnerability-remediation", "--advisories", str(ADVISORIES), "--repo"]
    assert _encodings(*args, str(make_repo(SAFE))) == (0, 1)
    assert _encodings(*args, str(make_repo(VULNERABLE)))[0] == 1  # a run with work: its bundles count far more


def test_a_no_op_dispatch_imports_no_graph_stack(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo(SAFE)
    modules = imported("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(ADVISORIES),
                       full=True)
    assert "repocontext.probes.vulnerabilities" in modules  # it gathered, advisories included
    assert "planner.run.finalize" in modules  # and finished the run
    assert not {m.split(".")[0] for m in modules} & set(HEAVY), {m.split(".")[0] for m in modules} & set(HEAVY)
    rows = json.loads(run_cli("runs", "list", "--json").stdout)
    assert [r["status"] for r in rows if r["kind"] == "run"] == ["no_changes"]
    run_id = next(r["id"] for r in rows if r["kind"] == "run")
    assert not imported("runs", "show", run_id) & set(HEAVY)  # its state is the kept one, not a checkpoint
    # a dispatch with work goes through the graph
    work = make_repo(VULNERABLE)
    assert "langgraph" in imported("dispatch", "vulnerability-remediation", "--repo", str(work),
                                   "--advisories", str(ADVISORIES))


def _normal(value: Any, run_id: str, home: Path) -> Any:
    """`value` with what differs between two runs of the same thing (id, times, home) replaced."""
    text = json.dumps(value, sort_keys=True).replace(run_id, "RUN").replace(str(home), "HOME")
    return json.loads(STAMP.sub("TIME", text))


def _record(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path, repo: Path,
            *args: str, task_class: str = "vulnerability-remediation") -> dict[str, Any]:
    """Everything a run leaves, normalised: dispatch's exit code, --json output and live lines; the report; the run
    store's list and show; provenance; resume; the UI's state."""
    monkeypatch.setenv("PLANNER_HOME", str(home))
    code, out, err = run_main(capsys, monkeypatch, "dispatch", task_class, "--repo", str(repo),
                              "--advisories", str(ADVISORIES), *args)
    run_id = json.loads(out)["run_id"] if "--json" in args else err.split()[1]
    seen: dict[str, Any] = {"dispatch": [code, out, "".join(err.splitlines()[1:])]}  # unwrapped
    seen["report"] = (home / "runs" / run_id / "report.md").read_text()
    seen["files"] = sorted(p.name for p in (home / "runs" / run_id).iterdir())
    for command in (["runs", "list"], ["runs", "show", run_id], ["provenance", run_id], ["runs", "resume", run_id]):
        seen[" ".join(command[:2])] = run_main(capsys, monkeypatch, *command, "--json")
    state = read_state(home, run_id)
    seen["state"] = {**state, "nodes_done": sorted(state.get("nodes_done", []))}
    return _normal(seen, run_id, home)


@pytest.mark.parametrize("args", [("--json",), ()])
@pytest.mark.parametrize("files", [SAFE, {"README.md": "no dependencies\n"}], ids=["safe", "no-manifest"])
def test_a_no_op_run_leaves_the_record_a_graph_run_leaves(home: Path, make_repo: Callable[..., Path],
                                                          tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...],
                                                          files: dict[str, str]) -> None:
    repo = make_repo(files)
    monkeypatch.setattr(shortcut, "ENABLED", False)
    graph = _record(capsys, monkeypatch, tmp_path / "graph", repo, *args)
    monkeypatch.setattr(shortcut, "ENABLED", True)
    fast = _record(capsys, monkeypatch, tmp_path / "short", repo, *args)
    assert graph["dispatch"][0] == 0 and "no_changes" in json.dumps(graph["runs list"])
    assert "- Advisories: " in graph["report"] and "(PyPI 2)" in graph["report"]  # what was checked is said
    assert [key for key in graph if fast[key] != graph[key]] == [], (fast, graph)
    assert "checkpoints.sqlite" not in {p.name for p in (tmp_path / "short").iterdir()}  # it never ran the graph


def test_a_migration_with_no_dockerfile_is_finished_without_the_graph(
        home: Path, make_repo: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo({"app.py": "print('hi')\n"})
    monkeypatch.setattr(shortcut, "ENABLED", False)
    graph = _record(capsys, monkeypatch, tmp_path / "graph", repo, "--json", task_class="distroless-migration")
    monkeypatch.setattr(shortcut, "ENABLED", True)
    fast = _record(capsys, monkeypatch, tmp_path / "short", repo, "--json", task_class="distroless-migration")
    assert "the gather found no Dockerfile" in graph["report"]
    assert [key for key in graph if fast[key] != graph[key]] == [], (fast, graph)
    assert "checkpoints.sqlite" not in {p.name for p in (tmp_path / "short").iterdir()}


@pytest.mark.parametrize("args", [("--json",), ()])
def test_a_run_with_work_goes_on_in_the_graph(home: Path, make_repo: Callable[..., Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                              args: tuple[str, ...]) -> None:
    """Its head already run, the graph runs it from the start, the head's nodes answering with what they did
    (a gather done twice would read `fresh`, not `gathered`): it ends as a run of the graph alone does, same
    patch, report, record, checkpointed state, and each node shown once."""
    repo = make_repo(VULNERABLE)
    monkeypatch.setattr(shortcut, "ENABLED", False)
    graph = _record(capsys, monkeypatch, tmp_path / "graph", repo, *args)
    monkeypatch.setattr(shortcut, "ENABLED", True)
    handed = _record(capsys, monkeypatch, tmp_path / "short", repo, *args)
    assert graph["dispatch"][0] == 0 and "+requests==2.31.0" in graph["dispatch"][1]
    assert graph["state"]["repocontext"]["gathered"] is True
    assert (tmp_path / "short" / "checkpoints.sqlite").is_file()
    assert [key for key in graph if handed[key] != graph[key]] == [], (handed, graph)


def test_a_class_that_splits_its_bundle_goes_to_the_graph(home: Path, make_repo: Callable[..., Path]) -> None:
    """Without a RepoContext (--no-gather) the items come from `split`: not decided before the graph."""
    repo = make_repo(SAFE)
    modules = imported("dispatch", "vulnerability-remediation", "--repo", str(repo), "--no-gather",
                       "--advisories", str(ADVISORIES))
    assert "langgraph" in modules


def test_a_no_op_dispatch_through_the_entry_point(home: Path, make_repo: Callable[..., Path]) -> None:
    """The console script runs it in this process and ends without tearing the process down: the exit
    handlers still run (through_entry's module list is written by one), the output is whole, the status kept."""
    repo = make_repo(SAFE)
    done, modules = through_entry("dispatch", "vulnerability-remediation", "--repo", str(repo),
                                  "--advisories", str(ADVISORIES), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "no_changes"
    assert not {m.split(".")[0] for m in modules} & set(HEAVY)


def test_the_daemon_still_preloads_the_graph_stack_and_every_probe() -> None:
    """planner.run.dispatch no longer imports the graph, nor repocontext.probes every probe: the daemon's
    preload names what its forked commands would otherwise import each time."""
    probe = ("import importlib, json, sys\nfrom planner.daemon.server import PRELOAD\n"
             "[importlib.import_module(name) for name in PRELOAD]\nprint(json.dumps(sorted(sys.modules)))")
    modules = set(json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                            check=True, timeout=120).stdout))
    assert {"langgraph.graph", "planner.run.graph", "repocontext.probes.build",
            "repocontext.probes.containers"} <= modules
