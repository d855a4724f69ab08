"""The final-stage decision on its own: modes, blockers and command rewrites."""

from __future__ import annotations

from repocontext.dockerfile import parse
from repocontext.dockerfile.copies import chain
from repocontext.model import ShellEvidence
from subgraphs.distroless_migration.images import map_base
from subgraphs.distroless_migration.models import MigrationOptions
from subgraphs.distroless_migration.runtime import FinalContext, FinalPlan, decide, effective_specs

OPTIONS = MigrationOptions()


def plan(text: str, runs: bool = False, evidence: list[ShellEvidence] | None = None) -> FinalPlan:
    dockerfile = parse(text, "Dockerfile").dockerfile
    stages = chain(dockerfile)
    root = None if stages[0].base.scratch else map_base(stages[0].base, OPTIONS)
    run_lines = [i.line for s in stages for i in s.instructions if i.keyword == "RUN"] if runs else []
    return decide(FinalContext(path="Dockerfile", chain=stages, root=root, run_lines=run_lines, installed=[],
                               evidence=evidence or [], deployment=[], options=OPTIONS))


def test_plain_mode_rewrites_commands_and_resets_the_entrypoint() -> None:
    p = plan("FROM python:3.12\nCOPY app.py /srv/\nCMD exec /usr/local/bin/python /srv/app.py\n")
    assert p.mode == "plain" and p.entrypoint == [] and not p.dev
    assert p.argv == {3: ["python", "/srv/app.py"]}
    assert p.decision.shell_free and p.decision.image == "cgr.dev/chainguard/python:3.12"


def test_wrapped_shell_and_python_script_shebang() -> None:
    evidence = [ShellEvidence(file="Dockerfile", line=3, kind="entrypoint-script", detail="ENTRYPOINT runs ./manage.py",
                              script="manage.py", shebang="#!/usr/bin/env python3")]
    p = plan("FROM python:3.12\nCOPY . /app\nENTRYPOINT [\"/app/manage.py\", \"runserver\"]\n", evidence=evidence)
    assert p.mode == "plain" and p.argv == {3: ["python3", "/app/manage.py", "runserver"]}
    unwrapped = plan("FROM node:20\nCOPY . /app\nCMD [\"sh\", \"-c\", \"node /app/server.js\"]\n")
    assert unwrapped.argv == {3: ["node", "/app/server.js"]}


def test_keep_dev_with_blockers_and_no_rewrites() -> None:
    p = plan("FROM node:20\nCOPY . /app\nCMD [\"npm\", \"start\"]\n")
    assert p.mode == "keep-dev" and p.dev and p.argv == {}
    assert [b.what for b in p.decision.blockers] == ["CMD runs npm, which the runtime image node does not have"]
    assert p.decision.image == "cgr.dev/chainguard/node:20-dev" and not p.decision.shell_free


def test_restructure_targets_per_language() -> None:
    go = plan("FROM golang:1.22\nWORKDIR /src\nCOPY . .\nRUN go build -o /bin/app .\nCMD [\"/bin/app\"]\n", runs=True)
    assert go.mode == "restructure" and go.target is not None and go.target.name == "glibc-dynamic"
    static = plan("FROM golang:1.22\nENV CGO_ENABLED=0\nRUN go build -o /bin/app .\nCMD [\"/bin/app\"]\n", runs=True)
    assert static.target is not None and static.target.name == "static"
    java = plan("FROM maven:3.9\nWORKDIR /b\nCOPY . .\nRUN mvn package\nCMD [\"java\", \"-jar\", \"t/a.jar\"]\n",
                runs=True)
    assert java.mode == "keep-dev" and java.decision.blockers[0].what == "the final maven image runs build steps (RUN)"


def test_as_is_for_scratch_and_unmapped() -> None:
    scratch = plan("FROM scratch\nCOPY app /app\nCMD /app\n")
    assert scratch.mode == "as-is" and scratch.decision.shell_free
    unknown = plan("FROM corp.example/img:1\nCMD [\"/x\"]\n")
    assert unknown.mode == "as-is" and not unknown.decision.shell_free and unknown.decision.blockers[0].line == 1


def test_effective_specs() -> None:
    stages = chain(parse("FROM x AS a\nCMD [\"a\"]\nHEALTHCHECK CMD [\"h\"]\nFROM a\nENTRYPOINT [\"e\"]\n",
                         "Dockerfile").dockerfile)
    assert [(s.keyword, s.line, s.argv) for s in effective_specs(stages)] == [
        ("ENTRYPOINT", 5, ["e"]), ("HEALTHCHECK", 3, ["h"])]
