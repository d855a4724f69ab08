"""Compose and Kubernetes manifests: detection, kinds, images, size cap, templated YAML, bad YAML."""

from __future__ import annotations

from pathlib import Path

from repocontext.deployments import MAX_YAML_BYTES, find_deployments, is_compose

COMPOSE = """\
services:
  web:
    image: nginx:1.25
  api:
    build: .
    image: ghcr.io/acme/api:2
"""

K8S = """\
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: app
          image: ghcr.io/acme/app:1.0
        - name: sidecar
          image: envoyproxy/envoy:v1.29
---
apiVersion: v1
kind: Service
"""

HELM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "chart.fullname" . }}
spec:
  template:
    spec:
      containers:
        - image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
{{- if .Values.sidecar }}
        - image: busybox:1.36
{{- end }}
"""


def scan(tmp_path: Path, files: dict[str, str]):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    paths = [(rel, (tmp_path / rel).stat().st_size) for rel in files]
    return find_deployments(paths, lambda p: (tmp_path / p).read_text())


def test_compose_names() -> None:
    assert all(is_compose(p) for p in ("compose.yaml", "a/compose.yml", "docker-compose.prod.yml",
                                       "compose.override.yaml", "docker-compose-dev.yaml"))
    assert not any(is_compose(p) for p in ("composer.yaml", "k8s/deploy.yaml", "compose.json"))


def test_compose_and_kubernetes_are_found_sorted(tmp_path: Path) -> None:
    manifests, evidence, problems = scan(tmp_path, {
        "k8s/app.yaml": K8S, "docker-compose.yml": COMPOSE, ".github/workflows/ci.yml": "on: push\nkind: x\n",
        "chart/templates/deploy.yaml": HELM, "values.yaml": "apiVersion: 1\nimage: x\n", "notes.txt": "kind: a"})
    assert [(m.path, m.format, m.kinds, m.images) for m in manifests] == [
        ("chart/templates/deploy.yaml", "kubernetes", ["Deployment"],
         ["busybox:1.36", "{{ .Values.image.repository }}:{{ .Values.image.tag }}"]),
        ("docker-compose.yml", "compose", ["api", "web"], ["ghcr.io/acme/api:2", "nginx:1.25"]),
        ("k8s/app.yaml", "kubernetes", ["Deployment", "Service"],
         ["envoyproxy/envoy:v1.29", "ghcr.io/acme/app:1.0"]),
    ]
    assert evidence == [] and problems == []


def test_invalid_compose_is_still_listed_with_a_problem(tmp_path: Path) -> None:
    manifests, _, problems = scan(tmp_path, {"compose.yaml": "services:\n  web: [\n", "k8s.yaml": "a: [\n"})
    assert [(m.path, m.kinds) for m in manifests] == [("compose.yaml", [])]
    assert [(p[0], p[1]) for p in problems] == [("compose.yaml", 3)]
    assert problems[0][2].startswith("invalid compose YAML: ")


def test_oversized_and_alias_bomb_files_do_not_break(tmp_path: Path) -> None:
    big = "apiVersion: v1\nkind: ConfigMap\ndata:\n" + "  k: " + "x" * MAX_YAML_BYTES + "\n"
    cycle = "apiVersion: v1\nkind: List\nitems: &a\n  - *a\n"
    manifests, _, _ = scan(tmp_path, {"big.yaml": big, "docker-compose.big.yml": "#" * (MAX_YAML_BYTES + 1),
                                      "cycle.yaml": cycle})
    assert [(m.path, m.format, m.kinds) for m in manifests] == [
        ("cycle.yaml", "kubernetes", ["List"]), ("docker-compose.big.yml", "compose", [])]


def test_command_overrides_that_need_a_shell(tmp_path: Path) -> None:
    compose = """\
services:
  worker:
    image: app
    entrypoint: /bin/sh -c
    command: ["python worker.py"]
  web:
    image: app
    command: ./run.sh --port 80
    healthcheck:
      test: ["CMD-SHELL", "curl -f http://localhost || exit 1"]
  db:
    image: postgres
    healthcheck:
      test: ["CMD", "pg_isready"]
"""
    k8s = """\
apiVersion: batch/v1
kind: Job
spec:
  template:
    spec:
      initContainers:
        - name: wait
          command: ["sh", "-c", "until nslookup db; do sleep 1; done"]
      containers:
        - name: job
          args: ["/scripts/run.sh"]
          livenessProbe:
            exec:
              command: [cat, /tmp/healthy]
          lifecycle:
            preStop:
              exec:
                command: ["/bin/bash", "-c", "sleep 5"]
"""
    _, evidence, _ = scan(tmp_path, {"compose.yaml": compose, "job.yaml": k8s})
    assert [(e.file, e.line, e.kind, e.detail) for e in evidence] == [
        ("compose.yaml", 4, "deployment-shell-command", "service worker entrypoint: /bin/sh -c"),
        ("compose.yaml", 8, "deployment-script-command", "service web command: ./run.sh --port 80"),
        ("compose.yaml", 10, "deployment-shell-command",
         "service web healthcheck: /bin/sh -c curl -f http://localhost || exit 1"),
        ("job.yaml", 8, "deployment-shell-command",
         "container wait command: sh -c until nslookup db; do sleep 1; done"),
        ("job.yaml", 11, "deployment-script-command", "container job args: /scripts/run.sh"),
        ("job.yaml", 18, "deployment-shell-command", "container job preStop: /bin/bash -c sleep 5"),
    ]
