"""go.sum as the build list of a go.mod before Go 1.17 (repocontext/deps/gosum.py), through the probe."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from repocontext.deps.gosum import build_list, go_version

# sirupsen/logrus 1.9.0's go.mod and go.sum, as released (go 1.13: testify brings in yaml.v3, named only in go.sum)
LOGRUS_MOD = """\
module github.com/sirupsen/logrus

require (
\tgithub.com/davecgh/go-spew v1.1.1 // indirect
\tgithub.com/stretchr/testify v1.7.0
\tgolang.org/x/sys v0.0.0-20220715151400-c0bba94af5f8
)

go 1.13
"""
LOGRUS_SUM = """\
github.com/davecgh/go-spew v1.1.0/go.mod h1:J7Y8YcW2NihsgmVo/mv3lAwl/skON4iLHjSsI+c5H38=
github.com/davecgh/go-spew v1.1.1 h1:vj9j/u1bqnvCEfJOwUhtlOARqs3+rkHYY13jYWTU97c=
github.com/davecgh/go-spew v1.1.1/go.mod h1:J7Y8YcW2NihsgmVo/mv3lAwl/skON4iLHjSsI+c5H38=
github.com/pmezard/go-difflib v1.0.0 h1:4DBwDE0NGyQoBHbLQYPwSUPoCMWR5BEzIk/f1lZbAQM=
github.com/pmezard/go-difflib v1.0.0/go.mod h1:iKH77koFhYxTK1pcRnkKkqfTogsbg7gZNVY4sRDYZ/4=
github.com/stretchr/objx v0.1.0/go.mod h1:HFkY916IF+rwdDfMAkV7OtwuqBVzrE8GR6GFx+wExME=
github.com/stretchr/testify v1.7.0 h1:nwc3DEeHmmLAfoZucVR881uASk0Mfjw8xYJ99tb5CcY=
github.com/stretchr/testify v1.7.0/go.mod h1:6Fq8oRcR53rry900zMqJjRRixrwX3KX962/h/Wwjteg=
golang.org/x/sys v0.0.0-20220715151400-c0bba94af5f8 h1:0A+M6Uqn+Eje4kHMK80dtF3JCXC4ykBgQG4Fe06QRhQ=
golang.org/x/sys v0.0.0-20220715151400-c0bba94af5f8/go.mod h1:oPkhp1MJrh7nUepCBck5+mAzfO9JrbApNNgaTdGDITg=
gopkg.in/check.v1 v0.0.0-20161208181325-20d25e280405/go.mod h1:Co6ibVJAznAaIkqp8huTwlJQCZ016jof/cbN4VW5Yz0=
gopkg.in/yaml.v3 v3.0.0-20200313102051-9f266ea9e77c h1:dUUwHk2QECo/6vqA44rthZ8ie2QXMNeKRTHCNY2nXvo=
gopkg.in/yaml.v3 v3.0.0-20200313102051-9f266ea9e77c/go.mod h1:K4uyk7z7BCEPqu6E+C64Yfv1cQ7kz7rIZviUmN+EgEM=
"""


def test_a_go113_module_gets_what_only_go_sum_names() -> None:
    records = {d.name: d for d in build_list("go.sum", LOGRUS_SUM, LOGRUS_MOD)}
    assert set(records) == {"github.com/pmezard/go-difflib", "gopkg.in/yaml.v3"}  # not go.mod's, not /go.mod-only
    yaml = records["gopkg.in/yaml.v3"]
    assert (yaml.version, yaml.line, yaml.direct, yaml.kind, yaml.section) == (
        "v3.0.0-20200313102051-9f266ea9e77c", 12, False, "lockfile", "go.sum")


def test_go117_and_later_list_the_whole_build_themselves() -> None:
    assert build_list("go.sum", LOGRUS_SUM, LOGRUS_MOD.replace("go 1.13", "go 1.17")) == []
    assert build_list("go.sum", LOGRUS_SUM, LOGRUS_MOD.replace("go 1.13", "go 1.21.5")) == []
    assert len(build_list("go.sum", LOGRUS_SUM, LOGRUS_MOD.replace("go 1.13\n", ""))) == 2  # no go line: 1.16
    assert go_version("go 1.9\n") == (1, 9) and go_version("module x\n") is None
    assert go_version("go 1.21rc1\n") == (1, 21) and go_version("go 1.22.0\n") == (1, 22)


def test_the_highest_downloaded_version_is_the_one_built_and_replaced_modules_are_left_out() -> None:
    text = ("example.com/a v1.2.0 h1:x=\nexample.com/a v1.10.0 h1:y=\nexample.com/a v1.11.0/go.mod h1:z=\n"
            "example.com/b v0.1.0 h1:w=\n")
    chosen = {d.name: d.version for d in build_list("sub/go.sum", text, "module m\n\ngo 1.14\n")}
    assert chosen == {"example.com/a": "v1.10.0", "example.com/b": "v0.1.0"}
    replaced = "module m\n\ngo 1.14\n\nreplace example.com/b => ../b\n"
    assert [d.name for d in build_list("go.sum", text, replaced)] == ["example.com/a"]


def test_the_dependencies_probe_records_them(make_repo: Callable[..., Path], home: Path) -> None:
    from planner import service
    from planner.config import Settings

    repo = make_repo({"go.mod": LOGRUS_MOD, "go.sum": LOGRUS_SUM, "logrus.go": "package logrus\n"})
    context = service.gather_repo(Settings.from_env(), repo, warm=False)[0]
    records = [d for d in context.dependencies["gopkg.in/yaml.v3"]]
    assert [(d.file, d.line, d.section) for d in records] == [("go.sum", 12, "go.sum")]
    assert [d.file for d in context.dependencies["github.com/stretchr/testify"]] == ["go.mod"]
