"""go.mod require/replace/exclude/indirect and go.sum confirmation."""

from __future__ import annotations

from pathlib import Path

from repocontext.deps.common import Parsed
from repocontext.deps.gomod import directives, gosum_versions, parse_gomod

GOMOD = """\
module example.com/app

go 1.21

toolchain go1.21.5

require github.com/pkg/errors v0.9.1

require (
	golang.org/x/net v0.17.0
	golang.org/x/text v0.13.0 // indirect
	github.com/old/mod v1.0.0
	"example.com/local" v0.0.0-00010101000000-000000000000
	github.com/other/thing v1.1.0 // indirect; for tests
	github.com/pinned/only v2.0.0+incompatible
)

replace github.com/old/mod v1.0.0 => github.com/new/mod v1.2.0

replace (
	example.com/local => ../local
	github.com/pinned/only v1.0.0 => github.com/never/used v9.9.9
)

exclude golang.org/x/net v0.17.0

retract v0.1.0
"""

GOSUM = """\
github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5UwLGTwt4=
github.com/pkg/errors v0.9.1/go.mod h1:bwawxfHBFNV+L2hUp1rHADufV3IMtnDRdf1r5NINEl0=
golang.org/x/text v0.13.0/go.mod h1:TvPlkZtksWOMsz7fbANvkp4WM8x4tB+8NVNyW7+tdhY=
github.com/new/mod v1.2.0 h1:abc=
github.com/unrelated/mod v3.0.0 h1:zzz=
not a go.sum line

"""


def _rows(parsed: Parsed) -> list[tuple]:
    return [(d.name, d.version, d.constraint, d.direct, d.path, d.dev, d.file, d.line, d.source, d.checksummed)
            for d in parsed.deps]


def test_require_replace_indirect_and_gosum(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text(GOMOD)
    (tmp_path / "go.sum").write_text(GOSUM)
    sums, sum_issues = gosum_versions((tmp_path / "go.sum").read_text(), "svc/go.sum")
    parsed = parse_gomod("svc/go.mod", (tmp_path / "go.mod").read_text(), sums)
    f = "svc/go.mod"
    assert _rows(parsed) == [
        ("github.com/pkg/errors", "v0.9.1", "v0.9.1", True, [], False, f, 7, None, True),
        ("golang.org/x/net", "v0.17.0", "v0.17.0", True, [], False, f, 10, None, False),
        ("golang.org/x/text", "v0.13.0", "v0.13.0", False, [], False, f, 11, None, True),
        ("github.com/old/mod", "v1.2.0", "v1.0.0", True, [], False, f, 12, "github.com/new/mod@v1.2.0", True),
        ("example.com/local", None, "v0.0.0-00010101000000-000000000000", True, [], False, f, 13, "../local", None),
        ("github.com/other/thing", "v1.1.0", "v1.1.0", False, [], False, f, 14, None, False),
        # the replace names another version, so it does not apply
        ("github.com/pinned/only", "v2.0.0+incompatible", "v2.0.0+incompatible", True, [], False, f, 15, None, False),
    ]
    # go.sum never adds records of its own
    assert "github.com/unrelated/mod" not in {d.name for d in parsed.deps}
    assert {d.ecosystem for d in parsed.deps} == {"Go"}
    assert [(i.file, i.line, i.level) for i in sum_issues] == [("svc/go.sum", 6, "warning")]
    assert [(i.line, i.level, i.message) for i in parsed.issues] == [
        (10, "info", "required golang.org/x/net v0.17.0 is excluded by an exclude directive")]


def test_without_gosum_checksummed_is_unknown_and_bad_lines_are_reported() -> None:
    text = "module m\n\nrequire (\n\tgood/mod v1.0.0\n\tbroken\n)\nreplace a =>\nfrobnicate x\n"
    parsed = parse_gomod("go.mod", text, None)
    assert _rows(parsed) == [("good/mod", "v1.0.0", "v1.0.0", True, [], False, "go.mod", 4, None, None)]
    assert [(i.line, i.level, i.message) for i in parsed.issues] == [
        (8, "info", "unknown go.mod directive 'frobnicate'"),
        (7, "warning", "malformed replace: a =>"),
        (5, "warning", "malformed require: broken"),
    ]


def test_directives_flatten_blocks() -> None:
    found = directives('require (\n  a v1 // indirect\n)\ngo 1.22 // comment\n')
    assert [(d.verb, d.args, d.comment, d.line) for d in found] == [
        ("require", ["a", "v1"], "indirect", 2), ("go", ["1.22"], "comment", 4)]
