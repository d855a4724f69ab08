"""CMD / ENTRYPOINT / HEALTHCHECK → exec form, when no shell feature is needed.

Docker runs a shell-form command as `/bin/sh -c "…"`. It can become an exec form
(split like a shell would, with shlex) only when the text uses no expansion,
redirection, pipe, list, glob, subshell or leading assignment; a leading `exec` is
dropped (exec form already replaces PID 1). An exec form that runs a shell with
`-c` is unwrapped under the same condition.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from dataclasses import dataclass

from repocontext.dockerfile.packages import SHELLS, shell_script_of
from repocontext.dockerfile.shellwords import is_assignment
from repocontext.dockerfile.words import parse_exec
from repocontext.model import Instruction

_SPECIAL = frozenset("$`|&;<>()*?[]{}\n")
_AT_WORD_START = frozenset("#~")


def _needs_shell(text: str) -> str | None:
    """The first character that only a shell can interpret, else None."""
    quote = ""
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif quote == "'":
            quote = "" if ch == "'" else quote
        elif quote == '"':
            if ch in "$`":
                return ch
            escaped = ch == "\\"
            quote = "" if ch == '"' else quote
        elif ch == "\\":
            escaped = True
        elif ch in "'\"":
            quote = ch
        elif ch in _SPECIAL or (ch in _AT_WORD_START and (i == 0 or text[i - 1].isspace())):
            return ch
    return None


def shell_to_argv(text: str) -> tuple[list[str] | None, str]:
    """(argv, "") when `text` runs the same without a shell, else (None, why)."""
    special = _needs_shell(text)
    if special is not None:
        what = "a variable or command substitution" if special in "$`" else f"the shell syntax {special!r}"
        return None, f"uses {what}, which needs a shell"
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        return None, f"cannot be split like a shell would ({exc})"
    if argv and argv[0] == "exec":
        argv = argv[1:]
    if not argv:
        return None, "is empty"
    if is_assignment(argv[0]):
        return None, f"sets {argv[0].split('=', 1)[0]} for the command, which needs a shell (use ENV)"
    return argv, ""


def unwrap_shell(argv: list[str]) -> tuple[list[str] | None, str]:
    """An exec form that runs `sh -c SCRIPT`: the script as argv when it needs no shell."""
    script = shell_script_of(argv)
    if script is None:
        shell = posixpath.basename(argv[0]) if argv else ""
        return None, f"runs {shell} directly" if shell in SHELLS else "runs a shell"
    return shell_to_argv(script)


@dataclass(frozen=True)
class Spec:
    """The effective CMD / ENTRYPOINT / HEALTHCHECK command of the final image."""

    keyword: str  # "CMD" | "ENTRYPOINT" | "HEALTHCHECK"
    instruction: Instruction
    form: str  # "shell" | "exec"
    argv: list[str]  # exec form's argv; for shell form the shell words (for display)
    text: str  # the command as written

    @property
    def line(self) -> int:
        return self.instruction.line


def healthcheck_command(instruction: Instruction) -> tuple[str, list[str] | None, str] | None:
    """(form, exec argv, text) of `HEALTHCHECK … CMD …`; None for NONE."""
    value = instruction.value
    if not value.upper().startswith("CMD"):
        return None
    text = value[3:].strip()
    argv = parse_exec(text)
    return ("exec", argv, text) if argv is not None else ("shell", None, text)


def exec_json(argv: list[str]) -> str:
    return json.dumps(argv, ensure_ascii=False)


def render_command(keyword_raw: str, argv: list[str] | None, instruction: Instruction | None = None) -> str:
    """`CMD ["a", "b"]`, `ENTRYPOINT []`, or a HEALTHCHECK with its flags kept."""
    body = exec_json(argv if argv is not None else [])
    if instruction is not None and instruction.keyword == "HEALTHCHECK":
        flags = "".join(f" --{f.name}" + (f"={f.value}" if f.value is not None else "") for f in instruction.flags)
        cmd = "CMD" if keyword_raw.isupper() else "cmd"
        return f"{keyword_raw}{flags} {cmd} {body}\n"
    return f"{keyword_raw} {body}\n"
