"""Attack replay: planted secrets through gather and dispatch; where does any value end up?

Usage: python bench/planted_secrets.py [TREE]

Builds a git repository from the planted-secrets corpus (tests/fixtures/secrets/corpus.yaml), runs
`planner gather` and `planner dispatch` of the shipped task classes in a fresh PLANNER_HOME (hot views in
Redis when PLANNER_REDIS_URL is set), then searches every file under the home, every hot-view key and the
CLI output for each planted value, and prints the kinds planted, the leaks found (target: 0) and where.
With TREE (a git work tree, e.g. a clone of the corpus's pythondotorg), also prints the secret scan's cost
over its text files: redaction time per MB and the values the rules redact (to review false positives).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = yaml.safe_load((ROOT / "tests" / "fixtures" / "secrets" / "corpus.yaml").read_text())
GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "commit.gpgsign=false"]
ADVISORY = {"id": "PYSEC-2023-74", "modified": "2024-01-01T00:00:00Z", "summary": "requests bug",
            "affected": [{"package": {"ecosystem": "PyPI", "name": "requests"}, "ranges": [
                {"type": "ECOSYSTEM", "events": [{"introduced": "2.3.0"}, {"fixed": "2.31.0"}]}]}]}


def _repo(work: Path) -> Path:
    repo = work / "repo"
    for rel, text in CORPUS["files"].items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run([*GIT, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-qm", "planted"], check=True)
    return repo


def _planner(env: dict[str, str], *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    return proc.stdout + proc.stderr


def _redis_dump(url: str | None) -> bytes:
    """Every hot-view key and value, read by type (DUMP's format may compress a value past recognition)."""
    if not url:
        return b""
    import redis

    from planner.hotviews.naming import PREFIX

    client = redis.Redis.from_url(url)
    out: list[bytes] = []
    for key in client.scan_iter(match=f"{PREFIX}:*"):
        kind = client.type(key).decode()
        out.append(key)
        if kind == "string":
            out.append(client.get(key) or b"")
        elif kind == "hash":
            out += [f + b"=" + v for f, v in client.hgetall(key).items()]
        elif kind in ("set", "list", "zset"):
            out += list(client.smembers(key) if kind == "set" else client.lrange(key, 0, -1) if kind == "list"
                        else client.zrange(key, 0, -1))
    return b"\n".join(out)


def replay() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        repo = _repo(work)
        (work / "advisories").mkdir()
        (work / "advisories" / "PYSEC-2023-74.json").write_text(json.dumps(ADVISORY))
        env = {**os.environ, "PLANNER_HOME": str(work / "home"), "PLANNER_ADVISORIES": str(work / "advisories"),
               "PYTHONPATH": str(ROOT)}
        outputs = [_planner(env, "gather", str(repo))]
        outputs += [_planner(env, "dispatch", name, "--repo", str(repo), "--json")
                    for name in ("vulnerability-remediation", "distroless-migration")]
        shown = {"cli output": "\n".join(outputs).encode(), "redis": _redis_dump(os.environ.get("PLANNER_REDIS_URL"))}
        shown |= {str(p.relative_to(work)): p.read_bytes() for p in sorted((work / "home").rglob("*"))
                  if p.is_file() and p.name != "patch.exact.diff"}
        leaks = [(where, p["kind"]) for p in CORPUS["planted"] for where, data in shown.items()
                 if p["value"].encode() in data]
    print(f"planted: {len(CORPUS['planted'])} values of {len({p['kind'] for p in CORPUS['planted']})} kinds; "
          f"searched {len(shown)} files and streams")
    print(f"leaks: {len(leaks)}")
    for where, kind in leaks:
        print(f"  {kind} in {where}")
    return 1 if leaks else 0


def scan_cost(tree: Path) -> None:
    from repocontext.secrets import secret_spans

    texts = []
    for path in sorted(tree.rglob("*")):
        if path.is_file() and ".git" not in path.parts:
            data = path.read_bytes()
            if b"\0" not in data[:8192]:
                texts.append((path.relative_to(tree).as_posix(), data.decode("utf-8", errors="replace")))
    started = time.process_time()
    found = [(rel, text[start:end], rule) for rel, text in texts for start, end, rule in secret_spans(text)]
    seconds = time.process_time() - started
    size = sum(len(text) for _, text in texts) / 1e6
    print(f"scan: {len(texts)} text files, {size:.1f} MB, {seconds:.2f} s CPU ({seconds / size * 1000:.0f} ms/MB)")
    for rel, value, rule in found:
        print(f"  {rule}: {rel}: {len(value)} characters")


if __name__ == "__main__":
    code = replay()
    if len(sys.argv) > 1:
        scan_cost(Path(sys.argv[1]))
    sys.exit(code)
