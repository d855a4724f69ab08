"""NuGet version ranges as a project file writes them, and what each admits.

NuGet's notation (learn.microsoft.com, "Package versioning"): a bare `1.0` means `>= 1.0`; `[1.0]` exactly
1.0; `[1.0,2.0)` / `(1.0,)` / `(,2.0]` intervals with inclusive `[ ]` and exclusive `( )` ends; `1.*`,
`1.2.*-*`, `*` float to the newest matching release. Restore picks the *lowest* version a (non-floating)
range admits, so a bare `1.0` installs 1.0 when it exists: the range's floor is the installed version.
Versions compare by the `nuget` scheme of repocontext.osv.versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from repocontext.osv.versions import sort_key

Form = Literal["bare", "exact", "interval", "float"]
_VERSION = r"[0-9A-Za-z][0-9A-Za-z.+-]*"
_BARE = re.compile(rf"^\s*({_VERSION})\s*$")
_EXACT = re.compile(rf"^\s*\[\s*({_VERSION})\s*\]\s*$")
_INTERVAL = re.compile(rf"^\s*([\[(])\s*({_VERSION})?(\s*,\s*)({_VERSION})?\s*([\])])\s*$")
_FLOAT = re.compile(r"^\s*(\d+(?:\.\d+){0,3}\.)?\*(?:-[0-9A-Za-z.-]*\*?)?\s*$"  # 1.*, 1.2.*-*, *
                    r"|^\s*\d+(?:\.\d+){0,3}-[0-9A-Za-z.-]*\*\s*$")  # 1.0.0-beta*


class RangeError(ValueError):
    """A version text that is not a NuGet range this module reads."""


@dataclass(frozen=True)
class NugetRange:
    form: Form
    low: str | None = None
    low_inclusive: bool = True
    high: str | None = None
    high_inclusive: bool = False
    separator: str = ","  # an interval's comma with its spacing, as written
    prefix: str = ""  # a float's fixed leading part ("1.2." of `1.2.*`)
    prerelease: bool = False  # a float that admits pre-releases (`1.*-*`)

    def admits(self, version: str) -> bool:
        """Whether restore may choose `version` under this range (a float: whether it matches the pattern)."""
        if self.form == "float":
            return version.startswith(self.prefix) and (self.prerelease or "-" not in version.split("+")[0])
        key = sort_key("nuget", version)
        if self.low is not None:
            low = sort_key("nuget", self.low)
            if key < low or (key == low and not self.low_inclusive):
                return False
        return self.admits_high(version)

    def admits_high(self, version: str) -> bool:
        """Whether `version` is at or below the upper bound (always, without one)."""
        if self.high is None:
            return True
        key, high = sort_key("nuget", version), sort_key("nuget", self.high)
        return bool(key < high or (key == high and self.high_inclusive))


def parse_range(spec: str) -> NugetRange:
    """The range `spec` writes; raises RangeError (and InvalidVersion for a bound no ordering reads)."""
    if "*" in spec:
        if not _FLOAT.match(spec):
            raise RangeError(f"`{spec.strip()}` is not a NuGet floating version")
        prefix = spec.strip().split("*", 1)[0].split("-", 1)[0]
        return NugetRange("float", prefix=prefix, prerelease="-" in spec)
    if found := _BARE.match(spec):
        sort_key("nuget", found.group(1))
        return NugetRange("bare", low=found.group(1))
    if found := _EXACT.match(spec):
        sort_key("nuget", found.group(1))
        return NugetRange("exact", low=found.group(1), high=found.group(1), high_inclusive=True)
    if found := _INTERVAL.match(spec):
        opening, low, separator, high, closing = found.groups()
        for bound in (low, high):
            if bound is not None:
                sort_key("nuget", bound)
        return NugetRange("interval", low=low, low_inclusive=opening == "[", high=high,
                          high_inclusive=closing == "]", separator=separator)
    raise RangeError(f"`{spec.strip()}` is not a NuGet version range")


def lowest_applicable(spec: str) -> str | None:
    """The version restore installs for `spec` when it exists (its inclusive floor), else None (a float, an
    open or exclusive floor, an unreadable text)."""
    try:
        parsed = parse_range(spec)
    except ValueError:
        return None
    return parsed.low if parsed.form != "float" and parsed.low_inclusive else None
