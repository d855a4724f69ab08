"""Advisory sources as a run states them (`source.py`), and the OSV snapshot `planner advisories sync` keeps
under PLANNER_HOME/advisories (`sync.py`; its layout: repocontext/osvsnapshot.py)."""
