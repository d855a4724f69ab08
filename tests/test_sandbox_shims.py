"""A program on PATH through a version manager's shim (pyenv, rbenv, nodenv) runs in the sandbox: the shim execs
ROOT/libexec/TOOL, which finds its interpreters through ROOT_ROOT, by default under a $HOME the sandbox hides."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from planner import sandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


def _manager(root: Path) -> None:
    """A version manager laid out as pyenv is: shims/tool execs libexec/fakeenv, which reads ROOT/version."""
    (root / "shims").mkdir(parents=True)
    (root / "libexec").mkdir()
    (root / "version").write_text("9.9\n")
    shim = root / "shims" / "tool"
    shim.write_text(f'#!/bin/sh\nexec "{root}/libexec/fakeenv" exec tool "$@"\n')
    real = root / "libexec" / "fakeenv"
    real.write_text('#!/bin/sh\necho "root=$FAKEENV_ROOT version=$(cat "$FAKEENV_ROOT/version")"\n')
    shim.chmod(0o755)
    real.chmod(0o755)


def test_a_shim_on_path_reaches_its_root_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "home" / ".fakeenv"
    _manager(root)
    monkeypatch.setenv("PATH", f"{root / 'shims'}{os.pathsep}{os.environ['PATH']}")
    assert sandbox.shim_roots(os.environ["PATH"])["FAKEENV_ROOT"] == str(root)
    work = tmp_path / "work"
    work.mkdir()
    done = sandbox.run(sandbox.Step(argv=["tool"], work=work, timeout=30))
    assert done.exit_code == 0, done.output
    assert f"root={root} version=9.9" in done.output
    # read-only: the step cannot change the interpreter a later step (or the operator) runs
    write = sandbox.run(sandbox.Step(argv=["sh", "-c", f"echo x > {root}/version"], work=work, timeout=30))
    assert write.exit_code != 0 and (root / "version").read_text() == "9.9\n"


def test_a_folder_named_shims_without_a_manager_is_not_a_root(tmp_path: Path) -> None:
    (tmp_path / "tools" / "shims").mkdir(parents=True)
    assert sandbox.shim_roots(str(tmp_path / "tools" / "shims")) == {}
