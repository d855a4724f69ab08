"""Benchmark (issue 22 §7): whole-process `planner dispatch` for one package on a ~1,000-file repository.

pythondotorg from ../shared/corpus (~1,000 tracked files) at a case's vulnerable commit (default: case 2); each run is
`python -m planner dispatch vulnerability-remediation --repo R --advisories PYPA --input package=P --json`
as a child process, timed from start to exit (realworld_common.run_dispatch). Cold: a fresh PLANNER_HOME
(no RepoContext, no compiled advisory index: the dispatch gathers); warm: the same home again, the snapshot
fresh. Each is run --runs times; the median and the range are printed against the targets (cold ≤ 2 s,
warm ≤ 1 s). Exits 0 with a reason when the corpus is absent.

Run: python bench/dispatch_one.py [--runs 3] [--package pillow] [--case 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from realworld_common import CORPUS, fmt_s, git, median, run_dispatch, target_line

TARGETS = {"cold": 2.0, "warm": 1.0}


def _checkout(tmp: Path, case: dict[str, str]) -> Path:
    repo = tmp / "pythondotorg"
    git(tmp, "clone", "-q", str(CORPUS / "pythondotorg.bundle"), str(repo))
    git(repo, "checkout", "-q", "--detach", case["vulnerable_commit"])
    return repo


def _one(args: list[str], home: Path) -> tuple[float, str]:
    run = run_dispatch(args, home, timeout=300, model=None)
    items = (run.result or {}).get("items") or []
    status = ",".join(sorted({str(i.get("status")) for i in items})) or str(run.problem or (run.result or {}).get(
        "status"))
    return run.seconds, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", type=int, default=2, help="pythondotorg-cases.json case, 1-based (2: django 2.2.24, "
                        "a same-line fix the recipe patches)")
    parser.add_argument("--package", help="default: the case's package")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    advisories = CORPUS.parent / "advisories" / "pypa"
    if not (CORPUS / "pythondotorg.bundle").is_file() or not advisories.is_dir():
        print(f"skipped: the corpus or advisories are not at {CORPUS}")
        return
    case = json.loads((CORPUS / "pythondotorg-cases.json").read_text())[options.case - 1]
    package = options.package or case["package"]
    with tempfile.TemporaryDirectory(prefix="bench-dispatch-one-") as tmp:
        repo = _checkout(Path(tmp), case)
        files = len(git(repo, "ls-files").stdout.splitlines())
        args = ["vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                "--input", f"package={package}"]
        figures: dict[str, list[float]] = {"cold": [], "warm": []}
        for n in range(options.runs):
            home = Path(tmp) / f"home{n}"
            for kind in ("cold", "warm"):  # the warm run reuses the home the cold run just filled
                seconds, status = _one(args, home)
                figures[kind].append(seconds)
                print(f"  run {n + 1} {kind:4s} {fmt_s(seconds):>8s}  items: {status}")
    print(f"pythondotorg @ {case['vulnerable_commit'][:10]} ({files} files), package={package}, {options.runs} runs")
    for kind, values in figures.items():
        mid = median(values)
        print(target_line(f"dispatch {kind} (median, min–max {fmt_s(min(values))}–{fmt_s(max(values))})",
                          fmt_s(mid), f"≤ {TARGETS[kind]:.0f} s", mid is not None and mid <= TARGETS[kind]))
    if options.json:
        options.json.write_text(json.dumps({"files": files, "package": package, **figures}, indent=2) + "\n")


if __name__ == "__main__":
    main()
