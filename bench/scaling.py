"""Benchmark: how our gather and its peers scale with the size of a tree (1×, 2×, 4×, 8× copies of it).

A sibling of bench/peers.py, whose helpers it imports. For each tree (each --tree: a folder or a .tar.gz;
without --tree, the corpus trees bench/peers.py finds in ../shared) and each scale N (--scales, default
1,2,4,8), the N× tree is a fresh git repository holding N copies of the tree's tracked files under copy-1/,
copy-2/, …, copy-N/ (so the 1× tree is the tree itself, one folder down, with the same marks). Each copy's
text files are made unique, so that content-addressed caches and de-duplication of identical files cannot
shortcut the work: a line naming the copy is appended in the file's comment syntax:

- `# bench copy N`: .py .sh .bash .rb .yaml .yml .toml .cfg .ini .conf .properties .env .txt
  (requirements files and plain text alike), Dockerfile / Dockerfile.* / *.dockerfile, Makefile,
  .gitignore, .dockerignore, .env;
- `// bench copy N`: .js .jsx .mjs .cjs .ts .tsx .go .java .kt .scala .c .h .cc .cpp .hpp .cs .rs .swift;
- `/* bench copy N */`: .css .scss;  `-- bench copy N`: .sql;
- `<!-- bench copy N -->`: .md .html .htm .xml.

Files of any other type (JSON, lockfiles such as go.sum, images, …) are copied unchanged, so they are
duplicates across copies; their count per copy is printed (by suffix), so one can judge what de-duplication
could still save. Symbolic links are copied as links, untouched.

ROUNDS interleaved rounds (--rounds, default 3) then run; each round runs, for every scale in turn, the
tools in an order that rotates from scale to scale and round to round, so that machine load falls on all
alike:

- ours, cold: `python -m planner gather TREE` in a fresh PLANNER_HOME, as a bare process (PLANNER_DAEMON=off);
  then ours, re-gather: one file of copy-1/ changed and committed (its README.md or LICENSE, as peers.py
  does), the same command again in the same home;
- repomix: `repomix TREE -o OUT --quiet` (packs the whole tree), when `repomix` is on PATH;
- Aider's RepoMap over every file of the tree (peers.py's script), when an interpreter that imports `aider`
  is given (--aider-python) or is behind `aider` on PATH; its tag cache is removed after each run.

Before the rounds, each tool runs once, untimed, on the smallest scale (bytecode, disk caches). Every run is
a child process timed start to exit, and recorded with its CPU time (user + sys, from os.wait4: the child's
and the children's it reaped, such as our worker pool and git), its peak RSS (wait4's ru_maxrss: the largest
single process among them) and the 1-minute load average when it started. Printed per tree and scale: the
files in the tree, and per tool the median wall time, the median CPU time, the cores used (median CPU / median
wall), the largest peak RSS, and the peer's median wall over ours (> 1: we are faster); then how each tool's
time grows from the smallest scale to the largest, beside the growth in files. --json OUT writes every raw
sample. The bench installs nothing: a missing peer is named and skipped.

Run: python bench/scaling.py [--tree PATH ...] [--scales 1,2,4,8] [--rounds N] [--aider-python PATH]
     [--json OUT]
e.g. python bench/scaling.py --tree ../shared/corpus/robot-shop.tar.gz --scales 1,2 --rounds 1 (small, fast)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import AIDER_MAP, aider_python, forget_aider_cache, measured, ours_env, touch_and_commit, trees
from realworld import CORPUS, GIT, ROOT

HASH = {".py", ".sh", ".bash", ".rb", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".conf", ".properties", ".env",
        ".txt"}
SLASHES = {".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".java", ".kt", ".scala", ".c", ".h", ".cc", ".cpp",
           ".hpp", ".cs", ".rs", ".swift"}
HASH_NAMES = {"Dockerfile", "Makefile", ".gitignore", ".dockerignore", ".env"}


def copy_mark(path: Path, copy: int) -> str | None:
    """The line that makes this copy of `path` unique, in its comment syntax; None for other types."""
    name, suffix = path.name, path.suffix.lower()
    mark = f"bench copy {copy}"
    if suffix in HASH or name in HASH_NAMES or name.startswith("Dockerfile.") or suffix == ".dockerfile":
        return f"# {mark}"
    if suffix in SLASHES:
        return f"// {mark}"
    if suffix in {".css", ".scss"}:
        return f"/* {mark} */"
    if suffix == ".sql":
        return f"-- {mark}"
    if suffix in {".md", ".html", ".htm", ".xml"}:
        return f"<!-- {mark} -->"
    return None


def scaled(tree: Path, copies: int, dest: Path) -> tuple[Path, Counter[str]]:
    """A fresh git repository with `copies` marked copies of `tree`'s tracked files under copy-1/, copy-2/, ….

    Also returns, per suffix, the files of one copy left unmarked (duplicates across the copies)."""
    listed = subprocess.run(["git", "-C", str(tree), "ls-files", "-z"], capture_output=True, text=True,
                            check=True).stdout.split("\0")
    duplicates: Counter[str] = Counter()
    for copy in range(1, copies + 1):
        for rel in filter(None, listed):
            source, target = tree / rel, dest / f"copy-{copy}" / rel
            if source.is_dir() and not source.is_symlink():  # a submodule's entry: nothing to copy
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
            link = target.is_symlink()
            mark = None if link else copy_mark(target, copy)
            if mark is None:
                if copy == 1:
                    duplicates["symlink" if link else target.suffix.lower() or target.name] += 1
                continue
            data = target.read_bytes()
            target.write_bytes(data + (b"\n" if data and not data.endswith(b"\n") else b"") + mark.encode() + b"\n")
    # -f: every copied file was tracked in the tree, so commit them all, even one its .gitignore would skip
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(dest)], check=True, capture_output=True)
    subprocess.run([*GIT, "-C", str(dest), "add", "-A", "-f"], check=True, capture_output=True)
    subprocess.run([*GIT, "-C", str(dest), "commit", "-q", "-m", f"{copies} copies of {tree.name}"], check=True,
                   capture_output=True)
    return dest, duplicates


def tracked(tree: Path) -> int:
    return len(subprocess.run(["git", "-C", str(tree), "ls-files"], capture_output=True, text=True,
                              check=True).stdout.splitlines())


class Bench:
    def __init__(self, work: Path, aider: str | None) -> None:
        self.work, self.aider = work, aider
        self.tools = ["ours", *(["repomix"] if shutil.which("repomix") else []), *(["aider"] if aider else [])]
        self.samples: list[dict] = []

    def sample(self, tree_name: str, scale: int, round_no: int | None, tool: str, command: list[str],
               env: dict[str, str] | None = None, cwd: Path | None = None) -> dict:
        load = os.getloadavg()[0]
        run = measured(command, env, cwd or self.work)
        record = {"tree": tree_name, "scale": scale, "round": round_no, "tool": tool, "wall_s": run.wall,
                  "cpu_s": run.cpu, "user_s": run.user, "sys_s": run.sys, "maxrss_mb": run.maxrss_kb / 1024,
                  "load1_at_start": load}
        if round_no is not None:  # None: the untimed warm-up
            self.samples.append(record)
        return record

    def run(self, tool: str, tree_name: str, scale: int, tree: Path, round_no: int | None) -> list[dict]:
        tag = "warm-up" if round_no is None else str(round_no)
        if tool == "ours":
            home = self.work / f"home-{tree_name}-{scale}-{tag}"
            env = ours_env(home, self.work / "advisory-index")
            command = [sys.executable, "-m", "planner", "gather", str(tree)]
            cold = self.sample(tree_name, scale, round_no, "ours", command, env, ROOT)
            touch_and_commit(tree / "copy-1", f"{tag}")
            again = self.sample(tree_name, scale, round_no, "ours re-gather", command, env, ROOT)
            shutil.rmtree(home, ignore_errors=True)
            return [cold, again]
        if tool == "repomix":
            out = self.work / f"packed-{tree_name}-{scale}.xml"
            done = self.sample(tree_name, scale, round_no, "repomix", ["repomix", str(tree), "-o", str(out), "--quiet"])
            out.unlink(missing_ok=True)
            return [done]
        assert self.aider
        try:
            return [self.sample(tree_name, scale, round_no, "aider repo map", [self.aider, "-c", AIDER_MAP, str(tree)])]
        finally:
            forget_aider_cache(tree)

    def measure(self, name: str, base: Path, scales: list[int], rounds: int) -> dict:
        started = time.perf_counter()
        scaled_trees, files = {}, {}
        for scale in scales:
            scaled_trees[scale], duplicates = scaled(base, scale, self.work / f"{name}-x{scale}")
            files[scale] = tracked(scaled_trees[scale])
        per_copy = files[scales[0]] // scales[0]
        left = sum(duplicates.values())
        kinds = ", ".join(f"{k} {n}" for k, n in duplicates.most_common(8))
        print(f"  {per_copy} files per copy, {per_copy - left} marked unique, {left} left as duplicates"
              f"{f' ({kinds})' if kinds else ''}; copies built in {time.perf_counter() - started:.1f} s")
        smallest = scales[0]
        warm = [f"{r['tool']} {r['wall_s']:.2f} s" for tool in self.tools
                for r in self.run(tool, name, smallest, scaled_trees[smallest], None)]
        print(f"  warm-up on {smallest}× (untimed): {', '.join(warm)}")
        for round_no in range(rounds):
            for index, scale in enumerate(scales):
                turn = (round_no + index) % len(self.tools)
                for tool in self.tools[turn:] + self.tools[:turn]:
                    self.run(tool, name, scale, scaled_trees[scale], round_no)
        for scale in scales:
            shutil.rmtree(scaled_trees[scale], ignore_errors=True)
        return files


def report(samples: list[dict], name: str, files: dict[int, int]) -> None:
    mine = [s for s in samples if s["tree"] == name]
    tools = list(dict.fromkeys(s["tool"] for s in mine))
    stats: dict[tuple[int, str], dict[str, float]] = {}
    for scale in files:
        for tool in tools:
            runs = [s for s in mine if s["scale"] == scale and s["tool"] == tool]
            if runs:
                wall = statistics.median(r["wall_s"] for r in runs)
                cpu = statistics.median(r["cpu_s"] for r in runs)
                stats[scale, tool] = {"wall": wall, "cpu": cpu, "rss": max(r["maxrss_mb"] for r in runs)}
    print(f"  {'scale':>5} {'files':>7}  {'tool':<15} {'wall s':>7} {'CPU s':>7} {'cores':>5} {'RSS MB':>7}"
          "  peer/ours (> 1: we are faster)")
    for scale in files:
        for i, tool in enumerate(tools):
            got = stats.get((scale, tool))
            if not got:
                continue
            ours = stats.get((scale, "ours"))
            ratio = f"  {got['wall'] / ours['wall']:.2f}×" if ours and not tool.startswith("ours") else ""
            lead = f"{scale:>4}× {files[scale]:>7}" if i == 0 else " " * 13
            print(f"  {lead}  {tool:<15} {got['wall']:7.2f} {got['cpu']:7.2f} {got['cpu'] / got['wall']:5.2f}"
                  f" {got['rss']:7.0f}{ratio}")
    low, high = min(files), max(files)
    if low != high:
        print(f"  growth {low}× → {high}×: files ×{files[high] / files[low]:.2f}")
        for tool in tools:
            if (low, tool) in stats and (high, tool) in stats:
                growth = stats[high, tool]["wall"] / stats[low, tool]["wall"]
                print(f"    {tool:<15} t({high}×)/t({low}×) = {growth:.2f}"
                      f"  (CPU ×{stats[high, tool]['cpu'] / stats[low, tool]['cpu']:.2f})")
    loads = [s["load1_at_start"] for s in mine]
    print(f"  load average at the runs' start: min {min(loads):.2f}, median {statistics.median(loads):.2f},"
          f" max {max(loads):.2f} ({os.cpu_count()} cores)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="a tree to measure: a folder or a .tar.gz (repeatable; default: the corpus trees)")
    parser.add_argument("--scales", default="1,2,4,8", help="copies of the tree to measure, e.g. 1,2,4,8")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--aider-python", help="an interpreter that can import aider (for its RepoMap)")
    parser.add_argument("--json", type=Path, help="write every raw sample to this file")
    args = parser.parse_args()
    scales = sorted({int(s) for s in args.scales.split(",") if s.strip()})
    if not scales or scales[0] < 1:
        parser.error("--scales: positive whole numbers, e.g. 1,2,4,8")
    aider = aider_python(args.aider_python)
    missing = [n for n, ok in (("repomix", shutil.which("repomix")), ("aider", aider)) if not ok]
    if missing:
        print(f"peers not found, skipped: {', '.join(missing)} (this bench installs nothing)")
    with tempfile.TemporaryDirectory(prefix="scaling-") as folder:
        work = Path(folder)
        found = trees(work, args.tree, corpus=not args.tree)
        if not found:
            print(f"no corpus at {CORPUS} and no --tree: nothing to measure")
            return 0
        bench = Bench(work, aider)
        all_files = {}
        for name, tree in found.items():
            print(f"\n== {name}: scales {', '.join(f'{s}×' for s in scales)}, {args.rounds} interleaved rounds ==")
            all_files[name] = files = bench.measure(name, tree, scales, args.rounds)
            report(bench.samples, name, files)
    if args.json:
        meta = {"scales": scales, "rounds": args.rounds, "cpu_count": os.cpu_count(), "tools": bench.tools,
                "files": all_files, "python": sys.executable, "aider_python": aider}
        args.json.write_text(json.dumps({"meta": meta, "samples": bench.samples}, indent=1) + "\n")
        print(f"\nraw samples: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
