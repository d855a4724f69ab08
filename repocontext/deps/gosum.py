"""go.sum as the build list of a module whose go.mod predates Go 1.17.

From Go 1.17 on, go.mod lists every module the build needs (`// indirect` for the rest), so go.mod alone
gives the records (gomod.py). Before 1.17 it lists only what the module requires itself: what those
modules bring in is nowhere but in go.sum (sirupsen/logrus 1.9.0, `go 1.13`, builds with
gopkg.in/yaml.v3 through testify and names it only there). go.sum has a zip hash (`mod ver h1:…`,
not `mod ver/go.mod h1:…`) for each module version whose code was downloaded, and MVS selects the
highest version of a module, so for such a go.mod each module go.sum has code for, and go.mod does not
name, is recorded at its highest zip-hashed version: direct=False, kind "lockfile", section "go.sum",
on its go.sum line. A go.mod without a `go` line is read as before 1.17, as Go itself does (1.16).
"""

from __future__ import annotations

import re

from repocontext.deps.gomod import directives
from repocontext.model import Dependency
from repocontext.osv.versions import InvalidVersion, sort_key

SECTION = "go.sum"
COMPLETE_FROM = (1, 17)  # the go.mod version from which go.mod itself lists the whole build
_GO_VERSION = re.compile(r"(\d+)\.(\d+)")


def go_version(gomod_text: str) -> tuple[int, int] | None:
    """The `go` directive as (major, minor), or None when there is none (or it is malformed)."""
    for d in directives(gomod_text):
        if d.verb == "go" and d.args:
            found = _GO_VERSION.match(d.args[0])  # 1.13, 1.21.5, 1.21rc1
            return (int(found.group(1)), int(found.group(2))) if found else None
    return None


def _named(gomod_text: str) -> set[str]:
    """Every module go.mod names: required, replaced (either side) or excluded, and the module itself."""
    names: set[str] = set()
    for d in directives(gomod_text):
        if d.verb in ("module", "require", "exclude") and d.args:
            names.add(d.args[0])
        elif d.verb == "replace" and "=>" in d.args:
            arrow = d.args.index("=>")
            names.update(a for a in (d.args[0], *d.args[arrow + 1: arrow + 2]) if a)
    return names


def _newer(version: str, than: str) -> bool:
    try:
        return bool(sort_key("semver", version) > sort_key("semver", than))
    except InvalidVersion:
        return False


def build_list(sum_path: str, sum_text: str, gomod_text: str) -> list[Dependency]:
    """The modules only go.sum names, for a go.mod before Go 1.17; [] for a newer one."""
    version = go_version(gomod_text)
    if version is not None and version >= COMPLETE_FROM:
        return []
    named = _named(gomod_text)
    chosen: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(sum_text.splitlines(), start=1):
        parts = raw.split()
        if len(parts) != 3 or not parts[2].startswith("h1:") or parts[1].endswith("/go.mod"):
            continue  # malformed lines are reported by gosum_versions; /go.mod lines carry no code
        module, found = parts[0], parts[1]
        if module not in named and (module not in chosen or _newer(found, chosen[module][0])):
            chosen[module] = (found, number)
    return [Dependency(ecosystem="Go", name=module, version=found, direct=False, file=sum_path, line=line,
                       kind="lockfile", section=SECTION, checksummed=True)
            for module, (found, line) in sorted(chosen.items())]
