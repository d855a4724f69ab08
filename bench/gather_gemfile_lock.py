"""Benchmark: reading a 1,000-gem Gemfile.lock (budget: 100 ms in process).

A synthetic Rails-shaped project: a Gemfile of 60 gems (a third in `group :development, :test`), a
Gemfile.lock of 1,000 gems in one GEM section with 0-6 requirement lines each, one in 25 gems also locked
in two platform variants (`-x86_64-linux`, `-arm64-darwin`), a GIT section, PLATFORMS, DEPENDENCIES and
CHECKSUMS. Timed, best of --rounds each, wall and CPU:
- parse: `parse_gemfile_lock` on the text with the Gemfile's declarations (what a forked worker does);
- probe: the dependencies probe alone through `repocontext.gather.gather` (file index, the Gemfile parse, the
  lock's parse and the records' dump), on a real git work tree.
Run: python bench/gather_gemfile_lock.py [--gems N] [--rounds N]
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gather_common import arguments, report_lock
from repocontext.deps.gemfile import parse_gemfile
from repocontext.deps.gemfile_lock import parse_gemfile_lock

DIRECT = 60
_REQUIREMENTS = ["", " (>= 1.0)", " (~> 1.2)", " (~> 1.2, >= 1.2.3)", " (= 1.2.3)", " (>= 0.9, < 3)"]


def synthetic(gems: int, seed: int = 11) -> tuple[str, str]:
    """(Gemfile, Gemfile.lock) texts: gem i depends only on gems after it, so the graph is acyclic."""
    rng = random.Random(seed)
    names = [f"gem-{i:04d}" for i in range(gems)]
    gemfile = ['source "https://rubygems.org"', ""]
    gemfile += [f'gem "{n}", "~> 1.2"' for n in names[:DIRECT * 2 // 3]]
    gemfile += ["", "group :development, :test do", *(f'  gem "{n}"' for n in names[DIRECT * 2 // 3:DIRECT]), "end"]
    specs: list[str] = []
    for i, name in enumerate(names):
        later = names[i + 1:]
        deps = sorted(rng.sample(later, min(len(later), rng.randint(0, 6))))
        lines = [f"      {d}{rng.choice(_REQUIREMENTS)}" for d in deps]
        platforms = ["", "-x86_64-linux", "-arm64-darwin"] if i % 25 == 0 else [""]
        for platform in platforms:
            specs += [f"    {name} (1.2.3{platform})", *lines]
    lock = ["GIT", "  remote: https://github.com/example/forked.git", "  revision: 0123456789abcdef",
            "  specs:", "    forked (0.1.0)", "", "GEM", "  remote: https://rubygems.org/", "  specs:", *specs, "",
            "PLATFORMS", "  arm64-darwin", "  ruby", "  x86_64-linux", "", "DEPENDENCIES", "  forked!",
            *(f"  {n} (~> 1.2)" for n in names[:DIRECT]), "", "CHECKSUMS",
            *(f"  {n} (1.2.3) sha256={i:064x}" for i, n in enumerate(names)), "", "BUNDLED WITH", "   2.6.2", ""]
    return "\n".join(gemfile) + "\n", "\n".join(lock)



def main() -> None:
    args = arguments(__doc__ or "", "gems")
    gemfile, lock = synthetic(args.gems)
    report_lock(("Gemfile", gemfile), ("Gemfile.lock", lock),
                parse_gemfile, parse_gemfile_lock, f"{args.gems} gems", args.rounds)


if __name__ == "__main__":
    main()
