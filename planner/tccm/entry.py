"""One band entry (a RepoContext key, the files a key's records name, or a glob) and the key syntax it is checked
against. Below `tccm.model` so that a recipe's `files_of` (tccm.recipes, which tccm.model imports) is checked by
the bands' own key check without an import circle."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from planner.tccm import keyfields
from repocontext.globs import GlobError, check_glob
from repocontext.model import SECTIONS

_INPUT_REF = re.compile(r"\$\{inputs\.([A-Za-z_][A-Za-z0-9_]*)\}")
_SEGMENT = re.compile(r"[A-Za-z0-9_.@/+-]+|\$\{inputs\.[A-Za-z_][A-Za-z0-9_]*\}")
_FILTER = re.compile(r"\[([A-Za-z_][A-Za-z0-9_]*)=([^\]]+)\]")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


def split_key(key: str) -> list[str]:
    """Split a dotted key into segments; `[field=value]` filters stay whole segments.

    Dots inside `${inputs.x}` and inside filters do not split.
    """
    parts: list[str] = []
    current = ""
    depth = 0
    i = 0
    while i < len(key):
        if key.startswith("${", i):
            end = key.find("}", i)
            if end == -1:
                raise ValueError("unclosed '${' in key")
            current += key[i : end + 1]
            i = end + 1
            continue
        char = key[i]
        if char == "[":
            if current:
                parts.append(current)
            current, depth = "[", depth + 1
        elif char == "]":
            current += "]"
            depth -= 1
            parts.append(current)
            current = ""
        elif char == "." and depth == 0:
            if current:
                parts.append(current)
            elif not parts or not parts[-1].startswith("["):
                raise ValueError("empty segment in key")
            current = ""
        else:
            current += char
        i += 1
    if depth:
        raise ValueError("unclosed '[' in key")
    if current:
        parts.append(current)
    return parts


def input_refs(text: str) -> list[str]:
    return _INPUT_REF.findall(text)


class Entry(Strict):
    """One band entry: a RepoContext key, the repo files a key's records name (`files_of`), or a
    repo-relative glob; with an optional reason."""

    key: str | None = None
    files_of: str | None = Field(default=None, description=(
        "a RepoContext key whose records name repo files (fields file, path, script, files): those files load, "
        "in record order, each with the key that led to it"))
    lines: int | None = Field(default=None, ge=0, le=200, description=(
        "files_of only: load an excerpt instead of the whole file, the lines the records name with this many "
        "lines of context either side (`lines: 3`), each run headed `@@ lines A-B of N @@`; a file whose "
        "records name no line, or whose excerpt would not be shorter, loads whole. For big lockfiles and "
        "hashed pip-compile outputs, which a recipe reads whole from the repository itself"))
    glob: str | None = None
    reason: str | None = Field(default=None, max_length=500)

    @model_validator(mode="after")
    def _one_selector(self) -> Entry:
        if sum(x is not None for x in (self.key, self.files_of, self.glob)) != 1:
            raise ValueError("an entry needs exactly one of 'key', 'files_of' or 'glob'")
        if self.lines is not None and self.files_of is None:
            raise ValueError("'lines' (an excerpt around the named lines) applies to a 'files_of' entry only")
        return self

    @field_validator("glob")
    @classmethod
    def _glob_inside_repo(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                check_glob(value)
            except GlobError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("key", "files_of")
    @classmethod
    def _known_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value:
            raise ValueError("key is empty")
        segments = split_key(value)
        if segments[0] not in SECTIONS:
            raise ValueError(f"unknown RepoContext key {segments[0]!r} (known: {', '.join(SECTIONS)})")
        for segment in segments[1:]:
            if not (_SEGMENT.fullmatch(segment) or _FILTER.fullmatch(segment)):
                raise ValueError(f"bad key segment {segment!r}: use name, ${{inputs.NAME}} or [field=value]")
        if "${" in value.replace("${inputs.", "") or len(input_refs(value)) != value.count("${"):
            raise ValueError("only ${inputs.NAME} substitutions are allowed in a key")
        problem = keyfields.check(segments)
        if problem:
            raise ValueError(problem)
        return value

    @property
    def selector(self) -> str:
        if self.files_of is not None:
            return f"files_of:{self.files_of}"
        return f"key:{self.key}" if self.key is not None else f"glob:{self.glob}"

    @property
    def slice_key(self) -> str | None:
        """The RepoContext key this entry reads (a `key`, or the key a `files_of` follows)."""
        return self.key if self.key is not None else self.files_of
