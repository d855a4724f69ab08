"""Benchmark: the main job on the real corpus, whole-process through the CLI (issues #10 §5, #11 §6).

Every dispatch is `python -m planner dispatch ... --json` run as a child process with the
planner of the checkout this script lives in (cwd and PYTHONPATH = the repo root), timed from
process start to exit. One fresh temporary PLANNER_HOME serves the whole bench run (`--cold`: a
fresh one per dispatch), and every other PLANNER_* variable is removed from the child's
environment (no model unless `--model`), so nothing leaks in from the caller or between runs.
The corpus is read from ../shared/corpus beside the repo root (`--corpus`); the bench exits 0
with a reason when it is absent. It always exits 0: missed targets are printed as MISSED.

1. vulnerability-remediation on python/pythondotorg (pythondotorg.bundle + pythondotorg-cases.json):
   the bundle is cloned once; per case the clone is forced clean onto `vulnerable_commit` and
   `dispatch vulnerability-remediation --advisories ADV --input package=PACKAGE --json` runs.
   Judged independently of the tool, from the pypa OSV records of the package (all of them,
   not only the case's advisories; withdrawn records skipped):
   - advisories found: the case's ids named by the package's item (`data.advisories`) or the run's report;
   - version chosen: the version the patch pins for the package (`+name==X` lines); with no
     patch, the item's planned `data.target`, marked `*`;
   - still affected: some record affects the chosen version (ECOSYSTEM ranges: introduced /
     fixed / last_affected events, and the record's `versions` list);
   - lowest unaffected in the release line (`lowest_unaffected_in_line`): among the versions
     the records name (event versions and `versions` lists; pre/dev releases only when `from`
     is one), the lowest version greater than `from` that no record affects, looked for in
     `from`'s major.minor line first, then its major line, then any;
   - files edited: the patch's files; declaring files: the clean checkout's requirement files
     (requirements*.txt/.in, constraints*.txt, Pipfile, pyproject.toml, setup.py/.cfg) with a
     line pinning or constraining the package (name followed by a version operator);
   - applies: `git apply --check` of the patch in the clean checkout at the vulnerable commit.
   A case "produces" when its item is succeeded/needs_regeneration with a non-empty patch, or
   needs_regeneration with a blocker that names a command (`fix`). "Recipe path, no LLM":
   the item's source is `recipe` and the run made no LLM call.
2. distroless-migration on docker/awesome-compose, instana/robot-shop and dockersamples/example-voting-app
   (their .tar.gz in the corpus; each one skipped when absent): unpacked, `git init`, one commit, one
   `dispatch distroless-migration --json` per tree. Per Dockerfile (each tracked Dockerfile,
   and each work item): status, FROM images old → new (the recipe's structured result in the
   item's `plan_data.migration`, else the patch's -FROM/+FROM lines), OS packages mapped /
   not needed / unmapped (plan data), shell-free or the final stage's blockers (file:line), and
   whether that Dockerfile's section of the patch applies (`git apply --check --include=PATH`).
   Dropped packages (succeeded items only): the bench parses the original Dockerfile's install
   commands itself (apt-get/apt/aptitude install, apk add, yum/dnf/microdnf install, zypper
   install; RUN continuations and heredocs; variables and local files are skipped) and, for
   every package, requires that the tool's plan data maps it to names that all appear in an
   `apk add` of the new Dockerfile (the patched file; the plan's new_text when the section does
   not apply), or maps it to nothing with a note, or that some note of the item names it as not
   needed / provided; a package kept by name in a new `apk add` is fine. Anything else (unmapped
   in a succeeded item, or not accounted for at all) is dropped.
   An item is "migrated" when it is succeeded/needs_regeneration and the patch has its section,
   "blocked" when it is blocked with at least one blocker, each naming a file and a message.
   Build checks (bench/realworld_dlcheck.py, the bench's own, apart from the tool's): every succeeded
   file's `apk add` names are in ../shared/wolfi/packages.tsv (a package or a provides), every shell-form
   RUN passes `sh -n`, no apt/yum/dnf/microdnf is left, every FROM is cgr.dev/…, a stage, scratch or an
   ARG; target: no succeeded file fails one, and ≥ 80 % of the Dockerfiles migrated. Time: the whole
   process per tree, and `migrate_dockerfile` in process per Dockerfile (target ≤ 50 ms).

3. vulnerability-remediation in crates.io, RubyGems, Packagist, Maven, NuGet and npm trees of the corpus
   (bench/cases/<ecosystem>.json; see bench/realworld_ecosystems.py): right / wrong / false nothing-to-do /
   patches apply / regeneration named, per ecosystem.

Run: python bench/realworld.py [--cases 1,3-5] [--only remediation|distroless|ecosystems] [--json FILE] [--keep]
     [--cold] [--model PROVIDER:NAME] [--timeout S] [--corpus DIR] [--advisories DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the realworld_* siblings, also when loaded by path

from realworld_common import CORPUS, GIT, ROOT, unpack
from realworld_distroless import distroless, dropped_packages, installed_packages
from realworld_ecosystems import ecosystems
from realworld_osv import affecting, load_records, lowest_unaffected_in_line, record_affects
from realworld_remediation import patched_versions, remediation

__all__ = [  # re-exported for bench/peers.py and tests/test_bench_realworld.py
    "CORPUS",
    "GIT",
    "ROOT",
    "affecting",
    "distroless",
    "dropped_packages",
    "installed_packages",
    "load_records",
    "lowest_unaffected_in_line",
    "main",
    "patched_versions",
    "record_affects",
    "remediation",
    "unpack",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", help="remediation cases to run, 1-based: 1,3,5-7 (default: all)")
    parser.add_argument("--only", choices=("remediation", "distroless", "ecosystems"))
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs (clones, PLANNER_HOME, patches)")
    parser.add_argument("--cold", action="store_true", help="a fresh PLANNER_HOME for every dispatch")
    parser.add_argument("--model", help="pass --model to dispatch (default: none; PLANNER_MODEL is not passed on)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per dispatch before it counts as failed")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--advisories", type=Path, help="pypa OSV records (default: CORPUS/../advisories/pypa)")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    advisories = (args.advisories or corpus.parent / "advisories" / "pypa").resolve()
    if not corpus.is_dir():
        print(f"realworld: skipped — the corpus folder {corpus} is absent (expected ../shared/corpus beside the repo)")
        return
    work = Path(tempfile.mkdtemp(prefix="bench-realworld-"))
    print(f"planner: {ROOT} ({sys.executable} -m planner); PLANNER_HOME: fresh under {work} "
          f"({'one per dispatch' if args.cold else 'one for this bench run'}); model: {args.model or 'none'}")
    figures: dict[str, Any] = {"planner": str(ROOT), "corpus": str(corpus), "advisories": str(advisories),
                               "cold": args.cold, "model": args.model}
    try:
        if args.only in (None, "remediation"):
            figures["remediation"] = remediation(corpus, advisories, work, args)
        if args.only in (None, "distroless"):
            figures["distroless"] = distroless(corpus, work, args)
        if args.only in (None, "ecosystems"):
            figures["ecosystems"] = ecosystems(corpus, work, args)
    finally:
        if args.keep:
            print(f"\nkept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str) + "\n", encoding="utf-8")
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    main()
