"""The probes that make a RepoContext, in the order they run.

To add a probe: write a `Probe` subclass in a module here and add an instance to
`_all_probes` (what `ALL_PROBES` is). A probe that reads another's output lists
those keys in `requires` and must come after it.

`ALL_PROBES` is made on first use: importing one probe module (a fresh
snapshot's freshness check needs only the vulnerabilities probe's settings
fingerprint) does not import every probe and its parsers.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repocontext.probe import Probe


@cache
def _all_probes() -> tuple[Probe, ...]:
    from repocontext.probes.build import BuildProbe
    from repocontext.probes.call_sites import CallSitesProbe
    from repocontext.probes.containers import ContainersProbe
    from repocontext.probes.conventions import ConventionsProbe
    from repocontext.probes.dependencies import DependenciesProbe
    from repocontext.probes.languages import LanguagesProbe
    from repocontext.probes.tests import TestsProbe
    from repocontext.probes.vulnerabilities import VulnerabilitiesProbe

    return (LanguagesProbe(), BuildProbe(), DependenciesProbe(), VulnerabilitiesProbe(), CallSitesProbe(),
            TestsProbe(), ConventionsProbe(), ContainersProbe())


def __getattr__(name: str) -> Any:
    if name == "ALL_PROBES":
        return _all_probes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ALL_PROBES"]
