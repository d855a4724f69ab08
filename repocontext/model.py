"""The RepoContext: a deterministic, versioned snapshot of one repository.

Every section is produced by probes (see `repocontext.probe`). Sections are
plain pydantic models so the whole snapshot round-trips through JSON, and
TCCM keys address it as dotted paths over that JSON.
"""

# No `from __future__ import annotations`: pydantic would evaluate ~200 annotation strings (a compile each) when
# it creates the classes, about half of their creation time; every name an annotation uses is defined above it.
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

SCHEMA_VERSION = 1

# The top-level keys a TCCM `key:` selector may start with.
SECTIONS: tuple[str, ...] = (
    "meta",
    "files",
    "languages",
    "build",
    "manifests",
    "dependencies",
    "vulnerabilities",
    "containers",
    "call_sites",
    "tests",
    "conventions",
    "denied",
    "diagnostics",
)


def _list() -> list[Any]:
    return []


def _dict() -> dict[str, Any]:
    return {}


# The fields' default factories are the two functions above, not the builtins list and dict: pydantic inspects
# a factory's signature, and a builtin's is parsed from its text by tokenize (~8 ms of a small gather's models).


class _Model(BaseModel):
    # Built on first use: a gather of a small repository never validates or dumps most of them (Dockerfiles,
    # findings, tests), and building every schema at import was more than half of the models' import.
    model_config = ConfigDict(extra="forbid", frozen=False, defer_build=True)


class _Sparse(_Model):
    """A record stored without its None fields: a lockfile holds thousands of records whose optional fields
    are mostly unset, and the nulls made a RepoContext larger than the repository. Loading fills them back."""

    @model_serializer(mode="wrap")
    def _without_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


class ProbeRun(_Model):
    """What one probe contributed: its version and the hash of its inputs."""

    version: str
    inputs_hash: str
    settings_hash: str = ""  # name, version, options, extra inputs: an incremental combine needs it unchanged
    reused: bool = False


class Meta(_Model):
    repo_id: str
    root: str
    commit: str | None = None  # None when the directory is not a git repository
    dirty: bool = False
    gathered_at: str = ""
    schema_version: int = SCHEMA_VERSION
    probes: dict[str, ProbeRun] = Field(default_factory=_dict)
    secret_rules: str = ""  # the rules' digest the files were scanned with: other rules, nothing reused


class FileRecord(_Model):
    path: str  # repo-relative, POSIX separators
    size: int
    sha: str  # git blob id (sha1 of "blob <size>\\0<content>")
    language: str | None = None


class LanguageStat(_Model):
    files: int = 0
    bytes: int = 0


class BuildSystem(_Model):
    name: str  # e.g. "pip", "poetry", "npm", "go", "maven", "make"
    file: str


class Build(_Model):
    systems: list[BuildSystem] = Field(default_factory=_list)
    files: list[str] = Field(default_factory=_list)


class Manifest(_Model):
    path: str
    ecosystem: str  # "PyPI" | "npm" | "Go" | ...
    kind: Literal["manifest", "lockfile"]
    format: str  # "requirements.txt", "pyproject.toml", "poetry.lock", ...
    # The command recorded in the header of a requirements file written by pip-compile or `uv pip compile`
    # (e.g. "pip-compile --generate-hashes --output-file=requirements.txt requirements.in"); None otherwise.
    generated_by: str | None = None


class Manifests(_Model):
    manifests: list[Manifest] = Field(default_factory=_list)
    lockfiles: list[Manifest] = Field(default_factory=_list)


