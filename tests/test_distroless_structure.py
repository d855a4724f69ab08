"""Shell rewrites keep the program's structure: only package-manager commands change (issue 29 §2).

Each case is a RUN seen in real multi-service repositories; every rewritten file must also pass the build
checks (verify.py), so a structure the rewriter broke would show up as a check failure here too."""

from __future__ import annotations

import pytest

from repocontext.dockerfile.shellwords import tokenize
from subgraphs.distroless_migration.migrate import migrate_dockerfile
from subgraphs.distroless_migration.models import MigrationOptions

CASES = [
    ("apt-get update && if [ \"$(uname -m)\" = aarch64 ]; then apt-get install -y curl && echo arm; "
     "else apt-get install -y git; fi",
     "if [ \"$(uname -m)\" = aarch64 ]; then apk add --no-cache curl && echo arm; else apk add --no-cache git; fi"),
    ("case \"$TARGETARCH\" in amd64) apt-get update ;; *) echo other ;; esac",
     "case \"$TARGETARCH\" in amd64) : ;; *) echo other ;; esac"),
    ("for p in a b; do apt-get install -y curl; done; while false; do apt-get update; done",
     "for p in a b; do apk add --no-cache curl; done; while false; do :; done"),
    ("echo $(( 1 + 2 )) && apt-get update && apt-get install -y wget && echo done",
     "echo $(( 1 + 2 )) && apk add --no-cache wget && echo done"),
    ("(cd /tmp && apt-get update && apt-get install -y git) | tee /log; echo ok",
     "(cd /tmp && apk add --no-cache git) | tee /log; echo ok"),
    ("apt-get install -y make || echo failed; apt-get clean",
     "apk add --no-cache make || echo failed"),
    ("if true; then apt-get update && apt-get install -y zip; fi && echo x",
     "if true; then apk add --no-cache zip; fi && echo x"),
    ("apt-get update && (apt-get install -y git && apt-get clean) && echo x",
     "(apk add --no-cache git) && echo x"),
    ("apt-get update && apt-get install -y git && (apt-get clean) && echo $((2*3))",
     "apk add --no-cache git && (:) && echo $((2*3))"),
    ("{ apt-get update; apt-get install -y git; } && ! command -v x",
     "{ apk add --no-cache git; } && ! command -v x"),
]


@pytest.mark.parametrize(("run", "expected"), CASES)
def test_control_flow_survives(run: str, expected: str) -> None:
    text = f"FROM debian:12 AS build\nRUN {run}\nFROM scratch\nCOPY --from=build /x /x\n"
    migration = migrate_dockerfile("Dockerfile", text, MigrationOptions())
    assert migration.checks == [] and not migration.blocked, migration.checks + migration.blockers
    assert f"RUN {expected}\n" in migration.new_text


def test_arithmetic_expansion_is_one_word() -> None:
    words = [t.text for t in tokenize("echo $(( 1 + (2 * 3) )) x") if t.kind == "word"]
    assert words == ["echo", "$(( 1 + (2 * 3) ))", "x"]


def test_a_heredoc_script_keeps_its_loops() -> None:
    text = ("FROM debian:12 AS build\nRUN <<EOF\nset -e\napt-get update\nfor x in a b; do\n  apt-get install -y curl\n"
            "done\nEOF\nFROM scratch\nCOPY --from=build /x /x\n")
    migration = migrate_dockerfile("Dockerfile", text, MigrationOptions())
    assert migration.checks == []
    assert "for x in a b; do\n  apk add --no-cache curl\ndone\n" in migration.new_text
