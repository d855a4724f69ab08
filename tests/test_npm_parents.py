"""A transitive npm package whose parent's range excludes the fix: the run names the parent and the override,
never `npm update X` (which exits 0 and leaves the vulnerable version). The npm range reading is held to
node's own `semver` package (the one npm bundles), one node process answering every generated case."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from subgraphs.vulnerability_remediation.npm_parents import blocking, reaches, requirements, satisfies
from tests import datapaths

NPM_ADVISORIES = datapaths.SHARED / "advisories" / "npm"

# --- node's semver as the oracle --------------------------------------------------------------------------------------

_ORACLE = r"""
const path = require('path');
const roots = [path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'semver'),
               '/usr/lib/node_modules/npm/node_modules/semver', '/usr/local/lib/node_modules/npm/node_modules/semver'];
let semver = null;
for (const r of roots) { try { semver = require(r); break; } catch (e) {} }
if (!semver) { process.stdout.write('missing\n'); process.exit(0); }
process.stdout.write('ready\n');
require('readline').createInterface({input: process.stdin}).on('line', (line) => {
  const [range, version] = JSON.parse(line);
  const valid = semver.validRange(range) !== null && semver.valid(version) !== null;
  process.stdout.write(JSON.stringify(valid ? semver.satisfies(version, range) : null) + '\n');
});
"""


@pytest.fixture(scope="module")
def node_semver() -> Iterator[Callable[[str, str], bool | None]]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    proc = subprocess.Popen(["node", "-e", _ORACLE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        proc.kill()
        pytest.skip("node's semver package (bundled with npm) is not installed")

    def ask(spec: str, version: str) -> bool | None:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps([spec, version]) + "\n")
        proc.stdin.flush()
        answer: bool | None = json.loads(proc.stdout.readline())
        return answer

    yield ask
    proc.stdin.close()
    proc.wait(timeout=10)


_NUM = st.integers(0, 3).map(str)
_PRE = st.sampled_from(["", "", "", "-0", "-alpha", "-beta.2", "-rc.1"])
_VERSION = st.builds(lambda a, b, c, pre: f"{a}.{b}.{c}{pre}", _NUM, _NUM, _NUM, _PRE)
_PARTIAL = st.one_of(
    _VERSION,
    st.builds(lambda a, b: f"{a}.{b}", _NUM, _NUM),
    _NUM,
    st.builds(lambda a, x: f"{a}.{x}", _NUM, st.sampled_from(["x", "*", "X"])),
    st.builds(lambda a, b, x: f"{a}.{b}.{x}", _NUM, _NUM, st.sampled_from(["x", "*"])),
)
_OP = st.sampled_from(["", "=", "^", "~", ">", ">=", "<", "<=", "v", ">= "])
_COMPARATOR = st.builds(lambda op, v: op + v, _OP, _PARTIAL)
_SET = st.one_of(
    st.lists(_COMPARATOR, min_size=1, max_size=3).map(" ".join),
    st.builds(lambda a, b: f"{a} - {b}", _PARTIAL, _PARTIAL),
    st.sampled_from(["*", "", "x"]),
)
_RANGE = st.lists(_SET, min_size=1, max_size=3).map(" || ".join)


@settings(max_examples=1500, deadline=None)
@given(spec=_RANGE, version=_VERSION)
def test_satisfies_agrees_with_node_semver(node_semver: Callable[[str, str], bool | None], spec: str,
                                           version: str) -> None:
    ours = satisfies(spec, version)
    if ours is not None:  # a range this module cannot read is never claimed to block (see `reaches`)
        assert ours == node_semver(spec, version), (spec, version)


@pytest.mark.parametrize(("spec", "version"), [
    ("^0.4.1", "0.5.1"), ("~0.4.0", "0.5.1"), ("^0.4.1", "0.4.9"), ("1.x || >=2.5.0", "2.6.0"), (">1.2", "1.2.5"),
    ("<=1.2", "1.2.9"), ("^1.2.3-alpha", "1.2.3-beta"), ("1.2.3 - 2.3", "2.3.9"), ("*", "1.0.0-rc1"),
    ("^1.2.3-alpha", "1.2.4-beta"), (">=1.0.0 <2.0.0", "2.0.0-0"),
])
def test_known_cases(node_semver: Callable[[str, str], bool | None], spec: str, version: str) -> None:
    assert satisfies(spec, version) == node_semver(spec, version)


def test_reaches_means_some_version_at_or_above_the_fix() -> None:
    assert not reaches("^0.4.1", "0.5.1") and not reaches("~0.4.0", "0.5.1")
    assert reaches("^0.5.0", "0.5.1") and reaches("^0.6.0", "0.5.1") and reaches("0.4.x || ^0.6.0", "0.5.1")
    assert reaches("not a range", "0.5.1")  # unreadable: nothing claimed


# --- parents' ranges in each lockfile format --------------------------------------------------------------------------


def _lock_v3(rc_requires: str) -> str:
    """The shape of a real tree's package-lock.json (lockfileVersion 3) with rc pulling deep-extend in."""
    return json.dumps({
        "name": "demo", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {
            "": {"name": "demo", "version": "1.0.0", "dependencies": {"rc": "^1.1.6"}},
            "node_modules/deep-extend": {
                "version": "0.4.2", "resolved": "https://registry.npmjs.org/deep-extend/-/deep-extend-0.4.2.tgz",
                "integrity": "sha1-SLaZwn4zS/ifEIkr5DL25MfTSn8=", "engines": {"iojs": ">=1.0.0", "node": ">=0.12.0"}},
            "node_modules/ini": {"version": "1.3.8", "resolved": "https://registry.npmjs.org/ini/-/ini-1.3.8.tgz"},
            "node_modules/minimist": {
                "version": "1.2.8", "resolved": "https://registry.npmjs.org/minimist/-/minimist-1.2.8.tgz"},
            "node_modules/rc": {
                "version": "1.2.1", "resolved": "https://registry.npmjs.org/rc/-/rc-1.2.1.tgz",
                "dependencies": {"deep-extend": rc_requires, "ini": "~1.3.0", "minimist": "^1.2.0",
                                 "strip-json-comments": "~2.0.1"},
                "bin": {"rc": "cli.js"}},
            "node_modules/strip-json-comments": {
                "version": "2.0.1",
                "resolved": "https://registry.npmjs.org/strip-json-comments/-/strip-json-comments-2.0.1.tgz"},
        },
    }, indent=2) + "\n"


