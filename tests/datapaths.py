"""Where the tests' real-world data lies: PLANNER_SHARED_DATA (default: `shared/` beside the checkout), holding
corpus/ (real repositories), advisories/pypa (the PyPA advisory database) and wolfi/packages.tsv."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PLANNER_SHARED_DATA") or ROOT.parent / "shared")
CORPUS = SHARED / "corpus"
PYPA = SHARED / "advisories" / "pypa"
WOLFI_TSV = Path(os.environ.get("WOLFI_PACKAGES_TSV") or SHARED / "wolfi" / "packages.tsv")
AWESOME_COMPOSE = Path(os.environ.get("AWESOME_COMPOSE_TARBALL") or CORPUS / "awesome-compose.tar.gz")