class Dependency(_Sparse):
    ecosystem: str
    name: str  # normalised (PEP 503 for PyPI)
    version: str | None = None  # exact version when pinned or locked
    constraint: str | None = None  # the declared specifier, as written
    direct: bool = True
    path: list[str] = Field(default_factory=_list)  # direct dep → … → this one; empty for direct or unknown
    dev: bool = False
    file: str
    line: int | None = None
    # "constraint": from a pip constraints file (-c); such entries cap versions but are never direct.
    kind: Literal["manifest", "constraint", "lockfile"] = "manifest"
    section: str | None = None  # where it is declared: "project.dependencies", "devDependencies", "require", ...
    extras: list[str] = Field(default_factory=_list)
    markers: str | None = None  # PEP 508 environment markers (as normalised by `packaging`)
    source: str | None = None  # non-registry origin: URL, VCS, local path, or a go.mod `replace` target
    checksummed: bool | None = None  # Go only: go.sum holds a hash for name@version; None when not applicable
    # pip requirements files only: the compile command from the file's pip-compile / `uv pip compile` header
    # (the file is generated: regenerate it with that command rather than hand-edit it); None otherwise.
    generated_by: str | None = None
    # pip requirements files only: True when the file uses --hash options (pip's hash-checking mode, so a pin
    # cannot be edited without the new release's hashes); None for other formats.
    hashed: bool | None = None


def sparse_dump(record: Dependency) -> dict[str, Any]:
    """`record.model_dump()` of a dependency (its fields are plain values and lists of them), without pydantic's
    serializer and its per-record Python wrap: a lockfile's thousands of records made it a tenth of a gather.
    tests/test_sparse_dump.py checks it against `model_dump` field by field."""
    return {key: list(value) if type(value) is list else value
            for key, value in record.__dict__.items() if value is not None}


class FixChoice(_Model):
    """The version to move a package to, judged against every advisory naming it."""

    version: str | None = None  # None: no known fixed version clears every advisory
    same_line: bool = False  # stays in the installed release line (e.g. 3.2.19 → 3.2.20)
    reason: str = ""  # why this version (the advisories it clears are the package's findings at this version)
    # Affecting advisories no version fixes, left over by the choice; stored only when any (older snapshots and
    # every finding without one keep their bytes)
    unfixed: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)


class Finding(_Model):
    """One advisory affecting one installed package version."""

    id: str
    aliases: list[str] = Field(default_factory=_list)
    package: str
    ecosystem: str
    installed_version: str
    fixed: list[str] = Field(default_factory=_list)  # fixes of the interval containing installed_version
    severity: str | None = None  # "CRITICAL"/"HIGH"/"MODERATE"/…, else the CVSS vector
    summary: str | None = None
    direct: bool = True
    files: list[str] = Field(default_factory=_list)  # "path:line" of the declarations
    cvss: str | None = None  # CVSS vector string, when the advisory has one
    score: float | None = None  # CVSS v3 base score computed from `cvss`
    affected_ranges: list[str] = Field(default_factory=_list)  # containing intervals, e.g. ">=3.2, <3.2.20"
    all_fixed: list[str] = Field(default_factory=_list)  # every fixed version the advisory names for the package
    remedy: FixChoice | None = None  # the upgrade that clears every advisory on this package@version
    # Packages / path.Symbol names the record scopes itself to (Go `imports`, `affected_functions`); stored
    # only when the record names any (repocontext/osv/scope.py)
    vulnerable_symbols: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)


class Trivia(_Model):
    """A parser directive, comment or blank line outside any instruction, kept for exact reconstruction."""

    line: int
    kind: Literal["directive", "comment", "blank"]
    raw: str  # the physical line, line terminator included


class InstructionFlag(_Model):
    name: str  # without the leading "--": "platform", "from", "chown", "mount", "link"
    value: str | None = None  # None for a bare flag (--link)


class Heredoc(_Model):
    name: str  # the delimiter word, quotes removed
    line: int  # first body line (the line after the instruction's last line, for the first heredoc)
    end_line: int  # the terminator line
    chomp: bool = False  # <<- : leading tabs are stripped
    expand: bool = True  # False when the delimiter was quoted: no variable expansion in the body
    content: str = ""  # the body lines exactly as written, terminators included


class InstalledPackage(_Model):
    """One OS package installed by a RUN instruction."""

    manager: str  # the command as invoked: "apt-get", "apt", "yum", "dnf", "microdnf", "tdnf", "apk", "zypper"
    name: str  # the package name, version pin removed ("curl" from "curl=7.88.1-10")
    version: str | None = None  # "7.88.1-10" for an exact pin; with its operator otherwise (apk "~1.2", ">=1.2")
    spec: str  # as written in the command
    line: int  # the RUN instruction's first line
    source_line: int  # the physical line holding the spec (differs from `line` in continued or heredoc RUNs)


