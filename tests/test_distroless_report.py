"""The markdown report: the path as heading, a one-line summary, then every decision."""

from __future__ import annotations

from subgraphs.distroless_migration.models import (
    Blocker,
    DockerfileMigration,
    EvidenceRef,
    ItemBlocker,
    PackageChange,
    RuntimeDecision,
    StageChange,
    UnmappedPackage,
    render,
    summary,
)

MIGRATION = DockerfileMigration(
    path="svc/Dockerfile", new_text="", changed=True,
    stages=[StageChange(index=0, line=1, old_image="python:3.12", new_image="cgr.dev/chainguard/python:3.12-dev",
                        notes=["a | b", "c"], dev_variant=True, user_root_added=True)],
    packages=[PackageChange(manager="apt-get", old="libpq-dev", new=["postgresql-dev"], line=3)],
    unmapped=[UnmappedPackage(name="libnope", manager="apt-get", line=3, reason="no Wolfi package known")],
    runtime=RuntimeDecision(stage=0, image="cgr.dev/chainguard/python:3.12-dev", blockers=[
        Blocker(file="svc/Dockerfile", line=9, what="ENTRYPOINT runs x.sh", how="use an exec form")],
        evidence=[EvidenceRef(file="svc/Dockerfile", line=9, kind="entrypoint-script", detail="ENTRYPOINT x")],
        notes=["n1"]),
    notes=["line 3: dropped `apt-get update`"],
    blockers=[ItemBlocker(kind="unmapped-package", file="svc/Dockerfile", line=3,
                          message="apt-get package libnope has no known Wolfi package", fix="map it")])


def test_report_lists_every_decision() -> None:
    assert MIGRATION.blocked
    assert render(MIGRATION) == """\
## `svc/Dockerfile`

**blocked** · `python:3.12` → `cgr.dev/chainguard/python:3.12-dev`; packages 1 mapped, 1 unmapped; \
final stage kept -dev (1 reason); 1 blocker

### Blockers (each kept as written under a `# TODO(planner):` comment; this Dockerfile's edits stay out of \
the patch until they are resolved or keep_unconverted=true is given)

- `svc/Dockerfile:3` [unmapped-package] apt-get package libnope has no known Wolfi package. **Fix:** map it.

| # | stage | line | from | to | -dev | USER root | notes |
|---|---|---|---|---|---|---|---|
| 0 |  | 1 | `python:3.12` | `cgr.dev/chainguard/python:3.12-dev` | yes | added | a \\| b; c |

### Packages

| line | manager | package | Wolfi | note |
|---|---|---|---|---|
| 3 | apt-get | `libpq-dev` | `postgresql-dev` |  |
| 3 | apt-get | `libnope` | **unmapped: blocker** | no Wolfi package known |

### Final stage

`cgr.dev/chainguard/python:3.12-dev`: **keeps a shell**.

Why it keeps a shell (-dev):

- `svc/Dockerfile:9` ENTRYPOINT runs x.sh. **Fix:** use an exec form.

Shell evidence:

- `svc/Dockerfile:9` entrypoint-script: ENTRYPOINT x

Notes:

- n1

### Notes

- line 3: dropped `apt-get update`
"""


def test_kept_unconverted_never_reads_unmapped_next_to_a_success() -> None:
    kept = MIGRATION.model_copy(update={"keep_unconverted": True})
    assert not kept.blocked
    report = render(kept, "succeeded")
    assert report.startswith("## `svc/Dockerfile`\n\n**succeeded** · `python:3.12` → "
                             "`cgr.dev/chainguard/python:3.12-dev`; packages 1 mapped, 1 kept as written; final stage "
                             "kept -dev (1 reason); 1 unconverted, kept as TODO\n")
    assert "**unmapped" not in report and " unmapped;" not in report
    assert "| 3 | apt-get | `libnope` | kept as written (TODO) | no Wolfi package known |" in report
    assert "### Kept unconverted (keep_unconverted=true" in report


def test_summary_facts() -> None:
    facts = summary(MIGRATION)
    assert {k: v for k, v in facts.items() if k != "line"} == {
        "path": "svc/Dockerfile", "images": [{"line": 1, "from": "python:3.12",
                                              "to": "cgr.dev/chainguard/python:3.12-dev", "added": False}],
        "packages_mapped": 1, "packages_unmapped": 1, "final_image": "cgr.dev/chainguard/python:3.12-dev",
        "shell_free": False, "restructured": False, "kept_dev_reasons": 1, "blockers": 1, "checks_failed": 0}
