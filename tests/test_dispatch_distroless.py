"""distroless-migration end to end: the recipe path over every Dockerfile, and the LLM path for what it declines."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import run_cli
from fake_llm import fake_planner

from planner.config import Settings
from planner.run.dispatch import dispatch
from planner.store.provenance import ProvenanceStore

API = """\
FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends build-essential libpq-dev \\
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir -r requirements.txt
CMD python -m api
"""
WORKER = """\
FROM node:20-bookworm
WORKDIR /srv
COPY docker-entrypoint.sh /usr/local/bin/
COPY . .
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["node", "worker.js"]
"""
ENTRYPOINT = "#!/bin/sh\nset -e\nexec \"$@\"\n"


def test_every_dockerfile_migrated_with_blockers_reported(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"api/Dockerfile": API, "api/requirements.txt": "flask==3.0.0\n",
                      "worker/Dockerfile": WORKER, "worker/docker-entrypoint.sh": ENTRYPOINT,
                      "worker/worker.js": "console.log('hi')\n"})
    state = dispatch(Settings.from_env(), "distroless-migration", repo, {"org": "acme"}, {})
    assert state["status"] == "succeeded", state.get("outcomes")
    patch, report = state["patch"], state["report"]
    assert "+FROM cgr.dev/acme/python:3.11-dev AS build" in patch and "+FROM cgr.dev/acme/python:3.11\n" in patch
    assert "+RUN apk add --no-cache build-base postgresql-dev" in patch
    assert "+FROM cgr.dev/acme/node:20-dev" in patch  # the worker keeps a shell: its entrypoint is a script
    assert "docker-entrypoint.sh" in report and "worker/Dockerfile:5" in report
    assert [o["item"]["id"] for o in state["outcomes"]] == ["api/Dockerfile", "worker/Dockerfile"]
    assert all(o["source"] == "recipe" for o in state["outcomes"])
    record = ProvenanceStore(Settings.from_env().home).get(state["run_id"])
    assert {s.outcome for s in record.stages if s.stage == "recipe_match"} == {"matched"}
    assert (repo / "api/Dockerfile").read_text() == API  # only a patch; the repo is untouched


def test_unknown_base_image_is_blocked_without_a_model_and_goes_to_the_llm_with_one(
        home: Path, make_repo: Callable[..., Path]) -> None:
    dockerfile = "FROM registry.internal/mycorp/base:7\nCOPY app /app\nCMD [\"/app\"]\n"
    repo = make_repo({"Dockerfile": dockerfile, "app": "binary\n"})
    waiting = dispatch(Settings.from_env(), "distroless-migration", repo, {}, {})
    assert waiting["status"] == "blocked"
    [blocker] = waiting["outcomes"][0]["blockers"]
    assert blocker["kind"] == "recipe-declined" and "mycorp/base" in blocker["message"]
    assert (blocker["file"], blocker["line"]) == ("Dockerfile", 1)  # the FROM it could not map
    declined = next(s for s in waiting["stages"] if s["stage"] == "recipe_match")
    assert declined["outcome"] == "no_match" and "not migrated" in declined["reason"]
    plan = {"summary": "Move to the static image", "edits": [
        {"file": "Dockerfile", "old": "FROM registry.internal/mycorp/base:7", "new": "FROM cgr.dev/chainguard/static"}],
        "used_entries": ["must_read:2:Dockerfile"], "notes": ["mycorp/base is assumed to be glibc-free"]}
    state = dispatch(Settings.from_env(), "distroless-migration", repo, {}, {}, fake_planner(plan), "fake:x")
    assert state["status"] == "succeeded" and "+FROM cgr.dev/chainguard/static" in state["patch"]
    assert state["outcomes"][0]["source"] == "llm"


def test_cli_org_registry_and_mapping_options(home: Path, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    dockerfile = "FROM mycorp/python-base:3.12\nCOPY app.py /app/\nCMD [\"python\", \"/app/app.py\"]\n"
    repo = make_repo({"Dockerfile": dockerfile, "app.py": "print('hi')\n"})
    mapping = tmp_path / "map.yaml"
    mapping.write_text("images:\n  mycorp/python-base: python\n")
    result = run_cli("dispatch", "distroless-migration", "--repo", str(repo), "--org", "acme", "--registry",
                     "registry.example.com", "--mapping", str(mapping), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert "+FROM registry.example.com/acme/python:3.12" in out["patch"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("images: [not, a, mapping]\n")
    broken = run_cli("dispatch", "distroless-migration", "--repo", str(repo), "--mapping", str(bad))
    assert broken.returncode != 0 and "bad.yaml" in broken.stderr and "Traceback" not in broken.stderr


RUST_ETL = """\
# syntax=docker/dockerfile:1
FROM --platform=$BUILDPLATFORM rust:1.64 AS buildbase
RUN <<EOT bash
    set -ex
    apt-get update
    apt-get install -y \\
        git \\
        clang
    rustup target add wasm32-wasi
