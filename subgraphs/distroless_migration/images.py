"""Chainguard images: what each one is (from the catalog data), and which one a source base image becomes.

Facts about Chainguard images come from data: `data/chainguard-images.json` (issue 29 §3).

The vendored file is extracted from the public catalog snapshot (`../shared/chainguard/images.json`, from
chainguard-images/images at cd7edd236bf1, Apache-2.0): per image its reference, tier, upstream aliases
and, per variant lock, the default and `-dev` image's entrypoint, cmd, user, work dir and installed Wolfi
packages. The migration asks it, instead of assuming, whether an image runs as root, what its ENTRYPOINT
is, and whether it already has tzdata, ca-certificates or a shell. It is read once per process.

An image missing here is "not in the known catalog": the paid catalog is larger (see
`data/extra-images.yaml` and the user mapping file). Refresh: `python -m subgraphs.distroless_migration.images
refresh PATH/images.json`.

Source base images → Chainguard images (`map_base`). Decisions (documented in the package docstring too):
- Language images keep their version cut to major.minor (`python:3.11.4-slim` → `python:3.11`,
  `node:20-alpine` → `node:20`, `golang:1.22.3` → `go:1.22`); Java keeps the major only
  (`eclipse-temurin:17-jre` → `jre:17`). A tag with no leading version (`slim`, `lts`) → `latest`.
- Java images map to `jdk` where something is built and to `jre` for a runtime.
- Distro bases (debian, ubuntu, alpine, fedora, centos, rocky, alma, amazonlinux, oraclelinux,
  Red Hat UBI) map to `wolfi-base` (busybox shell + apk, runs as root) when the stage or one built
  FROM it runs commands, else to `static` (no shell, no package manager). Their version is not kept.
- gcr.io/distroless: static → static, base/base-nossl/cc → glibc-dynamic, python3 → python,
  nodejsN → node:N, javaN → jre:N; a `debug` tag (busybox shell) → the -dev variant.
- Images already on cgr.dev keep their name; a stage that needs a shell gets the tag's -dev form.

Facts about the Chainguard images (from their image configs): python's ENTRYPOINT is
/usr/bin/python, node's /usr/bin/node (with dumb-init installed, WORKDIR /app), jre/jdk's
/usr/bin/java, ruby's /usr/bin/ruby, php's /bin/php, nginx's /usr/sbin/nginx, rust's rustc (Chainguard's
docs run `docker run cgr.dev/chainguard/rust --version` and get rustc's version); the -dev variants
keep the same ENTRYPOINT (taken from the image docs, not checked here: no Docker engine).
static, glibc-dynamic and wolfi-base have none. Every image but wolfi-base runs as nonroot (uid 65532);
static includes ca-certificates and tzdata. Python lives in /usr (site-packages:
/usr/lib/pythonX.Y/site-packages, console scripts: /usr/bin).
- php:*-apache bundles Apache httpd with mod_php; Chainguard's php image has no Apache, so it is not mapped
  (the recipe declines it rather than produce an image that cannot serve).
- nginx: Chainguard's runs as nonroot and its default server listens on 8080; a config listening on 80 then
  relies on Docker's default net.ipv4.ip_unprivileged_port_start=0 (the note says so).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from repocontext.dockerfile.reference import ImageRef, parse_reference
from repocontext.model import BaseImage
from subgraphs.distroless_migration.models import MigrationOptions

DATA = Path(__file__).parent / "data"  # the vendored data (data/README.md)
CATALOG_PATH = DATA / "chainguard-images.json"
SHIPPED_PATH = DATA / "extra-images.yaml"
SHELLS = frozenset({"busybox", "bash"})
CERTS = "ca-certificates-bundle"  # Wolfi's certificate bundle: what `ca-certificates` is installed for


@dataclass(frozen=True)
class Variant:
    entrypoint: str  # as the catalog writes it ("" when the image has none)
    cmd: str
    run_as: str  # uid or user name; "" means Docker's default (root)
    packages: frozenset[str]

    @property
    def root(self) -> bool:
        return self.run_as in ("", "0", "root")

    @property
    def shell(self) -> bool:
        return bool(self.packages & SHELLS)

    def has(self, package: str) -> bool:
        """The package (or, for ca-certificates, the certificate bundle it exists for) is installed."""
        return package in self.packages or (package == "ca-certificates" and CERTS in self.packages)


@dataclass(frozen=True)
class Image:
    name: str
    reference: str
    tier: str
    aliases: tuple[str, ...]
    default: Variant
    dev: Variant | None  # None: the catalog data has no -dev variant for it
    tags: tuple[str, ...] = ()  # every variant's tags the data lists (public tags: mostly `latest`)


def _variant(raw: dict[str, Any] | None) -> Variant | None:
    if not raw:
        return None
    return Variant(str(raw.get("entrypoint") or ""), str(raw.get("cmd") or ""), str(raw.get("run_as") or ""),
                   frozenset(raw.get("packages") or ()))


def _image(name: str, raw: dict[str, Any]) -> Image:
    locks = raw.get("variants") or {}
    # The lock named after the image is its main variant (php-public, not php-fpm-public); else the first.
    lock = f"{name}-public" if f"{name}-public" in locks else sorted(locks)[0]
    default = _variant(locks[lock].get("default"))
    assert default is not None, f"{name}: no default variant"
    tags = tuple(sorted({t for v in locks.values() for t in v.get("tags") or ()}))
    return Image(name, str(raw.get("image") or ""), str(raw.get("tier") or ""), tuple(raw.get("aliases") or ()),
                 default, _variant(locks[lock].get("dev")), tags)


@cache
def catalog() -> dict[str, Image]:
    raw = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))
    return {name: _image(name, value) for name, value in sorted(raw.items())}


def image(name: str) -> Image | None:
    """The catalog image of a Chainguard image name (`python`, or a repository ending in it)."""
    return catalog().get(name.rsplit("/", 1)[-1])


def variant(name: str, dev: bool) -> Variant | None:
    found = image(name)
    if found is None:
        return None
    return (found.dev or found.default) if dev else found.default


@cache
def everywhere() -> frozenset[str]:
    """Packages every variant of every catalog image has (what no image needs installed again)."""
    sets = [v.packages for i in catalog().values() for v in (i.default, i.dev) if v is not None]
    return frozenset.intersection(*sets) if sets else frozenset()


@cache
def aliases() -> dict[str, str]:
    """Upstream repository (as the catalog names it, without tag) → Chainguard image name."""
    found: dict[str, str] = {}
    for name, img in catalog().items():
        for alias in img.aliases:
            repository = alias.rsplit(":", 1)[0] if ":" in alias.rsplit("/", 1)[-1] else alias
            found.setdefault(repository.removeprefix("library/"), name)
    return found


@dataclass(frozen=True)
class Shipped:
    """A shipped mapping (data/extra-images.yaml) for an image the catalog data does not map."""

    image: str
    catalog: str  # "paid" | "public"
    note: str


@cache
def shipped() -> dict[str, Shipped]:
    """Upstream repository → the shipped mapping (read once per process)."""
    raw = yaml.safe_load(SHIPPED_PATH.read_text(encoding="utf-8")) or {}
    return {str(k): Shipped(str(v["image"]), str(v.get("catalog", "paid")), str(v.get("note", "")))
            for k, v in sorted((raw.get("images") or {}).items())}


def extract(raw: dict[str, Any]) -> dict[str, Any]:
    """The vendored form of a full catalog export: the fields the migration reads, sorted."""
    def facts(e: dict[str, Any] | None) -> dict[str, Any] | None:
        if not e:
            return None
        return {"entrypoint": e.get("entrypoint", ""), "cmd": e.get("cmd", ""), "run_as": str(e.get("run_as", "")),
                "work_dir": e.get("work_dir", ""), "packages": sorted(e.get("packages", []))}
    return {name: {"image": x["image"], "tier": x.get("tier"), "aliases": sorted(x.get("aliases", [])),
                   "variants": {lock: {"default": facts(v.get("default")), "dev": facts(v.get("dev")),
                                       "tags": v.get("tags", [])} for lock, v in sorted(x["variants"].items())}}
            for name, x in sorted(raw.items())}


def refresh(source: Path, target: Path = CATALOG_PATH) -> int:
    data = extract(json.loads(source.read_text(encoding="utf-8")))
    target.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    catalog.cache_clear()
    return len(data)


@dataclass(frozen=True)
class ImageInfo:
    entrypoint: str | None = None  # what the image's ENTRYPOINT runs; None: no ENTRYPOINT
    programs: frozenset[str] = frozenset()  # programs on PATH in the runtime (non -dev) variant
    language: str | None = None  # how artifacts are laid out: python, node, go, java, … (None: a base image)
    dev: bool = True  # a -dev variant exists
    root: bool = False  # runs as root by default


def _from_data(name: str, programs: frozenset[str] = frozenset(), language: str | None = None,
               dev: bool = True) -> ImageInfo:
    """ENTRYPOINT and user from the catalog data (py); programs and layout are this module's."""
    found = image(name)
    if found is None:
        return ImageInfo("?", programs, language, dev)
    entrypoint = found.default.entrypoint.split()[0] if found.default.entrypoint.strip() else None
    return ImageInfo(entrypoint, programs, language, dev, found.default.root)


