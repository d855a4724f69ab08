"""Two questions migrate.py asks about a stage, answered from the parsed file and the catalog data.

- `present_in`: does the image a final stage ends on already have a package (so an install of it can go)?
  Asked of every variant it may end on (default and -dev; for a distro base, static when its only RUN goes,
  else wolfi-base), per the catalog data; for an image the data lacks, only what every image has.
- `needs_root`: does a stage's RUN (as rewritten) do anything but read (echo, test, ls, …)? Only then does
  a -dev image that runs as nonroot get `USER root` after its FROM: apk, account changes and writes to
  directories Docker created as root fail otherwise, and telling those apart reliably is not possible here.
- `pick_runtime`: a distro stage installs language runtimes: which one is its image (the one its
  CMD/ENTRYPOINT runs, else the first installed), and which version the file pins for it (ENV/ARG
  NODE_VERSION & co., a NodeSource `setup_16.x`), said in the notes either way.
- `restore_user`: where a final stage kept on -dev, given `USER root` for its build steps, goes back to the
  image's own user (after its last RUN), and which user that is (catalog data; Chainguard's 65532 when
  the data lacks the image, said in the note): the app itself never needed root.
- `copy_source`: is a stage only a `COPY --from` source (nothing built FROM it, not in the final image's
  chain)? Such a stage on a third-party image is left unchanged while the rest of the file migrates: the
  files copied from it are the same whatever the other stages run on.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from repocontext.model import Instruction, Stage
from subgraphs.distroless_migration.artifacts import command_index_of, run_commands
from subgraphs.distroless_migration.catalog import variant
from subgraphs.distroless_migration.images import ImageChoice, Unmapped
from subgraphs.distroless_migration.packages import PROVIDED_EVERYWHERE


def present_in(choice: ImageChoice | Unmapped | None, only_run: bool) -> Callable[[str], bool]:
    names = ((["static"] if only_run else ["wolfi-base"]) if choice.kind == "distro" else [choice.name]) \
        if isinstance(choice, ImageChoice) else []
    found = [v for n in names for v in (variant(n, False), variant(n, True))]
    if not found or None in found:
        return lambda name: name in PROVIDED_EVERYWHERE
    return lambda name: all(v is not None and v.has(name) for v in found)


def copy_source(stages: list[Stage], final_indexes: set[int], stage: Stage) -> bool:
    if stage.index in final_indexes or any(s.base.stage_index == stage.index for s in stages):
        return False
    names = {str(stage.index)} | ({stage.name.lower()} if stage.name else set())
    return any(i.keyword == "COPY" and f.name == "from" and (f.value or "").lower() in names
               for s in stages for i in s.instructions for f in i.flags)


def needs_root(stage: Stage, rewritten: dict[int, Instruction], kept: set[int]) -> bool:
    """`kept`: lines of the RUNs still run after rewriting (a dropped RUN needs nothing)."""
    from subgraphs.distroless_migration.outputs import SILENT  # outputs imports this package's artifacts

    for ins in stage.instructions:
        if ins.keyword != "RUN" or ins.line not in kept:
            continue
        for argv in run_commands(rewritten.get(ins.line, ins)):
            k = command_index_of(argv)
            if k is not None and argv[k].rsplit("/", 1)[-1] not in SILENT:
                return True
    return False


RUNTIME_PROGRAMS = {"python": {"python", "python3", "pip", "pip3", "gunicorn", "uvicorn", "flask", "django-admin"},
                    "node": {"node", "npm", "npx", "yarn", "pnpm"}, "jdk": {"java"}, "go": {"go"}}
_PIN_NAMES = {"node": ("NODE_VERSION", "NODE_MAJOR", "NODEJS_VERSION"), "python": ("PYTHON_VERSION",),
              "jdk": ("JAVA_VERSION", "JDK_VERSION"), "go": ("GO_VERSION", "GOLANG_VERSION")}
_NODESOURCE = re.compile(r"setup_(\d+)\.x")
_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?")


def _programs(stages: list[Stage]) -> set[str]:
    found: set[str] = set()
    for ins in (i for s in stages for i in s.instructions if i.keyword in ("CMD", "ENTRYPOINT")):
        words = ins.args if ins.form == "exec" else ins.value.split()
        found.update(w.rsplit("/", 1)[-1] for w in words[:2] if not w.startswith("-"))
    return found


def _pin(stages: list[Stage], image: str) -> tuple[str, str] | None:
    """(version, where) the file pins for the runtime: an ENV/ARG value, or a NodeSource setup script."""
    for ins in (i for s in stages for i in s.instructions):
        if ins.keyword in ("ENV", "ARG"):
            for name in _PIN_NAMES.get(image, ()):
                m = re.search(rf"\b{name}[= ]\s*[\"']?([^\s\"']+)", ins.value)
                if m and (v := _VERSION.match(m.group(1))):
                    cut = v.group(1) if image in ("node", "jdk") or not v.group(2) else f"{v.group(1)}.{v.group(2)}"
                    return cut, f"line {ins.line}: {name}={m.group(1)}"
        if ins.keyword == "RUN" and image == "node" and (m := _NODESOURCE.search(ins.value)):
            return m.group(1), f"line {ins.line}: NodeSource setup_{m.group(1)}.x"
    return None


def pick_runtime(stages: list[Stage], runtimes: list[tuple[str, tuple[str, str | None]]]
                 ) -> tuple[str, str, str | None, list[str]]:
    """(package, image, version, notes) for a distro stage that installs the `runtimes` (package, (image,
    version)) in install order."""
    programs = _programs(stages)
    package, (image, version) = next(((p, r) for p, r in runtimes if programs & RUNTIME_PROGRAMS.get(r[0], set())),
                                     runtimes[0])
    notes = [f"installs {package} on a distro base: moved to the {image} image"]
    others = sorted({r[0] for _, r in runtimes} - {image})
    if others:
        notes.append(f"also installs {', '.join(others)}: {image} chosen because "
                     + ("its CMD/ENTRYPOINT runs it" if programs & RUNTIME_PROGRAMS.get(image, set())
                        else "it is installed first") + "; the others are installed with apk")
    pinned = _pin(stages, image) if version is None else None
    if pinned is not None:
        version = pinned[0]
        notes.append(f"{image} version {version} kept from the pin at {pinned[1]}")
    elif version is None:
        notes.append(f"no {image} version pinned in the file: latest (state one in the tag if the app needs it)")
    return package, image, version, notes


_DROPS_PRIVILEGES = re.compile(r"\b(?:gosu|su-exec|setpriv|runuser|chpst|s6-setuidgid)\b")


def drops_privileges(chain: list[Stage], read: Callable[[str], str | None]) -> bool:
    """The container starts as root on purpose: its ENTRYPOINT/CMD (or a script they COPY in) switches user
    itself with gosu, su-exec, setpriv, …; the migration then leaves the user alone."""
    texts = [i.value for s in chain for i in s.instructions if i.keyword in ("ENTRYPOINT", "CMD", "RUN")]
    texts += [read(src) or "" for s in chain for i in s.instructions if i.keyword == "COPY" and not i.flags
              for src in i.args[:-1] if src.endswith(".sh")]
    return any(_DROPS_PRIVILEGES.search(t) for t in texts)


def restore_user(chain: list[Stage], run_lines: list[int], image: str) -> tuple[int, str, str]:
    """(line to insert after, user, note) for a final chain that got `USER root` and sets no USER itself."""
    runs = [i.line for s in chain for i in s.instructions if i.keyword == "RUN" and i.line in run_lines]
    found = variant(image, True)
    user = found.run_as if found is not None and not found.root else "65532"
    source = "its user in the Chainguard catalog data" if found is not None else \
        "Chainguard's usual nonroot user; the catalog data does not list this image"
    note = (f"USER {user} added after the last RUN: the build steps run as root, the app as {user} "
            f"({source}), as it did not need root")
    return (max(runs) if runs else chain[0].line), user, note
