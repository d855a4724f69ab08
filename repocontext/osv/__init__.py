"""OSV advisories: loading (`load`), version ordering (`versions`), evaluation (`evaluate`)
and upgrade-target selection (`remedy`)."""

from repocontext.osv.db import AdvisoryDB
from repocontext.osv.evaluate import Evaluation, Interval, evaluate
from repocontext.osv.load import load
from repocontext.osv.remedy import Remedy, choose_remedy
from repocontext.osv.schema import Advisory, LoadIssue

__all__ = [
    "Advisory",
    "AdvisoryDB",
    "Evaluation",
    "Interval",
    "LoadIssue",
    "Remedy",
    "choose_remedy",
    "evaluate",
    "load",
]
