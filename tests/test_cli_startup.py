"""Fast start-up: commands that never run the graph never import the graph stack.

Timings live in bench/startup.py (a bench, not a timed test); this asserts the module set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

HEAVY = ("langgraph", "langchain", "langchain_core", "langsmith", "celery", "kombu", "tree_sitter_go",
         "tree_sitter_javascript", "tree_sitter_typescript")
PROBE = """
import json, sys
from planner.cli import main
sys.argv = ["planner", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted({m.split(".")[0] for m in sys.modules})) + "\\n")
sys.stderr.write("\\nFULL " + json.dumps(sorted(sys.modules)) + "\\n")
tokens = sys.modules.get("planner.tokens")
if tokens is not None:  # whole encodings and subset counters built (tests/test_dispatch_shortcut.py)
    built = (tokens.encoding.cache_info().currsize, tokens._subset.cache_info().currsize)
    sys.stderr.write("\\nENCODING " + json.dumps(built) + "\\n")
"""


def imported(*args: str, full: bool = False) -> set[str]:
    """The top-level packages (`full`: every module) a `planner ARGS` process imported."""
    return set(probed(*args)["FULL " if full else "MODULES "])


def probed(*args: str) -> dict[str, Any]:
    """What a `planner ARGS` process reported at its end (PROBE), by tag."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    tags = ("MODULES ", "FULL ", "ENCODING ")
    return {tag: json.loads(line.removeprefix(tag)) for line in proc.stderr.splitlines()
            for tag in tags if line.startswith(tag)}


def test_a_gather_imports_only_the_parsers_its_repository_needs(home: Path, make_repo: Callable[..., Path]) -> None:
    small = make_repo({"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"})
    modules = imported("gather", str(small), full=True)
    assert "repocontext.deps.requirements" in modules  # it read the requirement file
    # No TOML, JS or Go file: no TOML reader, no tree-sitter; a first gather: no re-gather or update code.
    unneeded = {"repocontext.osv.db", "repocontext.dockerfile.parser", "repocontext.deployments",
                "repocontext.deps.gosum", "repocontext.deps.yarn_lock", "repocontext.deps.npm_lock",
                "tomllib", "repocontext.deps.toml_lines", "repocontext.deps.pyproject", "tree_sitter",
                "repocontext.regather", "repocontext.probes.call_sites_delta", "repocontext.probes.tests_delta",
                "packaging.specifiers", "packaging.requirements"}  # `requests==2.30.0` is a plain pin
    assert not modules & unneeded, modules & unneeded
    docker = make_repo({"Dockerfile": "FROM python:3.12\n", "go.mod": "module x\n\ngo 1.22\n",
                        "main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println() }\n',
                        "pyproject.toml": '[project]\nname = "x"\ndependencies = ["requests>=2"]\n'})
    modules = imported("gather", str(docker), full=True)
    assert {"repocontext.dockerfile.parser", "repocontext.deps.gomod", "tree_sitter", "tomllib",
            "repocontext.deps.pyproject"} <= modules, modules


