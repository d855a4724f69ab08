"""The markdown report."""

from __future__ import annotations

from subgraphs.distroless_migration.models import (
    Blocker,
    DockerfileMigration,
    EvidenceRef,
    PackageChange,
    RuntimeDecision,
    StageChange,
    UnmappedPackage,
)


def test_report_lists_every_decision() -> None:
    m = DockerfileMigration(
        path="svc/Dockerfile", new_text="", changed=True,
        stages=[StageChange(index=0, line=1, old_image="python:3.12", new_image="cgr.dev/chainguard/python:3.12-dev",
                            notes=["a | b", "c"], dev_variant=True, user_root_added=True)],
        packages=[PackageChange(manager="apt-get", old="libpq-dev", new=["postgresql-dev"], line=3)],
        unmapped=[UnmappedPackage(name="libnope", manager="apt-get", line=3, reason="no Wolfi package known")],
        runtime=RuntimeDecision(stage=0, image="cgr.dev/chainguard/python:3.12-dev", blockers=[
            Blocker(file="svc/Dockerfile", line=9, what="ENTRYPOINT runs x.sh", how="use an exec form")],
            evidence=[EvidenceRef(file="svc/Dockerfile", line=9, kind="entrypoint-script", detail="ENTRYPOINT x")],
            notes=["n1"]),
        notes=["line 3: dropped `apt-get update`"])
    assert m.report_markdown() == """\
## `svc/Dockerfile`: changed

| # | stage | line | from | to | -dev | USER root | notes |
|---|---|---|---|---|---|---|---|
| 0 |  | 1 | `python:3.12` | `cgr.dev/chainguard/python:3.12-dev` | yes | added | a \\| b; c |

### Packages

| line | manager | package | Wolfi | note |
|---|---|---|---|---|
| 3 | apt-get | `libpq-dev` | `postgresql-dev` |  |
| 3 | apt-get | `libnope` | **unmapped** | no Wolfi package known |

### Final stage

`cgr.dev/chainguard/python:3.12-dev`: **keeps a shell**.

Blockers:

- `svc/Dockerfile:9` ENTRYPOINT runs x.sh. **Fix:** use an exec form.

Shell evidence:

- `svc/Dockerfile:9` entrypoint-script: ENTRYPOINT x

Notes:

- n1

### Notes

- line 3: dropped `apt-get update`
"""
