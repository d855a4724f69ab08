"""The new FROM image words, with ARG-parameterised FROMs kept parameterised.

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
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from repocontext.model import Instruction, Stage
from subgraphs.distroless_migration.fromline import arg_only, replace_arg_default
from subgraphs.distroless_migration.images import JAVA, ImageChoice, cut_version
from subgraphs.distroless_migration.options import MigrationOptions

_TAG_ARG = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))(?![A-Za-z0-9_])")
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
Replace = Callable[[int, str], None]  # editor.replace(line, raw)


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
