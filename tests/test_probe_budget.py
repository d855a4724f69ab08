"""The opt-in per-probe time budget (PLANNER_PROBE_BUDGET_S): a probe past it costs only its own keys, is
named in an error diagnostic, and runs again on the next gather instead of being carried forward."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from repocontext import budget
from repocontext.gather import gather
from repocontext.probe import Probe, ProbeContext, ProbeOutput
from repocontext.probes.languages import LanguagesProbe


class Stuck(Probe):
    """A probe that never finishes on its own (an input the parse limits did not foresee)."""

    name = "stuck"
    version = "1"
    produces = ()

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        while True:  # no duration to race: only the budget's alarm (a signal) ends it
            signal.pause()


def test_a_probe_over_budget_costs_only_its_keys(make_repo: Callable[..., Path],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(budget.BUDGET_ENV, "2")
    repo = make_repo({"app.py": "print(1)\n"})
    context = gather(repo, probes=[Stuck(), LanguagesProbe()])
    [stuck] = [d for d in context.diagnostics if d.probe == "stuck"]
    assert stuck.level == "error" and stuck.message.startswith("probe exceeded its time budget of 2 s")
    assert "Python" in context.languages
    assert context.meta.probes["stuck"].inputs_hash == "" and context.meta.probes["languages"].inputs_hash
    again = gather(repo, previous=context.model_dump(mode="json"), probes=[Stuck(), LanguagesProbe()])
    assert not again.meta.probes["stuck"].reused and again.meta.probes["languages"].reused


def test_no_budget_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, expected in (("", None), ("0", None), ("soon", None), ("1.5", 1.5)):
        monkeypatch.setenv(budget.BUDGET_ENV, value)
        assert budget.seconds() == expected
    with budget.time_budget(None):
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no budget: no timer armed
