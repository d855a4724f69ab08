"""RUN rewriting for Wolfi: only the changed words change."""

from __future__ import annotations

import pytest

from repocontext.dockerfile import parse
from repocontext.model import Instruction
from subgraphs.distroless_migration.rewrite import RunContext, RunResult, installs_only, rewrite_run

CTX = RunContext(overrides={}, provided={})


def run(text: str, ctx: RunContext = CTX) -> RunResult:
    return rewrite_run(instruction(text), ctx)


def instruction(text: str) -> Instruction:
    stage = parse(f"FROM debian:12\n{text}", "Dockerfile").dockerfile.stages[0]
    return stage.instructions[1]


@pytest.mark.parametrize(("before", "after"), [
    ("RUN apt-get update && apt-get install -y curl git\n", "RUN apk add --no-cache curl git\n"),
    ("RUN apt-get -y install --no-install-recommends curl\n", "RUN apk add --no-cache curl\n"),
    ("RUN DEBIAN_FRONTEND=noninteractive apt-get install -yq -o Dpkg::Options::=--force-confold curl\n",
     "RUN apk add --no-cache curl\n"),
    ("RUN sudo apt install -y make\n", "RUN apk add --no-cache make\n"),
    ("RUN apt-get install -y gcc g++ make && apt-get clean\n", "RUN apk add --no-cache gcc make\n"),
    ("RUN apt-get install -y software-properties-common curl\n", "RUN apk add --no-cache curl\n"),
    ("RUN apt-get install -y curl >/dev/null 2>&1\n", "RUN apk add --no-cache curl >/dev/null 2>&1\n"),
    ("RUN yum -y install gcc openssl-devel && yum clean all && rm -rf /var/cache/yum\n",
     "RUN apk add --no-cache gcc openssl-dev\n"),
    ("RUN dnf install -y --setopt=install_weak_deps=False libffi-devel\n", "RUN apk add --no-cache libffi-dev\n"),
    ('RUN yum groupinstall -y "Development Tools"\n', "RUN apk add --no-cache build-base\n"),
    ("RUN rm -rf /var/lib/apt/lists/* /tmp/build\n", "RUN rm -rf /tmp/build\n"),
    ("RUN --mount=type=cache,target=/var/cache/apt apt-get update && apt-get install -y git\n",
     "RUN --mount=type=cache,target=/var/cache/apk apk add --no-cache git\n"),
    ("RUN apt-get install -y curl && \\\n    echo done\n", "RUN apk add --no-cache curl && \\\n    echo done\n"),
    ("RUN echo start \\\n && apt-get update \\\n && apt-get install -y curl\n",
     "RUN echo start \\\n && apk add --no-cache curl\n"),
    ("RUN apk add --no-cache curl\n", "RUN apk add --no-cache curl\n"),
    ('RUN ["apt-get", "install", "-y", "curl"]\n', 'RUN ["apt-get", "install", "-y", "curl"]\n'),  # exec form: kept
])
def test_rewrites(before: str, after: str) -> None:
    assert run(before).raw == after


def test_dropped_instruction_and_notes() -> None:
    result = run("RUN apt-get update && apt-get upgrade -y && rm -rf /var/lib/apt/lists/*\n")
    assert result.raw is None
    assert result.notes == ["line 2: dropped `apt-get update` (apk add --no-cache needs none)",
                            "line 2: dropped `apt-get upgrade` (apk add --no-cache needs none)",
                            "line 2: dropped `rm -rf /var/lib/apt/lists/*` (no apt/yum cache on Wolfi)"]
    # What has no apk counterpart stays, as a blocker (`dnf module` used to be dropped with a note).
    other = run("RUN dnf module enable -y nodejs:18 && dpkg --add-architecture i386\n")
    assert other.raw == "RUN dnf module enable -y nodejs:18 && dpkg --add-architecture i386\n"
    assert other.notes == []
    assert [(b.kind, b.line, b.message) for b in other.blockers] == [
        ("unconverted-command", 2, "`dnf module enable -y nodejs:18`: there is no dnf on Wolfi and `dnf module` has "
                                   "no apk counterpart here"),
        ("unconverted-command", 2, "`dpkg --add-architecture i386`: dpkg installs or inspects Debian .deb packages; "
                                   "it does not exist on Wolfi")]


