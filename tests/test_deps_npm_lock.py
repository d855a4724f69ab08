"""package-lock.json: v3 nesting and resolution, v2 workspaces and links, v1 tree, fallbacks."""

from __future__ import annotations

import json
import posixpath
import random
from pathlib import Path

from repocontext.deps import npm_lock
from repocontext.deps.common import Parsed
from repocontext.deps.npm_lock import parse_package_lock

V3 = """\
{
  "name": "web",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "web",
      "dependencies": {
        "express": "^4.18.2",
        "@scope/util": "1.2.3"
      },
      "devDependencies": {
        "jest": "~29.7.0"
      }
    },
    "node_modules/express": {
      "version": "4.18.2",
      "dependencies": {
        "debug": "2.6.9",
        "qs": "6.11.0"
      }
    },
    "node_modules/express/node_modules/debug": {
      "version": "2.6.9",
      "dependencies": {
        "ms": "2.0.0"
      }
    },
    "node_modules/debug": {
      "version": "4.3.4",
      "dev": true,
      "dependencies": {
        "ms": "2.1.2"
      }
    },
    "node_modules/ms": {
      "version": "2.1.2",
      "dev": true
    },
    "node_modules/express/node_modules/ms": {
      "version": "2.0.0"
    },
    "node_modules/qs": {
      "version": "6.11.0"
    },
    "node_modules/@scope/util": {
      "version": "1.2.3",
      "resolved": "git+ssh://git@github.com/scope/util.git#abc"
    },
    "node_modules/jest": {
      "version": "29.7.0",
      "dev": true,
      "dependencies": {
        "debug": "^4.3.4"
      }
    },
    "node_modules/orphan/node_modules/inner": {
      "version": "0.1.0",
      "extraneous": true
    }
  }
}
"""


def _rows(parsed: Parsed) -> list[tuple]:
    return [(d.name, d.version, d.constraint, d.direct, d.path, d.dev, d.file, d.line) for d in parsed.deps]


def test_v3_nesting_resolves_the_nearest_copy(tmp_path: Path) -> None:
    (tmp_path / "package-lock.json").write_text(V3)
    parsed = parse_package_lock("web/package-lock.json", (tmp_path / "package-lock.json").read_text(), None)
    f = "web/package-lock.json"
    assert _rows(parsed) == [
        ("express", "4.18.2", None, True, [], False, f, 16),
        ("debug", "2.6.9", None, False, ["express", "debug"], False, f, 23),
        ("debug", "4.3.4", None, False, ["jest", "debug"], True, f, 29),
        ("ms", "2.1.2", None, False, ["jest", "debug", "ms"], True, f, 36),
        ("ms", "2.0.0", None, False, ["express", "debug", "ms"], False, f, 40),
        ("qs", "6.11.0", None, False, ["express", "qs"], False, f, 43),
        ("@scope/util", "1.2.3", None, True, [], False, f, 46),
        ("jest", "29.7.0", None, True, [], True, f, 50),
        ("inner", "0.1.0", None, False, ["orphan", "inner"], False, f, 57),  # unreachable: nesting gives the chain
    ]
    assert parsed.deps[6].source == "git+ssh://git@github.com/scope/util.git#abc"
    assert {d.kind for d in parsed.deps} == {"lockfile"}
    assert parsed.issues == []


def test_v2_workspaces_links_and_aliases() -> None:
    lock = {
        "lockfileVersion": 2,
        "packages": {
            "": {"name": "mono", "workspaces": ["packages/*"], "dependencies": {"lodash": "^4"}},
            "packages/a": {"name": "@mono/a", "version": "1.0.0", "dependencies": {"chalk": "^4"}},
            "node_modules/@mono/a": {"resolved": "packages/a", "link": True},
            "node_modules/lodash": {"version": "4.17.21"},
            "node_modules/chalk": {"version": "5.3.0", "dependencies": {"strip": "^1"}},
            "node_modules/strip": {"name": "strip-ansi", "version": "1.0.0"},
            "packages/a/node_modules/chalk": {"version": "4.1.2"},
        },
        "dependencies": {"lodash": {"version": "4.17.21"}},
    }
    text = json.dumps(lock, indent=2)
    parsed = parse_package_lock("package-lock.json", text, None)
    assert _rows(parsed) == [
        ("lodash", "4.17.21", None, True, [], False, "package-lock.json", 24),
        ("chalk", "5.3.0", None, False, [], False, "package-lock.json", 27),  # shadowed for packages/a: unused
        ("strip-ansi", "1.0.0", None, False, [], False, "package-lock.json", 33),
        ("chalk", "4.1.2", None, True, [], False, "package-lock.json", 37),  # what packages/a really loads
    ]


