"""Package installs in RUN commands: managers, options, pins, separators and line numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from repocontext.dockerfile import parse
from repocontext.dockerfile.packages import packages_in_shell, simple_commands, tokenize


def found(text: str) -> list[tuple[str, str, str | None]]:
    return [(p.manager, p.name, p.version) for p in packages_in_shell(text, 1, lambda _o: 1)]


@pytest.mark.parametrize(("command", "expected"), [
    ("apt-get update && apt-get install -y --no-install-recommends curl=7.88.1-10 git",
     [("apt-get", "curl", "7.88.1-10"), ("apt-get", "git", None)]),
    ("apt-get -y -o Dpkg::Options::=--force-confnew install -t bookworm-backports golang",
     [("apt-get", "golang", None)]),
    ("apt install -y python3; apt-get remove -y vim || apt-get purge x", [("apt", "python3", None)]),
    ("DEBIAN_FRONTEND=noninteractive sudo -E apt-get install -qq $EXTRA \"lib foo\" > /dev/null 2>&1",
     [("apt-get", "$EXTRA", None), ("apt-get", "lib foo", None)]),
    ("apk add --no-cache --virtual .deps gcc=13.2.1-r0 musl-dev~1.2 'py3-pip>=23' tini@community",
     [("apk", "gcc", "13.2.1-r0"), ("apk", "musl-dev", "~1.2"), ("apk", "py3-pip", ">=23"), ("apk", "tini", None)]),
    ("apk -U add --repository https://x/edge curl; apk del .deps", [("apk", "curl", None)]),
    ("yum install -y --setopt tsflags=nodocs httpd-2.4.57 && yum clean all", [("yum", "httpd-2.4.57", None)]),
    ("dnf -y --enablerepo crb install gcc | tee log & microdnf --nodocs install shadow-utils",
     [("dnf", "gcc", None), ("microdnf", "shadow-utils", None)]),
    ("/usr/bin/tdnf install -y ca-certificates", [("tdnf", "ca-certificates", None)]),
    ("zypper --non-interactive in -y curl=8.0", [("zypper", "curl", "8.0")]),
    ("if true; then apt-get install -y jq; fi", [("apt-get", "jq", None)]),
    ("echo apt-get install nothing; pip install requests", []),
    ("(cd /x && apt-get install -y make)", [("apt-get", "make", None)]),
    ("apt-get install -y $(cat /pkgs.txt | tr '\\n' ' ')", [("apt-get", "$(cat /pkgs.txt | tr '\\n' ' ')", None)]),
])
def test_packages_in_shell(command: str, expected: list[tuple[str, str, str | None]]) -> None:
    assert found(command) == expected


def test_tokenizer_keeps_quoted_operators_and_handles_comments() -> None:
    assert [[t.text for t in c] for c in simple_commands("echo 'a && b' # apt-get install x\nls -l")] == [
        ["echo", "a && b"], ["ls", "-l"]]
    assert [t.text if t else None for t in tokenize("a\\\n  b")] == ["a", "b"]


def test_source_lines_in_continued_heredoc_and_exec_runs(tmp_path: Path) -> None:
    text = """\
FROM debian
RUN apt-get update && \\
    apt-get install -y \\
      curl \\
      # not a package
      wget
RUN ["apt-get", "install", "-y", "tree"]
RUN ["/bin/sh", "-c", "apk add bash"]
RUN bash -e <<EOF
  apt-get install -y \\
    vim
EOF
RUN python3 <<EOF
apt-get install -y notashell
EOF
"""
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    stage = parse(path.read_text(), "Dockerfile").dockerfile.stages[0]
    assert [(p.manager, p.name, p.line, p.source_line) for p in stage.packages] == [
        ("apt-get", "curl", 2, 4), ("apt-get", "wget", 2, 6), ("apt-get", "tree", 7, 7), ("apk", "bash", 8, 8),
        ("apt-get", "vim", 9, 11)]
