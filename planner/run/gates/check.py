"""The patch gate: a run reports only a patch that `git apply --check` accepts.

A patch is made from the touched files as an exact read found them in the
work tree, so that content is its base. It is checked twice, never touching
the user's work tree, index or config:

1. against those bytes, in a temp dir outside any repository (no attributes,
   no user config): the patch text is well formed and fits what the edits were
   applied to. Always run: it also covers a directory that is not a git
   repository and files with uncommitted changes.
2. against the commit (HEAD), for each touched file unchanged since HEAD as
   git sees it (filters and eol conversion applied) whose blob is not the very
   bytes read (where it is, base 1 has checked it): `git apply --cached
   --check` on a temporary index holding those blobs, as `--apply` does. The
   commit's content is the blob: a file stored with LF but checked out with
   CRLF (eol=crlf, autocrlf) gets a CRLF patch that `git apply` in a work tree
   takes but the commit does not, so it is refused. A file with uncommitted
   changes is left out: its patch is for the work tree as it is, not for any
   commit.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from planner.bundle.view import read_repo_file, reader
from planner.chain.work import ItemResult
from planner.patch.diff import blob_id, file_diff, to_bytes
from planner.patch.plan import Edit, EditError, apply_edits

TIMEOUT = 120
_CLEAN_ENV = {"LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
_REPO_ENV = {"LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_LITERAL_PATHSPECS": "1"}
_APPLY = ("apply", "--check", "--whitespace=nowarn")  # the user's apply.whitespace policy is not ours to check


class _GitMissing(Exception):
    pass


def _git(cwd: Path, args: Sequence[str], env: Mapping[str, str], stdin: bytes = b"") -> tuple[int, str, str]:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, env=dict(env),
                              timeout=TIMEOUT, check=False)
    except FileNotFoundError as exc:
        if exc.filename == "git":
            raise _GitMissing from exc
        return -1, "", f"error: {cwd} is gone"
    except subprocess.TimeoutExpired:
        return -1, "", f"error: git {args[0]} took longer than {TIMEOUT}s"
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def _reason(stderr: str) -> str:
    """git's errors on one line (e.g. 'patch failed: Dockerfile:3; Dockerfile: patch does not apply')."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line.removeprefix("error: ").removeprefix("fatal: ") for line in lines
              if line.startswith(("error: ", "fatal: "))]
    return "; ".join(errors or lines[-1:]) or "git apply failed"


# --- the patch's own sections -------------------------------------------------------------------------------


def _unquote(text: str) -> str:
    """The C-quoted name at the start of `text`, as git writes it."""
    escapes = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
    out, at = bytearray(), 1
    while text[at] != '"':
        if text[at] != "\\":
            out += text[at].encode("utf-8", "surrogateescape")
            at += 1
        elif text[at + 1] in escapes:
            out.append(escapes[text[at + 1]])
            at += 2
        else:  # \ooo: one byte, octal
            out.append(int(text[at + 1:at + 4], 8))
            at += 4
    return out.decode("utf-8", "surrogateescape")


