"""The gates every item's result passes before the run writes its patch: the policy (`policy`), secrets in
edits (`leaks`), paths the planner never writes (`paths`) and `git apply --check` (`check`)."""
