"""plan_upgrade on package.json (+ package-lock.json) and go.mod (+ go.sum)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_remediation_edits import plan_for, write_back

PACKAGE_JSON = """{
    "name": "web",
    "version": "1.0.0",
    "dependencies": {
        "lodash":"4.17.20",
        "mkdirp": "^0.5.1",
        "chalk": "*",
        "debug": "x",
        "left-pad": "latest"
    },
    "devDependencies": {
        "jest" :  "^29.0.0"
    },
    "optionalDependencies": {"fsevents": "~2.3.2"},
    "peerDependencies": {
        "react": ">=16 <18"
    }
}
"""

PACKAGE_LOCK = """{
  "name": "web",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "web",
      "version": "1.0.0",
      "dependencies": {"lodash": "4.17.20", "mkdirp": "^0.5.1", "chalk": "*", "debug": "x"}
    },
    "node_modules/lodash": {
      "version": "4.17.20",
      "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.20.tgz",
      "integrity": "sha512-PlhdFcillOINfeV7Ni6oF1TAEayyZBoZ8bcshTHqOYJYlrqzRK5hagpagky5o4HfCzzd1TRkXPMFq6cKk9rGmA=="
    },
    "node_modules/mkdirp": {
      "version": "0.5.5",
      "resolved": "https://registry.npmjs.org/mkdirp/-/mkdirp-0.5.5.tgz",
      "integrity": "sha512-NKmAlESf6jMGym1++R0Ra7wvhV+wFW63FaSOFPwRahvea0gMUcGUhVeAg/0BC0wiv9ih5NYPB1Wn1UEI1/L+xQ==",
      "dependencies": {"minimist": "^1.2.5"}
    },
    "node_modules/minimist": {
      "version": "1.2.5",
      "resolved": "https://registry.npmjs.org/minimist/-/minimist-1.2.5.tgz",
      "integrity": "sha512-FM9nNUYrRBAELZQT3xeZQ7fmMOBg6nWNmJKTcgsJeaLstP/UODVpGsr5OhXhhXg6f+qtJ8uiZ+PUxkDWcgIXLw=="
    },
    "node_modules/chalk": {"version": "4.1.0"},
    "node_modules/debug": {"version": "4.3.4"}
  }
}
"""


@pytest.mark.parametrize(("package", "target", "old", "new"), [
    ("lodash", "4.17.21", '"lodash":"4.17.20"', '"lodash":"4.17.21"'),
    ("jest", "29.7.0", '"jest" :  "^29.0.0"', '"jest" :  "^29.7.0"'),
    ("fsevents", "2.3.3", '"fsevents": "~2.3.2"', '"fsevents": "~2.3.3"'),
    ("react", "18.2.0", '"react": ">=16 <18"', '"react": ">=18.2.0 <19"'),
    ("mkdirp", "v1.0.4", '"mkdirp": "^0.5.1"', '"mkdirp": "^1.0.4"'),
])
def test_package_json_ranges_keep_formatting(make_repo: Callable[..., Path], package: str, target: str, old: str,
                                             new: str) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": PACKAGE_LOCK})
    plan, after = plan_for(repo, "npm", package, target)
    assert after == {"package.json": PACKAGE_JSON.replace(old, new)}
    assert [(e.old, e.new) for e in plan.edits] == [(old, new)]
    assert [(a.file, a.cwd, a.command) for a in plan.regenerate] == [
        ("package-lock.json", ".", "npm install --package-lock-only")]
    assert any(n.startswith("package-lock.json must be regenerated: the manifest it locks was edited")
               for n in plan.notes)


def test_package_json_crlf_and_tabs_are_kept(make_repo: Callable[..., Path]) -> None:
    text = '{\r\n\t"dependencies": {\r\n\t\t"lodash": "4.17.20"\r\n\t}\r\n}\r\n'
    repo = make_repo({"package.json": text.encode()})
    _, after = plan_for(repo, "npm", "lodash", "4.17.21")
    assert after["package.json"].encode() == text.replace("4.17.20", "4.17.21").encode()


@pytest.mark.parametrize(("package", "spec"), [("chalk", "*"), ("debug", "x")])
def test_any_version_ranges_are_left_alone(make_repo: Callable[..., Path], package: str, spec: str) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": PACKAGE_LOCK})
    plan, after = plan_for(repo, "npm", package, "5.0.0")
    assert after == {} and plan.skipped == []
    assert "sets no lower bound and already allows 5.0.0; left as written" in plan.notes[0]
    assert [a.command for a in plan.regenerate] == [f"npm update {package} --package-lock-only"]


def test_dist_tag_is_left_alone(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON})
    plan, after = plan_for(repo, "npm", "left-pad", "1.3.0")
    assert after == {} and plan.regenerate == []
    assert plan.notes == ["package.json:9: `latest` is a dist-tag, which npm resolves to the newest release it points "
                          "at; left as written (the lockfile decides the installed version); no edit"]


def test_transitive_npm_package_is_skipped_with_override_hint(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"package.json": PACKAGE_JSON, "package-lock.json": PACKAGE_LOCK})
    plan, after = plan_for(repo, "npm", "minimist", "1.2.6")
    assert after == {}
    assert plan.skipped == [
        "package-lock.json:23: minimist 1.2.5 is a transitive dependency only (via mkdirp → minimist); no manifest "
        "declares it, so there is no manifest line to edit. `npm update minimist` moves it within its dependents' "
        'ranges; if they cap it below 1.2.6, add `"overrides": {"minimist": "^1.2.6"}` to package.json (npm 8.3 or '
        "later), or upgrade mkdirp"]
    assert [(a.file, a.command) for a in plan.regenerate] == [
        ("package-lock.json", "npm update minimist --package-lock-only")]


def test_npm_workspace_member_uses_the_root_lock(make_repo: Callable[..., Path]) -> None:
    member = '{\n  "name": "a",\n  "dependencies": {\n    "lodash": "^4.17.20"\n  }\n}\n'
    repo = make_repo({"package.json": '{"name": "root", "workspaces": ["packages/*"]}\n',
                      "packages/a/package.json": member, "yarn.lock": "# yarn lockfile v1\n\n"})
    plan, after = plan_for(repo, "npm", "lodash", "4.17.21")
    assert after == {"packages/a/package.json": member.replace("^4.17.20", "^4.17.21")}
    assert [(a.file, a.cwd, a.command) for a in plan.regenerate] == [
        ("yarn.lock", ".", "yarn install --ignore-scripts")]


GO_MOD = """module example.com/svc