V1 = """\
{
  "name": "old",
  "lockfileVersion": 1,
  "dependencies": {
    "a": {
      "version": "1.0.0",
      "requires": {
        "b": "^2.0.0"
      },
      "dependencies": {
        "b": {
          "version": "2.0.0",
          "requires": {"c": "*"}
        }
      }
    },
    "b": {
      "version": "3.0.0",
      "dev": true
    },
    "c": {
      "version": "git+https://github.com/x/c.git#deadbeef"
    }
  }
}
"""


def test_v1_tree_with_declared_direct_set() -> None:
    parsed = parse_package_lock("package-lock.json", V1, {"a": False, "b": True})
    assert _rows(parsed) == [
        ("a", "1.0.0", None, True, [], False, "package-lock.json", 5),
        ("b", "2.0.0", None, False, ["a", "b"], False, "package-lock.json", 11),
        ("b", "3.0.0", None, True, [], True, "package-lock.json", 17),
        ("c", None, None, False, ["a", "b", "c"], False, "package-lock.json", 21),
    ]
    assert parsed.deps[3].source == "git+https://github.com/x/c.git#deadbeef"
    assert parsed.issues == []


def test_v1_without_manifest_guesses_roots() -> None:
    parsed = parse_package_lock("package-lock.json", V1, None)
    assert [(d.name, d.version, d.direct, d.path) for d in parsed.deps] == [
        ("a", "1.0.0", True, []), ("b", "2.0.0", False, ["a", "b"]), ("b", "3.0.0", True, []),
        ("c", None, False, ["a", "b", "c"]),
    ]
    assert [i.level for i in parsed.issues] == ["info"]


def test_malformed_and_empty_locks() -> None:
    bad = parse_package_lock("package-lock.json", '{\n  "packages": {\n    "": {,\n', None)
    assert bad.deps == [] and [(i.line, i.level) for i in bad.issues] == [(3, "error")]
    empty = parse_package_lock("package-lock.json", '{"lockfileVersion": 3}', None)
    assert empty.deps == [] and [i.level for i in empty.issues] == ["info"]


def _walk_resolve(nodes: set[str], location: str, name: str) -> str | None:
    """Node's lookup spelled out: try `<folder>/node_modules/<name>` for the folder and each one above it."""
    base = location
    while True:
        candidate = f"{base}/node_modules/{name}" if base else f"node_modules/{name}"
        if candidate in nodes:
            return candidate
        if not base:
            return None
        base = posixpath.dirname(base)


def test_resolution_matches_the_folder_walk() -> None:
    """The search paths are built once per folder and shared; they must find what the walk finds, odd keys
    (empty segments, dots, trailing slashes) included, whatever order the folders are met in."""
    rng = random.Random(3)
    parts = ["node_modules", "a", "@s", "b", "", ".", "node_modules/", "x/"]
    for _ in range(3000):
        nodes = {"/".join(rng.choice(parts) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(0, 8))}
        known: dict[str, list[str]] = {}
        for location in [*nodes, "/".join(rng.choice(parts) for _ in range(rng.randint(0, 6)))]:
            if location.startswith("/"):
                continue
            folders = npm_lock._search_path(location, known)
            for name in ("a", "b", "@s/b", "node_modules/a"):
                found = npm_lock._resolve(dict.fromkeys(nodes), folders, name)  # type: ignore[arg-type]
                assert found == _walk_resolve(nodes, location, name), (location, name, nodes)


def test_an_absolute_location_ends_its_search() -> None:
    """dirname("/") is "/": the walk once looked there forever for a name it could not find."""
    assert npm_lock._search_path("/node_modules/a", {}) == [
        "/node_modules/a/node_modules/", "/node_modules/node_modules/", "//node_modules/"]
