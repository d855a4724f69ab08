"""package.json: sections, exact pins, non-registry sources, malformed input."""

from __future__ import annotations

from pathlib import Path

from repocontext.deps.common import Parsed
from repocontext.deps.npm import npm_exact, npm_source, parse_package_json

PACKAGE = """\
{
  "name": "web",
  "version": "1.0.0",
  "description": "dependencies: not this one",
  "dependencies": {
    "express": "^4.18.2",
    "@scope/util": "1.2.3",
    "mylib": "github:org/mylib#v1",
    "left-pad": "=v1.3.0"
  },
  "devDependencies": {
    "jest": "~29.7.0",
    "express": "4.18.2"
  },
  "optionalDependencies": {"fsevents": "*"},
  "peerDependencies": {
    "react": ">=17 <19"
  }
}
"""


def _rows(parsed: Parsed) -> list[tuple]:
    return [(d.name, d.version, d.constraint, d.direct, d.path, d.dev, d.file, d.line, d.section)
            for d in parsed.deps]


def test_sections_and_lines(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(PACKAGE)
    parsed = parse_package_json("web/package.json", (tmp_path / "package.json").read_text())
    f = "web/package.json"
    assert _rows(parsed) == [
        ("express", None, "^4.18.2", True, [], False, f, 6, "dependencies"),
        ("@scope/util", "1.2.3", "1.2.3", True, [], False, f, 7, "dependencies"),
        ("mylib", None, "github:org/mylib#v1", True, [], False, f, 8, "dependencies"),
        ("left-pad", "1.3.0", "=v1.3.0", True, [], False, f, 9, "dependencies"),
        ("jest", None, "~29.7.0", True, [], True, f, 12, "devDependencies"),
        ("express", "4.18.2", "4.18.2", True, [], True, f, 13, "devDependencies"),
        ("fsevents", None, "*", True, [], False, f, 15, "optionalDependencies"),
        ("react", None, ">=17 <19", True, [], False, f, 17, "peerDependencies"),
    ]
    assert [d.source for d in parsed.deps] == [None, None, "github:org/mylib#v1", None, None, None, None, None]
    assert {d.ecosystem for d in parsed.deps} == {"npm"}


def test_malformed_json_and_bad_values() -> None:
    broken = parse_package_json("package.json", '{\n  "dependencies": {\n    "a": "1.0.0",\n  }\n}\n')
    assert broken.deps == []
    assert [(i.file, i.line, i.level) for i in broken.issues] == [("package.json", 4, "error")]
    odd = parse_package_json("package.json", '{"dependencies": {"a": 1, "b": "^2"}, "devDependencies": []}')
    assert _rows(odd) == [("b", None, "^2", True, [], False, "package.json", 1, "dependencies")]
    assert [i.message for i in odd.issues] == ["dependencies.a: version spec is not a string",
                                               "devDependencies is not an object"]
    assert parse_package_json("package.json", "[1, 2]").issues[0].message == "top level is not a JSON object"


def test_exact_and_source_helpers() -> None:
    assert [npm_exact(s) for s in ("1.2.3", "v1.2.3", "= 1.2.3", "1.2.3-rc.1+b5", "^1.2.3", "1.2", "latest")] == [
        "1.2.3", "1.2.3", "1.2.3", "1.2.3-rc.1+b5", None, None, None]
    assert [npm_source(s) for s in ("git+ssh://git@github.com/a/b.git", "file:../lib", "user/repo#main", "^1",
                                    "npm:other@^1")] == [
        "git+ssh://git@github.com/a/b.git", "file:../lib", "user/repo#main", None, None]
