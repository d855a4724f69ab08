"""Go imports (blocks, aliases, blank and dot imports) and package-qualified uses."""

from __future__ import annotations

import textwrap

from repocontext.callsites.go import default_name, import_path_of_dir, is_std, module_of, module_path, scan_go

SOURCE = textwrap.dedent("""\
    package main

    import (
    \t"fmt"
    \ty "gopkg.in/yaml.v3"
    \t_ "github.com/lib/pq"
    \t. "strings"
    \t"github.com/go-redis/redis/v8"
    )
    import "os"

    func main() { y.Unmarshal(nil, nil); var n *y.Node; redis.NewClient(nil); fmt.Println(n) }
    """)


def test_import_block_with_alias_and_uses() -> None:
    result = scan_go(SOURCE)
    assert [(s.symbol, s.line, s.col, s.kind) for s in result.sites] == [
        ("fmt", 4, 1, "import"), ("gopkg.in/yaml.v3", 5, 1, "import"), ("github.com/lib/pq", 6, 1, "import"),
        ("strings", 7, 1, "import"), ("github.com/go-redis/redis/v8", 8, 1, "import"), ("os", 10, 7, "import"),
        ("gopkg.in/yaml.v3.Unmarshal", 12, 14, "use"), ("gopkg.in/yaml.v3.Node", 12, 44, "use"),
        ("github.com/go-redis/redis/v8.NewClient", 12, 52, "use"), ("fmt.Println", 12, 74, "use")]
    assert result.imports == ["fmt", "gopkg.in/yaml.v3", "github.com/lib/pq", "strings",
                              "github.com/go-redis/redis/v8", "os"]


def test_module_paths_and_package_names() -> None:
    assert module_of("github.com/go-redis/redis/v8/internal") == "github.com/go-redis/redis/v8"
    assert module_of("golang.org/x/net/http2") == "golang.org/x/net"
    assert module_of("k8s.io/client-go/kubernetes") == "k8s.io/client-go"
    assert module_of("example.com/a/b/c", ["example.com/a", "example.com/a/b"]) == "example.com/a/b"
    assert [default_name(p) for p in ("gopkg.in/yaml.v3", "github.com/go-redis/redis/v8",
                                      "github.com/mattn/go-sqlite3")] == ["yaml", "redis", "sqlite3"]
    assert is_std("net/http") and not is_std("github.com/x/y")
    assert module_path('// comment\nmodule "example.com/m"\n\ngo 1.22\n') == "example.com/m"


def test_import_path_of_nested_module_directories() -> None:
    modules = {"": "example.com/root", "tools": "example.com/tools"}
    assert import_path_of_dir("pkg/a", modules) == "example.com/root/pkg/a"
    assert import_path_of_dir("", modules) == "example.com/root"
    assert import_path_of_dir("tools/gen", modules) == "example.com/tools/gen"
    assert import_path_of_dir("x", {"tools": "example.com/tools"}) is None
