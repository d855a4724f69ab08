"""Benchmark: reading a 1,000-package composer.lock (budget: 100 ms in process).

A synthetic project of realistic shape: a composer.json with 40 requirements (and php/ext-* platform ones),
a composer.lock of 1,000 packages written in Composer's 4-space layout, each with source, dist, autoload,
authors and 0-6 requirements on later packages (a tenth of them in packages-dev). Timed, best of --rounds:
- parse: `parse_composer_lock` on the text (with the manifest's declarations), what a forked worker does;
- probe: the dependencies probe alone through `repocontext.gather.gather`, on a real git work tree.
Run: python bench/gather_composer.py [--packages N] [--rounds N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gather_cargo import best
from repocontext.deps.common import declared
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    manifest, lock = synthetic(args.packages)
    names = declared(parse_composer_json("composer.json", manifest).deps)
    records = len(parse_composer_lock("composer.lock", lock, names).deps)
    wall, cpu = best(args.rounds, lambda: parse_composer_lock("composer.lock", lock, names))
    print(f"composer.lock: {args.packages} packages, {records} records, {len(lock) // 1024} KiB")
    print(f"  parse: {wall:.1f} ms wall, {cpu:.1f} ms CPU")
    from repocontext.gather import gather
    from repocontext.probes.dependencies import DependenciesProbe

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "composer.json").write_text(manifest)
        (root / "composer.lock").write_text(lock)
        author = ["-c", "user.email=b@b", "-c", "user.name=b"]
        for step in (["init", "-q"], ["add", "-A"], [*author, "commit", "-qm", "b"]):
            subprocess.run(["git", *step], cwd=root, check=True)
        wall, cpu = best(args.rounds, lambda: gather(root, probes=[DependenciesProbe()], workers=1))
    print(f"  probe (index + dependencies probe, in process): {wall:.1f} ms wall, {cpu:.1f} ms CPU "
          f"(budget 100 ms)")


if __name__ == "__main__":
    main()