LOCK_V1 = json.dumps({
    "name": "demo", "version": "1.0.0", "lockfileVersion": 1, "requires": True,
    "dependencies": {
        "deep-extend": {"version": "0.4.2", "resolved": "https://registry.npmjs.org/deep-extend/-/deep-extend-0.4.2.tgz"},
        "rc": {"version": "1.1.7", "resolved": "https://registry.npmjs.org/rc/-/rc-1.1.7.tgz",
               "requires": {"deep-extend": "~0.4.0", "ini": "~1.3.0"}},
    },
}, indent=2)

YARN_CLASSIC = """\
# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.
# yarn lockfile v1


deep-extend@~0.4.0:
  version "0.4.2"
  resolved "https://registry.yarnpkg.com/deep-extend/-/deep-extend-0.4.2.tgz#48b699c27e334bf89f10892be432f6e4c7d34a7f"

rc@^1.1.7:
  version "1.1.7"
  resolved "https://registry.yarnpkg.com/rc/-/rc-1.1.7.tgz#c5ea564bb07aff9fd3a5b32e906c1d3a65940fea"
  dependencies:
    deep-extend "~0.4.0"
    ini "~1.3.0"
"""

YARN_BERRY = """\
__metadata:
  version: 6
  cacheKey: 8

"deep-extend@npm:^0.4.1":
  version: 0.4.2
  resolution: "deep-extend@npm:0.4.2"
  languageName: node
  linkType: hard

"demo@workspace:.":
  version: 0.0.0-use.local
  resolution: "demo@workspace:."
  dependencies:
    rc: ^1.2.1
  languageName: unknown
  linkType: soft

"rc@npm:^1.2.1":
  version: 1.2.1
  resolution: "rc@npm:1.2.1"
  dependencies:
    deep-extend: ^0.4.1
  languageName: node
  linkType: hard
"""


def test_parents_ranges_in_each_format() -> None:
    v3 = [(r.parent, r.version, r.spec) for r in requirements("package-lock.json", _lock_v3("^0.4.1"), "deep-extend")]
    assert v3 == [("rc", "1.2.1", "^0.4.1")]
    v1 = [(r.parent, r.version, r.spec) for r in requirements("npm-shrinkwrap.json", LOCK_V1, "deep-extend")]
    assert v1 == [("rc", "1.1.7", "~0.4.0")]
    classic = [(r.parent, r.version, r.spec) for r in requirements("yarn.lock", YARN_CLASSIC, "deep-extend")]
    assert classic == [("rc", "1.1.7", "~0.4.0")]
    berry = [(r.parent, r.version, r.spec) for r in requirements("yarn.lock", YARN_BERRY, "deep-extend")]
    assert berry == [("rc", "1.2.1", "^0.4.1")]
    assert blocking("package-lock.json", _lock_v3("^0.5.0"), "deep-extend", "0.5.1") == []
    assert requirements("pnpm-lock.yaml", "lockfileVersion: '6.0'\n", "deep-extend") == []


