"""The stages of a Dockerfile: what migrate.py asks about them, and the FROM each one gets.

The new FROM image words, with ARG-parameterised FROMs kept parameterised (`FromWords`); FROM and ARG
instructions are edited by changing only the image word or one ARG default (`replace_image`,
`replace_arg_default`).

- `FROM ${IMAGE}` (the whole image is a global ARG): the ARG's default becomes the Chainguard image and the
  FROM stays `${IMAGE}` (`${IMAGE}-dev` for a stage that runs commands). `--build-arg IMAGE=…` keeps
  working with a Chainguard image name (a -dev suffix is appended where the stage needs a shell).
- `FROM python:${PYTHON_VERSION}-slim` (an ARG at the start of the tag): the FROM becomes
  `cgr.dev/…/python:${PYTHON_VERSION}` (+ `-dev`), the variant suffix goes, and the ARG default is cut
  the way every tag is (`3.11.4` → `3.11`; Java: the major). `--build-arg PYTHON_VERSION=3.12` keeps working
  with any version the Chainguard image publishes as a tag.
- Otherwise (an ARG in the registry or path, in the middle of a tag, a default with no version, or one ARG
  serving stages whose images disagree) the FROM is written out from the default, and the report says the
  build argument no longer changes it. A FROM is never frozen silently.

Facts about a Dockerfile that the migration reads but does not change: the repository files its
COPYs name, the stage chain behind a stage, whether the final image copies only static programs, and the
RUNs that rely on bash (which Chainguard -dev images are not documented to have).

Questions migrate.py asks about a stage, answered from the parsed file and the catalog data:

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

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from repocontext.dockerfile.parser import parse
from repocontext.dockerfile.words import split_words, unquote
from repocontext.model import Dockerfile, Instruction, Stage
from subgraphs.distroless_migration.artifacts import SILENT, collect, command_index_of, run_commands
from subgraphs.distroless_migration.images import JAVA, ImageChoice, Unmapped, cut_version, variant
from subgraphs.distroless_migration.models import MigrationOptions
from subgraphs.distroless_migration.wolfi import PROVIDED_EVERYWHERE

_FROM = re.compile(r"(\s*\S+(?:\s+--\S+)*\s+)(\S+)")
_ARG_ONLY = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?(?:-dev)?\Z")
_KEYWORD = re.compile(r"\s*\S+")


def replace_image(raw: str, old: str, new: str, name: str | None = None) -> str:
    """FROM text with the image word `old` replaced by `new` (and ` AS name` added after it when given).

    A FROM whose image word is split over lines is written anew on one line (flags and name kept)."""
    keyword = _KEYWORD.match(raw)
    lower = bool(keyword and keyword.group(0).strip().islower())
    suffix = f" {'as' if lower else 'AS'} {name}" if name else ""
    m = _FROM.match(raw)
    if m and m.group(2) == old:
        return raw[:m.start(2)] + new + suffix + raw[m.end(2):]
    parsed = parse(raw, "Dockerfile").dockerfile
    if not parsed.stages:
        return raw
    instruction = parsed.stages[0].instructions[0]
    flags = "".join(f" --{f.name}" + (f"={f.value}" if f.value is not None else "") for f in instruction.flags)
    rest = instruction.args[1:] if instruction.args else []
    return f"{instruction.keyword_raw}{flags} {' '.join([new, *rest])}{suffix}\n"


def arg_only(image_word: str) -> str | None:
    """The ARG name when the FROM image is exactly `$NAME` or `${NAME}` (a -dev suffix allowed)."""
    m = _ARG_ONLY.match(image_word)
    return m.group(1) if m else None


def replace_arg_default(instruction: Instruction, name: str, value: str) -> str | None:
    """ARG text with NAME's default replaced (quotes kept); None when NAME has no default there."""
    raw = instruction.raw
    head = _KEYWORD.match(raw)
    offset = head.end() if head else 0
    for word in split_words(raw[offset:]):
        key, eq, old = word.text.partition("=")
        if key == name and eq:
            quote = old[:1] if old[:1] in "'\"" and old.endswith(old[:1]) and len(old) > 1 else ""
            start = offset + word.start + len(key) + 1
            return raw[:start] + f"{quote}{value}{quote}" + raw[start + len(old):]
    return None


def user_root_follows(stage: Stage) -> bool:
    """The instruction after FROM already is `USER root` (or uid 0)."""
    if len(stage.instructions) < 2 or stage.instructions[1].keyword != "USER":
        return False
    return stage.instructions[1].value.split(":", 1)[0] in ("root", "0")


def keyword(name: str, like: Instruction) -> str:
    """`name` in the case the Dockerfile writes its keywords (judged by `like`)."""
    return name.lower() if like.keyword_raw.islower() else name


