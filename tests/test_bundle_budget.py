"""Bundle semantics at the edges of the budget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from bundle_helpers import block_tokens, budget, header_tokens, make_bundle, tccm_from

from planner import tokens
from planner.errors import BudgetError

A = "alpha " * 40 + "\n"
B = "beta gamma delta\n"
C = "the quick brown fox jumps over the lazy dog\n" * 3


def test_must_read_exact_fit_then_one_token_over(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": A})
    need = header_tokens() + block_tokens("must_read:0:a.txt", A)
    per_file = block_tokens("must_read:0:a.txt", A)
    tccm = tccm_from(tmp_path, "must_read:\n  - glob: a.txt\n" + budget(need, per_file))
    fit = make_bundle(repo, tmp_path / "h", tccm)
    assert [(e.status, e.tokens) for e in fit.entries] == [("included", per_file)]
    assert fit.totals.tokens == need == fit.totals.max_tokens
    assert tokens.count(fit.text) <= need
    over = tccm_from(tmp_path, "must_read:\n  - glob: a.txt\n" + budget(need - 1, per_file), name="u")
    with pytest.raises(BudgetError) as caught:
        make_bundle(repo, tmp_path / "h", over)
    message = str(caught.value)
    assert f"needs {need} tokens" in message and f"budget is {need - 1} tokens" in message
    assert f"must_read:0:a.txt={per_file}" in message and "\n" not in message


def test_per_file_cut_is_recorded_as_truncated(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": A})
    full = block_tokens("must_read:0:a.txt", A)
    bundle = make_bundle(repo, tmp_path / "h", tccm_from(tmp_path, "must_read:\n  - glob: a.txt\n" + budget(1000, 30)))
    entry = bundle.entries[0]
    assert entry.status == "truncated" and entry.tokens_needed == full
    assert 0 < entry.tokens <= 30
    assert "truncated to per_file_max_tokens" in bundle.text
    assert bundle.text.count("alpha") < 40


def test_must_read_overflow_names_every_entry(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": A, "b.txt": B})
    tccm = tccm_from(tmp_path, "must_read:\n  - glob: a.txt\n  - glob: b.txt\n" + budget(60, 60))
    with pytest.raises(BudgetError, match=r"must_read:0:a\.txt=\d+, must_read:1:b\.txt=\d+"):
        make_bundle(repo, tmp_path / "h", tccm)


def test_must_read_over_max_files_is_an_error(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": A, "b.txt": B})
    tccm = tccm_from(tmp_path, "must_read:\n  - glob: '*.txt'\n" + budget(5000, 1000, max_files=1))
    with pytest.raises(BudgetError, match="in 2 files but the budget is 5000 tokens / 1 files"):
        make_bundle(repo, tmp_path / "h", tccm)


def test_should_read_first_fit_in_declared_order(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": A, "b.txt": B, "c.txt": C})
    sizes = {n: block_tokens(f"should_read:{i}:{n}", t) for i, (n, t) in enumerate([("b.txt", B), ("a.txt", A),
                                                                                       ("c.txt", C)])}
    room = header_tokens() + sizes["b.txt"] + sizes["c.txt"]  # a.txt cannot fit after b.txt
    tccm = tccm_from(tmp_path, "should_read:\n  - glob: b.txt\n  - glob: a.txt\n  - glob: c.txt\n"
                     + budget(room, 60))
    bundle = make_bundle(repo, tmp_path / "h", tccm)
    fates = [(e.target, e.status, e.tokens, e.tokens_needed) for e in bundle.entries]
    assert fates == [("b.txt", "included", sizes["b.txt"], None),
                     ("a.txt", "deferred", 0, sizes["a.txt"]),
                     ("c.txt", "included", sizes["c.txt"], None)]
    assert "tokens left" in bundle.entries[1].detail
    assert bundle.totals.tokens == room
    assert bundle.text.index("should_read:0:b.txt") < bundle.text.index("should_read:2:c.txt")
    assert "alpha" not in bundle.text


def test_should_read_respects_max_files(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": A, "b.txt": B, "c.txt": C})
    bundle = make_bundle(repo, tmp_path / "h", tccm_from(tmp_path, "should_read:\n  - glob: '*.txt'\n"
                                                         + budget(5000, 1000, max_files=2)))
    assert [(e.target, e.status) for e in bundle.entries] == [
        ("a.txt", "included"), ("b.txt", "included"), ("c.txt", "deferred")]
    assert "max_files reached" in bundle.entries[2].detail


def test_empty_glob_and_missing_key_are_recorded(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": A})
    tccm = tccm_from(tmp_path, "must_read:\n  - glob: '**/*.go'\n    reason: go code\n  - key: vulnerabilities\n"
                     + budget(1000, 500))
    bundle = make_bundle(repo, tmp_path / "h", tccm)
    assert [(e.selector, e.status, e.detail, e.reason) for e in bundle.entries] == [
        ("glob:**/*.go", "missing", "glob matched no file", "go code"),
        ("key:vulnerabilities", "missing", "key not present in the RepoContext", None)]


def test_secret_files_are_denied_never_read(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    key_block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecret\n-----END RSA PRIVATE KEY-----\n"
    repo = make_repo({".env": "TOKEN=supersecretvalue\n", "certs/server.pem": key_block, "config/app.py": key_block,
                      "config/ok.py": "DEBUG = False\n", "id_rsa": key_block})
    tccm = tccm_from(tmp_path, "should_read:\n  - glob: '**/*'\n" + budget(5000, 1000))
    bundle = make_bundle(repo, tmp_path / "h", tccm)
    fates = {e.target: (e.status, e.rule) for e in bundle.entries}
    assert fates == {".env": ("denied", "dotenv"), "certs/server.pem": ("denied", "pem"),
                     "config/app.py": ("denied", "content:private-key-block"), "config/ok.py": ("included", None),
                     "id_rsa": ("denied", "ssh-key")}
    assert "supersecretvalue" not in bundle.text and "MIIEsecret" not in bundle.text
    assert "supersecretvalue" not in bundle.model_dump_json()


def test_duplicates_are_loaded_once(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": A, "b.txt": B})
    tccm = tccm_from(tmp_path, "must_read:\n  - glob: a.txt\nshould_read:\n  - glob: '*.txt'\nmay_read:\n"
                     "  - glob: b.txt\n" + budget(5000, 1000))
    bundle = make_bundle(repo, tmp_path / "h", tccm)
    assert [(e.id, e.status, e.tokens) for e in bundle.entries] == [
        ("must_read:0:a.txt", "included", block_tokens("must_read:0:a.txt", A)),
        ("should_read:0:a.txt", "duplicate", 0),
        ("should_read:0:b.txt", "included", block_tokens("should_read:0:b.txt", B)),
        ("may_read:0:b.txt", "duplicate", 0)]
    assert bundle.entries[1].detail == "already loaded as must_read:0:a.txt"
    assert bundle.text.count("alpha alpha") == A.count("alpha alpha")


def test_may_read_is_listed_with_an_estimate(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"a.txt": A})
    bundle = make_bundle(repo, tmp_path / "h", tccm_from(tmp_path, "may_read:\n  - glob: a.txt\n  - key: languages\n"
                                                         + budget(5000, 1000)))
    listed = {e.target: e for e in bundle.entries}
    assert listed["a.txt"].status == "listed" and listed["a.txt"].tokens == 0
    assert abs(listed["a.txt"].tokens_needed - block_tokens("may_read:0:a.txt", A)) < 40
    assert listed["languages"].status == "listed" and listed["languages"].tokens_needed > 0
    assert "alpha" not in bundle.text and "may_read" not in bundle.text


def test_bootstrap_mode_uses_bootstrap_globs(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"})
    tccm = tccm_from(tmp_path, "must_read:\n  - key: dependencies\nshould_read:\n  - glob: app.py\n"
                     "bootstrap_globs: ['**/requirements*.txt']\n" + budget(5000, 1000))
    bundle = make_bundle(repo, tmp_path / "h", tccm, gathered=False)
    assert bundle.mode == "bootstrap"
    assert [(e.band, e.target, e.status) for e in bundle.entries] == [
        ("must_read", "dependencies", "missing"), ("bootstrap", "requirements.txt", "included"),
        ("should_read", "app.py", "included")]
    assert "bootstrap mode" in bundle.entries[0].detail
    assert "requests==2.30.0" in bundle.text and "(mode: bootstrap)" in bundle.text


def test_binary_files_are_skipped(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"logo.png": b"\x89PNG\r\n\x1a\n\x00\x00binary", "a.txt": B})
    bundle = make_bundle(repo, tmp_path / "h", tccm_from(tmp_path, "should_read:\n  - glob: '*'\n" + budget(5000, 500)))
    assert {e.target: e.status for e in bundle.entries} == {"a.txt": "included", "logo.png": "skipped"}


def test_truncated_slice_keeps_only_what_the_text_shows(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    files = {f"pkg/mod{i:03d}.py": f"x = {i}\n" for i in range(300)}
    repo = make_repo(files)
    tccm = tccm_from(tmp_path, "should_read:\n  - key: files\n" + budget(2000, 400))
    bundle = make_bundle(repo, tmp_path / "h", tccm)
    entry = bundle.entries[0]
    assert entry.status == "truncated" and entry.tokens <= 400
    shown = bundle.slices[entry.id]
    assert 0 < len(shown) < 300
    assert all(f'"path":"{record["path"]}"' in bundle.text for record in shown)
    assert '"path":"pkg/mod299.py"' not in bundle.text


def test_a_must_read_slice_is_never_cut(tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    """A decision may rest on a must_read slice: one over per_file_max_tokens is a budget error naming it."""
    files = {f"pkg/mod{i:03d}.py": f"x = {i}\n" for i in range(300)}
    repo = make_repo(files)
    with pytest.raises(BudgetError) as caught:
        make_bundle(repo, tmp_path / "h", tccm_from(tmp_path, "must_read:\n  - key: files\n" + budget(2000, 400)))
    assert "must_read:0:files needs" in caught.value.message and "per_file_max_tokens 400" in caught.value.message
