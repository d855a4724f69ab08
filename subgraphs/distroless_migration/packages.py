"""Debian / RPM package names → Wolfi package names, and what each Wolfi package is for.

Names follow Wolfi (checked against its package definitions where unsure): Debian's
`libpq-dev` → `postgresql-dev`, `python3-dev` → `python-3-dev` (a virtual provided by
python-3.X-dev), `python3` → `python-3`, `pkg-config` → `pkgconf`. An empty list means
"not needed on Wolfi". Alpine (apk) names are kept as written: they are close to
Wolfi's but not always equal, which the report says.

Roles decide whether a final stage can drop its package manager: packages provided by
every Chainguard image, build-only packages (toolchains and headers), and -dev packages
whose shared library a native extension links, copied into the runtime from the builder.
"""

from __future__ import annotations

import re

DEBIAN: dict[str, list[str]] = {
    "build-essential": ["build-base"], "gcc": ["gcc"], "g++": ["gcc"], "make": ["make"], "cmake": ["cmake"],
    "autoconf": ["autoconf"], "automake": ["automake"], "libtool": ["libtool"], "pkg-config": ["pkgconf"],
    "pkgconf": ["pkgconf"], "git": ["git"], "curl": ["curl"], "wget": ["wget"], "ca-certificates": ["ca-certificates"],
    "gnupg": ["gnupg"], "gnupg2": ["gnupg"], "unzip": ["unzip"], "zip": ["zip"], "xz-utils": ["xz"],
    "bzip2": ["bzip2"], "patch": ["patch"], "openssl": ["openssl"], "libssl-dev": ["openssl-dev"],
    "libffi-dev": ["libffi-dev"], "zlib1g-dev": ["zlib-dev"], "libc6-dev": ["glibc-dev"],
    "libpq-dev": ["postgresql-dev"], "libpq5": ["libpq"], "libmariadb-dev": ["mariadb-dev"],
    "default-libmysqlclient-dev": ["mariadb-dev"], "libxml2-dev": ["libxml2-dev"], "libxslt1-dev": ["libxslt-dev"],
    "libjpeg-dev": ["libjpeg-turbo-dev"], "libjpeg62-turbo-dev": ["libjpeg-turbo-dev"],
    "libpng-dev": ["libpng-dev"], "libfreetype6-dev": ["freetype-dev"], "libbz2-dev": ["bzip2-dev"],
    "liblzma-dev": ["xz-dev"], "libreadline-dev": ["readline-dev"], "libsqlite3-dev": ["sqlite-dev"],
    "libncurses-dev": ["ncurses-dev"], "libncurses5-dev": ["ncurses-dev"], "libncursesw5-dev": ["ncurses-dev"],
    "libyaml-dev": ["yaml-dev"], "libcurl4-openssl-dev": ["curl-dev"], "libicu-dev": ["icu-dev"],
    "libkrb5-dev": ["krb5-dev"], "libldap2-dev": ["openldap-dev"], "libsasl2-dev": ["cyrus-sasl-dev"],
    "libgomp1": ["libgomp"], "libstdc++6": ["libstdc++"], "python3": ["python-3"], "python3-dev": ["python-3-dev"],
    "python3-pip": ["py3-pip"], "python3-venv": [], "python3-setuptools": ["py3-setuptools"],
    "python3-wheel": ["py3-wheel"], "python3-virtualenv": ["py3-virtualenv"], "nodejs": ["nodejs"], "npm": ["npm"],
    "golang": ["go"], "golang-go": ["go"], "tini": ["tini"], "dumb-init": ["dumb-init"], "bash": ["bash"],
    "jq": ["jq"], "procps": ["procps"], "less": ["less"], "vim": ["vim"], "nano": ["nano"],
    "netcat-openbsd": ["netcat-openbsd"], "netcat-traditional": ["netcat-openbsd"], "dnsutils": ["bind-tools"],
    "iputils-ping": ["iputils"], "locales": ["glibc-locales"], "tzdata": ["tzdata"], "gettext-base": ["gettext"],
    "openssh-client": ["openssh-client"], "rsync": ["rsync"], "ffmpeg": ["ffmpeg"], "imagemagick": ["imagemagick"],
    "software-properties-common": [], "apt-transport-https": [], "apt-utils": [], "lsb-release": [],
}
RPM: dict[str, list[str]] = {
    "gcc": ["gcc"], "gcc-c++": ["gcc"], "make": ["make"], "cmake": ["cmake"], "git": ["git"], "git-core": ["git"],
    "curl": ["curl"], "wget": ["wget"], "tar": ["tar"], "gzip": ["gzip"], "unzip": ["unzip"], "which": ["which"],
    "findutils": ["findutils"], "procps-ng": ["procps"], "shadow-utils": ["shadow"],
    "ca-certificates": ["ca-certificates"],
    "tzdata": ["tzdata"], "openssl": ["openssl"], "openssl-devel": ["openssl-dev"], "libffi-devel": ["libffi-dev"],
    "zlib-devel": ["zlib-dev"], "glibc-devel": ["glibc-dev"], "postgresql-devel": ["postgresql-dev"],
    "libpq-devel": ["postgresql-dev"], "libxml2-devel": ["libxml2-dev"], "libxslt-devel": ["libxslt-dev"],
    "libjpeg-turbo-devel": ["libjpeg-turbo-dev"], "bzip2-devel": ["bzip2-dev"], "xz-devel": ["xz-dev"],
    "readline-devel": ["readline-dev"], "sqlite-devel": ["sqlite-dev"], "ncurses-devel": ["ncurses-dev"],
    "krb5-devel": ["krb5-dev"], "libcurl-devel": ["curl-dev"], "python3": ["python-3"],
    "python3-devel": ["python-3-dev"], "python3-pip": ["py3-pip"], "nodejs": ["nodejs"], "npm": ["npm"],
    "golang": ["go"], "jq": ["jq"], "gettext": ["gettext"], "epel-release": [], "dnf-plugins-core": [],
    "yum-utils": [],
}
GROUPS: dict[str, list[str]] = {"development tools": ["build-base"], "@development-tools": ["build-base"]}
RPM_MANAGERS = frozenset({"yum", "dnf", "microdnf", "tdnf"})
APT_MANAGERS = frozenset({"apt-get", "apt"})