_TAG_ARG = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))(?![A-Za-z0-9_])")
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
Replace = Callable[[int, str], None]  # Editor.replace(line, raw) (migrate.py)


@dataclass
class Target:
    choice: ImageChoice
    dev: bool


@dataclass
class _Template:
    name: str  # the ARG
    repository: str  # the image repository as written (no variable)
    suffix: str  # what followed the variable in the tag (-slim, -alpine3.19)


def variables(raw: str) -> list[str]:
    return sorted(set(_VARIABLE.findall(raw)))


def tag_template(raw: str) -> _Template | None:
    """`repo:${NAME}suffix` with the variable only at the start of the tag (a digest after it is ignored)."""
    image = raw.split("@", 1)[0]
    repository, colon, tag = image.rpartition(":")
    if not colon or "$" in repository or "/" in tag:
        return None
    m = _TAG_ARG.match(tag)
    if not m or "$" in tag[m.end():]:
        return None
    return _Template(m.group(1) or m.group(2), repository, tag[m.end():])


class FromWords:
    """The FROM image word of every mapped root stage (with notes); ARG defaults are rewritten through
    `replace`."""

    def __init__(self, stages: list[Stage], preamble: list[Instruction], global_args: dict[str, str | None],
                 options: MigrationOptions, replace: Replace) -> None:
        self.stages, self.preamble, self.global_args = stages, preamble, global_args
        self.options, self.replace = options, replace
        self.arg_values: dict[str, str] = {}  # ARG → its new default, for ARGs that name the whole image
        self.tag_values: dict[str, str] = {}  # ARG → its new default, for ARGs that are the tag's version

    def words(self, targets: dict[int, Target]) -> dict[int, tuple[str, list[str]]]:
        out: dict[int, tuple[str, list[str]]] = {}
        whole: dict[str, list[int]] = {}
        tags: dict[str, list[int]] = {}
        for root, target in targets.items():
            raw = self.stages[root].base.raw
            name, template = arg_only(raw), tag_template(raw)
            if name is not None and self.global_args.get(name):
                whole.setdefault(name, []).append(root)
            elif template is not None and self.global_args.get(template.name):
                tags.setdefault(template.name, []).append(root)
            else:
                out[root] = (target.choice.reference(self.options, target.dev), self._frozen(raw))
        for name, roots in whole.items():
            out.update(self._whole(name, roots, targets))
        for name, roots in tags.items():
            out.update(self._tags(name, roots, targets))
        return out

    def _frozen(self, raw: str) -> list[str]:
        names = variables(raw)
        if not names:
            return []
        return [f"FROM used ARG {', '.join(names)}: written out from the default (--build-arg "
                f"{', '.join(names)} no longer changes this FROM)"]

    def _declared(self, name: str) -> Instruction | None:
        found = [i for i in self.preamble if i.keyword == "ARG" and any(w.split("=", 1)[0] == name for w in i.args)]
        return found[-1] if found else None

    def _set_default(self, name: str, value: str) -> tuple[bool, list[str]]:
        """Rewrite the global ARG's default; (done, notes)."""
        declared = self._declared(name)
        new_raw = replace_arg_default(declared, name, value) if declared else None
        if declared is None or new_raw is None:
            return False, []
        if new_raw == declared.raw:
            return True, []
        self.replace(declared.line, new_raw)
        return True, [f"ARG {name} default (line {declared.line}) mapped to {value}"]

    def _whole(self, name: str, roots: list[int], targets: dict[int, Target]) -> dict[int, tuple[str, list[str]]]:
        shared = targets[roots[0]].choice.reference(self.options, False)
        done, notes = self._set_default(name, shared)
        if done:
            self.arg_values[name] = shared
            notes.append(f"--build-arg {name}=… still works when it names a Chainguard image (e.g. {shared}); "
                         "stages that run commands append -dev to it")
        out: dict[int, tuple[str, list[str]]] = {}
        for root in roots:
            target, raw = targets[root], self.stages[root].base.raw.removesuffix("-dev")
            if done and target.choice.reference(self.options, False) == shared:
                dev = target.dev and target.choice.has_dev
                out[root] = (f"{raw}-dev" if dev else raw, list(notes))
            else:
                why = "serves stages with different images" if done else "default could not be rewritten"
                out[root] = (target.choice.reference(self.options, target.dev),
                             [f"ARG {name} {why}: this stage's image is written out (--build-arg {name} no longer "
                              "changes it)"])
        return out

    def _tags(self, name: str, roots: list[int], targets: dict[int, Target]) -> dict[int, tuple[str, list[str]]]:
        default = self.global_args[name] or ""
        values = {self._tag_value(default, targets[r].choice) for r in roots}
        value = values.pop() if len(values) == 1 else None
        done, notes = self._set_default(name, value) if value else (False, [])
        if done and value:
            self.tag_values[name] = value
        out: dict[int, tuple[str, list[str]]] = {}
        for root in roots:
            target, template = targets[root], tag_template(self.stages[root].base.raw)
            assert template is not None
            if not done:
                out[root] = (target.choice.reference(self.options, target.dev),
                             [f"ARG {name} (default {default!r}) cannot select a Chainguard tag: written out from the "
                              f"default (--build-arg {name} no longer changes this FROM)"])
                continue
            repository = self.options.repository(target.choice.name)
            dev = "-dev" if target.dev and target.choice.has_dev else ""
            extra = [f"tag suffix {template.suffix!r} dropped (Chainguard images have no such variants)"] \
                if template.suffix and template.suffix != "-dev" else []
            what = "major version" if target.choice.name in JAVA else "version"
            out[root] = (f"{repository}:${{{name}}}{dev}", [*notes, *extra,
                         f"--build-arg {name}=<{what}> keeps working for versions {repository} publishes as tags "
                         f"(e.g. {value}); values with a variant suffix no longer exist there"])
        return out

    @staticmethod
    def _tag_value(default: str, choice: ImageChoice) -> str | None:
        """The ARG's new default when the image's tag is exactly the cut version of the default."""
        if choice.kind not in ("language", "chainguard") and not (choice.kind == "user" and not choice.fixed_tag):
            return None
        value = default.removesuffix("-dev") if choice.kind == "chainguard" else cut_version(
            default, major_only=choice.name in JAVA)
        return value if value and value == choice.tag else None