CHAINGUARD: dict[str, ImageInfo] = {
    "python": _from_data("python", frozenset({"python", "python3"}), "python"),
    "node": _from_data("node", frozenset({"node", "dumb-init"}), "node"),
    "go": _from_data("go", frozenset({"go"}), "go"),
    "jdk": _from_data("jdk", frozenset({"java", "javac", "jar"}), "java"),
    "jre": _from_data("jre", frozenset({"java"}), "java"),
    "ruby": _from_data("ruby", frozenset({"ruby"}), "ruby"),
    "php": _from_data("php", frozenset({"php"}), "php"),
    "nginx": _from_data("nginx", frozenset({"nginx"}), "nginx"),
    "rust": _from_data("rust", frozenset({"cargo", "rustc"}), "rust"),
    "maven": _from_data("maven", frozenset({"mvn", "java"}), "maven"),
    "gradle": _from_data("gradle", frozenset({"gradle", "java"}), "gradle"),
    "redis": _from_data("redis", frozenset({"redis-server", "redis-cli"}), "redis"),
    "postgres": _from_data("postgres", frozenset({"postgres"}), "postgres"),
    "busybox": _from_data("busybox", frozenset({"sh"}), None, dev=False),
    "wolfi-base": _from_data("wolfi-base", frozenset({"sh"}), None, dev=False),
    "static": _from_data("static", frozenset(), None, dev=False),
    "glibc-dynamic": _from_data("glibc-dynamic", frozenset(), None),
}
UNKNOWN_IMAGE = ImageInfo("?", frozenset(), None)  # a user-mapped image we know nothing about