def _path(header: str) -> str:
    """The path of a `diff --git a/P b/P` line (the same path on both sides: edits never rename)."""
    names = header.removeprefix("diff --git ").rstrip("\n")
    if not names.startswith('"'):
        return names[2:2 + (len(names) - 5) // 2]
    try:
        return _unquote(names)[2:]
    except (IndexError, ValueError):  # not a header git wrote: the check itself will say what is wrong
        return names


def split_patch(patch: str) -> dict[str, str]:
    """path → that file's section of the patch."""
    sections: dict[str, str] = {}
    path = None
    for line in patch.splitlines(keepends=True):
        if line.startswith("diff --git "):
            path = _path(line)
            sections[path] = ""
        if path is not None:
            sections[path] += line
    return sections


# --- base 1: the bytes the patch was made from --------------------------------------------------------------


def _check_bytes(patch: str, originals: Mapping[str, bytes | None]) -> str | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | _CLEAN_ENV
    with tempfile.TemporaryDirectory(prefix="planner-patch-") as tmp:
        root = Path(tmp)
        for rel, data in originals.items():
            target = (root / rel).resolve()
            if data is not None and target.is_relative_to(root.resolve()):  # a file gone stays missing: git names it
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        env["GIT_CEILING_DIRECTORIES"] = str(root.parent)  # never a repository above the temp dir
        code, _, err = _git(root, _APPLY, env, to_bytes(patch))
    return None if code == 0 else _reason(err)


# --- base 2: the commit -------------------------------------------------------------------------------------


def _head_blobs(repo: Path, paths: Sequence[str]) -> dict[str, tuple[str, str]]:
    """path → (mode, blob id) in HEAD for the paths that are files there; none outside a repo or before a commit."""
    code, tree, _ = _git(repo, ["ls-tree", "-z", "HEAD", "--", *paths], os.environ | _REPO_ENV)  # cwd-relative
    blobs: dict[str, tuple[str, str]] = {}
    for entry in filter(None, tree.split("\0")) if code == 0 else ():
        meta, rel = entry.split("\t", 1)
        mode, kind, oid = meta.split()
        if kind == "blob":
            blobs[rel] = (mode, oid)
    return blobs


def _converted(repo: Path, originals: Mapping[str, bytes | None]) -> dict[str, tuple[str, str]]:
    """path → (mode, blob id) for the files unchanged since HEAD whose blob is not the bytes read (eol or filter
    conversion). Only these need base 2: where the blob is those very bytes, base 1 has checked it."""
    blobs = _head_blobs(repo, list(originals))
    other = [p for p, (_, oid) in blobs.items() if (data := originals.get(p)) is not None and blob_id(data) != oid]
    if not other:
        return {}
    code, hashed, _ = _git(repo, ["hash-object", "--", *other], os.environ | _REPO_ENV)  # filters; nothing written
    return {} if code else {p: blobs[p] for p, oid in zip(other, hashed.split(), strict=False) if oid == blobs[p][1]}


def _check_head(repo: Path, patch: str, entries: Mapping[str, tuple[str, str]]) -> str | None:
    env = os.environ | _REPO_ENV
    code, prefix, err = _git(repo, ["rev-parse", "--show-prefix"], env)
    prefix = prefix.strip()
    where = [f"--directory={prefix.rstrip('/')}"] if prefix else []  # the patch's paths are relative to `repo`
    listing = "".join(f"{mode} {oid}\t{prefix}{rel}\0" for rel, (mode, oid) in entries.items())
    with tempfile.TemporaryDirectory(prefix="planner-index-") as tmp:
        env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")  # a temporary index: the user's is never read or written
        if code == 0:
            code, _, err = _git(repo, ["update-index", "-z", "--index-info"], env, to_bytes(listing))
        if code:
            return f"cannot check on HEAD: {_reason(err)}"
        code, _, err = _git(repo, [*_APPLY, "--cached", *where], env, to_bytes(patch))
    # The work-tree bytes fit (base 1) and git calls the files unchanged: HEAD stores them converted.
    return None if code == 0 else f"HEAD stores the file otherwise than the work tree (eol or filter): {_reason(err)}"


# --- the gate -----------------------------------------------------------------------------------------------


def _read_bytes(repo: Path, rel: str) -> bytes | None:
    text = read_repo_file(repo, rel, exact=True).text
    return None if text is None else to_bytes(text)


def check_patch(repo: Path, patch: str, originals: Mapping[str, bytes | None] | None = None) -> str | None:
    """None when `patch` applies (see the module doc for the bases), else git's reason on one line.

    `originals` are the touched files' bytes the patch was made from; by default they are read again."""
    if not patch.strip():
        return None
    sections = split_patch(patch)
    if originals is None:
        originals = {rel: _read_bytes(repo, rel) for rel in sections}
    try:
        reason = _check_bytes(patch, originals)
        converted = {} if reason else _converted(repo, {rel: originals.get(rel) for rel in sections})
        if converted:
            reason = _check_head(repo, "".join(sections[rel] for rel in converted), converted)
    except _GitMissing:
        return "git is not installed, so the patch could not be checked"
    return reason


def refused_files(repo: Path, files: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """path → why its diff does not apply, for the changed files (path → (old text, new text))."""
    diffs = {path: file_diff(path, *files[path]) for path in sorted(files)}
    diffs = {path: diff for path, diff in diffs.items() if diff}
    originals = {path: to_bytes(files[path][0]) for path in diffs}
    reason = check_patch(repo, "".join(diffs.values()), originals)
    if reason is None:
        return {}
    refused = {path: why for path in diffs
               if (why := check_patch(repo, diffs[path], {path: originals[path]})) is not None}
    return refused or dict.fromkeys(diffs, reason)  # files fine alone but not together: none is reported


def _fail(result: ItemResult, why: str) -> None:
    result.status, result.error = "failed", why
    result.report += f"\n**Not applied**: {why}\n"


def _combined(repo: str, results: Sequence[ItemResult], patched: Collection[str]) -> dict[str, tuple[str, str]]:
    """The patched results' edits applied in order; one that no longer applies on its own turn fails."""
    read = reader(repo)
    accepted: list[Edit] = []
    for result in results:
        if result.status not in patched:
            continue
        edits = [Edit.model_validate(e) for e in result.edits]
        try:
            apply_edits(read, [*accepted, *edits])
        except EditError as exc:
            _fail(result, f"its edits no longer apply once other items were dropped: {exc}")
            continue
        accepted += edits
    return apply_edits(read, accepted) if accepted else {}


def gated_files(repo: str, results: Sequence[ItemResult], patched: Collection[str]) -> dict[str, tuple[str, str]]:
    """The changed files (path → (old, new)) of the results whose status is in `patched`, once every file's diff
    applies: an item touching a file whose diff git refuses fails with git's reason and its edits are dropped."""
    while True:
        files = _combined(repo, results, patched)
        refused = refused_files(Path(repo), files)
        if not refused:
            return files
        for result in results:
            touched = sorted({e["file"] for e in result.edits} & refused.keys())
            if result.status in patched and touched:
                _fail(result, f"the patch does not apply: {refused[touched[0]]}")
