"""`--apply`: commit a run's patch on a new branch, never touching the work tree or current branch.

The commit is built with git plumbing against a temporary index, so the
user's checkout, index and uncommitted work stay exactly as they were; a
dirty work tree is refused anyway, as the user asked for a clean hand-off.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.errors import EnvironmentProblem, ExitCode, PlannerError
from planner.run.gates import paths
from repocontext.home import user_umask

if TYPE_CHECKING:
    from planner.config import Settings


def _git(repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    # The user's umask: objects and refs written into their repository get the modes git would give them.
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, input=stdin,
                          env={**os.environ, **(env or {})}, check=False, umask=user_umask())
    if proc.returncode != 0:
        raise PlannerError(f"git {args[0]} failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr else ''}")
    return proc.stdout


def check_clean(repo: Path) -> None:
    """--apply is refused before a run starts, not after, when the work tree has uncommitted changes."""
    if not (repo / ".git").exists() and _git(repo, "rev-parse", "--is-inside-work-tree").strip() != "true":
        raise PlannerError(f"{repo} is not a git repository; --apply commits on a new branch")
    if _git(repo, "status", "--porcelain", "--untracked-files=no").strip():
        raise PlannerError(f"{repo} has uncommitted changes; commit or stash them before --apply")
    check_identity(repo)


def check_identity(repo: Path) -> None:
    """--apply makes a commit: without a name and email git would refuse it after the run, so it is refused
    before, as the environment it is (exit 6), saying how to set them."""
    for ident in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
        proc = subprocess.run(["git", "-C", str(repo), "var", ident], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise EnvironmentProblem(f"git has no identity to commit with in {repo}; --apply commits on a new "
                                     "branch: set one (git config --global user.name 'Your Name'; git config "
                                     "--global user.email you@example.com)")


def _where(repo: Path) -> list[str]:
    """The patch is relative to `repo`; git takes a subfolder's patch only when told the folder (and ignores
    paths outside the current folder otherwise)."""
    prefix = _git(repo, "rev-parse", "--show-prefix").strip()
    return [f"--directory={prefix.rstrip('/')}"] if prefix else []


def patched_files(repo: Path, patch: str) -> list[str]:
    """The paths, relative to `repo`, that `git apply` would touch, as git itself reads the patch (a rename
    gives both names)."""
    where = _where(repo)
    prefix = where[0].removeprefix("--directory=") + "/" if where else ""
    fields = _git(repo, "apply", "--numstat", "-z", "--whitespace=nowarn", *where, "-", stdin=patch).split("\0")
    files: list[str] = []
    while fields:
        record = fields.pop(0)
        if not record:
            continue
        name = record.split("\t", 2)[-1]
        if name:
            files.append(name)
        else:  # a rename: "added\tdeleted\t" then the old and the new name
            files += [n for n in fields[:2] if n]
            del fields[:2]
    return sorted({name.removeprefix(prefix) if name.startswith(prefix) else "../" + name for name in files})


def check_paths(repo: Path, patch: str) -> None:
    """Refuse a patch that would write through a symbolic link (in the work tree or in HEAD, where the commit
    is made) or outside the repository, naming each such file."""
    files = patched_files(repo, patch)
    refused = {**paths.refusals(repo, files), **paths.committed_links(repo, files)}
    if refused:
        raise PlannerError("; ".join(refused[f] for f in sorted(refused)))


def _added(patch: str) -> dict[str, str]:
    """path → the text of the lines the patch adds to it (a file's header ends at its first hunk)."""
    added: dict[str, list[str]] = {}
    path, header = None, False
    for line in patch.splitlines(keepends=True):
        if line.startswith("diff --git "):
            path, header = None, True
        elif header and line.startswith("+++ "):
            name = line[4:].rstrip("\r\n").split("\t")[0]
            path = name[2:] if name.startswith("b/") else name
        elif line.startswith("@@"):
            header = False
        elif not header and path is not None and line.startswith("+"):
            added.setdefault(path, []).append(line[1:])
    return {path: "".join(lines) for path, lines in added.items()}


def check_secrets(repo: Path, patch: str) -> None:
    """Refuse a patch that adds a secret-looking value its file does not already hold (the join blocks such
    an item; this holds for any patch `--apply` is handed), naming the file and the rule, never the value."""
    from planner.bundle.view import read_repo_file  # here: the checks above need none of it
    from planner.run.gates import leaks

    found = leaks.found_in({path: (read_repo_file(repo, path, exact=True).text or "", text)
                            for path, text in _added(patch).items()})
    if found:
        raise PlannerError("; ".join(f"{path}: the patch writes a value that looks like a secret ({rule}) the "
                                     "file did not hold" for path, hits in found.items() for rule in
                                     sorted({rule for _, rule in hits})))


def apply_patch(repo: Path, patch: str, branch: str, message: str) -> str:
    """Commit `patch` on a new `branch` from HEAD; returns the commit id."""
    check_clean(repo)
    check_paths(repo, patch)
    check_secrets(repo, patch)
    if _git(repo, "branch", "--list", branch).strip():
        raise PlannerError(f"branch {branch!r} already exists")
    where = _where(repo)
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(repo, "read-tree", "HEAD", env=env)
        # nowarn: the patch gate checked it so; an apply.whitespace=error config must not refuse it here
        _git(repo, "apply", "--cached", "--whitespace=nowarn", *where, "-", env=env, stdin=patch)
        tree = _git(repo, "write-tree", env=env).strip()
    commit = _git(repo, "commit-tree", tree, "-p", "HEAD", "-m", message).strip()
    _git(repo, "branch", branch, commit)
    return commit


def apply_run(settings: Settings, task_class: str, state: dict[str, Any]) -> None:
    """Commit the run's patch on a new branch; a refused apply makes the run failed (recorded so), never a
    success the user did not get. Shared by `planner dispatch --apply` and the MCP dispatch tool."""
    from planner.store.runs import RunStore, exact_patch

    branch = f"planner/{task_class}/{state['run_id']}"
    exact = exact_patch(settings.home, state.get("run_id"), state["patch"])  # the stored one is redacted
    try:
        apply_patch(Path(state["repo"]), exact, branch, f"{task_class}: run {state['run_id']}\n\n"
                    + (state.get("report") or "")[:4000])
    except PlannerError as exc:
        RunStore(settings.home).set_status(state["run_id"], "failed")
        patch = (state.get("artifacts") or {}).get("patch", "the run's patch")
        state.update(status="failed", exit_code=int(exc.exit_code if isinstance(exc, EnvironmentProblem)
                                                     else ExitCode.FAILED),
                     error=f"--apply refused: {exc.message}; the patch is at {patch}")
        return
    state["branch"] = branch