LANGUAGE_SOURCES: dict[str, str] = {
    "python": "python", "node": "node", "golang": "go", "openjdk": "jdk", "eclipse-temurin": "jdk",
    "amazoncorretto": "jdk", "ruby": "ruby", "php": "php", "nginx": "nginx", "rust": "rust", "maven": "maven",
    "gradle": "gradle", "redis": "redis", "postgres": "postgres", "busybox": "busybox",
}
JAVA = frozenset({"jdk", "jre"})
DISTRO_NAMES = frozenset({"debian", "ubuntu", "alpine", "fedora", "centos", "rockylinux", "almalinux", "minideb",
                          "amazonlinux", "oraclelinux"})
DISTRO_REGISTRIES = frozenset({"docker.io", "registry.access.redhat.com", "registry.redhat.io", "quay.io",
                               "public.ecr.aws", "registry.fedoraproject.org"})
_UBI = re.compile(r"ubi\d*(?:-(?:minimal|micro|init))?\Z")
_DISTROLESS = re.compile(r"(static|base-nossl|base|cc|python3|nodejs|java)(\d*)(?:-debian\d+)?\Z")
DISTROLESS_TARGETS = {"static": "static", "base": "glibc-dynamic", "base-nossl": "glibc-dynamic",
                      "cc": "glibc-dynamic", "python3": "python", "nodejs": "node", "java": "jre"}
_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class ImageChoice:
    """The Chainguard image a FROM maps to, before the -dev decision."""

    name: str  # Chainguard image name ("python"), or a full repository for user mappings
    tag: str  # without "-dev"
    kind: str  # "language" | "distro" | "distroless" | "chainguard" | "user"
    notes: tuple[str, ...] = ()
    debug: bool = False  # the source was a distroless :debug image (has a shell)
    fixed_tag: bool = False  # a user mapping named the tag

    @property
    def info(self) -> ImageInfo:
        name = self.name.rsplit("/", 1)[-1]
        if name in CHAINGUARD:
            return CHAINGUARD[name]
        found = image(name) if self.kind != "user" or "/" not in self.name else None
        return _from_data(name, dev=found.dev is not None) if found is not None else UNKNOWN_IMAGE

    @property
    def has_dev(self) -> bool:
        return self.info.dev and not self.fixed_tag

    def named(self, name: str) -> ImageChoice:
        return replace(self, name=name)

    def with_tag(self, tag: str) -> ImageChoice:
        return replace(self, tag=tag)

    def reference(self, options: MigrationOptions, dev: bool) -> str:
        tag = self.tag
        if dev and self.has_dev and not tag.endswith("-dev"):
            tag += "-dev"
        return f"{options.repository(self.name)}:{tag}"


