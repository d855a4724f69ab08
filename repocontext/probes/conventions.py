"""Repository conventions: formatters, linters, CI workflows, the test command, CODEOWNERS.

Tools come from their configuration: pyproject `[tool.*]` tables, setup.cfg /
tox.ini sections, dedicated config files, `.pre-commit-config.yaml` hooks,
package.json dependencies and config keys, `.golangci.*`; a Go module implies
gofmt. `sources` maps each tool to the files that told us (any depth).

The test command is the first that applies, from root-level files:
  1. pytest configured: pyproject `[tool.pytest.ini_options]`, pytest.ini,
     setup.cfg `[tool:pytest]`, tox.ini `[pytest]`  → "python -m pytest"
  2. tox.ini with an `envlist`                    → "tox"
  3. package.json `scripts.test`, unless npm's placeholder → "npm test"
  4. a Makefile `test:` target                    → "make test"
  5. go.mod                                       → "go test ./..."
  6. Cargo.toml                                   → "cargo test"
  7. a Gemfile with .rspec, else with a Rakefile  → "bundle exec rspec", "bundle exec rake test"
  8. composer.json `scripts.test`, else phpunit.xml(.dist) → "composer test", "vendor/bin/phpunit"
  9. pom.xml                                      → "./mvnw test" beside mvnw, else "mvn test"
 10. build.gradle(.kts) / settings.gradle(.kts)   → "./gradlew test" beside gradlew, else "gradle test"
 11. a .sln or .csproj / .fsproj at the root      → "dotnet test"
`test_command` is the first that applies; `test_commands` maps each ecosystem
to its first (Makefile's is no ecosystem's), so a fix is verified by the suite
of its ecosystem.
CODEOWNERS: the first of .github/CODEOWNERS, CODEOWNERS, docs/CODEOWNERS,
.gitlab/CODEOWNERS (GitHub's own search order, GitLab's last).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from repocontext import bounded
from repocontext.model import Diagnostic
from repocontext.paths import split_path
from repocontext.probe import Probe, ProbeContext, ProbeOutput

FORMATTERS = frozenset({"black", "isort", "prettier", "gofmt", "gofumpt", "goimports", "autopep8", "yapf"})
# biome and ruff are both: their formatter role is recorded separately.

PYPROJECT_TOOLS = {"black": "black", "ruff": "ruff", "isort": "isort", "flake8": "flake8", "pylint": "pylint",
                   "mypy": "mypy", "pyright": "pyright", "autopep8": "autopep8", "yapf": "yapf"}
INI_SECTIONS = {"flake8": "flake8", "isort": "isort", "tool:isort": "isort", "mypy": "mypy", "pylint": "pylint",
                "yapf": "yapf", "pycodestyle": "pycodestyle", "pydocstyle": "pydocstyle"}
CONFIG_FILES: dict[str, tuple[str, ...]] = {
    ".flake8": ("flake8",), ".pylintrc": ("pylint",), "pylintrc": ("pylint",), "mypy.ini": ("mypy",),
    ".mypy.ini": ("mypy",), "ruff.toml": ("ruff",), ".ruff.toml": ("ruff",), ".isort.cfg": ("isort",),
    "pyrightconfig.json": ("pyright",), ".style.yapf": ("yapf",), "biome.json": ("biome", "biome-format"),
    "biome.jsonc": ("biome", "biome-format"), ".golangci.yml": ("golangci-lint",),
    ".golangci.yaml": ("golangci-lint",), ".golangci.toml": ("golangci-lint",),
    ".golangci.json": ("golangci-lint",),
}
PRETTIER_FILE = re.compile(r"\.prettierrc(\.(json|json5|ya?ml|toml|[cm]?js|ts))?|prettier\.config\.[cm]?[jt]s")
ESLINT_FILE = re.compile(r"\.eslintrc(\.(json|ya?ml|[cm]?js))?|eslint\.config\.[cm]?[jt]s")
PRE_COMMIT_HOOKS = {
    "black": "black", "black-jupyter": "black", "ruff": "ruff", "ruff-check": "ruff", "ruff-format": "ruff-format",
    "isort": "isort", "flake8": "flake8", "pylint": "pylint", "mypy": "mypy", "prettier": "prettier",
    "eslint": "eslint", "biome-check": "biome", "biome-lint": "biome", "biome-format": "biome-format",
    "golangci-lint": "golangci-lint", "go-fmt": "gofmt", "gofmt": "gofmt", "go-imports": "goimports",
    "autopep8": "autopep8", "yapf": "yapf", "pyright": "pyright",
}
PACKAGE_JSON_DEPS = {"prettier": "prettier", "eslint": "eslint", "@biomejs/biome": "biome"}
GOLANGCI_FORMATTERS = ("gofmt", "gofumpt", "goimports")

CI_GLOBS = (".github/workflows/*.yml", ".github/workflows/*.yaml", ".gitlab-ci.yml", ".circleci/config.yml",
            "Jenkinsfile", "azure-pipelines.yml", ".travis.yml", "bitbucket-pipelines.yml")
CODEOWNERS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS")
NPM_PLACEHOLDER = "no test specified"
# Root files that name the test command of a Cargo, Bundler, Composer, Maven, Gradle or .NET project.
ROOT_BUILD_FILES = ("Cargo.toml", "Gemfile", ".rspec", "Rakefile", "composer.json", "phpunit.xml", "phpunit.xml.dist",
                    "pom.xml", "mvnw", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
                    "gradlew")


class _Found:
    """Tools seen so far, each with the files that named it."""

    def __init__(self) -> None:
        self.tools: dict[str, set[str]] = {}
        self.diagnostics: list[Diagnostic] = []

    def add(self, tool: str, path: str) -> None:
        self.tools.setdefault(tool, set()).add(path)

    def split(self) -> tuple[list[str], list[str], dict[str, list[str]]]:
        formatters, linters = set(), set()
        for tool in self.tools:
            if tool.endswith("-format"):
                formatters.add(tool.removesuffix("-format"))
            elif tool in FORMATTERS:
                formatters.add(tool)
            else:
                linters.add(tool)
        sources: dict[str, set[str]] = {t.removesuffix("-format"): set() for t in self.tools}
        for tool, paths in self.tools.items():
            sources[tool.removesuffix("-format")].update(paths)
        return sorted(formatters), sorted(linters), {k: sorted(v) for k, v in sorted(sources.items())}


class ConventionsProbe(Probe):
    name = "conventions"
    version = "3"  # 3: test_commands by ecosystem
    inputs = ("**/pyproject.toml", "**/setup.cfg", "**/tox.ini", "**/pytest.ini", "**/.pre-commit-config.yaml",
              "**/package.json", "Makefile", "go.mod", "**/go.mod", *(f"**/{n}" for n in CONFIG_FILES),
              *ROOT_BUILD_FILES, "*.sln", "*.csproj", "*.fsproj",
              "**/.prettierrc*", "**/prettier.config.*", "**/.eslintrc*", "**/eslint.config.*",
              *CI_GLOBS, *CODEOWNERS)
    produces = ("conventions",)

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        found = _Found()
        self._collect(ctx, found)
        formatters, linters, sources = found.split()
        commands = self._test_commands(ctx)
        _, command, source = commands[0] if commands else (None, None, None)
        ci = sorted(r.path for r in ctx.matching(CI_GLOBS) if _is_root_ci(r.path))
        codeowners = next((p for p in CODEOWNERS if ctx.record(p) is not None), None)
        return ProbeOutput(values={"conventions": {
            "formatters": formatters, "linters": linters, "sources": sources, "ci": ci,
            "test_command": command, "test_command_source": source, "test_commands": by_ecosystem(commands),
            "codeowners": codeowners,
        }}, diagnostics=found.diagnostics)

    # tools --------------------------------------------------------------
    def _collect(self, ctx: ProbeContext, found: _Found) -> None:
        for record in ctx.files:
            path, name = record.path, split_path(record.path)[1]
            for tool in CONFIG_FILES.get(name, ()):
                found.add(tool, path)
            if PRETTIER_FILE.fullmatch(name):
                found.add("prettier", path)
            if ESLINT_FILE.fullmatch(name):
                found.add("eslint", path)
            if name == "go.mod":
                found.add("gofmt", path)
            reader = _READERS.get(name)
            if reader is not None:
                text = ctx.read_text(path)
                if text is not None:
                    reader(self, text, path, found)

    def _pyproject(self, text: str, path: str, found: _Found) -> None:
        data = self._toml(text, path, found)
        tools = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
        for key, tool in PYPROJECT_TOOLS.items():
            if key in tools:
                found.add(tool, path)
        ruff = tools.get("ruff")
        if isinstance(ruff, dict) and "format" in ruff:
            found.add("ruff-format", path)

    def _ini(self, text: str, path: str, found: _Found) -> None:
        for section in self._sections(text, path, found):
            tool = INI_SECTIONS.get(section) or ("mypy" if section.startswith("mypy-") else None)
            if tool is None and section.startswith("pylint."):
                tool = "pylint"
            if tool:
                found.add(tool, path)

    def _pre_commit(self, text: str, path: str, found: _Found) -> None:
        import yaml  # for its error class; bounded imports it for the parse

        try:
            data = bounded.load(text)
        except bounded.LimitExceeded as exc:
            found.diagnostics.append(self.diagnostic(bounded.describe(exc), path, exc.line))
            return
        except yaml.YAMLError as exc:
            found.diagnostics.append(self.diagnostic(f"invalid YAML: {exc.__class__.__name__}", path))
            return
        repos = data.get("repos", []) if isinstance(data, dict) else []
        for repo in repos if isinstance(repos, list) else []:
            for hook in repo.get("hooks", []) if isinstance(repo, dict) else []:
                tool = PRE_COMMIT_HOOKS.get(str(hook.get("id", ""))) if isinstance(hook, dict) else None
                if tool:
                    found.add(tool, path)

    def _package_json(self, text: str, path: str, found: _Found) -> None:
        data = self._json(text, path, found)
        for section in ("dependencies", "devDependencies"):
            deps = data.get(section)
            for dep, tool in PACKAGE_JSON_DEPS.items():
                if isinstance(deps, dict) and dep in deps:
                    found.add(tool, path)
                    if tool == "biome":
                        found.add("biome-format", path)
        if "prettier" in data:
            found.add("prettier", path)
        if "eslintConfig" in data:
            found.add("eslint", path)

    def _golangci(self, text: str, path: str, found: _Found) -> None:
        """golangci-lint can run formatters: v1 `linters.enable`, v2 `formatters.enable`."""
        for tool in GOLANGCI_FORMATTERS:
            if re.search(rf"^\s*-\s*['\"]?{tool}['\"]?\s*$", text, re.MULTILINE):
                found.add(tool, path)

    # parsing helpers ----------------------------------------------------
    def _toml(self, text: str, path: str, found: _Found) -> dict[str, Any]:
        import tomllib  # here: most gathers read no TOML

        try:
            return bounded.toml_loads(text)
        except bounded.LimitExceeded as exc:
            found.diagnostics.append(self.diagnostic(bounded.describe(exc), path, exc.line))
            return {}
        except tomllib.TOMLDecodeError as exc:
            found.diagnostics.append(self.diagnostic(f"invalid TOML: {exc}", path))
            return {}

    def _json(self, text: str, path: str, found: _Found) -> dict[str, Any]:
        try:
            data = bounded.json_loads(text)
        except bounded.LimitExceeded as exc:
            found.diagnostics.append(self.diagnostic(bounded.describe(exc), path, exc.line))
            return {}
        except ValueError as exc:
            found.diagnostics.append(self.diagnostic(f"invalid JSON: {exc}", path))
            return {}
        return data if isinstance(data, dict) else {}

    def _sections(self, text: str, path: str, found: _Found | None) -> dict[str, dict[str, str]]:
        import configparser  # here: most repositories have no setup.cfg or tox.ini to read

        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(text, source=path)
        except configparser.Error as exc:
            if found is not None:
                found.diagnostics.append(self.diagnostic(f"invalid INI: {exc.__class__.__name__}", path))
            return {}
        return {s: dict(parser.items(s)) for s in parser.sections()}

    # test command -------------------------------------------------------
    def _test_commands(self, ctx: ProbeContext) -> list[tuple[str | None, str, str]]:
        """Every test command the root files name, in the order of the module docstring, as (the ecosystem
        whose packages it exercises or None for a Makefile's, command, source)."""
        def text(path: str) -> str | None:
            return ctx.read_text(path) if ctx.record(path) is not None else None

        found: list[tuple[str | None, str, str]] = []
        pyproject = text("pyproject.toml")
        if pyproject is not None and "ini_options" in self._toml(pyproject, "pyproject.toml", _Found()).get(
                "tool", {}).get("pytest", {}):
            found.append(("PyPI", "python -m pytest", "pyproject.toml"))
        if ctx.record("pytest.ini") is not None:
            found.append(("PyPI", "python -m pytest", "pytest.ini"))
        for path, section in (("setup.cfg", "tool:pytest"), ("tox.ini", "pytest")):
            body = text(path)
            if body is not None and section in self._sections(body, path, None):
                found.append(("PyPI", "python -m pytest", path))
        tox = text("tox.ini")
        if tox is not None and "envlist" in self._sections(tox, "tox.ini", None).get("tox", {}):
            found.append(("PyPI", "tox", "tox.ini"))
        package = self._json(text("package.json") or "{}", "package.json", _Found())
        script = package.get("scripts", {}).get("test") if isinstance(package.get("scripts"), dict) else None
        if isinstance(script, str) and script.strip() and NPM_PLACEHOLDER not in script:
            found.append(("npm", "npm test", "package.json"))
        makefile = text("Makefile")
        if makefile is not None and re.search(r"^test\s*:(?!=)", makefile, re.MULTILINE):
            found.append((None, "make test", "Makefile"))
        if ctx.record("go.mod") is not None:
            found.append(("Go", "go test ./...", "go.mod"))
        return found + self._build_test_commands(ctx)

    def _build_test_commands(self, ctx: ProbeContext) -> list[tuple[str | None, str, str]]:
        """The test commands of a Cargo, Bundler, Composer, Maven, Gradle or .NET project at the root."""
        def has(path: str) -> bool:
            return ctx.record(path) is not None

        found: list[tuple[str | None, str, str]] = []
        if has("Cargo.toml"):
            found.append(("crates.io", "cargo test", "Cargo.toml"))
        if has("Gemfile") and (has(".rspec") or has("Rakefile")):
            found.append(("RubyGems", *(("bundle exec rspec", ".rspec") if has(".rspec")
                                        else ("bundle exec rake test", "Rakefile"))))
        composer = self._json(ctx.read_text("composer.json") or "{}", "composer.json", _Found()) \
            if has("composer.json") else {}
        scripts = composer.get("scripts")
        phpunit = next((p for p in ("phpunit.xml", "phpunit.xml.dist") if has(p)), None)
        if isinstance(scripts, dict) and scripts.get("test"):
            found.append(("Packagist", "composer test", "composer.json"))
        elif phpunit and has("composer.json"):
            found.append(("Packagist", "vendor/bin/phpunit", phpunit))
        if has("pom.xml"):
            found.append(("Maven", "./mvnw test" if has("mvnw") else "mvn test", "pom.xml"))
        gradle = next((p for p in ("build.gradle.kts", "build.gradle", "settings.gradle.kts", "settings.gradle")
                       if has(p)), None)
        if gradle:
            found.append(("Maven", "./gradlew test" if has("gradlew") else "gradle test", gradle))
        dotnet = sorted(r.path for r in ctx.matching(("*.sln", "*.csproj", "*.fsproj")) if "/" not in r.path)
        if dotnet:
            found.append(("NuGet", "dotnet test", dotnet[0]))
        return found


def verify_command(conventions: Mapping[str, Any], ecosystems: Iterable[str]) -> str | None:
    """The command that verifies fixes in these ecosystems: their own suite when they share one, else the
    repository's first test command."""
    mine = {(conventions.get("test_commands") or {}).get(e) for e in ecosystems} - {None}
    return mine.pop() if len(mine) == 1 else conventions.get("test_command")


def by_ecosystem(found: list[tuple[str | None, str, str]]) -> dict[str, str]:
    """The first command of each ecosystem: what --verify runs for a fix in it (BookStack's jest suite does not
    exercise a Composer package; its phpunit does)."""
    commands: dict[str, str] = {}
    for ecosystem, command, _ in found:
        if ecosystem is not None:
            commands.setdefault(ecosystem, command)
    return commands


def _is_root_ci(path: str) -> bool:
    """CI files count at their conventional place only (root, .github/workflows, .circleci)."""
    return "/" not in path or path.startswith((".github/workflows/", ".circleci/"))


_READERS = {
    "pyproject.toml": ConventionsProbe._pyproject,
    "setup.cfg": ConventionsProbe._ini,
    "tox.ini": ConventionsProbe._ini,
    ".pre-commit-config.yaml": ConventionsProbe._pre_commit,
    "package.json": ConventionsProbe._package_json,
    ".golangci.yml": ConventionsProbe._golangci,
    ".golangci.yaml": ConventionsProbe._golangci,
}