def test_packages_unmapped_variables_pins_and_provided() -> None:
    ctx = RunContext(overrides={"libcustom": ["custom", "custom-utils"]}, provided={"python3": "the python image"})
    result = run("RUN apt-get install -y python3 libcustom libnope=1.0 curl=7.88.1-10 $MORE\n", ctx)
    assert result.raw == "RUN apk add --no-cache custom custom-utils libnope=1.0 curl $MORE\n"  # libnope: kept
    assert [(p.manager, p.old, p.new, p.line, p.note) for p in result.packages] == [
        ("apt-get", "python3", [], 2, "provided by the python image"),
        ("apt-get", "libcustom", ["custom", "custom-utils"], 2, ""),
        ("apt-get", "curl", ["curl"], 2, "version pin '7.88.1-10' dropped")]
    assert [(u.name, u.reason) for u in result.unmapped] == [
        ("libnope", "no Wolfi package known: kept as written"),
        ("$MORE", "a variable or command substitution: its packages cannot be mapped, kept as written")]
    assert [(b.kind, b.line) for b in result.blockers] == [("unmapped-package", 2), ("dynamic-package-list", 2)]
    everything_unmapped = run("RUN apt-get update && apt-get install -y libnope\n")
    assert everything_unmapped.raw == "RUN apk add --no-cache libnope\n"  # never dropped (it used to be)
    assert [b.kind for b in everything_unmapped.blockers] == ["unmapped-package"]


def test_one_package_per_line_layout_and_comment_lines_are_kept() -> None:
    result = run("RUN apt-get update \\\n"
                 "    && apt-get install -y --no-install-recommends \\\n"
                 "        # toolchain\n"
                 "        build-essential \\\n"
                 "        libnope \\\n"
                 "        zlib1g-dev \\\n"
                 "    && rm -rf /var/lib/apt/lists/*\n")
    assert result.raw == ("RUN apk add --no-cache \\\n"
                          "        # toolchain\n"
                          "        build-base \\\n"
                          "        libnope \\\n"
                          "        zlib-dev\n")
    assert [(p.old, p.line) for p in result.packages] == [("build-essential", 5), ("zlib1g-dev", 7)]
    assert [(u.name, u.line) for u in result.unmapped] == [("libnope", 6)]


def test_heredoc_scripts_are_rewritten_and_data_heredocs_are_not() -> None:
    result = run("RUN <<EOF\nset -e\napt-get update\napt-get install -y curl\nrm -rf /var/lib/apt/lists/*\nEOF\n")
    assert result.raw == "RUN <<EOF\nset -e\napk add --no-cache curl\nEOF\n"
    assert [(p.old, p.line) for p in result.packages] == [("curl", 5)]
    data = "RUN cat <<EOF > /opt/notes.txt\napt-get install -y curl\nEOF\n"
    assert run(data).raw == data
    only = run("RUN <<EOF\napt-get update\nEOF\n")
    assert only.raw is None


def test_users_and_groups_become_busybox() -> None:
    result = run("RUN groupadd -r app && useradd -r -g app -u 1001 -ms /bin/bash app\n")
    assert result.raw == "RUN addgroup -S app && adduser -D -S -G app -u 1001 -s /bin/bash app\n"
    kept = run("RUN useradd -G wheel,docker bob\n")
    assert kept.raw == "RUN useradd -G wheel,docker bob\n"
    assert [(b.kind, b.message) for b in kept.blockers] == [(  # it used to be a note only
        "unconverted-command", "`useradd -G wheel,docker bob`: useradd is not in Wolfi's -dev images and cannot be "
                               "converted to BusyBox (option -G has no BusyBox equivalent)")]
    assert "apk add" in kept.blockers[0].fix and "shadow" in kept.blockers[0].fix
    unconverted = rewrite_run(instruction("RUN useradd bob\n"), RunContext({}, {}, convert_users=False))
    assert unconverted.raw == "RUN useradd bob\n" and len(unconverted.blockers) == 1
    assert run("RUN usermod -aG docker vscode\n").raw == "RUN addgroup vscode docker\n"
    assert run("RUN usermod -s /bin/zsh vscode\n").blockers[0].kind == "unconverted-command"


def test_installs_only() -> None:
    assert installs_only("RUN apk add --no-cache ca-certificates\n", 0)
    assert installs_only("RUN apk add a && apk add b\n", 0)
    assert not installs_only("RUN apk add a && update-ca-certificates\n", 0)
    assert not installs_only("RUN apk del a\n", 0)
