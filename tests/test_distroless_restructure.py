"""The added shell-free runtime stage."""

from __future__ import annotations

from repocontext.dockerfile import parse
from repocontext.dockerfile.copies import chain
from subgraphs.distroless_migration.artifacts import Copy
from subgraphs.distroless_migration.commands import builder_name, render_runtime_stage
from subgraphs.distroless_migration.runtime import effective_specs


def test_render_keeps_runtime_config_in_a_fixed_order() -> None:
    text = """\
from --platform=linux/arm64 python:3.12 as app
arg VERSION=1
arg UNUSED
env DEBIAN_FRONTEND=noninteractive
label version=$VERSION
env APP=/srv
workdir /srv
expose 8080
user app
volume /data
stopsignal SIGINT
healthcheck --interval=10s cmd python -c "import sys"
cmd python -m app
"""
    stages = chain(parse(text, "Dockerfile").dockerfile)
    specs = effective_specs(stages)
    out = render_runtime_stage(stages, "cgr.dev/chainguard/python:3.12", "app", [Copy("/srv", "/srv")], specs,
                               {13: ["python", "-m", "app"], 12: ["python", "-c", "import sys"]}, [])
    assert out == """
# Shell-free runtime: only what the build produced (no shell, no package manager).
from --platform=linux/arm64 cgr.dev/chainguard/python:3.12
arg VERSION=1
label version=$VERSION
env APP=/srv
workdir /srv
copy --from=app /srv /srv
expose 8080
volume /data
stopsignal SIGINT
healthcheck --interval=10s cmd ["python", "-c", "import sys"]
user app
entrypoint []
cmd ["python", "-m", "app"]
"""


def test_builder_name() -> None:
    assert builder_name(set()) == "build"
    assert builder_name({"build"}) == "builder"
    assert builder_name({"build", "builder", "build-2"}) == "build-3"
