"""Benchmark: reading a 1,000-package packages.lock.json (budget: 100 ms in process).

A synthetic project of realistic shape: an Api.csproj with 40 PackageReferences and its packages.lock.json
(as `dotnet restore` writes it: two-space JSON, contentHash per package) of 1,000 packages over two target
frameworks (net8.0 and net8.0/linux-x64, the second repeating a fifth of them), 0-6 dependencies each, one
project reference. Timed, best of --rounds each, wall and CPU:
- parse: `parse_packages_lock` on the text (with the project's declarations), what a forked worker does;
- probe: the dependencies probe alone through `repocontext.gather.gather` (file index and the probe, the
  csproj parse, the lock's parse and the records' dump), on a real git work tree.
Run: python bench/gather_nuget.py [--packages N] [--rounds N]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from repocontext.deps.common import declared
from repocontext.deps.nuget import parse_msbuild
from repocontext.deps.nuget_lock import parse_packages_lock

DIRECT = 40


def synthetic(packages: int, seed: int = 7) -> tuple[str, str]:
    """(Api.csproj, packages.lock.json) texts: package i depends only on packages after it (acyclic)."""
    rng = random.Random(seed)
    names = [f"Vendor.Package{i:04d}" for i in range(packages)]
    net: dict[str, Any] = {}
    for i, name in enumerate(names):
        later = names[i + 1:]
        deps = sorted(rng.sample(later, min(len(later), rng.randint(0, 6))))
        digest = base64.b64encode(hashlib.sha512(name.encode()).digest()).decode()
        entry: dict[str, Any] = {"type": "Direct" if i < DIRECT else "Transitive"}
        if i < DIRECT:
            entry["requested"] = "[1.2.3, )"
        entry.update({"resolved": "1.2.3", "contentHash": digest})
        if deps:
            entry["dependencies"] = {d: "1.2.3" for d in deps}
        net[name] = entry
    net["Core"] = {"type": "Project", "dependencies": {names[DIRECT]: "[1.2.3, )"}}
    runtime = {n: {"type": "Transitive", "resolved": "1.2.3", "contentHash": net[n]["contentHash"]}
               for n in names[::5]}
    lock = json.dumps({"version": 1, "dependencies": {"net8.0": dict(sorted(net.items())),
                                                      "net8.0/linux-x64": runtime}}, indent=2)
    project = ['<Project Sdk="Microsoft.NET.Sdk">', "  <ItemGroup>",
               *(f'    <PackageReference Include="{n}" Version="1.2.3" />' for n in names[:DIRECT]),
               "  </ItemGroup>", "</Project>", ""]
    return "\n".join(project), lock


def best(rounds: int, work: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms) of the fastest of `rounds` runs."""
    runs = []
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        runs.append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))
    return min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    project, lock = synthetic(args.packages)
    names = declared(parse_msbuild("Api.csproj", project).deps)
    records = len(parse_packages_lock("packages.lock.json", lock, names).deps)
    wall, cpu = best(args.rounds, lambda: parse_packages_lock("packages.lock.json", lock, names))
    print(f"packages.lock.json: {args.packages} packages, {records} records, {len(lock) // 1024} KiB")
    print(f"  parse: {wall:.1f} ms wall, {cpu:.1f} ms CPU")
    from repocontext.gather import gather
    from repocontext.probes.dependencies import DependenciesProbe

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "Api.csproj").write_text(project)
        (root / "packages.lock.json").write_text(lock)
        author = ["-c", "user.email=b@b", "-c", "user.name=b"]
        for step in (["init", "-q"], ["add", "-A"], [*author, "commit", "-qm", "b"]):
            subprocess.run(["git", *step], cwd=root, check=True)
        wall, cpu = best(args.rounds, lambda: gather(root, probes=[DependenciesProbe()], workers=1))
    print(f"  probe (index + dependencies probe, in process): {wall:.1f} ms wall, {cpu:.1f} ms CPU "
          f"(budget 100 ms)")


if __name__ == "__main__":
    main()
