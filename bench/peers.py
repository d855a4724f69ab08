"""Benchmark: our gather beside the peers that pack or map a repository, on real trees, interleaved.

For each real tree from ../shared (python/pythondotorg at its newest commit, docker/awesome-compose, and
pypa/advisory-database: 2,663 small YAML files), and any tree given with --tree (a folder or a .tar.gz),
ROUNDS rounds run, in this order each round so machine load falls on all alike:

- ours, cold: `python -m planner gather TREE [--advisories ADV]` in a fresh PLANNER_HOME (no RepoContext yet);
  the compiled advisory index is shared, as on any machine after its first gather (its one-off build is
  printed on its own);
- ours, re-gather: one file changed and committed, then the same command again (whole-process);
- the same two with `planner daemon` running (started once per tree, before the rounds): the command is
  handed to a warm process, so it skips Python's imports (the client process is what is timed);
- repomix: `repomix TREE -o OUT --quiet` (packs the whole tree), when `repomix` is on PATH;
- aider: its RepoMap over every file of the tree, when an interpreter that imports `aider` is given
  (`--aider-python`, or the one behind `aider` on PATH).

Everything is timed whole-process, start to exit. Medians are printed, with our cold time's ratio to each
peer (> 1: we are faster). The bench installs nothing: a missing peer is named and skipped. It also prints
the full RepoContext's size in tokens beside the packed repository's (repomix's count when it ran).
Run: python bench/peers.py [--rounds N] [--aider-python PATH] [--tree PATH ...]

The Go row in the README comes from spf13/cobra v1.6.1, as Debian's archive keeps its upstream
release: curl -O http://deb.debian.org/debian/pool/main/g/golang-github-spf13-cobra/golang-github-spf13-cobra_1.6.1.orig.tar.gz
then --tree golang-github-spf13-cobra_1.6.1.orig.tar.gz
(sha256 f38f8b26895903be06089ff20882fc771dbca12f41cf81d7bd823be65e6cec52; 66 files once committed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realworld import CORPUS, GIT, ROOT, unpack
from realworld_common import committed

ADVISORIES = CORPUS.parent / "advisories" / "pypa"

AIDER_MAP = """
import sys, os
from aider.io import InputOutput
from aider.models import Model
from aider.repomap import RepoMap
root = sys.argv[1]
files = [os.path.join(d, f) for d, _, fs in os.walk(root) if "/.git" not in d for f in fs]
rm = RepoMap(root=root, io=InputOutput(yes=True), main_model=Model("gpt-4o-mini"), map_tokens=4096)
text = rm.get_repo_map([], files) or ""
print(len(text))
"""


def given_tree(given: Path, work: Path) -> tuple[str, Path]:
    """A tree named on the command line: a folder (copied) or a .tar.gz (unpacked), committed afresh."""
    name = given.name.removesuffix(".tar.gz").removesuffix(".tgz")
    target = work / f"given-{name}"
    if given.is_dir():
        shutil.copytree(given, target, ignore=shutil.ignore_patterns(".git"))
        return name, committed(target, name)
    target.mkdir()
    return name, unpack(given, target, name)


def trees(work: Path, given: list[Path], corpus: bool = True) -> dict[str, Path]:
    """The real trees, as git repositories; empty when the corpus is absent and none was given.

    `corpus=False`: only the given ones."""
    found: dict[str, Path] = dict(given_tree(path, work) for path in given)
    if not corpus:
        return found
    bundle = CORPUS / "pythondotorg.bundle"
    if bundle.is_file():
        target = work / "pythondotorg"
        subprocess.run(["git", "clone", "-q", str(bundle), str(target)], check=True)
        found["pythondotorg"] = target
    archive = CORPUS / "awesome-compose.tar.gz"
    if archive.is_file():
        target = work / "awesome-compose"
        target.mkdir()
        found["awesome-compose"] = unpack(archive, target)  # as bench/realworld.py unpacks it
    if ADVISORIES.is_dir():  # pypa/advisory-database's tree: the 2,663-file repository of small YAML files
        target = work / "advisory-database"
        shutil.copytree(ADVISORIES, target)
        found["advisory-database"] = committed(target, "advisory-database")
    return found


@dataclass(frozen=True)
class Run:
    """One child process, start to exit: wall time, and its resource use as wait4 reports it."""

    wall: float
    user: float  # CPU seconds, the child's and those of the children it reaped (e.g. a worker pool, git)
    sys: float
    maxrss_kb: int  # the peak resident set of the largest single process among them (Linux: kilobytes)
    stdout: str

    @property
    def cpu(self) -> float:
        return self.user + self.sys


def measured(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> Run:
    """Run `command` to its end, timed, with its rusage from os.wait4; a non-zero exit raises."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=err)
        try:
            _, status, usage = os.wait4(child.pid, 0)
        except BaseException:
            child.kill()
            child.wait()
            raise
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])}…: exit {child.returncode}: {stderr.strip()[-300:]}")
    return Run(elapsed, usage.ru_utime, usage.ru_stime, usage.ru_maxrss, stdout)


