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

import base64
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gather_common import arguments, report_lock
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



def main() -> None:
    args = arguments(__doc__ or "", "packages")
    project, lock = synthetic(args.packages)
    report_lock(("Api.csproj", project), ("packages.lock.json", lock),
                parse_msbuild, parse_packages_lock, f"{args.packages} packages", args.rounds)


if __name__ == "__main__":
    main()
