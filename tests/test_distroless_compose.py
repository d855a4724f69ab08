"""Compose evidence counts only for the service that builds the Dockerfile (issue 29 §4): a healthcheck of
kafka or of another service never keeps a shell in this image."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from planner.config import Settings
from planner.run.dispatch import dispatch
from repocontext.deployment_commands import command_evidence
from subgraphs.distroless_migration import concerns

COMPOSE = """\
services:
  vote:
    build: ./vote
    healthcheck:
      test: ["CMD-SHELL", "curl -f http://localhost/ || exit 1"]
  worker:
    build:
      context: ./worker
      dockerfile: Dockerfile.prod
  kafka:
    image: apache/kafka:3.7.0
    healthcheck:
      test: /opt/kafka/bin/kafka-topics.sh --bootstrap-server localhost:9092 --list
"""
VOTE = """\
FROM python:3.11-slim
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
CMD ["gunicorn", "app:app", "-b", "0.0.0.0:80"]
"""
WORKER = """\
FROM golang:1.22 AS build
WORKDIR /src
COPY . .
RUN go build -o /worker .
FROM gcr.io/distroless/static-debian12
COPY --from=build /worker /worker
ENTRYPOINT ["/worker"]
"""


def test_each_healthcheck_names_the_dockerfile_its_service_builds() -> None:
    found = command_evidence("docker-compose.yml", COMPOSE, compose=True)
    assert [(e.line, e.dockerfile) for e in found] == [(5, "vote/Dockerfile"), (13, None)]
    vote, kafka = (e.model_dump() for e in found)
    assert concerns("docker-compose.yml", "vote/Dockerfile", vote)
    assert not concerns("docker-compose.yml", "worker/Dockerfile.prod", vote)
    assert not concerns("docker-compose.yml", "vote/Dockerfile", kafka)  # an image: service builds nothing here
    assert concerns("k8s/deploy.yaml", "k8s/app/Dockerfile", {"detail": "container app command: sh -c x"})


def test_a_distroless_final_stage_stays_shell_free_beside_other_services_healthchecks(
        home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"docker-compose.yml": COMPOSE, "vote/Dockerfile": VOTE, "vote/requirements.txt": "flask\n",
                      "vote/app.py": "app = None\n", "worker/Dockerfile.prod": WORKER,
                      "worker/main.go": "package main\n", "worker/go.mod": "module w\n"})
    state = dispatch(Settings.from_env(), "distroless-migration", repo, {}, {})
    items = {o["item"]["id"]: o for o in state["outcomes"]}
    assert items["worker/Dockerfile.prod"]["item"]["data"]["deployment_evidence"] == []
    vote = items["vote/Dockerfile"]["item"]["data"]["deployment_evidence"]
    assert [(e["line"], e["dockerfile"]) for e in vote] == [(5, "vote/Dockerfile")]
    worker = items["worker/Dockerfile.prod"]["plan"]["data"]["migration"]
    assert worker["runtime"]["shell_free"] and worker["runtime"]["evidence"] == []
