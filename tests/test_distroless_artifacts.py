"""What a restructured runtime copies from its builder."""

from __future__ import annotations

from repocontext.dockerfile import parse
from repocontext.dockerfile.copies import chain
from subgraphs.distroless_migration.artifacts import Artifacts, Installed, collect, package_blockers


def artifacts(text: str) -> Artifacts:
    dockerfile = parse(text, "Dockerfile").dockerfile
    return collect("Dockerfile", chain(dockerfile), "\\")


def test_copies_venvs_outputs_and_touched_paths() -> None:
    found = artifacts("""\
FROM python:3.12
WORKDIR /app
COPY requirements.txt .
RUN python -m venv .venv && .venv/bin/pip install -r requirements.txt
RUN mkdir -p /data /tmp/x /app/cache && chown -R app /data && chmod 755 /srv/run
RUN CGO_ENABLED=0 go build -o bin/tool ./cmd/tool
ADD vendor.tar.gz /opt/vendor/
COPY a.txt b.txt /etc/app/
COPY conf/ /etc/app/conf/
RUN useradd -u 1000 app
""")
    assert [(c.source, c.dest, c.order) for c in found.copies] == [
        ("/app/requirements.txt", "/app/requirements.txt", 4), ("/app/.venv", "/app/.venv", 1),
        ("/data", "/data", 4), ("/app/cache", "/app/cache", 4), ("/srv/run", "/srv/run", 4),
        ("/app/bin/tool", "/app/bin/tool", 3), ("/opt/vendor", "/opt/vendor", 4),
        ("/etc/app/a.txt", "/etc/app/a.txt", 4), ("/etc/app/b.txt", "/etc/app/b.txt", 4),
        ("/etc/app/conf", "/etc/app/conf", 4)]
    assert found.venvs == ["/app/.venv"] and not found.system_pip and found.cgo_disabled
    assert found.users == {"app"}
    found.add("/app")
    assert [c.dest for c in found.minimized()] == [
        "/data", "/srv/run", "/opt/vendor", "/etc/app/a.txt", "/etc/app/b.txt", "/etc/app/conf", "/app"]


def test_pip_and_poetry_variants() -> None:
    system = artifacts("FROM python:3.12\nRUN pip install flask\n")
    assert system.system_pip and system.pip_line == 2
    target = artifacts("FROM python:3.12\nRUN python3 -m pip install --target=/deps flask\n")
    assert [c.dest for c in target.copies] == ["/deps"] and not target.system_pip
    active = artifacts("FROM python:3.12\nENV VIRTUAL_ENV=/v PATH=/v/bin:$PATH\nRUN pip install flask\n")
    assert not active.system_pip
    user = artifacts("FROM python:3.12\nRUN pip install --user flask\n")
    assert [b.line for b in user.blockers] == [2]
    uv = artifacts("FROM python:3.12\nWORKDIR /w\nENV UV_PROJECT_ENVIRONMENT=/opt/env\nRUN uv sync --frozen\n")
    assert uv.venvs == ["/opt/env"]
    poetry = artifacts("FROM python:3.12\nWORKDIR /w\nRUN poetry install\n")
    assert [b.what for b in poetry.blockers] == ["poetry install puts its virtualenv in Poetry's cache directory"]
    in_project = artifacts("FROM python:3.12\nWORKDIR /w\nRUN poetry config virtualenvs.in-project true && "
                           "poetry install\n")
    assert in_project.venvs == ["/w/.venv"] and in_project.blockers == []
    into_root = artifacts("FROM debian\nCOPY . /\n")
    assert [b.what for b in into_root.blockers] == ["COPY into / puts files everywhere in the image"]


def test_package_roles() -> None:
    out = Artifacts()
    package_blockers("Dockerfile", [Installed("build-base", 2), Installed("libxslt-dev", 2), Installed("tzdata", 2),
                                    Installed("ffmpeg", 3), Installed("libnope", 4, mapped=False),
                                    Installed("$PKGS", 5, mapped=False, variable=True)], ["protobuf-dev"], out)
    assert [(c.source, c.dest) for c in out.copies] == [("/usr/lib/libxslt.so.*", "/usr/lib/"),
                                                       ("/usr/lib/libexslt.so.*", "/usr/lib/"),
                                                       ("/usr/share/zoneinfo", "/usr/share/zoneinfo/")]
    assert [b.line for b in out.blockers] == [3, 4, 5]


def test_a_build_tool_is_build_only_when_the_build_runs_it() -> None:
    def blockers(text: str) -> list[str]:
        out = artifacts(text)  # what the build runs is found while its artifacts are
        package_blockers("Dockerfile", [Installed("git", 2), Installed("curl", 2)], [], out)
        return [b.what.split()[1] for b in out.blockers if b.what.startswith("package ")]

    # This project's own Dockerfile: git is installed for the planner to run, and no RUN uses it
    assert blockers("FROM python:3.11-slim\nRUN apt-get install -y git curl\nRUN pip install -e .\n") == [
        "git", "curl"]
    assert blockers("FROM python:3.11\nRUN apt-get install -y git curl\nRUN git clone https://x/y /src && "
                    "curl -fsSL https://x/z -o /z\n") == []
    assert blockers("FROM python:3.11\nRUN apt-get install -y git curl\n"
                    "RUN pip install git+https://github.com/a/b\n") == ["curl"]  # pip runs git for a git+ URL
    assert blockers("FROM node:20\nRUN apt-get install -y git curl\nRUN npm ci\n") == ["curl"]  # npm runs git
    out = Artifacts()  # the user's build_only: says so, evidence or not
    package_blockers("Dockerfile", [Installed("git", 2)], ["git"], out)
    assert out.blockers == []
