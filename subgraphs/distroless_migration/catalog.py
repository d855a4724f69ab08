"""Facts about Chainguard images, from data: `data/chainguard-images.json` (issue 29 §3).

The vendored file is extracted from the public catalog snapshot (`../shared/chainguard/images.json`, from
chainguard-images/images at cd7edd236bf1, Apache-2.0): per image its reference, tier, upstream aliases
and, per variant lock, the default and `-dev` image's entrypoint, cmd, user, work dir and installed Wolfi
packages. The migration asks it, instead of assuming, whether an image runs as root, what its ENTRYPOINT
is, and whether it already has tzdata, ca-certificates or a shell. It is read once per process.

An image missing here is "not in the known catalog": the paid catalog is larger (see
`data/extra-images.yaml` and the user mapping file). Refresh: `python -m subgraphs.distroless_migration.catalog
refresh PATH/images.json`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from subgraphs.distroless_migration.wolfi_index import DATA

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


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "refresh":
        sys.exit("usage: python -m subgraphs.distroless_migration.catalog refresh PATH/images.json")
    print(f"{CATALOG_PATH}: {refresh(Path(sys.argv[2]))} images")