@dataclass
class Unmapped:
    reason: str
    notes: list[str] = field(default_factory=list)


def cut_version(tag: str | None, major_only: bool = False) -> str | None:
    m = _VERSION.match(tag or "")
    if not m:
        return None
    return m.group(1) if major_only or m.group(2) is None else f"{m.group(1)}.{m.group(2)}"


def _tag_from(source_tag: str | None, java: bool) -> tuple[str, list[str]]:
    version = cut_version(source_tag, major_only=java)
    if version is not None:
        # say so whenever the pin changes: a patch level or a variant suffix (-slim, -alpine) is not kept
        changed = source_tag not in (version, f"v{version}")
        return version, [f"tag {source_tag} → {version}: Chainguard tags carry the {'major' if java else 'major.minor'}"
                         " version only"] if changed else []
    if source_tag in (None, "latest"):
        return "latest", []
    return "latest", [f"tag {source_tag!r} has no version: mapped to latest"]


def _user_choice(base: BaseImage, value: str) -> ImageChoice:
    name, colon, tag = value.rpartition(":") if ":" in value.rsplit("/", 1)[-1] else (value, "", "")
    if colon:
        return ImageChoice(name=name, tag=tag, kind="user", fixed_tag=True, notes=("from the user mapping file",))
    info = CHAINGUARD.get(name.rsplit("/", 1)[-1])
    if info is not None and info.language is None:  # base images (wolfi-base, static, …) have no versions
        return ImageChoice(name=name, tag="latest", kind="user", notes=("from the user mapping file",))
    tag, notes = _tag_from(base.tag, name in JAVA)
    return ImageChoice(name=name, tag=tag, kind="user", notes=("from the user mapping file", *notes))


def _user_key(base: BaseImage, options: MigrationOptions) -> str | None:
    images = options.mapping.images
    short = (base.repository or "").removeprefix("docker.io/library/")
    for key in (base.name, base.repository, short):
        if key and key in images:
            return images[key]
    return None


def _distroless(base: BaseImage) -> ImageChoice | Unmapped:
    last = (base.name or "").rsplit("/", 1)[-1]
    m = _DISTROLESS.match(last)
    if not m:
        return Unmapped(not_in_catalog(base.repository or last, base.repository or last))
    target = DISTROLESS_TARGETS[m.group(1)]
    tag = m.group(2) if target in ("node", "jre") and m.group(2) else "latest"
    debug = "debug" in (base.tag or "")
    notes = ["gcr.io/distroless image: Chainguard images run as nonroot by default"] if "nonroot" in (
        base.tag or "") else []
    if debug:
        notes.append("distroless :debug image (busybox shell): mapped to the -dev variant")
    return ImageChoice(name=target, tag=tag, kind="distroless", debug=debug, notes=tuple(notes))


def _is_distro(base: BaseImage) -> bool:
    last = (base.name or "").rsplit("/", 1)[-1]
    domain = (base.repository or "").split("/", 1)[0]
    return domain in DISTRO_REGISTRIES and (last in DISTRO_NAMES or _UBI.match(last) is not None)


