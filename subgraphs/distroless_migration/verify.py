"""[verify.py]
Build checks of a migrated Dockerfile, run before its item may report `succeeded` (issue 29 §1).

A written file passes only when:
- every `apk add` name (version pin stripped) is a Wolfi package or something one provides (the vendored
  index, `data/wolfi-packages.tsv`): apk fails the build on any other name;
- every shell-form RUN (with its heredoc scripts) parses with `sh -n` (`bash -n` where a SHELL instruction
  makes bash the RUN shell): a rewrite that broke the script's structure is caught here;
- no apt/yum/dnf/microdnf (or aptitude, tdnf, zypper) command is left: Chainguard images have none;
- every FROM is on the Chainguard registry, an earlier stage, `scratch`, or a build argument — except the
  stages the migration deliberately left as they were (`kept`: third-party COPY --from sources).

A RUN under a `# TODO(planner):` comment is not checked: the migration already holds a blocker for it (or
the user accepted it as written with keep_unconverted, which the item's notes say).

Each failure is an `ItemBlocker` of kind `check-failed` at file:line; the item is then blocked whatever
keep_unconverted says, since the file would not build. The syntax checks run in one `sh` process per file
(it forks `sh -n` per script), which keeps a whole-repository run fast.
"""

from __future__ import annotations

import posixpath
import shutil
import subprocess
from collections.abc import Iterable

from repocontext.dockerfile import parse
from repocontext.dockerfile.packages import script_heredocs, simple_commands
from repocontext.dockerfile.shellwords import command_index
from repocontext.model import Instruction, Stage
from subgraphs.distroless_migration.models import ItemBlocker
from subgraphs.distroless_migration.wolfi import vendored

DISTRO_MANAGERS = frozenset({"apt-get", "apt", "aptitude", "yum", "dnf", "microdnf", "tdnf", "zypper",
                             "install_packages", "clean-install"})
_MARK = "@@planner-check-failed "
# One process checks every script: `sh -n` per argument, the failing ones named by their position.
_DONE = "@@planner-checks-done"  # printed last: without it the checks did not all run, and none passes
_LOOP = ('i=0; for s; do i=$((i+1)); out=$("$SHELL_N" -n -c "$s" 2>&1) || printf "' + _MARK
         + '%s %s\\n" "$i" "$out"; done; echo ' + _DONE)
_LIMIT = 20_000  # scripts remembered per process (a long-lived daemon must not grow without bound)


def _scripts(ins: Instruction) -> list[str]:
    """What a shell parses for one shell-form RUN: the command line with its heredocs (bodies and their
    terminators, which the parser leaves out of `content`), and each heredoc a shell runs as a script."""
    whole = ins.value + "\n" + "".join(_body(d.content) + ("\t" if d.chomp else "") + d.name + "\n"
                                       for d in ins.heredocs)
    scripts = [whole]
    bodies = script_heredocs(ins.value, [d.name for d in ins.heredocs])
    scripts += [_body(d.content) for d in ins.heredocs if d.name in bodies]
    return scripts


def _body(content: str) -> str:
    return content if not content or content.endswith("\n") else content + "\n"


_CHECKED: dict[tuple[str, str], str | None] = {}  # (shell, script) → its error (None: parses); per process


def syntax_errors(scripts: list[str], shell: str = "sh") -> dict[int, str]:
    """index → the shell's message, for each script that `shell -n` rejects (one process for all the scripts
    not checked before in this process: the recipe migrates a file twice, and RUN lines repeat)."""
    fresh = sorted({s for s in scripts if (shell, s) not in _CHECKED})
    if len(_CHECKED) + len(fresh) > _LIMIT:
        _CHECKED.clear()
    for script, message in zip(fresh, _run_checks(fresh, shell), strict=True):
        _CHECKED[(shell, script)] = message
    return {i: message for i, s in enumerate(scripts) if (message := _CHECKED[(shell, s)]) is not None}


def _run_checks(scripts: list[str], shell: str) -> list[str | None]:
    if not scripts:
        return []
    binary = shutil.which(shell) or shutil.which("sh")
    if binary is None:  # no shell to ask: say so rather than pass silently
        return ["no sh on this machine to check the syntax"] * len(scripts)
    try:
        done = subprocess.run(["sh", "-c", _LOOP, "sh", *scripts], capture_output=True, text=True, check=False,
                              env={"SHELL_N": binary, "PATH": "/usr/bin:/bin"})
    except OSError as exc:  # e.g. scripts too long for one command line: fail closed, never pass unchecked
        return [f"the syntax check could not run ({exc})"] * len(scripts)
    if _DONE not in done.stdout:
        return [f"the syntax check did not finish ({done.stderr.strip()[:120] or 'no output'})"] * len(scripts)
    found: list[str | None] = [None] * len(scripts)
    for line in done.stdout.splitlines():
        if line.startswith(_MARK):
            number, _, message = line.removeprefix(_MARK).partition(" ")
            found[int(number) - 1] = message.strip()
    return found