go 1.21

require github.com/gin-gonic/gin v1.9.0

require (
\tgolang.org/x/net v0.7.0 // indirect
\tgolang.org/x/text v0.3.7 // indirect
\tgithub.com/pkg/errors v0.9.1
\tgopkg.in/yaml.v3 v3.0.0
\tgithub.com/sirupsen/logrus v1.8.1
)

replace golang.org/x/text => golang.org/x/text v0.3.8

replace (
\tgithub.com/pkg/errors => ../errors
\tgithub.com/sirupsen/logrus v1.8.1 => github.com/example/logrus v1.8.2
)
"""

GO_SUM = "github.com/gin-gonic/gin v1.9.0 h1:OjyFBKICoexlu99ctXNR2gg+c5pKrKMuyjgARg9qeY8=\n"


@pytest.mark.parametrize(("package", "target", "old", "new", "command"), [
    ("github.com/gin-gonic/gin", "1.9.1", "github.com/gin-gonic/gin v1.9.0", "github.com/gin-gonic/gin v1.9.1",
     "go get github.com/gin-gonic/gin@v1.9.1 && go mod tidy"),
    ("golang.org/x/net", "v0.17.0", "golang.org/x/net v0.7.0", "golang.org/x/net v0.17.0",
     "go get golang.org/x/net@v0.17.0 && go mod tidy"),
    ("gopkg.in/yaml.v3", "3.0.1", "gopkg.in/yaml.v3 v3.0.0", "gopkg.in/yaml.v3 v3.0.1",
     "go get gopkg.in/yaml.v3@v3.0.1 && go mod tidy"),
    ("golang.org/x/text", "0.14.0", "=> golang.org/x/text v0.3.8", "=> golang.org/x/text v0.14.0", "go mod tidy"),
])
def test_go_mod_versions(make_repo: Callable[..., Path], package: str, target: str, old: str, new: str,
                         command: str) -> None:
    repo = make_repo({"go.mod": GO_MOD, "go.sum": GO_SUM})
    plan, after = plan_for(repo, "Go", package, target)
    assert plan.target == "v" + target.removeprefix("v")
    assert after == {"go.mod": GO_MOD.replace(old, new)}
    assert [(e.old, e.new) for e in plan.edits] == [(old, new)]
    assert [(a.file, a.cwd, a.command) for a in plan.regenerate] == [("go.sum", ".", command)]
    assert plan.skipped == []


def test_go_indirect_comment_is_kept(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"go.mod": GO_MOD})
    plan, after = plan_for(repo, "Go", "golang.org/x/net", "0.17.0")
    assert "\tgolang.org/x/net v0.17.0 // indirect\n" in after["go.mod"]
    assert "the `// indirect` comment is kept" in plan.edits[0].reason


def test_go_replace_target_is_edited_and_said(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"go.mod": GO_MOD})
    plan, after = plan_for(repo, "Go", "golang.org/x/text", "0.14.0")
    assert "\tgolang.org/x/text v0.3.7 // indirect\n" in after["go.mod"]  # the require line stays
    assert plan.edits[0].line == 15
    assert plan.notes[0] == ("go.mod:9: golang.org/x/text is pinned by a replace directive on line 15, which decides "
                             "the version built; the replace target is edited, the require line is left as it is")
    fixed, _ = plan_for(repo, "Go", "golang.org/x/text", "0.3.8")  # the replacement already has the fix
    assert fixed.edits == [] and fixed.regenerate == []
    assert fixed.notes[-1] == "go.mod:9: replace target golang.org/x/text v0.3.8 is already v0.3.8 or later; no edit"


@pytest.mark.parametrize(("package", "target", "why"), [
    ("github.com/pkg/errors", "0.9.2", "is replaced by the local directory ../errors"),
    ("github.com/sirupsen/logrus", "1.9.3", "is replaced by github.com/example/logrus v1.8.2"),
    ("github.com/gin-gonic/gin", "2.0.0", "Go needs a new module path"),
])
def test_go_declarations_that_cannot_be_edited(make_repo: Callable[..., Path], package: str, target: str,
                                               why: str) -> None:
    repo = make_repo({"go.mod": GO_MOD})
    plan, after = plan_for(repo, "Go", package, target)
    assert after == {} and plan.regenerate == []
    assert len(plan.skipped) == 1 and why in plan.skipped[0]


def test_go_edit_is_idempotent(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"go.mod": GO_MOD})
    _, after = plan_for(repo, "Go", "github.com/gin-gonic/gin", "1.9.1")
    write_back(repo, after)
    again, none = plan_for(repo, "Go", "github.com/gin-gonic/gin", "1.9.1")
    assert none == {} and again.regenerate == []
    assert again.notes == ["go.mod:5: require github.com/gin-gonic/gin v1.9.1 is already v1.9.1 or later; no edit"]


def test_nested_lock_copy_gets_a_note(make_repo: Callable[..., Path]) -> None:
    lock = ('{"lockfileVersion": 3, "packages": {\n'
            '"": {"dependencies": {"lodash": "^4.17.20", "mkdirp": "^0.5.1"}},\n'
            '"node_modules/lodash": {"version": "4.17.20", "integrity": "sha512-a"},\n'
            '"node_modules/mkdirp": {"version": "0.5.5", "dependencies": {"lodash": "~4.17.15"}},\n'
            '"node_modules/mkdirp/node_modules/lodash": {"version": "4.17.15", "integrity": "sha512-c"}\n}}\n')
    manifest = '{"dependencies": {"lodash": "^4.17.20", "mkdirp": "^0.5.1"}}\n'
    repo = make_repo({"package.json": manifest, "package-lock.json": lock})
    plan, after = plan_for(repo, "npm", "lodash", "4.17.21")
    assert after == {}  # `^4.17.20` allows 4.17.21 and the lock pins what is installed: left as written
    assert plan.regenerate[0].why.startswith("it locks lodash 4.17.15, 4.17.20"), plan.regenerate[0].why
    assert plan.notes[-1] == (
        "package-lock.json:5: another copy, lodash 4.17.15, comes in through mkdirp → lodash; regenerating may keep "
        "it if that chain caps it: `npm update lodash` moves it within its dependents' ranges; if they cap it below "
        '4.17.21, add `"overrides": {"lodash": "^4.17.21"}` to package.json (npm 8.3 or later), or upgrade mkdirp')
    assert plan.skipped == []
