"""Shell-invocation evidence for the final image, with stable kinds."""

from __future__ import annotations

from pathlib import Path

from repocontext.dockerfile import parse
from repocontext.dockerfile.shell import evidence, files_to_read, program_index, shebang_is_shell, shebang_of


def run(tmp_path: Path, files: dict[str, str], text: str) -> list[tuple]:
    for rel, content in {**files, "Dockerfile": text}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    listing = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    dockerfile = parse((tmp_path / "Dockerfile").read_text(), "Dockerfile").dockerfile
    found = evidence(dockerfile, "Dockerfile", listing, lambda p: (tmp_path / p).read_text())
    assert all(e.file == "Dockerfile" for e in found)
    return [(e.line, e.kind, e.detail, e.stage, e.script, e.shebang) for e in found]


def test_helpers() -> None:
    assert shebang_of("#!/usr/bin/env bash\r\necho") == "#!/usr/bin/env bash"
    assert shebang_of("echo") is None and shebang_of(None) is None
    assert shebang_is_shell("#!/usr/bin/env -S bash -e") and shebang_is_shell("#!/bin/busybox sh")
    assert not shebang_is_shell("#!/usr/bin/env python3") and not shebang_is_shell(None)
    assert program_index(["tini", "-s", "--", "gosu", "app", "X=1", "/run.sh"]) == 6
    assert program_index(["exec"]) is None


def test_entrypoint_script_with_shebang_and_copied_scripts(tmp_path: Path) -> None:
    files = {"docker/entrypoint": "#!/bin/bash\nexec \"$@\"\n", "scripts/migrate.sh": "echo\n",
             "scripts/tool": "#!/bin/sh\n", "app.py": "#!/usr/bin/env python3\n"}
    text = """\
FROM python:3.12 AS build
RUN pip wheel . -w /wheels
FROM python:3.12-slim
COPY docker/entrypoint /usr/local/bin/
COPY scripts/ /opt/scripts/
COPY app.py /app/
WORKDIR /app
ENTRYPOINT ["tini", "--", "entrypoint"]
CMD ["python", "app.py"]
"""
    assert run(tmp_path, files, text) == [
        (4, "shell-script-copied", "COPY docker/entrypoint -> /usr/local/bin/entrypoint", 1, "docker/entrypoint",
         "#!/bin/bash"),
        (5, "shell-script-copied", "COPY scripts/migrate.sh -> /opt/scripts/migrate.sh", 1, "scripts/migrate.sh",
         None),
        (8, "entrypoint-script", "ENTRYPOINT runs entrypoint (docker/entrypoint, #!/bin/bash)", 1,
         "docker/entrypoint", "#!/bin/bash"),
    ]


def test_shell_forms_exec_shells_and_effective_commands(tmp_path: Path) -> None:
    text = """\
FROM debian:12 AS base
RUN apt-get update
CMD echo overridden
FROM base
SHELL ["/bin/bash", "-c"]
RUN ["sh", "-c", "echo hi"]
RUN ["/usr/bin/env"]
HEALTHCHECK CMD ["curl", "-f", "http://localhost"]
HEALTHCHECK --interval=5s CMD ["/bin/sh", "-c", "curl -f http://x || exit 1"]
ENTRYPOINT exec gunicorn app:app
CMD ["--workers", "2"]
"""
    assert [(line, kind) for line, kind, *_ in run(tmp_path, {}, text)] == [
        (2, "shell-form-run"), (5, "shell-instruction"), (6, "exec-form-shell"), (9, "exec-form-shell"),
        (10, "shell-form-entrypoint")]


def test_cmd_scripts_and_heredoc_scripts(tmp_path: Path) -> None:
    text = """\
FROM alpine AS build
FROM gcr.io/distroless/base
COPY --from=build /src/start.sh /start.sh
COPY <<EOF /hc
#!/bin/sh
wget -q localhost
EOF
WORKDIR /w
CMD ["./start.sh", "--port", "80"]
HEALTHCHECK CMD /hc
"""
    assert run(tmp_path, {}, text) == [
        (3, "shell-script-copied", "COPY build:/src/start.sh -> /start.sh", 1, "build:/src/start.sh", None),
        (4, "shell-script-copied", "COPY heredoc -> /hc", 1, None, "#!/bin/sh"),
        (9, "cmd-script", "CMD runs ./start.sh (not copied from the repository)", 1, "./start.sh", None),
        (10, "shell-form-healthcheck", "HEALTHCHECK CMD /hc", 1, None, None),
    ]


def test_shell_form_cmd_runs_script_and_shell_free_final_has_no_evidence(tmp_path: Path) -> None:
    files = {"start.sh": "#!/bin/sh\n"}
    text = "FROM golang AS b\nRUN go build\nFROM scratch\nCOPY --from=b /out/app /app\nENTRYPOINT [\"/app\"]\n"
    assert run(tmp_path, files, text) == []
    text = "FROM alpine\nCOPY start.sh /\nCMD /start.sh --now\n"
    assert [(line, kind) for line, kind, *_ in run(tmp_path, files, text)] == [
        (2, "shell-script-copied"), (3, "cmd-script"), (3, "shell-form-cmd")]


def test_files_to_read_are_explicit_sources_and_program_targets(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    for rel in ("bin/serve", "bin/other", "conf.txt"):
        (tmp_path / rel).write_text("x")
    text = "FROM a\nCOPY conf.txt /etc/\nCOPY bin/ /usr/local/bin/\nENTRYPOINT [\"serve\"]\n"
    dockerfile = parse(text, "Dockerfile").dockerfile
    assert files_to_read(dockerfile, "Dockerfile", ["bin/other", "bin/serve", "conf.txt"]) == [
        "bin/serve", "conf.txt"]