class CommandSpec(_Model):
    """An effective CMD or ENTRYPOINT."""

    line: int
    form: Literal["shell", "exec"]
    value: str  # the argument text as written (JSON text for the exec form)
    args: list[str] = Field(default_factory=_list)  # argv Docker runs: exec list, or SHELL + [command]


class BaseImage(_Model):
    """A FROM reference. `name` is the repository path as written, without the registry ("python",
    "distroless/static-debian12"); `registry` is the written registry or the inferred "docker.io";
    `repository` is the normalised full name ("docker.io/library/python"); `normalized` adds the tag
    (":latest" when neither tag nor digest is given) and digest. Fields parsed from the reference are
    None when `resolved` is None (an ARG without a default) or the reference is invalid."""

    raw: str
    registry: str | None = None
    name: str | None = None
    tag: str | None = None
    digest: str | None = None
    stage_ref: bool = False  # FROM refers to an earlier stage
    resolved: str | None = None  # raw with global ARG defaults substituted; None when that is impossible
    unresolved_args: list[str] = Field(default_factory=_list)  # ARG names with no known value
    repository: str | None = None
    normalized: str | None = None
    scratch: bool = False
    stage_index: int | None = None  # the stage referred to, when stage_ref


class Instruction(_Model):
    line: int  # first physical line, 1-based
    keyword: str  # upper-cased
    form: Literal["shell", "exec", "none"] = "none"  # "exec": a JSON array (also COPY/ADD/VOLUME's JSON form)
    value: str = ""  # the arguments after the flags, continuations joined, comment lines dropped
    end_line: int = 0  # last physical line, inclusive (heredoc terminators included)
    keyword_raw: str = ""  # as written ("from", "Run")
    raw: str = ""  # exact source: every physical line, embedded comments and heredoc bodies included
    flags: list[InstructionFlag] = Field(default_factory=_list)
    args: list[str] = Field(default_factory=_list)  # exec form: the JSON strings; otherwise quote-aware words
    heredocs: list[Heredoc] = Field(default_factory=_list)


class Stage(_Model):
    """One build stage. Config fields (user, workdir, env, expose, shell, cmd, entrypoint) are effective
    values, inherited from the parent when FROM names an earlier stage; `instructions` (FROM first) and
    `packages` are the stage's own."""

    index: int
    name: str | None = None  # lower-cased, as Docker matches it
    line: int
    platform: str | None = None  # --platform as written
    base: BaseImage
    user: str | None = None
    workdir: str | None = None
    env: dict[str, str] = Field(default_factory=_dict)
    expose: list[str] = Field(default_factory=_list)
    packages: list[InstalledPackage] = Field(default_factory=_list)
    instructions: list[Instruction] = Field(default_factory=_list)
    end_line: int = 0
    args: dict[str, str | None] = Field(default_factory=_dict)  # stage ARGs; None when without default
    shell: list[str] = Field(default_factory=lambda: ["/bin/sh", "-c"])
    cmd: CommandSpec | None = None
    entrypoint: CommandSpec | None = None
    depends_on: list[int] = Field(default_factory=_list)  # stages used by FROM, COPY --from, RUN --mount from=
    copy_from_images: list[str] = Field(default_factory=_list)  # external images named by COPY --from


class Dockerfile(_Model):
    """A parsed Dockerfile. Concatenating the `raw` of `trivia`, `preamble` and every stage's
    `instructions` in line order gives back the file exactly (see repocontext.dockerfile.render)."""

    path: str
    stages: list[Stage] = Field(default_factory=_list)
    directives: dict[str, str] = Field(default_factory=_dict)  # lower-cased name → value
    escape: str = "\\"
    global_args: dict[str, str | None] = Field(default_factory=_dict)  # ARGs before the first FROM
    preamble: list[Instruction] = Field(default_factory=_list)  # instructions before the first FROM
    trivia: list[Trivia] = Field(default_factory=_list)
    final_stage: int | None = None


class ShellEvidence(_Model):
    file: str
    line: int
    kind: str  # stable kinds: see repocontext.dockerfile.shell and repocontext.deployment_commands
    detail: str
    stage: int | None = None
    script: str | None = None  # repo path (or image path) of the script involved
    shebang: str | None = None
    # Compose evidence: the Dockerfile the service builds (its `build:` context and dockerfile, repo-relative);
    # None for a service that only names an image, and for Kubernetes evidence
    dockerfile: str | None = None