def _todo_runs(text: str, stage: Stage) -> set[int]:
    """First lines of the RUNs under a `# TODO(planner):` comment: what they fail is already a blocker of the
    item (or kept as written because the user set keep_unconverted), so it is not reported twice."""
    lines = text.splitlines()
    found: set[int] = set()
    for ins in stage.instructions:
        i = ins.line - 2
        while ins.keyword == "RUN" and i >= 0 and lines[i].lstrip().startswith("#"):
            if lines[i].lstrip().startswith("# TODO(planner):"):
                found.add(ins.line)
                break
            i -= 1
    return found


def _original_scripts(original: str | None, path: str) -> set[str]:
    if original is None:
        return set()
    stages = parse(original, path).dockerfile.stages
    return {s for st in stages for i in st.instructions if i.keyword == "RUN" and i.form != "exec"
            for s in _scripts(i)}


def _run_shell(stage: Stage) -> str:
    shell = next((i.args for i in reversed(stage.instructions) if i.keyword == "SHELL" and i.args), None)
    return "bash" if shell and posixpath.basename(shell[0]) == "bash" else "sh"


class _Checker:
    def __init__(self, path: str, registry: str, kept: Iterable[int], written: Iterable[str]) -> None:
        self.path, self.registry, self.kept = path, registry.rstrip("/") + "/", set(kept)
        self.written = set(written)  # image words the migration wrote from its mapping (a user's may be anywhere)
        self.found: list[ItemBlocker] = []

    def fail(self, line: int, message: str, fix: str) -> None:
        self.found.append(ItemBlocker(kind="check-failed", file=self.path, line=line, message=message, fix=fix))

    def froms(self, stages: list[Stage]) -> None:
        for stage in stages:
            base = stage.base
            if stage.line in self.kept or base.stage_index is not None or base.scratch or "$" in base.raw:
                continue
            if not base.raw.startswith(self.registry) and base.raw not in self.written:
                self.fail(stage.line, f"FROM {base.raw} is not a Chainguard image ({self.registry}…), a stage, "
                          "scratch or a build argument", "map the image in the mapping file's images:")

    def packages(self, stage: Stage, todo: set[int]) -> None:
        index = vendored()
        for package in stage.packages:
            if package.line in todo:
                continue
            if package.manager == "apk" and "$" not in package.spec and not index.has(package.name):
                self.fail(package.source_line, f"apk add {package.name}: Wolfi has no package or provides of that "
                          "name, so the build would fail", f"map {package.name} in the mapping file's packages: "
                          "(to its Wolfi name, or [] if it is not needed)")

    def managers(self, ins: Instruction, scripts: list[str]) -> None:
        for script in scripts:
            for words in simple_commands(script):
                k = command_index(words)
                name = posixpath.basename(words[k].text) if k is not None else ""
                if name in DISTRO_MANAGERS:
                    self.fail(ins.line, f"`{name}` is left in the RUN; Chainguard images have no {name}",
                              "install with `apk add --no-cache` and Wolfi names, or remove the command")
                    return


def check(path: str, text: str, registry: str = "cgr.dev", kept: Iterable[int] = (),
          written: Iterable[str] = (), original: str | None = None) -> list[ItemBlocker]:
    """Every build check the migrated `text` fails, in line order (empty: it passes); `kept`: FROM lines of
    stages left unchanged on purpose; `written`: image words the migration itself put in a FROM; `original`:
    the file before migration, whose RUN scripts the syntax check skips where they are unchanged (the
    migration did not touch them, and the shell parses them as before)."""
    dockerfile = parse(text, path).dockerfile
    before = _original_scripts(original, path)
    checker = _Checker(path, registry, kept, written)
    checker.froms(dockerfile.stages)
    batches: dict[str, list[tuple[Instruction, str]]] = {}
    for stage in dockerfile.stages:
        if stage.line in checker.kept:
            continue
        todo = _todo_runs(text, stage)
        checker.packages(stage, todo)
        for ins in stage.instructions:
            if ins.keyword == "RUN" and ins.form != "exec" and ins.line not in todo:
                scripts = _scripts(ins)
                checker.managers(ins, scripts)
                batches.setdefault(_run_shell(stage), []).extend((ins, s) for s in scripts if s not in before)
    for shell, pairs in sorted(batches.items()):
        for i, message in sorted(syntax_errors([s for _, s in pairs], shell).items()):
            checker.fail(pairs[i][0].line, f"the rewritten RUN does not parse with `{shell} -n`: {message}",
                         "convert this RUN by hand (its package installs to `apk add --no-cache` with Wolfi names, "
                         "keeping the rest as it is); the rewriter could not keep its shell structure")
    return sorted({(b.line, b.message): b for b in checker.found}.values(), key=lambda b: (b.line, b.message))