def map_base(base: BaseImage, options: MigrationOptions) -> ImageChoice | Unmapped:
    """The Chainguard image for a FROM that names an image (not scratch, not a stage)."""
    if base.resolved is None or base.repository is None:
        missing = ", ".join(base.unresolved_args) or "?"
        return Unmapped(f"the image depends on ARG {missing} with no default" if base.unresolved_args
                        else f"invalid image reference {base.raw!r}")
    value = _user_key(base, options)
    if value is not None:
        return _user_choice(base, value)
    repository = base.repository
    if repository.startswith(f"{options.registry}/") or repository.startswith("cgr.dev/"):
        name = repository.rsplit("/", 1)[-1]
        return ImageChoice(name=repository if repository.split("/")[1] != options.org else name,
                           tag=(base.tag or "latest").removesuffix("-dev"), kind="chainguard")
    if repository.startswith("gcr.io/distroless/"):
        return _distroless(base)
    short = repository.removeprefix("docker.io/library/")
    if short in LANGUAGE_SOURCES:
        name = LANGUAGE_SOURCES[short]
        if name == "php" and "apache" in (base.tag or ""):
            return Unmapped(f"{base.raw} bundles Apache httpd with mod_php; Chainguard's php image has no Apache "
                            "(use php-fpm behind nginx, or map it in the mapping file's images:)")
        tag, notes = _tag_from(base.tag, name in JAVA)
        if name == "nginx":
            notes.append("Chainguard nginx runs as nonroot (its default server listens on 8080): a config that "
                         "listens on 80 needs Docker's default unprivileged-port sysctl (not given on Kubernetes)")
        if name in JAVA and "jre" in (base.tag or ""):
            name = "jre"
        return ImageChoice(name=name, tag=tag, kind="language", notes=tuple(notes))
    if _is_distro(base):
        return ImageChoice(name="wolfi-base", tag="latest", kind="distro",
                           notes=(f"distro base {base.normalized}: its version is not kept",))
    return _known(base, repository, short) or Unmapped(not_in_catalog(repository, short.removeprefix("docker.io/")))


def not_in_catalog(repository: str, short: str) -> str:
    return (f"{repository} is not in the known catalog (the public Chainguard catalog data and the shipped mappings); "
            f"Chainguard may still publish an equivalent: map it in a YAML mapping file (`images: {{{short}: "
            "<Chainguard image>}`) passed with --input mapping=FILE or kept as distroless-mapping.yaml in a "
            "PLANNER_TASK_CLASS_PATH directory")


def _known(base: BaseImage, repository: str, short: str) -> ImageChoice | None:
    """The shipped mapping (data/extra-images.yaml), else the catalog data's aliases, for an upstream image."""
    tag, notes = _tag_from(base.tag, False)
    keys = (short, repository.removeprefix("docker.io/"), repository)
    extra = next((found for k in keys if (found := shipped().get(k)) is not None), None)
    if extra is not None:
        paid = " — not in the public catalog: it needs a Chainguard subscription or a mirror in your registry" \
            if extra.catalog == "paid" else ""
        return ImageChoice(name=extra.image, tag=tag, kind="language",
                           notes=(f"shipped mapping: {extra.note}{paid}", *notes, *_tag_note(extra.image, tag)))
    name = next((alias for k in keys if (alias := aliases().get(k)) is not None), None)
    if name is None:
        return None
    return ImageChoice(name=name, tag=tag, kind="language",
                       notes=(f"the Chainguard catalog lists {name} as the equivalent of {short}", *notes,
                              *_tag_note(name, tag)))


def _tag_note(name: str, tag: str) -> tuple[str, ...]:
    """Say so when the public catalog data does not list the tag written (versioned tags may need a subscription)."""
    found = image(name)
    if found is None or tag in found.tags:
        return ()
    return (f"tag {tag} is not among the public catalog data's tags for {name} ({', '.join(found.tags[:4])}): "
            "check it exists in your registry, or pin one that does",)


def without_digest(base: BaseImage) -> BaseImage | None:
    """The FROM without an invalid digest (`@sha256:abc`, wrong length or not hex), when that is all that was
    wrong with it; None otherwise. The digest pinned the old image anyway, so dropping it loses nothing."""
    if base.resolved is None or "@" not in base.resolved:
        return None
    problem = parse_reference(base.resolved)
    if not isinstance(problem, str) or not problem.startswith("invalid digest"):
        return None
    resolved = base.resolved.partition("@")[0]
    ref = parse_reference(resolved)
    if not isinstance(ref, ImageRef):
        return None
    return base.model_copy(update={"resolved": resolved, "registry": ref.registry, "name": ref.name, "tag": ref.tag,
                                   "digest": None, "repository": ref.repository, "normalized": ref.normalized})


def java_for(choice: ImageChoice, builds: bool) -> ImageChoice:
    """jdk where something is built, jre for a runtime (only for the built-in Java mapping)."""
    if choice.kind in ("language", "distroless") and choice.name in JAVA:
        return choice.named("jdk" if builds else "jre")
    return choice


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "refresh":
        sys.exit("usage: python -m subgraphs.distroless_migration.images refresh PATH/images.json")
    print(f"{CATALOG_PATH}: {refresh(Path(sys.argv[2]))} images")
