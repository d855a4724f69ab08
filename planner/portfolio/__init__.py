"""Portfolio runs: one task class dispatched across many repositories.

A coordinator (`planner portfolio dispatch`) records the portfolio under its PLANNER_HOME,
hands one job per repository to an engine (a local process pool by default, or Celery
workers sharing a broker) and records each run's result exactly once, keyed by portfolio,
repository, commit, TCCM hash and inputs.
"""
