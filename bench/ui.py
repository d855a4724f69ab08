"""Benchmark: `planner ui` server-side time for the runs page with 10,000 runs and a 2,000-entry run page.

Dispatches one real remediation run on a copy of examples/shop, then records it
again under 10,000 new ids (runs table rows, provenance records, index lines and
the runs list's table rows, as dispatch writes them; statuses mixed). Then dispatches a YAML-only task class on
a 2,000-file repo, whose bundle records 2,000+ provenance entries. Each page is
requested in-process through the ASGI app (FastAPI's test client: routing,
reading PLANNER_HOME, rendering; no network): "cold" on a fresh app (every store
read from disk), then the first and N more requests on an app started as `planner ui`
starts it (warm()).
Run: python bench/ui.py [--runs 10000] [--files 2000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from planner.config import Settings  # noqa: E402
from planner.run.dispatch import dispatch  # noqa: E402
from planner.store import runindex  # noqa: E402
from planner.store.provenance import ProvenanceRecord, ProvenanceStore, index_summary  # noqa: E402
from planner.store.runs import RunStore  # noqa: E402
from planner.ui.app import create_app, warm  # noqa: E402
from planner.ui.auth import cookie_name, cookie_value, signed_in  # noqa: E402

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
TOKEN = "bench-token-for-the-served-app"
STATUSES = ("succeeded", "succeeded", "succeeded", "needs_llm", "blocked", "failed", "needs_regeneration")
WIDE = """task_class: wide
version: 1
description: A task class that lists every source file.
must_read:
  - glob: README.md
should_read:
  - glob: "src/**/*.py"
budget: {max_files: 50, max_tokens: 8000, per_file_max_tokens: 500}
"""


def _git_repo(path: Path) -> Path:
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run([*GIT, "-C", str(path), *args], check=True)
    return path


def _many_runs(settings: Settings, tmp: Path, count: int) -> None:
    """One real run, then `count` more records of it under new ids (what the runs page reads)."""
    repo = tmp / "shop"
    shutil.copytree(ROOT / "examples" / "shop", repo)
    state = dispatch(settings, "vulnerability-remediation", _git_repo(repo), {},
                     {"advisories": str(ROOT / "examples" / "advisories")})
    record = ProvenanceStore(settings.home).get(state["run_id"])
    runs, runs_dir = RunStore(settings.home), settings.home / "runs"
    rows, lines, summaries = [], [], []
    for n in range(count):
        run_id = f"20250101-{n // 3600:02d}{n // 60 % 60:02d}{n % 60:02d}-{n:06x}"
        status = STATUSES[n % len(STATUSES)]
        created = f"2025-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}+00:00"
        copy = record.model_copy(update={"id": run_id, "status": status, "created_at": created})
        (runs_dir / f"{run_id}.json").write_text(copy.model_dump_json())
        summaries.append(index_summary(copy))
        lines.append(json.dumps(summaries[-1], sort_keys=True))
        rows.append((run_id, copy.task_class, copy.repocontext.repo, "{}", "{}", status, None, created, created))
    with runs.db:  # type: ignore[union-attr]
        runs.db.executemany("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?)", rows)  # type: ignore[union-attr]
        for summary in summaries:  # the runs list's rows, as ProvenanceStore.append writes them (in one commit)
            runindex.record(runs.db, summary)  # type: ignore[arg-type]
    with (runs_dir / "index.jsonl").open("a") as index:
        index.write("\n".join(lines) + "\n")
    runs.close()


def _wide_run(settings: Settings, tmp: Path, files: int) -> tuple[str, int]:
    """A real dispatch whose bundle records one provenance entry per source file."""
    repo = tmp / "wide"
    for n in range(files):
        path = repo / "src" / f"pkg{n // 100}" / f"mod{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{n}():\n    return {n}\n")
    (repo / "README.md").write_text("# wide\n")
    state = dispatch(settings, "wide", _git_repo(repo), {}, {})
    record: ProvenanceRecord = ProvenanceStore(settings.home).get(state["run_id"])
    return state["run_id"], len(record.entries) + sum(len(b["entries"]) for b in record.item_bundles)


def _time(settings: Settings, url: str, repeat: int) -> tuple[float, float, float, float, int]:
    """(cold p50: a fresh app each time, so PLANNER_HOME is read from disk; first request after `planner ui`'s
    start-up warm(); warm p50 and p95, later requests to that started app, as `planner ui` serves; page size)."""
    colds, started = [], []
    for _ in range(5):
        client = TestClient(create_app(settings))
        start = time.perf_counter()
        first = client.get(url)
        colds.append((time.perf_counter() - start) * 1000)
        assert first.status_code == 200, (url, first.text[:200])
        app = create_app(settings)
        warm(app)
        # behind the token gate, with the cookie a signed-in browser sends (the Host check needs a real host)
        served = TestClient(signed_in(app, TOKEN, 8765), cookies={cookie_name(8765): cookie_value(TOKEN)})
        start = time.perf_counter()
        assert served.get(url).status_code == 200, "the token gate refused the signed-in client"
        started.append((time.perf_counter() - start) * 1000)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        served.get(url)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(colds), statistics.median(started), statistics.median(samples), \
        samples[int(0.95 * (len(samples) - 1))], len(first.content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tccms = Path(tmp) / "task-classes"
        tccms.mkdir()
        (tccms / "wide.yaml").write_text(WIDE)
        settings = Settings(home=Path(tmp) / "home", task_class_dirs=[tccms, *Settings.from_env().task_class_dirs])
        started = time.perf_counter()
        _many_runs(settings, Path(tmp), args.runs)
        wide, entries = _wide_run(settings, Path(tmp), args.files)
        print(f"setup: {args.runs + 2} runs, a {entries}-entry run ({time.perf_counter() - started:.1f} s)")
        warm_up = TestClient(create_app(settings))  # compile the templates once, as a server would at its start
        for url in ("/runs", f"/runs/{wide}"):
            warm_up.get(url)
        for label, url, target in ((f"runs page, {args.runs + 2} runs", "/runs", 150),
                                   ("runs page filtered (status=blocked), page 3", "/runs?status=blocked&page=3", 150),
                                   ("runs page sorted by tokens, page 2", "/runs?sort=tokens&page=2", 150),
                                   (f"run page, {entries} provenance entries", f"/runs/{wide}", 250)):
            cold, after_start, p50, p95, size = _time(settings, url, args.repeat)
            print(f"{label}: cold p50 {cold:.0f} ms, first after start-up {after_start:.0f} ms, "
                  f"warm p50 {p50:.0f} ms, p95 {p95:.0f} ms "
                  f"({size // 1024} KiB; target ≤ {target} ms)")


if __name__ == "__main__":
    main()
