"""The code cache: the standard library's run-time compiles (dataclasses, ForwardRef, namedtuple) served from a
sealed file, with exactly the behaviour of compiling them again.

Each case runs in a fresh interpreter (the cache patches modules process-wide and is read at install).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# Everything whose generated code the cache serves, exercised so that any difference shows in the printed
# facts: defaults and factories, frozen/order/slots/kw_only, post-init, a namedtuple's defaults, ForwardRefs
# (good and bad), and pydantic's own models and dataclasses.
SCRIPT = r"""
import json, sys
from planner import codecache
codecache.install(sys.argv[1])
import dataclasses, typing
from collections import namedtuple
from dataclasses import dataclass, field

@dataclass(order=True, frozen=True)
class Pin:
    name: str
    version: str = "0"
    extras: tuple = ()

@dataclass(slots=True, kw_only=True)
class Box:
    items: list = field(default_factory=list)
    size: int = 3
    def __post_init__(self):
        self.size = len(self.items) or self.size

Point = namedtuple("Point", "x y z", defaults=(0,))
facts = {
    "pin": [repr(Pin("a")), Pin("a") < Pin("b"), hash(Pin("a", "1")) == hash(Pin("a", "1")), Pin("a") == Pin("a")],
    "box": [repr(Box()), repr(Box(items=[1, 2])), Box.__init__.__kwdefaults__ is not None],
    "point": [repr(Point(1, 2)), Point(1, 2)._asdict(), list(Point.__new__.__defaults__)],
    "ref": typing.ForwardRef("list[int]")._evaluate(globals(), None, recursive_guard=frozenset()) == list[int],
}
try:
    Pin("a").name = "b"
except dataclasses.FrozenInstanceError as exc:
    facts["frozen"] = type(exc).__name__
try:
    Box(1)
except TypeError as exc:
    facts["kw_only"] = str(exc)
try:
    typing.ForwardRef("not an :: expression")
except SyntaxError as exc:
    facts["bad_ref"] = str(exc)
from pydantic import BaseModel
import pydantic.dataclasses

class Model(BaseModel):
    pins: "list[int]" = []

@pydantic.dataclasses.dataclass
class Checked:
    n: int

facts["pydantic"] = [Model(pins=["1"]).model_dump(), repr(Checked("2"))]
facts["stats"] = codecache.stats()
print(json.dumps(facts))
"""


def run(cache: Path, command: str = "test", *, script: str = SCRIPT) -> dict:
    proc = subprocess.run([sys.executable, "-c", script, command], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def cache_file(cache: Path, command: str = "test") -> Path:
    (found,) = (cache / "tccm-planner").glob(f"codecache-{command}-*.marshal")
    return found


def without_stats(facts: dict) -> dict:
    return {k: v for k, v in facts.items() if k != "stats"}


def test_a_second_process_compiles_nothing_and_behaves_the_same(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert first["stats"]["misses"] > 100  # pydantic's import alone compiles hundreds of texts
    stored = cache_file(tmp_path)
    assert stored.stat().st_mode & 0o777 == 0o600
    second = run(tmp_path)
    assert second["stats"] == {"hits": first["stats"]["hits"] + first["stats"]["misses"], "misses": 0}
    assert without_stats(second) == without_stats(first)
    assert first["frozen"] == "FrozenInstanceError" and "positional" in first["kw_only"]
    assert "Forward reference must be an expression" in first["bad_ref"]
    assert first["pydantic"] == [{"pins": [1]}, "Checked(n=2)"]
    assert stored.stat().st_mtime_ns == cache_file(tmp_path).stat().st_mtime_ns  # nothing new: not rewritten


def test_each_command_has_its_own_file(tmp_path: Path) -> None:
    run(tmp_path, "gather")
    run(tmp_path, "dispatch")
    assert cache_file(tmp_path, "gather") != cache_file(tmp_path, "dispatch")


@pytest.mark.parametrize("damage", ["flip", "truncate", "group-writable", "other-build"])
def test_a_damaged_or_foreign_file_is_never_trusted_and_is_written_again(tmp_path: Path, damage: str) -> None:
    first = run(tmp_path)
    stored = cache_file(tmp_path)
    data = bytearray(stored.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
        stored.write_bytes(bytes(data))
    elif damage == "truncate":
        stored.write_bytes(bytes(data[: len(data) // 3]))
    elif damage == "group-writable":
        stored.chmod(0o620)
    else:  # sealed intact, but made by another interpreter build
        data[0] ^= 0xFF
        stored.write_bytes(bytes(data))
    again = run(tmp_path)
    assert again["stats"] == first["stats"]  # everything compiled anew, nothing taken from the file
    assert without_stats(again) == without_stats(first)
    assert cache_file(tmp_path).stat().st_mode & 0o777 == 0o600
    assert run(tmp_path)["stats"]["misses"] == 0  # the rewritten file serves the next process


def test_an_unwritable_cache_dir_costs_only_the_compiles(tmp_path: Path) -> None:
    (tmp_path / "tccm-planner").write_text("a file where the folder would be\n")
    assert run(tmp_path)["stats"]["misses"] > 100
    assert run(tmp_path)["stats"]["misses"] > 100


def test_served_code_is_what_the_compiler_makes(tmp_path: Path) -> None:
    script = r"""