EOT
RUN curl -sSf https://raw.githubusercontent.com/WasmEdge/WasmEdge/master/utils/install.sh | bash

FROM buildbase AS build
COPY src ./src
RUN cargo build --target wasm32-wasi --release

FROM scratch
COPY --from=build /target/wasm32-wasi/release/etl.wasm /etl.wasm
ENTRYPOINT ["etl.wasm"]
"""
PROXY = "FROM nginx:1.25-alpine\nCOPY nginx.conf /etc/nginx/conf.d/default.conf\n"


def test_unconvertible_dockerfile_blocks_its_item_and_the_run(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"etl/Dockerfile": RUST_ETL, "etl/src/main.rs": "fn main() {}\n",
                      "proxy/Dockerfile": PROXY, "proxy/nginx.conf": "server { listen 8080; }\n"})
    result = run_cli("dispatch", "distroless-migration", "--repo", str(repo), "--json")
    assert result.returncode == 8, result.stderr
    out = json.loads(result.stdout)
    assert out["status"] == "blocked"
    items = {i["id"]: i for i in out["items"]}
    assert items["proxy/Dockerfile"]["status"] == "succeeded" and items["proxy/Dockerfile"]["blockers"] == []
    etl = items["etl/Dockerfile"]
    assert etl["status"] == "blocked"
    assert [(b["kind"], b["file"], b["line"]) for b in etl["blockers"]] == [
        ("unmapped-package", "etl/Dockerfile", 8), ("unconverted-command", "etl/Dockerfile", 11)]
    assert all(b["fix"] for b in etl["blockers"])
    assert "+FROM cgr.dev/chainguard/nginx:1.25" in out["patch"] and "etl/Dockerfile" not in out["patch"]
    report = Path(out["report_path"]).read_text()
    assert "## `etl/Dockerfile`\n\n**blocked** · `rust:1.64` → `cgr.dev/chainguard/rust:1.64-dev`" in report
    assert "## `proxy/Dockerfile`\n\n**succeeded** · `nginx:1.25-alpine` → `cgr.dev/chainguard/nginx:1.25`" in report


def test_keep_unconverted_accepts_the_todos(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"etl/Dockerfile": RUST_ETL, "etl/src/main.rs": "fn main() {}\n"})
    state = dispatch(Settings.from_env(), "distroless-migration", repo, {"keep_unconverted": "true"}, {})
    assert state["status"] == "succeeded", state.get("outcomes")
    outcome = state["outcomes"][0]
    assert outcome["blockers"] == [] and len([n for n in outcome["notes"] if n.startswith("kept unconverted")]) == 2
    patch = state["patch"]
    assert "+# TODO(planner): apt-get package clang has no known Wolfi package" in patch
    assert "+        clang" not in patch and "         clang" in patch  # kept in the apk line, never dropped
    assert " RUN curl -sSf https://raw.githubusercontent.com/WasmEdge/WasmEdge/master/utils/install.sh | bash" \
        in patch
    assert "**unmapped" not in state["report"] and "kept as written (TODO)" in state["report"]
    bad = run_cli("dispatch", "distroless-migration", "--repo", str(repo), "--input", "keep_unconverted=maybe")
    assert bad.returncode != 0 and "keep_unconverted='maybe' is not one of true, false" in bad.stderr
