"""Issue 22 §4-5: a Go module whose x/crypto has fixable advisories and one no version fixes (an unmaintained
subpackage the repository never imports). Records are in golang/vulndb's OSV format (ecosystem_specific.imports
with paths and symbols); the three fixable ones carry their published ids and fixes, the unfixable one is a
fixture id (GO-2099-0001) shaped like vulndb's reports on x/crypto/openpgp."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli

from repocontext.osv.remedy import choose_remedy
from repocontext.osv.schema import Advisory

GO_MOD = "module example.com/exporter\n\ngo 1.21\n\nrequire golang.org/x/crypto v0.14.0\n"
GO_SUM = ("golang.org/x/crypto v0.14.0 h1:wBqGXzWJW6m1XrIKlAH0Hs1JJ7+9KBwnIO8v66Q9cHc=\n"
          "golang.org/x/crypto v0.14.0/go.mod h1:MVFd36DqK4CsrnJYDkBA3VC4m2GkXAM0PvzMCn4JQf4=\n")
MAIN = """package main

import (
\t"fmt"

\t"golang.org/x/crypto/bcrypt"
\t"golang.org/x/crypto/ssh"
)

func main() {
\thash, _ := bcrypt.GenerateFromPassword([]byte("secret"), 10)
\tclient, err := ssh.Dial("tcp", "host:22", &ssh.ClientConfig{})
\tfmt.Println(hash, client, err)
}
"""


def _record(ident: str, fixed: str | None, path: str, symbols: list[str], summary: str,
            aliases: tuple[str, ...] = ()) -> dict:
    events = [{"introduced": "0"}, *([{"fixed": fixed}] if fixed else [])]
    return {"schema_version": "1.3.1", "id": ident, "modified": "2025-01-01T00:00:00Z",
            "published": "2024-01-01T00:00:00Z", "aliases": list(aliases), "summary": summary,
            "affected": [{"package": {"name": "golang.org/x/crypto", "ecosystem": "Go"},
                          "ranges": [{"type": "SEMVER", "events": events}],
                          "ecosystem_specific": {"imports": [{"path": path, "symbols": symbols}]}}],
            "database_specific": {"url": f"https://pkg.go.dev/vuln/{ident}", "review_status": "REVIEWED"}}


RECORDS = [
    _record("GO-2023-2402", "0.17.0", "golang.org/x/crypto/ssh", ["Dial", "NewClientConn", "NewServerConn"],
            "Man-in-the-middle attacker can compromise integrity of secure channel in golang.org/x/crypto",
            ("CVE-2023-48795", "GHSA-45x7-px36-x8w8")),
    _record("GO-2024-3321", "0.31.0", "golang.org/x/crypto/ssh", ["ServerConfig.PublicKeyCallback"],
            "Misuse of connection.serverAuthenticate may cause authorization bypass in golang.org/x/crypto",
            ("CVE-2024-45337", "GHSA-v778-237x-gjrc")),
    _record("GO-2025-3487", "0.35.0", "golang.org/x/crypto/ssh", ["NewServerConn"],
            "Potential denial of service in golang.org/x/crypto", ("CVE-2025-22869", "GHSA-hcg3-q754-cr77")),
    _record("GO-2099-0001", None, "golang.org/x/crypto/openpgp", ["Encrypt", "ReadMessage"],
            "Unmaintained openpgp package of golang.org/x/crypto: no fix will be released"),
]


@pytest.fixture
def advisories(tmp_path: Path) -> Path:
    root = tmp_path / "go-advisories"
    root.mkdir()
    for record in RECORDS:
        (root / f"{record['id']}.json").write_text(json.dumps(record, indent=2))
    return root


def test_the_choice_clears_every_advisory_that_has_a_fix() -> None:
    remedy = choose_remedy([Advisory.model_validate(r) for r in RECORDS], "Go", "golang.org/x/crypto", "0.14.0")
    assert (remedy.version, remedy.unfixed, remedy.no_fix) == ("0.35.0", ["GO-2099-0001"], False)
    assert remedy.conclusion.endswith("; GO-2099-0001 names no fix and remains after it")


def test_unfixed_advisory_is_reported_with_its_scope_and_the_item_is_not_blocked(
        home: Path, make_repo: Callable[..., Path], advisories: Path) -> None:
    repo = make_repo({"go.mod": GO_MOD, "go.sum": GO_SUM, "main.go": MAIN})
    result = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                     "--json")
    out = json.loads(result.stdout)
    [item] = out["items"]
    assert item["status"] in ("succeeded", "needs_regeneration"), (item["status"], item.get("error"))
    assert "+require golang.org/x/crypto v0.35.0" in out["patch"] or "v0.35.0" in out["patch"]
    assert item["data"]["unfixed"] == ["GO-2099-0001"] and item["data"]["target"] == "0.35.0"
    [left] = item["plan_data"]["residual"]
    assert (left["id"], left["scope"], left["imported"], left["called"]) == (
        "GO-2099-0001", ["golang.org/x/crypto/openpgp.Encrypt", "golang.org/x/crypto/openpgp.ReadMessage"], [], [])
    assert any("GO-2099-0001 has no fix (`all versions`) and remains after this upgrade; it is scoped to "
               "`golang.org/x/crypto/openpgp`, which the repository does not import" in n for n in item["notes"])
    report = Path(out["report_path"]).read_text()
    assert "no call of the vulnerable symbols found" not in report  # ssh.Dial is called
    first = report.split("#### Call sites to review", 1)[1].split("\n- ", 1)[1]
    assert first.startswith("`main.go:12:") and "ssh.Dial` — **calls a vulnerable symbol**" in first.split("\n")[0]


def test_only_an_unfixable_advisory_names_it_and_its_scope(home: Path, make_repo: Callable[..., Path],
                                                           tmp_path: Path) -> None:
    root = tmp_path / "only-unfixed"
    root.mkdir()
    (root / "GO-2099-0001.json").write_text(json.dumps(RECORDS[-1]))
    repo = make_repo({"go.mod": GO_MOD, "go.sum": GO_SUM, "main.go": MAIN})
    out = json.loads(run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories",
                             str(root), "--json").stdout)
    [item] = out["items"]
    assert item["data"]["unfixed"] == ["GO-2099-0001"] and item["data"]["target"] is None
    assert "GO-2099-0001 (scoped to golang.org/x/crypto/openpgp) names no fixed version: no upgrade clears it" in (
        item["error"] or "")