class DeploymentManifest(_Model):
    path: str
    format: Literal["compose", "kubernetes"]
    kinds: list[str] = Field(default_factory=_list)  # Kubernetes kinds, or compose service names
    images: list[str] = Field(default_factory=_list)  # image: values, sorted, unique


class Containers(_Model):
    dockerfiles: list[Dockerfile] = Field(default_factory=_list)
    shell_evidence: list[ShellEvidence] = Field(default_factory=_list)
    deployment_manifests: list[str] = Field(default_factory=_list)
    deployments: list[DeploymentManifest] = Field(default_factory=_list)


class CallSite(_Model):
    file: str
    line: int  # 1-based
    col: int  # 0-based UTF-8 byte offset within the line
    symbol: str  # fully qualified name used, e.g. "yaml.safe_load" (also when imported as `y`)
    kind: Literal["import", "use"] = "use"


class CallSiteGroup(_Sparse):
    """Call sites of one imported top-level module (npm package, Go module) or locked package (crate, gem,
    Composer package, Maven artifact, NuGet package)."""

    module: str
    aliases: list[str] = Field(default_factory=_list)  # distribution names that provide it (PEP 503-normalised)
    first_party: bool = False  # the repository's own module
    sites: list[CallSite] = Field(default_factory=_list)
    # Rust, Ruby, PHP, Java/Kotlin and C# only: how references were mapped onto the package, and whether that
    # is a guess (`repocontext.callsites.packages.VIA`); None (not stored) for the other languages.
    via: str | None = None


class TestFile(_Model):
    __test__ = False  # not a pytest class
    path: str
    # "pytest" | "unittest" | "jest" | "vitest" | "node:test" | "go" | "cargo-test" | "rspec" | "minitest" |
    # "test-unit" | "phpunit" | "junit" | "testng" | "kotest" | "kotlin-test" | "xunit" | "nunit" | "mstest" |
    # "dotnet-test" (repocontext/callsites/testfiles*.py)
    framework: str
    modules: list[str] = Field(default_factory=_list)  # non-standard modules it imports (JS: resolved repo paths)
    covers: list[str] = Field(default_factory=_list)  # "file:line" third-party call sites it exercises


class Tests(_Model):
    __test__ = False
    files: list[TestFile] = Field(default_factory=_list)
    by_module: dict[str, list[str]] = Field(default_factory=_dict)  # module → test paths


class Conventions(_Model):
    formatters: list[str] = Field(default_factory=_list)
    linters: list[str] = Field(default_factory=_list)  # type checkers (mypy, pyright) included
    sources: dict[str, list[str]] = Field(default_factory=_dict)  # tool → files that configure it
    ci: list[str] = Field(default_factory=_list)
    test_command: str | None = None
    test_command_source: str | None = None
    test_commands: dict[str, str] = Field(default_factory=_dict)  # ecosystem → its first test command
    codeowners: str | None = None


class Denied(_Model):
    path: str
    rule: str


DiagnosticLevel = Literal["info", "warning", "error"]


class Diagnostic(_Model):
    probe: str
    level: DiagnosticLevel = "warning"
    message: str
    file: str | None = None
    line: int | None = None


class RepoContext(_Model):
    meta: Meta
    files: list[FileRecord] = Field(default_factory=_list)
    languages: dict[str, LanguageStat] = Field(default_factory=_dict)
    build: Build = Field(default_factory=Build)
    manifests: Manifests = Field(default_factory=Manifests)
    dependencies: dict[str, list[Dependency]] = Field(default_factory=_dict)
    vulnerabilities: dict[str, Finding] = Field(default_factory=_dict)
    containers: Containers = Field(default_factory=Containers)
    call_sites: dict[str, CallSiteGroup] = Field(default_factory=_dict)
    tests: Tests = Field(default_factory=Tests)
    conventions: Conventions = Field(default_factory=Conventions)
    denied: list[Denied] = Field(default_factory=_list)
    diagnostics: list[Diagnostic] = Field(default_factory=_list)