Reader = Callable[[str], str | None]


def candidate_files(dockerfile: Dockerfile, path: str, read: Reader) -> list[str]:
    """Repository files named directly by COPY/ADD that `read` can find (when no file list is given)."""
    base = posixpath.dirname(path)
    found: set[str] = set()
    for stage in dockerfile.stages:
        for ins in stage.instructions:
            if ins.keyword not in ("COPY", "ADD") or any(f.name == "from" for f in ins.flags):
                continue
            words = ins.args if ins.form == "exec" else [unquote(w, dockerfile.escape) for w in ins.args]
            for source in words[:-1]:
                if source.startswith("<<") or "://" in source or any(c in source for c in "*?["):
                    continue
                for candidate in {posixpath.normpath(posixpath.join(base, source)), posixpath.normpath(source)}:
                    candidate = candidate.lstrip("/")
                    if candidate and not candidate.startswith("..") and candidate != "." and read(candidate):
                        found.add(candidate)
    return sorted(found)


def stage_named(dockerfile: Dockerfile, ref: str) -> int | None:
    found = next((s.index for s in dockerfile.stages if s.name is not None and s.name == ref.lower()), None)
    return found if found is not None or not ref.isdigit() else int(ref)


def chain_of(dockerfile: Dockerfile, index: int) -> list[Stage]:
    """The stage and the stages it is built FROM, root first."""
    stages = [dockerfile.stages[index]]
    while stages[-1].base.stage_index is not None:
        stages.append(dockerfile.stages[stages[-1].base.stage_index])
    return stages[::-1]


def static_copies(dockerfile: Dockerfile, path: str, chain: list[Stage]) -> bool:
    """Everything the final image copies from other stages comes from Go builds with CGO_ENABLED=0 (static)."""
    sources = [f.value for s in chain for i in s.instructions if i.keyword in ("COPY", "ADD")
               for f in i.flags if f.name == "from" and f.value]
    indexes = [stage_named(dockerfile, name) for name in sources]
    if not indexes or None in indexes:
        return False
    return all(collect(path, chain_of(dockerfile, i), dockerfile.escape).cgo_disabled for i in indexes if i is not None)


def _runs_bash(argv: list[str]) -> bool:
    """`bash …`, or a heredoc run by bash (`<<EOF bash`)."""
    words = argv[1:2] if argv and argv[0].startswith("<<") else argv[:1]
    return any(posixpath.basename(w) == "bash" for w in words)


def bash_lines(dockerfile: Dockerfile, stages: set[int], rewritten: dict[int, Instruction]) -> list[int]:
    """Lines of SHELL or RUN instructions (in the given stages; RUNs as rewritten) that run bash."""
    lines: list[int] = []
    for stage in dockerfile.stages:
        for ins in stage.instructions if stage.index in stages else []:
            shell = ins.keyword == "SHELL" and any(posixpath.basename(a) == "bash" for a in ins.args[:1])
            run = rewritten.get(ins.line, ins)
            if shell or (ins.keyword == "RUN" and any(_runs_bash(argv) for argv in run_commands(run))):
                lines.append(ins.line)
    return lines


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
