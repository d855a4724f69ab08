"""What the call-site layout derives from all indexed paths, answered by point lookups instead.

`RepoLayout` reads every Python path to find the packages and the first-party
top-level names; an incremental combine needs those facts only for the few
names and files a change touches. `PathFacts` answers them from a sorted path
list (bisect over prefixes) and the base-name index, with the same functions
as the full layout (`python_module_name`, `python_import_names`), so it
cannot drift from it: each lookup generates a superset of candidate files and
keeps those the real naming rules accept.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Container, Iterator, Sequence

from repocontext.callsites import go
from repocontext.callsites.common import SOURCE_ROOTS, python_import_names, python_module_name, python_package
from repocontext.paths import is_plain, split_path
from repocontext.probe import CannotIncrement


def _head(name: str) -> str:
    return name.partition(".")[0]


class PathFacts:
    """Package and module facts for a sorted list of indexed paths (all of them, not only Python files)."""

    def __init__(self, paths: Sequence[str], has: Callable[[str], bool], named: Callable[[str], Sequence[str]]) -> None:
        self.paths = paths  # sorted
        self.has = has
        self.named = named
        self._inits: dict[str, dict[str, list[str]]] | None = None
        self._tops: dict[tuple[str, bool], bool] = {}
        self._names: dict[str, list[str]] = {}

    # -- packages and module names ------------------------------------------------------------------------------

    def is_package(self, directory: str) -> bool:
        """Whether `directory` ("." for the top) holds an `__init__.py`, as `package_dirs` decides."""
        return self.has("__init__.py" if directory == "." else f"{directory}/__init__.py")

    def packages_above(self, path: str) -> frozenset[str]:
        """The packages among the directories above `path`: all that module naming ever asks about."""
        if not is_plain(path):
            raise CannotIncrement(f"unusual path {path!r}")
        parts = path.split("/")[:-1]
        prefixes = ("/".join(parts[:end]) for end in range(1, len(parts) + 1))
        return frozenset(d for d in prefixes if self.is_package(d))

    def module_name(self, path: str) -> str | None:
        return python_module_name(path, self.packages_above(path))

    def package_of(self, path: str) -> str | None:
        return python_package(path, self.module_name(path))

    def import_names(self, path: str) -> set[str]:
        return python_import_names(path, self.packages_above(path))

    # -- first-party top-level names (RepoLayout.py_top / py_top_weak) -------------------------------------------

    def has_top(self, top: str, strong: bool) -> bool:
        """Whether some Python file's module has top-level name `top`, in a package or at the top / src / lib
        (`strong`), or in a plain directory (not `strong`): membership of RepoLayout.py_top / py_top_weak."""
        key = (top, strong)
        if key not in self._tops:
            candidates = self._strong_candidates(top) if strong else self._weak_candidates(top)
            self._tops[key] = any(self._top_of(path) == key for path in candidates)
        return self._tops[key]

    def _top_of(self, path: str) -> tuple[str, bool] | None:
        """(top-level name, strong) as RepoLayout works it out for one .py path."""
        module = self.module_name(path)
        if not module:
            return None
        parent = split_path(path)[0]
        return _head(module), self.is_package(parent) or parent in (".", *SOURCE_ROOTS)

    def _strong_candidates(self, top: str) -> Iterator[str]:
        # A package file's top is the first-dotted part of its top-most package: that package's __init__.py
        # has it too. Files right at the top, or in a src/lib that is no package, are named by their stem.
        yield from self._init_index()["head"].get(top, ())
        for base in ("", *(f"{root}/" for root in SOURCE_ROOTS)):
            yield from (p for p in self.children(base, top + ".") if p.endswith(".py"))

    def _weak_candidates(self, top: str) -> Iterator[str]:
        # A file in a plain directory is named by its whole path (less a leading src/lib): its first part.
        for base in ("", *(f"{root}/" for root in SOURCE_ROOTS)):
            for prefix in (f"{base}{top}/", f"{base}{top}."):
                yield from (p for p in self.under(prefix) if p.endswith(".py") and "/" in p[len(base):])

    def _init_index(self) -> dict[str, dict[str, list[str]]]:
        """__init__.py paths by the first and by the last dotted part of their directory's name."""
        if self._inits is None:
            self._inits = {"head": {}, "tail": {}}
            for path in self.named("__init__.py"):
                name = split_path(split_path(path)[0])[1]
                self._inits["head"].setdefault(_head(name), []).append(path)
                self._inits["tail"].setdefault(name.rpartition(".")[2], []).append(path)
        return self._inits

    # -- which files a dotted name imports (the tests probe's py_names, inverted) ---------------------------------

    def files_named(self, name: str) -> list[str]:
        """The .py files that `name` is one of the import names of (`python_import_names`), sorted."""
        if name not in self._names:
            parts = name.split(".")
            candidates = {path for end in range(len(parts)) for path in self.named(".".join(parts[end:]) + ".py")}
            candidates.update(self._init_index()["tail"].get(parts[-1], ()))
            self._names[name] = sorted(p for p in candidates if name in self.import_names(p))
        return self._names[name]

    # -- directory listings ---------------------------------------------------------------------------------------

    def under(self, prefix: str) -> Iterator[str]:
        """Paths starting with `prefix`, in order."""
        index = bisect_left(self.paths, prefix)
        while index < len(self.paths) and self.paths[index].startswith(prefix):
            yield self.paths[index]
            index += 1

    def children(self, base: str, name_prefix: str = "") -> Iterator[str]:
        """Files directly in directory `base` ("" or ending in "/") whose names start with `name_prefix`;
        subdirectories are skipped over by bisect, not walked."""
        prefix = base + name_prefix
        index = bisect_left(self.paths, prefix)
        while index < len(self.paths) and self.paths[index].startswith(prefix):
            path = self.paths[index]
            slash = path.find("/", len(base))
            if slash < 0:
                yield path
                index += 1
            else:  # "0" sorts right after "/": the first path past this subdirectory
                index = bisect_left(self.paths, path[:slash] + "0", index)

    def go_files_in(self, directory: str) -> list[str]:
        """The .go files directly in `directory` ("" for the top)."""
        return [p for p in self.children(f"{directory}/" if directory else "") if p.endswith(".go")]

    def go_dirs_importable_as(self, import_path: str, modules: dict[str, str]) -> list[str]:
        """Directories whose Go import path (from the nearest go.mod in `modules`) is `import_path`."""
        found = []
        for root, module in modules.items():
            if import_path == module:
                directory = root
            elif import_path.startswith(module + "/"):
                rest = import_path[len(module) + 1:]
                directory = f"{root}/{rest}" if root else rest
            else:
                continue
            if go.import_path_of_dir(directory, modules) == import_path:
                found.append(directory)
        return sorted(set(found))


class _Tops:
    """A container view of PathFacts.has_top, standing in for RepoLayout's sets."""

    def __init__(self, facts: PathFacts, strong: bool) -> None:
        self._facts = facts
        self._strong = strong

    def __contains__(self, top: object) -> bool:
        return isinstance(top, str) and self._facts.has_top(top, self._strong)


class LookupLayout:
    """RepoLayout's interface (what Grouper and the tests probe use), answered by PathFacts lookups."""

    def __init__(self, facts: PathFacts, npm_names: set[str], go_modules: dict[str, str],
                 php_autoload: tuple[tuple[str, str], ...] = ()) -> None:
        self.facts = facts
        self.py_top: Container[str] = _Tops(facts, True)
        self.py_top_weak: Container[str] = _Tops(facts, False)
        self.npm_names = npm_names
        self.go_modules = go_modules
        self.php_autoload = php_autoload

    def package_of(self, path: str) -> str | None:
        return self.facts.package_of(path)