import json, sys
from planner import codecache
codecache.install(sys.argv[1])
import __future__, pydantic, dataclasses, typing
same = all(code == compile(src, name, mode, dont_inherit=True)
           for (mode, name, src), code in codecache._codes.items())
# exec's defaults: with no namespace the caller's; a code object or flags pass through untouched
def default_namespace():
    dataclasses.exec("x = 41")
    return typing.compile("x + 1", "<string>", "eval", 0, True)
print(json.dumps({"n": len(codecache._codes), "same": same,
                  "passthrough": eval(default_namespace(), {"x": 1}),
                  "flags": bool(typing.compile("1", "<s>", "exec", __future__.annotations.compiler_flag).co_flags
                                & __future__.annotations.compiler_flag),
                  "kept": ("exec", "<s>", "1") not in codecache._codes}))
"""
    run(tmp_path, script=script)
    facts = run(tmp_path, script=script)
    assert facts["n"] > 100 and facts["same"] and facts["passthrough"] == 2
    assert facts["flags"] and facts["kept"]  # compiled as asked, and not cached: the cache holds flag-free code


def test_a_bare_gather_writes_its_cache_and_stores_the_same_snapshot_from_it(
        home: Path, tmp_path: Path, make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"requirements.txt": "requests==2.30.0\n", "app.py": "import requests\n"})
    outputs = []
    for n in range(2):  # each a first gather (its own PLANNER_HOME): the first compiles, the second is served
        env = {**os.environ, "PLANNER_DAEMON": "off", "XDG_CACHE_HOME": str(tmp_path / "cache"),
               "PLANNER_HOME": str(tmp_path / f"home{n}")}
        proc = subprocess.run([sys.executable, "-m", "planner", "gather", str(repo), "--json"], env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        outputs.append(timeless(json.loads(proc.stdout)))
    assert cache_file(tmp_path / "cache", "gather").stat().st_size > 10_000
    assert outputs[0] == outputs[1]


def timeless(snapshot: dict) -> dict:
    snapshot["meta"].pop("gathered_at", None)
    for probe in snapshot["meta"]["probes"].values():
        probe.pop("seconds", None)
    return snapshot


def test_a_bad_entry_in_an_intact_file_is_compiled_again_and_the_rest_served(tmp_path: Path) -> None:
    import marshal

    from planner import sealed

    first = run(tmp_path)
    stored = cache_file(tmp_path)
    tag = stored.read_bytes()[:32]
    entries = marshal.loads(sealed.opened(stored, tag) or b"")
    broken = sorted(entries)[:3]
    for key in broken:  # sealed intact, but not a code object: garbage, a number, a code-less marshal
        entries[key] = {0: b"\x00garbage", 1: 42, 2: marshal.dumps("text")}[broken.index(key)]
    sealed.write(stored, tag, marshal.dumps(entries))
    again = run(tmp_path)
    assert again["stats"]["misses"] == 3  # every entry is one this script asks for: the three bad ones compiled
    assert without_stats(again) == without_stats(first)
    assert run(tmp_path)["stats"]["misses"] == 0  # and the file is whole again


def test_a_mistyped_command_makes_no_file_of_its_own(home: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PLANNER_DAEMON": "off", "XDG_CACHE_HOME": str(tmp_path)}
    for argv in (["gathr", "."], ["--help"]):
        subprocess.run([sys.executable, "-m", "planner", *argv], env=env, capture_output=True, timeout=120)
    names = sorted(p.name.split("-")[1] for p in (tmp_path / "tccm-planner").glob("codecache-*"))
    assert names == ["planner"], names
