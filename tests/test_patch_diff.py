"""planner.patch.diff: every diff it makes is one real git applies, byte for byte, whatever the file holds."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import GIT_ENV, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.bundle.view import read_repo_file
from planner.patch.diff import file_diff, to_bytes, unified_diff
from planner.patch.plan import Edit, apply_edits
from planner.run.gates.check import check_patch, split_patch
from planner.run.taskbase import reader
from repocontext.lines import split_lines

# Pieces of lines, as bytes: tabs, trailing blanks, a CR or form feed inside a line, a BOM, UTF-8 beyond ASCII,
# U+2028 (str.splitlines cuts there, git does not) and bytes that are not UTF-8 (Latin-1 é, 0xff).
PIECES = [b"a", b"b", b"FROM x", b" ", b"\t", b"\r", b"\x0c", "é".encode(), "\u2028".encode(), b"\xef\xbb\xbf",
          b"\xe9", b"\xff", b"\\", b"+", b"-", b"@@"]
ENDINGS = [b"\n", b"\r\n", b"\n", b"\r"]
PATHS = ["Dockerfile", "dir with space/req.txt", 'we"ird.txt', "tab\there.txt", "ünï.txt"]

line_bodies = st.lists(st.sampled_from(PIECES), max_size=3).map(b"".join)
pool = st.lists(line_bodies, min_size=1, max_size=4)  # few distinct lines: repeats make difflib work


@st.composite
def file_bytes(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.sampled_from(draw(pool)), max_size=16))
    ends = [draw(st.sampled_from(ENDINGS)) for _ in lines]
    if lines and draw(st.booleans()):
        ends[-1] = b""  # no newline at the end of the file
    bom = b"\xef\xbb\xbf" if draw(st.booleans()) else b""
    return bom + b"".join(body + end for body, end in zip(lines, ends, strict=True))


inserted = st.lists(st.sampled_from(["x", "\n", "\r\n", "\t", " ", "\udce9", "é", "\ufeff", "FROM y\n"]),
                    max_size=4).map("".join)


@st.composite
def edited(draw: st.DrawFn, before: str) -> str:
    """`before` with one to three slices replaced (appending after a last line without newline included)."""
    text = before
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 12)))
        text = text[:start] + draw(inserted) + text[end:]
    return text


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")  # what an exact read gives


def _apply(repo: Path, patch: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), "apply", *args], input=to_bytes(patch), capture_output=True,
                          env=os.environ | GIT_ENV, check=False)


def _assert_applies(repo: Path, files: dict[str, tuple[str, str]]) -> str:
    """Commit the old contents, check and apply the diff with real git; the files end up as the new bytes."""
    for rel, (before, _) in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(to_bytes(before))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "before")
    patch = unified_diff(files)
    patch.encode("utf-8")  # always valid Unicode: it is stored, printed and sent as JSON
    if all(before == after for before, after in files.values()):
        assert patch == ""
        return patch
    checked = _apply(repo, patch, "--check")
    assert checked.returncode == 0, (checked.stderr, patch)
    assert check_patch(repo, patch) is None
    assert _apply(repo, patch).returncode == 0
    for rel, (_, after) in files.items():
        assert (repo / rel).read_bytes() == to_bytes(after), rel
    return patch


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_text_any_edit_applies_with_git(data: st.DataObject, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():  # no user config (autocrlf, apply.whitespace) in the checks
        monkeypatch.setenv(key, value)
    paths = data.draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=2, unique=True))
    files = {}
    for rel in paths:
        before = _decode(data.draw(file_bytes()))
        files[rel] = (before, data.draw(edited(before)))
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        git(repo, "init", "-q")
        _assert_applies(repo, files)


def test_dockerfile_without_final_newline_gets_a_stage_appended(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    before = "FROM python:3.12\nCOPY . /app\nCMD [\"python\", \"app.py\"]"
    after = before + "\n\nFROM cgr.dev/chainguard/python\nCOPY --from=0 /app /app"
    patch = _assert_applies(tmp_path, {"Dockerfile": (before, after)})
    assert '-CMD ["python", "app.py"]\n\\ No newline at end of file\n+CMD ["python", "app.py"]\n' in patch
    assert patch.endswith("+COPY --from=0 /app /app\n\\ No newline at end of file\n")


def test_only_the_last_line_without_newline_changes(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    patch = _assert_applies(tmp_path, {"Dockerfile": ("FROM a\nRUN b", "FROM a\nRUN c")})
    assert patch.endswith("-RUN b\n\\ No newline at end of file\n+RUN c\n\\ No newline at end of file\n")
    patch = _assert_applies(tmp_path, {"Dockerfile": ("FROM a\nRUN c", "FROM a\nRUN c\n")})  # a newline added
    assert patch.endswith("-RUN c\n\\ No newline at end of file\n+RUN c\n")


def test_unchanged_last_line_without_newline_is_context(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    patch = _assert_applies(tmp_path, {"f": ("a\nb\nc", "A\nb\nc")})
    assert patch.endswith(" c\n\\ No newline at end of file\n")


def test_crlf_requirements_pin_keeps_its_line_ends(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    before = "flask==3.0.0\r\nrequests==2.19.0\r\nurllib3==2.0.0\r\n"
    patch = _assert_applies(tmp_path, {"requirements.txt": (before, before.replace("2.19.0", "2.31.0"))})
    assert "-requests==2.19.0\r\n+requests==2.31.0\r\n" in patch and " flask==3.0.0\r\n" in patch


def test_latin1_file_round_trips_byte_exactly(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "app.py").write_bytes("# Auteur : José\nVERSION = '1.0'\n".encode("latin-1"))
    files = apply_edits(reader(str(tmp_path)), [Edit(file="app.py", old="'1.0'", new="'1.1'")])
    patch = _assert_applies(tmp_path, files)
    assert (tmp_path / "app.py").read_bytes() == "# Auteur : José\nVERSION = '1.1'\n".encode("latin-1")
    assert "GIT binary patch" in patch  # the hunk holds a byte that is not UTF-8
    far = "# José\n" + "".join(f"x{i} = {i}\n" for i in range(10))
    patch = _assert_applies(tmp_path, {"far.py": (_decode(far.encode("latin-1")),
                                                  _decode(far.replace("x9 = 9", "x9 = 10").encode("latin-1")))})
    assert "GIT binary patch" not in patch and "+x9 = 10\n" in patch  # far from the change: a plain text hunk


def test_bom_empty_and_emptied_files(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    patch = _assert_applies(tmp_path, {"bom.txt": ("\ufeffname = a\n", "\ufeffname = b\n"),
                                       "empty.txt": ("", "now\n"), "gone.txt": ("all\nof it", "")})
    assert "@@ -0,0 +1 @@\n+now\n" in patch and "@@ -1,2 +0,0 @@\n" in patch and "-\ufeffname = a\n" in patch


def test_lines_split_on_lf_only() -> None:
    assert split_lines("a\x0cb\u2028c\rd\r\ne") == ["a\x0cb\u2028c\rd\r\n", "e"]
    assert split_lines("") == [] and split_lines("x\n") == ["x\n"]
    assert file_diff("f", "same", "same") == ""


def test_section_paths_read_back() -> None:
    files = {rel: ("a\n", "b\n") for rel in PATHS}
    patch = unified_diff(files)
    assert list(split_patch(patch)) == sorted(PATHS)
    assert 'diff --git "a/we\\"ird.txt" "b/we\\"ird.txt"\n' in patch
    assert "--- a/dir with space/req.txt\t\n" in patch  # git's tab after a name holding a space


def test_exact_reads_give_back_the_bytes(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfname = Jos\xe9\r\nnext\x0cline\rend"
    (tmp_path / "f.txt").write_bytes(data)
    assert to_bytes(read_repo_file(tmp_path, "f.txt", exact=True).text) == data
    assert read_repo_file(tmp_path, "f.txt").text == "\ufeffname = Jos\ufffd\r\nnext\x0cline\rend"  # the bundle's view