def timed(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[float, str]:
    run = measured(command, env, cwd)
    return run.wall, run.stdout


def ours_env(home: Path, index: Path) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE (set on some sandboxes) would make every run compile the project from source;
    # an installed tool, like the peers' installs, runs from bytecode.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANNER_") and k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PLANNER_HOME": str(home), "PLANNER_ADVISORY_INDEX": str(index), "PYTHONPATH": str(ROOT),
            "PLANNER_DAEMON": "off"}


def with_daemon(env: dict[str, str], folder: Path) -> dict[str, str]:
    return {**env, "PLANNER_DAEMON": "", "PLANNER_DAEMON_DIR": str(folder)}


def gather(tree: Path, env: dict[str, str]) -> float:
    command = [sys.executable, "-m", "planner", "gather", str(tree)]
    if ADVISORIES.is_dir():
        command += ["--advisories", str(ADVISORIES)]
    return timed(command, env, ROOT)[0]


def touch_and_commit(tree: Path, round_no: str) -> None:
    readme = next(p for p in (tree / "README.md", tree / "LICENSE") if p.is_file())  # one tracked text file
    readme.write_text(readme.read_text(encoding="utf-8") + f"\n<!-- bench round {round_no} -->\n", encoding="utf-8")
    subprocess.run([*GIT, "-C", str(tree), "commit", "-q", "-am", f"round {round_no}"], check=True)


def forget_aider_cache(tree: Path) -> None:
    """Remove the tag cache Aider's RepoMap leaves in the tree, so its next run is cold."""
    for cache in tree.glob(".aider.tags.cache*"):
        shutil.rmtree(cache, ignore_errors=True)


def aider_python(given: str | None) -> str | None:
    if given:
        return given
    found = shutil.which("aider")
    if not found:
        return None
    first = Path(found).read_text(errors="replace").splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else None


def context_tokens(home: Path, tree: Path) -> int:
    code = ("import sys; from pathlib import Path; from repocontext.store import RepoContextStore; "
            "from planner import tokens; c = RepoContextStore(Path(sys.argv[1])).load(Path(sys.argv[2])); "
            "print(tokens.count(c.model_dump_json()))")
    return int(timed([sys.executable, "-c", code, str(home), str(tree)], {**os.environ, "PYTHONPATH": str(ROOT)},
                     ROOT)[1])