PROVIDED_EVERYWHERE = frozenset({"ca-certificates", "ca-certificates-bundle", "tzdata", "wolfi-baselayout"})
BUILD_ONLY = frozenset({
    "build-base", "gcc", "make", "cmake", "autoconf", "automake", "libtool", "pkgconf", "git", "curl", "wget",
    "gnupg", "unzip", "zip", "xz", "bzip2", "patch", "glibc-dev", "linux-headers", "python-3-dev", "py3-pip",
    "py3-setuptools", "py3-wheel", "py3-virtualenv", "openssl-dev", "zlib-dev", "libffi-dev", "npm", "go",
    "shadow", "bash", "busybox", "tar", "gzip", "which", "findutils",
})
RUNTIME_LIBS: dict[str, list[str]] = {  # -dev package → the shared libraries a build may link against
    "postgresql-dev": ["/usr/lib/libpq.so.*"], "libpq": ["/usr/lib/libpq.so.*"],
    "libxml2-dev": ["/usr/lib/libxml2.so.*"], "libxslt-dev": ["/usr/lib/libxslt.so.*", "/usr/lib/libexslt.so.*"],
    "libjpeg-turbo-dev": ["/usr/lib/libjpeg.so.*"], "mariadb-dev": ["/usr/lib/libmariadb.so.*"],
    "yaml-dev": ["/usr/lib/libyaml-0.so.*"],
}

# Packages that install a language runtime: a distro stage installing one moves to that language's image.
_RUNTIMES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"python3(?:\.(\d+))?(?:-(?:dev|devel|pip|venv|minimal|setuptools|wheel|distutils))?\Z"), "python"),
    (re.compile(r"python-3(?:\.(\d+))?\Z"), "python"),
    (re.compile(r"(?:nodejs|npm)\Z"), "node"),
    (re.compile(r"openjdk-(\d+)-(?:jdk|jre)(?:-headless)?\Z"), "jdk"),
    (re.compile(r"java-(\d+)-openjdk(?:-headless|-devel)?\Z"), "jdk"),
    (re.compile(r"(?:golang|golang-go)\Z"), "go"),
]


def wolfi_names(name: str, manager: str, overrides: dict[str, list[str]]) -> list[str] | None:
    """Wolfi names for a package of `manager`; None when no mapping is known (never guessed)."""
    if name in overrides:
        return list(overrides[name])
    if manager in APT_MANAGERS:
        return DEBIAN.get(name)
    if manager in RPM_MANAGERS:
        return RPM.get(name) or GROUPS.get(name.lower())
    return None


def runtime_of(name: str) -> tuple[str, str | None] | None:
    """(Chainguard image, version or None) when `name` installs a language runtime, else None."""
    for pattern, image in _RUNTIMES:
        m = pattern.match(name)
        if m:
            version = m.group(1) if m.groups() else None
            if image == "python" and version:
                version = f"3.{version}"
            return image, version
    return None


def role(wolfi: str, build_only: list[str]) -> str:
    """'provided' | 'build' | 'library' | 'runtime' for a Wolfi package installed in a final stage."""
    if wolfi in PROVIDED_EVERYWHERE:
        return "provided"
    if wolfi in BUILD_ONLY or wolfi in build_only:
        return "build"
    if wolfi in RUNTIME_LIBS:
        return "library"
    return "runtime"