# --- the real CLI on a real advisory ----------------------------------------------------------------------------------

PACKAGE_JSON = '{\n  "name": "demo",\n  "version": "1.0.0",\n  "dependencies": {\n    "rc": "^1.1.6"\n  }\n}\n'
needs_advisories = pytest.mark.skipif(not (NPM_ADVISORIES / "NSWG-ECO-408.json").is_file(),
                                      reason=f"npm advisory snapshot absent at {NPM_ADVISORIES}")


def _dispatch(repo: Path) -> tuple[dict[str, object], str]:
    done = run_cli("dispatch", "vulnerability-remediation", "--repo", str(repo), "--advisories", str(NPM_ADVISORIES),
                   "--input", "package=deep-extend", "--json")
    result = json.loads(done.stdout)
    return result, Path(result["report_path"]).read_text()


@needs_advisories
def test_blocking_parent_gets_an_override_not_npm_update(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": _lock_v3("^0.4.1")})
    result, report = _dispatch(repo)
    everything = json.dumps(result) + report
    assert "npm update" not in everything
    assert result["status"] == "needs_regeneration"
    assert '+  "overrides": {\n+    "rc": {\n+      "deep-extend": "0.5.1"\n+    }\n+  },' in str(result["patch"])
    assert "rc 1.2.1 requires `deep-extend ^0.4.1`, which excludes 0.5.1" in report
    assert "upgrading rc to a release whose requirement allows deep-extend 0.5.1" in report
    assert "Run `npm install --package-lock-only` at the repository root" in report
    patched = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=str(result["patch"]), text=True)
    assert patched.returncode == 0


@needs_advisories
def test_blocking_parent_with_overrides_already_is_named_for_a_human(home: Path,
                                                                     make_repo: Callable[..., Path]) -> None:
    manifest = PACKAGE_JSON.replace('"version": "1.0.0",', '"version": "1.0.0",\n  "overrides": {"ini": "1.3.8"},')
    repo = make_repo({"package.json": manifest, "package-lock.json": _lock_v3("^0.4.1")})
    result, report = _dispatch(repo)
    assert "npm update" not in json.dumps(result) + report
    assert result["status"] == "blocked" and not result["patch"]
    assert ('rc 1.2.1 requires `deep-extend ^0.4.1`, which excludes 0.5.1, so no update of deep-extend alone can '
            "reach it. Upgrade rc to a release") in report
    assert '`{"overrides": {"rc": {"deep-extend": "0.5.1"}}}`' in report


@needs_advisories
def test_a_parent_range_that_allows_the_fix_keeps_npm_update(home: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": _lock_v3("^0.5.0")})
    result, report = _dispatch(repo)
    assert "`npm update deep-extend --package-lock-only`" in report and not result["patch"]


# --- the plan, for the other lockfile shapes --------------------------------------------------------------------------


def test_yarn_classic_gets_a_scoped_resolution(make_repo: Callable[..., Path]) -> None:
    from test_remediation_edits import plan_for

    manifest = PACKAGE_JSON.replace('"rc": "^1.1.6"', '"rc": "^1.1.7"')
    plan, after = plan_for(make_repo({"package.json": manifest, "yarn.lock": YARN_CLASSIC}), "npm", "deep-extend",
                           "0.5.1")
    assert json.loads(after["package.json"])["resolutions"] == {"rc/deep-extend": "0.5.1"}
    assert [(a.file, a.command) for a in plan.regenerate] == [("yarn.lock", "yarn install --ignore-scripts")]
    assert plan.skipped == [] and not any("yarn upgrade" in n for n in plan.notes)


def test_lockfile_v1_without_a_package_json_line_to_anchor_names_the_parent(make_repo: Callable[..., Path]) -> None:
    from test_remediation_edits import plan_for

    manifest = '{"name": "demo", "version": "1.0.0", "dependencies": {"rc": "^1.1.7"}}\n'  # one line: no anchor
    plan, after = plan_for(make_repo({"package.json": manifest, "npm-shrinkwrap.json": LOCK_V1}), "npm",
                           "deep-extend", "0.5.1")
    assert after == {} and plan.regenerate == []
    [skipped] = plan.skipped
    assert "rc 1.1.7 requires `deep-extend ~0.4.0`, which excludes 0.5.1" in skipped
    assert '`{"overrides": {"rc": {"deep-extend": "0.5.1"}}}`' in skipped and "npm update" not in skipped
