"""The probes that make a RepoContext, in the order they run.

To add a probe: write a `Probe` subclass in a module here and append an
instance to `ALL_PROBES`. A probe that reads another's output lists those keys
in `requires` and must come after it.
"""

from __future__ import annotations

from repocontext.probe import Probe
from repocontext.probes.build import BuildProbe
from repocontext.probes.call_sites import CallSitesProbe
from repocontext.probes.containers import ContainersProbe
from repocontext.probes.conventions import ConventionsProbe
from repocontext.probes.dependencies import DependenciesProbe
from repocontext.probes.languages import LanguagesProbe
from repocontext.probes.tests import TestsProbe
from repocontext.probes.vulnerabilities import VulnerabilitiesProbe

ALL_PROBES: tuple[Probe, ...] = (
    LanguagesProbe(),
    BuildProbe(),
    DependenciesProbe(),
    VulnerabilitiesProbe(),
    CallSitesProbe(),
    TestsProbe(),
    ConventionsProbe(),
    ContainersProbe(),
)
