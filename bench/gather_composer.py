"""Benchmark: reading a 1,000-package composer.lock (budget: 100 ms in process).

A synthetic project of realistic shape: a composer.json with 40 requirements (and php/ext-* platform ones),
a composer.lock of 1,000 packages written in Composer's 4-space layout, each with source, dist, autoload,
authors and 0-6 requirements on later packages (a tenth of them in packages-dev). Timed, best of --rounds:
- parse: `parse_composer_lock` on the text (with the manifest's declarations), what a forked worker does;
- probe: the dependencies probe alone through `repocontext.gather.gather`, on a real git work tree.
Run: python bench/gather_composer.py [--packages N] [--rounds N]
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gather_common import arguments, report_lock
from repocontext.deps.composer import parse_composer_json, parse_composer_lock

DIRECT = 40


def synthetic(packages: int, seed: int = 7) -> tuple[str, str]:
    """(composer.json, composer.lock) texts: package i requires only packages after it."""
    rng = random.Random(seed)
    names = [f"vendor{i % 37:02d}/package-{i:04d}" for i in range(packages)]
    entries = []
    for i, name in enumerate(names):
        later = names[i + 1:]
        ref = hashlib.sha1(name.encode()).hexdigest()
        picked = sorted(rng.sample(later, min(len(later), rng.randint(0, 6))))
        require = {"php": ">=8.1", **{d: f"^{rng.randint(1, 5)}.0" for d in picked}}
        entries.append({
            "name": name, "version": f"v{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 30)}",
            "source": {"type": "git", "url": f"https://github.com/{name}.git", "reference": ref},
            "dist": {"type": "zip", "url": f"https://api.github.com/repos/{name}/zipball/{ref}", "reference": ref,
                     "shasum": ""},
            "require": require, "type": "library", "autoload": {"psr-4": {"Vendor\\Package\\": "src/"}},
            "notification-url": "https://packagist.org/downloads/", "license": ["MIT"],
            "authors": [{"name": "Someone", "email": "someone@example.org"}], "description": f"{name} library",
        })
    cut = packages - packages // 10
    lock = {"_readme": ["This file locks the dependencies of your project to a known state"],
            "content-hash": "0" * 32, "packages": entries[:cut], "packages-dev": entries[cut:], "aliases": [],
            "minimum-stability": "stable", "prefer-stable": True}
    manifest = {"require": {"php": "^8.1", "ext-json": "*", **{n: "^1.0" for n in names[:DIRECT]}},
                "require-dev": {n: "^1.0" for n in names[cut:cut + 5]}}
    return json.dumps(manifest, indent=4), json.dumps(lock, indent=4) + "\n"


def main() -> None:
    args = arguments(__doc__ or "", "packages")
    manifest, lock = synthetic(args.packages)
    report_lock(("composer.json", manifest), ("composer.lock", lock),
                parse_composer_json, parse_composer_lock, f"{args.packages} packages", args.rounds)


if __name__ == "__main__":
    main()
