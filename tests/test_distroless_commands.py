"""Shell-form commands → exec form, only when no shell feature is needed."""

from __future__ import annotations

import pytest

from repocontext.dockerfile import parse
from subgraphs.distroless_migration.commands import healthcheck_command, render_command, shell_to_argv, unwrap_shell


@pytest.mark.parametrize(("text", "argv"), [
    ("gunicorn -b 0.0.0.0:8000 app:app", ["gunicorn", "-b", "0.0.0.0:8000", "app:app"]),
    ("exec python -m app", ["python", "-m", "app"]),
    ("python -c 'print(1); print(\"$HOME\")'", ["python", "-c", 'print(1); print("$HOME")']),
    ('node server.js --name "a b"', ["node", "server.js", "--name", "a b"]),
    ("app --flag=a#b", ["app", "--flag=a#b"]),
])
def test_splittable(text: str, argv: list[str]) -> None:
    assert shell_to_argv(text) == (argv, "")


@pytest.mark.parametrize(("text", "why"), [
    ("node server.js --port $PORT", "uses a variable or command substitution, which needs a shell"),
    ('echo "$(date)"', "uses a variable or command substitution, which needs a shell"),
    ("migrate && serve", "uses the shell syntax '&', which needs a shell"),
    ("app > /var/log/app.log", "uses the shell syntax '>', which needs a shell"),
    ("python *.py", "uses the shell syntax '*', which needs a shell"),
    ("app # comment", "uses the shell syntax '#', which needs a shell"),
    ("~/bin/app", "uses the shell syntax '~', which needs a shell"),
    ("PORT=80 app", "sets PORT for the command, which needs a shell (use ENV)"),
    ("exec", "is empty"),
    ("app 'unterminated", "cannot be split like a shell would (No closing quotation)"),
])
def test_needs_a_shell(text: str, why: str) -> None:
    assert shell_to_argv(text) == (None, why)


def test_unwrap_shell() -> None:
    assert unwrap_shell(["/bin/sh", "-c", "exec python app.py"]) == (["python", "app.py"], "")
    assert unwrap_shell(["bash", "-ec", "a | b"]) == (None, "uses the shell syntax '|', which needs a shell")
    assert unwrap_shell(["bash", "start.sh"]) == (None, "runs bash directly")


def test_healthcheck_and_rendering() -> None:
    stage = parse("FROM x\nHEALTHCHECK --interval=5s --retries=3 CMD curl -f http://x/ || exit 1\n"
                  "HEALTHCHECK NONE\nHEALTHCHECK CMD [\"a\", \"b\"]\n", "Dockerfile").dockerfile.stages[0]
    shell, none, exec_ = stage.instructions[1:]
    assert healthcheck_command(shell) == ("shell", None, "curl -f http://x/ || exit 1")
    assert healthcheck_command(none) is None
    assert healthcheck_command(exec_) == ("exec", ["a", "b"], '["a", "b"]')
    assert render_command("HEALTHCHECK", ["python", "-c", "é"], shell) == \
        'HEALTHCHECK --interval=5s --retries=3 CMD ["python", "-c", "é"]\n'
    assert render_command("entrypoint", []) == "entrypoint []\n"
    assert render_command("CMD", ["a"]) == 'CMD ["a"]\n'
