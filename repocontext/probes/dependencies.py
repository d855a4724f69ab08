"""Declared and locked dependencies from pip, pyproject, Poetry, uv, npm and Go files.

Requirement files are found by name (`*requirements*.txt|.in`,
`requirements/*.txt|.in`, `*constraints*.txt|.in`), not every `*.in` file:
MANIFEST.in and autoconf templates are not requirement files. Files they
include with -r/-c are read wherever they are, and folded into the
fingerprint. A lockfile's direct set comes from the manifest in the same
directory (pyproject.toml, package.json).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import PurePosixPath

from repocontext.deps.common import Issue, Parsed, declared, group_by_name
from repocontext.deps.gomod import gosum_versions, parse_gomod
from repocontext.deps.npm import parse_package_json
from repocontext.deps.npm_lock import parse_package_lock
from repocontext.deps.poetry_lock import parse_poetry_lock
from repocontext.deps.pyproject import parse_pyproject
from repocontext.deps.requirements import include_closure, parse_requirements
from repocontext.deps.uv_lock import parse_uv_lock
from repocontext.probe import Probe, ProbeContext, ProbeOutput

REQUIREMENTS_GLOBS: tuple[str, ...] = (
    "**/*requirements*.txt", "**/*requirements*.in", "**/requirements/*.txt", "**/requirements/*.in",
    "**/*constraints*.txt", "**/*constraints*.in",
)
MANIFEST_GLOBS: tuple[str, ...] = (
    "**/pyproject.toml", "**/poetry.lock", "**/uv.lock", "**/package.json", "**/package-lock.json",
    "**/npm-shrinkwrap.json", "**/go.mod", "**/go.sum",
)

class DependenciesProbe(Probe):
    name = "dependencies"
    version = "2"  # 2: generated_by / hashed / transitive pins of compiled requirement files
    applies_to_tasks = ("vulnerability-remediation",)
    inputs = REQUIREMENTS_GLOBS + MANIFEST_GLOBS
    produces = ("dependencies",)

    def extra_fingerprint(self, ctx: ProbeContext) -> str:
        """Files reached only through -r/-c includes are not in `inputs`; their hashes count too."""
        roots = sorted(r.path for r in ctx.matching(REQUIREMENTS_GLOBS))
        digest = hashlib.sha256()
        for path in include_closure(roots, ctx.read_text):
            record = ctx.record(path)
            digest.update(f"{path}\0{record.sha if record else '-'}\0".encode())
        return digest.hexdigest()

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        result = Parsed()
        roots = sorted(r.path for r in ctx.matching(REQUIREMENTS_GLOBS))
        result.extend(parse_requirements(roots, ctx.read_text))
        by_name: dict[str, list[str]] = {}
        for record in ctx.matching(MANIFEST_GLOBS):
            by_name.setdefault(PurePosixPath(record.path).name, []).append(record.path)
        texts = {p: self._read(ctx, p, result) for paths in by_name.values() for p in sorted(paths)}
        python = self._manifests(by_name.get("pyproject.toml", []), texts, result, parse_pyproject)
        node = self._manifests(by_name.get("package.json", []), texts, result, parse_package_json)
        for lock, parser, manifests in (("poetry.lock", parse_poetry_lock, python), ("uv.lock", parse_uv_lock, python),
                                        ("package-lock.json", parse_package_lock, node),
                                        ("npm-shrinkwrap.json", parse_package_lock, node)):
            for path in sorted(by_name.get(lock, [])):
                text = texts[path]
                if text is not None:
                    result.extend(parser(path, text, manifests.get(_directory(path))))
        sums = {_directory(p): texts[p] for p in by_name.get("go.sum", [])}
        for path in sorted(by_name.get("go.mod", [])):
            text = texts[path]
            if text is None:
                continue
            sum_text = sums.get(_directory(path))
            checked = None
            if sum_text is not None:
                checked, issues = gosum_versions(sum_text, _sibling(path, "go.sum"))
                result.issues.extend(issues)
            result.extend(parse_gomod(path, text, checked))
        grouped = group_by_name(result.deps)
        return ProbeOutput(
            values={"dependencies": {name: [d.model_dump() for d in deps] for name, deps in grouped.items()}},
            diagnostics=[self.diagnostic(i.message, i.file, i.line, i.level)
                         for i in sorted(result.issues, key=lambda i: (i.file or "", i.line or 0, i.message))],
        )

    def _read(self, ctx: ProbeContext, path: str, result: Parsed) -> str | None:
        text = ctx.read_text(path)
        if text is None:
            result.issues.append(Issue("file unreadable (binary, too big or secret-looking)", path, None, "info"))
        return text

    @staticmethod
    def _manifests(paths: list[str], texts: dict[str, str | None], result: Parsed,
                   parser: Callable[[str, str], Parsed]) -> dict[str, dict[str, bool]]:
        """Parse each manifest; return directory → its declared names (for the lockfile beside it)."""
        names: dict[str, dict[str, bool]] = {}
        for path in sorted(paths):
            text = texts[path]
            if text is None:
                continue
            parsed = parser(path, text)
            result.extend(parsed)
            names[_directory(path)] = declared(parsed.deps)
        return names


def _directory(path: str) -> str:
    return str(PurePosixPath(path).parent)


def _sibling(path: str, name: str) -> str:
    return str(PurePosixPath(path).with_name(name))