def test_help_and_gather_import_no_graph_stack(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"})
    assert not imported("--help") & set(HEAVY)
    modules = imported("gather", str(repo))
    assert "repocontext" in modules and "planner" in modules  # it really gathered
    assert not modules & set(HEAVY), modules & set(HEAVY)
    # Without PLANNER_REDIS_URL a gather warms nothing: no Redis client (real or embedded), no tokenizer.
    assert not modules & {"redis", "fakeredis", "tiktoken"}, modules & {"redis", "fakeredis", "tiktoken"}
    assert not imported("runs", "list") & set(HEAVY)
    # dispatch imports the graph when it runs, not to print its help or refuse a stray argument
    assert not imported("dispatch", "--help") & set(HEAVY)
    assert not imported("dispatch", "vulnerability-remediation", str(repo)) & set(HEAVY)


def test_help_lists_every_command_and_typos_get_a_suggestion(home: Path) -> None:
    from planner.cli import COMMANDS

    shown = run_cli("--help")
    assert shown.returncode == 0
    assert all(name in shown.stdout for name in COMMANDS)
    typo = run_cli("gathr", ".")
    assert typo.returncode == 2 and "Did you mean 'gather'" in typo.stderr
    sub = run_cli("runs", "--help")
    assert sub.returncode == 0 and "list" in sub.stdout and "install-completion" not in sub.stdout


def test_a_one_run_dispatch_loads_no_redis_client(home: Path, make_repo: Callable[..., Path]) -> None:
    """Without PLANNER_REDIS_URL, `planner dispatch` makes one run and exits: an embedded hot-view store would
    start empty and die with it, so neither it nor the Redis client is loaded; the run still succeeds."""
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"})
    advisories = Path(__file__).resolve().parent.parent / "examples" / "advisories"
    modules = imported("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories))
    assert "langgraph" in modules  # it really ran the graph
    assert not modules & {"redis", "fakeredis"}, modules & {"redis", "fakeredis"}
    record = json.loads(run_cli("runs", "list", "--json").stdout)
    assert [r["status"] for r in record] == ["succeeded"]


ENTRY = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("\\nFULL " + json.dumps(sorted(sys.modules)) + "\\n"))
sys.argv = ["planner", *sys.argv[1:]]
from planner.daemon.client import main
main()
"""


def through_entry(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`planner ARGS` through the console script's entry point (no daemon), and every module it imported."""
    proc = subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PLANNER_DAEMON": "off"})
    line = next(x for x in proc.stderr.splitlines() if x.startswith("FULL "))
    return proc, set(json.loads(line.removeprefix("FULL ")))


def test_a_plain_gather_skips_typer_and_anything_else_goes_through_it(home: Path,
                                                                      make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"})
    done, modules = through_entry("gather", str(repo), "--json")
    # It exits without the interpreter's teardown, yet as it would: its whole output, the atexit handler's
    # module list, the status.
    assert done.returncode == 0 and json.loads(done.stdout)["meta"]["root"] == str(repo.resolve())
    assert not {m for m in modules if m.split(".")[0] in ("typer", "click", "rich")}
    # pydantic's plugin loader (importlib.metadata) is a stand-in while plugins are disabled, the default; a
    # small repository's files are read in this process (no multiprocessing); no INI file to read, no input's
    # name to suggest; with PLANNER_DAEMON=off no socket to a daemon; the secret rules are read beside their module,
    # from their compiled JSON (no YAML parser for a repository without YAML); a plain requirement line is read
    # without packaging's grammar; the store writes its files without tempfile (nor shutil, which it imports)
    unneeded = {"importlib.metadata", "multiprocessing", "configparser", "difflib", "socket", "importlib.resources",
                "yaml", "packaging.requirements", "tempfile", "shutil"}
    assert not modules & unneeded, modules & unneeded
    summary, modules = through_entry("gather", "--advisories=/nonexistent-source", str(repo))
    assert summary.returncode == 2 and summary.stderr.startswith("error: ") and "typer" not in modules
    missing, _ = through_entry("gather", str(repo / "nope"), "--json")  # the fast path's errors are the CLI's
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    assert json.loads(missing.stdout)["status"] == "error"
    helped, modules = through_entry("gather", "--help")
    assert helped.returncode == 0 and "--advisories" in helped.stdout and "typer" in modules
    typo, _ = through_entry("gather", str(repo), "--jsn")
    assert typo.returncode == 2 and "--jsn" in typo.stderr  # typer's usage error, as before


def test_pydantic_plugins_load_when_the_user_asks_for_them(home: Path, make_repo: Callable[..., Path],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n"})
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")  # set, but disabling none: pydantic's own loader looks
    done, modules = through_entry("gather", str(repo), "--json")
    assert done.returncode == 0 and "importlib.metadata" in modules


def test_the_plugin_loader_stand_in_answers_as_pydantic_does_when_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic.plugin import _loader

    from planner.daemon.client import PLUGIN_LOADER, without_pydantic_plugins

    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "__all__")
    monkeypatch.delitem(sys.modules, PLUGIN_LOADER)
    without_pydantic_plugins()
    assert sys.modules[PLUGIN_LOADER].get_plugins() == tuple(_loader.get_plugins()) == ()


def test_every_command_leaves_pydantic_plugins_alone_unless_asked(home: Path, make_repo: Callable[..., Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only the gather: a dispatch builds many more models, and the plugin scan is paid once per process."""
    repo = make_repo({"requirements.txt": "requests==2.30.0\n"})
    done, modules = through_entry("dispatch", "distroless-migration", "--repo", str(repo))
    assert done.returncode == 0 and "pydantic.main" in modules and "importlib.metadata" not in modules
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")
    done, modules = through_entry("dispatch", "distroless-migration", "--repo", str(repo))
    assert done.returncode == 0 and "importlib.metadata" in modules