def run_tree(name: str, tree: Path, rounds: int, work: Path, aider: str | None) -> dict[str, list[float]]:
    times: dict[str, list[float]] = defaultdict(list)
    index = work / "advisory-index"
    home = work / f"{name}-warm-home"
    first = gather(tree, ours_env(home, index))
    print(f"  (first gather, compiling the advisory index too: {first:.2f} s)")
    daemon, daemon_home = work / f"{name}-daemon", work / f"{name}-daemon-home"
    timed([sys.executable, "-m", "planner", "daemon", "start"], with_daemon(ours_env(home, index), daemon), ROOT)
    gather(tree, with_daemon(ours_env(daemon_home, index), daemon))
    for n in range(rounds):
        for label, wrap in (("", lambda env: env), (", daemon", lambda env: with_daemon(env, daemon))):
            cold_home = work / f"{name}-cold-{n}"
            times[f"ours cold{label}"].append(gather(tree, wrap(ours_env(cold_home, index))))
            shutil.rmtree(cold_home, ignore_errors=True)
            touch_and_commit(tree, f"{n}{label}")
            warm = daemon_home if label else home
            times[f"ours re-gather{label}"].append(gather(tree, wrap(ours_env(warm, index))))
        if shutil.which("repomix"):
            times["repomix"].append(timed(["repomix", str(tree), "-o", str(work / "packed.xml"), "--quiet"])[0])
        if aider:
            times["aider repo map"].append(timed([aider, "-c", AIDER_MAP, str(tree)], cwd=work)[0])
            forget_aider_cache(tree)
    timed([sys.executable, "-m", "planner", "daemon", "stop"], with_daemon(ours_env(home, index), daemon), ROOT)
    ours_tokens = context_tokens(home, tree)
    for task_class, tokens in bundle_tokens(home, tree).items():
        print(f"  {task_class} bundle {tokens:,} tokens = {100 * tokens / ours_tokens:.1f} % of the full RepoContext")
    packed = work / "packed.xml"
    if packed.is_file():
        packed_tokens = context_tokens_of_text(packed)
        print(f"  full RepoContext {ours_tokens:,} tokens; the whole tree packed by repomix {packed_tokens:,} tokens")
    else:
        print(f"  full RepoContext {ours_tokens:,} tokens")
    return times


BUNDLES = """
import sys
from pathlib import Path
from planner import service
from dataclasses import replace
from planner.config import Settings
settings = replace(Settings.from_env(), home=Path(sys.argv[1]), redis_url=None)
for name, key in (("vulnerability-remediation", "package"), ("distroless-migration", "dockerfile")):
    bundle, _, _ = service.build_bundle(settings, name, Path(sys.argv[2]), {}, per_item=frozenset({key}))
    print(name, bundle.totals.tokens)
"""


def bundle_tokens(home: Path, tree: Path) -> dict[str, int]:
    """Tokens of each shipped class's run-level bundle (what dispatch builds before the items' own)."""
    out = timed([sys.executable, "-c", BUNDLES, str(home), str(tree)], {**os.environ, "PYTHONPATH": str(ROOT)}, ROOT)[1]
    return {line.split()[0]: int(line.split()[1]) for line in out.splitlines() if line.strip()}


def context_tokens_of_text(path: Path) -> int:
    code = "import sys; from planner import tokens; print(tokens.count(open(sys.argv[1], errors='replace').read()))"
    return int(timed([sys.executable, "-c", code, str(path)], {**os.environ, "PYTHONPATH": str(ROOT)}, ROOT)[1])


def report(times: dict[str, list[float]]) -> None:
    medians = {k: statistics.median(v) for k, v in times.items()}
    ours, warm = medians["ours cold"], medians.get("ours cold, daemon")
    for label, median in medians.items():
        ratio = "" if label.startswith("ours") else f"   ours cold is {median / ours:.2f}×"
        if warm and not label.startswith("ours"):
            ratio += f", with the daemon {median / warm:.2f}× (> 1: we are faster)"
        spread = f"min {min(times[label]):.2f}, max {max(times[label]):.2f}"
        print(f"  {label:<24} median {median:6.2f} s  ({spread}){ratio}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--aider-python", help="an interpreter that can import aider (for its RepoMap)")
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="another real tree to measure: a folder or a .tar.gz (repeatable)")
    args = parser.parse_args()
    aider = aider_python(args.aider_python)
    missing = [n for n, ok in (("repomix", shutil.which("repomix")), ("aider", aider)) if not ok]
    if missing:
        print(f"peers not found, skipped: {', '.join(missing)} (this bench installs nothing)")
    with tempfile.TemporaryDirectory(prefix="peers-") as folder:
        work = Path(folder)
        found = trees(work, args.tree)
        if not found:
            print(f"no corpus at {CORPUS} and no --tree: nothing to measure")
            return 0
        for name, tree in found.items():
            files = len(subprocess.run(["git", "-C", str(tree), "ls-files"], capture_output=True, text=True,
                                       check=True).stdout.splitlines())
            print(f"\n== {name}: {files} files, {args.rounds} interleaved rounds ==")
            report(run_tree(name, tree, args.rounds, work, aider))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
