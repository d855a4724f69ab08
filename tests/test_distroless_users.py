"""useradd / groupadd → BusyBox adduser / addgroup."""

from __future__ import annotations

import pytest

from subgraphs.distroless_migration.shell import convert_groupadd, convert_useradd


@pytest.mark.parametrize(("args", "expected"), [
    (["app"], "adduser -D app"),
    (["-u", "1000", "-g", "app", "app"], "adduser -D -u 1000 -G app app"),
    (["--uid=1000", "--gid", "app", "--create-home", "--home-dir", "/home/app", "--shell", "/bin/sh", "app"],
     "adduser -D -u 1000 -G app -h /home/app -s /bin/sh app"),
    (["-rMl", "-c", "Service user", "svc"], "adduser -D -S -H -g 'Service user' svc"),
    (["-u1001", "-g", "0", "app"], "adduser -D -u 1001 -G root app"),
    (["-r", "--system", "app"], "adduser -D -S app"),
])
def test_useradd(args: list[str], expected: str) -> None:
    assert convert_useradd(args) == expected


@pytest.mark.parametrize(("args", "reason"), [
    (["-G", "wheel", "bob"], "option -G has no BusyBox equivalent"),
    (["-g", "1000", "bob"], "primary group given by number (1000): BusyBox adduser needs a group name"),
    (["-u"], "option -u needs a value"),
    (["a", "b"], "expected one name, found 2"),
    (["-o", "-u", "0", "x"], "option -o has no BusyBox equivalent"),
])
def test_useradd_that_cannot_be_converted(args: list[str], reason: str) -> None:
    with pytest.raises(ValueError, match=f"^{reason}$".replace("(", r"\(").replace(")", r"\)")):
        convert_useradd(args)


def test_groupadd() -> None:
    assert convert_groupadd(["-g", "1000", "app"]) == "addgroup -g 1000 app"
    assert convert_groupadd(["--system", "--force", "app"]) == "addgroup -S app"
    with pytest.raises(ValueError, match="option -K has no BusyBox equivalent"):
        convert_groupadd(["-K", "GID_MIN=100", "app"])
