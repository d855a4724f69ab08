"""A synthetic mixed-language repository for benchmarks (deterministic: seeded)."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

PY = "import os\nimport requests\nimport yaml\n\n\ndef handler_{i}(event):\n    data = yaml.safe_load(event)\n" \
     "    return requests.post(os.environ.get('URL', 'http://x'), json=data, timeout=5)\n"
JS = "import express from 'express';\nconst lodash = require('lodash');\n\nexport function route{i}(req, res) {{\n" \
     "  res.json(lodash.pick(req.body, ['a', 'b']));\n}}\n"
GO = "package svc{d}\n\nimport (\n\t\"fmt\"\n\t\"github.com/gin-gonic/gin\"\n)\n\n" \
     "func Handler{i}(c *gin.Context) {{\n\tfmt.Println(c.Request.URL)\n}}\n"
MD = "# Note {i}\n\nSome documentation text for module {i}, describing behaviour and configuration.\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def commit_tree(root: Path, message: str) -> Path:
    """`root` made a git repository holding everything in it, in one commit."""
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return root


def build(root: Path, files: int = 10_000, seed: int = 7) -> Path:
    """Write `files` files under `root` and commit them; returns root."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    written = 0
    for d in range(files // 100):
        service = root / f"services/svc{d:03d}"
        service.mkdir(parents=True, exist_ok=True)
        if d % 10 == 0:
            (service / "requirements.txt").write_text("requests==2.30.0\nPyYAML==5.3.1\nflask>=2.2\n")
            (service / "Dockerfile").write_text(
                "FROM python:3.11-slim\nRUN apt-get update && apt-get install -y curl\nCOPY . /app\n"
                "CMD python /app/main.py\n")
            (service / "package.json").write_text(f'{{"name": "svc{d}", "dependencies": {{"lodash": "4.17.20"}}}}\n')
            written += 3
        for i in range(100 - (3 if d % 10 == 0 else 0)):
            kind = rng.choice("ppppjjgm")
            body = {"p": PY, "j": JS, "g": GO, "m": MD}[kind].format(i=i, d=d)
            ext = {"p": "py", "j": "js", "g": "go", "m": "md"}[kind]
            name = f"test_mod{i}.py" if kind == "p" and i % 9 == 0 else f"mod{i}.{ext}"
            (service / name).write_text(body * rng.randint(1, 4))
            written += 1
    (root / "go.mod").write_text("module example.com/bench\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.9.0\n")
    return commit_tree(root, "synthetic")
