"""Stage building: ARG scoping, stage references, inherited config, CMD/ENTRYPOINT rules, dependencies."""

from __future__ import annotations

from pathlib import Path

from repocontext.dockerfile import parse
from repocontext.model import Dockerfile


def parsed(tmp_path: Path, text: str) -> tuple[Dockerfile, list[tuple[int, str]]]:
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    result = parse(path.read_text(), "Dockerfile")
    return result.dockerfile, result.problems


def test_stage_refs_by_name_and_index_inherit_config(tmp_path: Path) -> None:
    text = """\
FROM alpine:3.19 AS Base
USER app
WORKDIR /srv
WORKDIR data
ENV A=1
EXPOSE 80 80/udp
SHELL ["/bin/ash", "-eo", "pipefail", "-c"]
CMD run
FROM base AS child
ENV B=2
ENTRYPOINT ["/entry"]
FROM 1
CMD ["x"]
FROM later
"""
    dockerfile, problems = parsed(tmp_path, text)
    base, child, third, later = dockerfile.stages
    assert problems == []
    assert base.name == "base" and base.workdir == "/srv/data" and base.expose == ["80", "80/udp"]
    assert base.cmd is not None and base.cmd.args == ["/bin/ash", "-eo", "pipefail", "-c", "run"]
    assert (child.base.stage_ref, child.base.stage_index, child.depends_on) == (True, 0, [0])
    assert (child.user, child.workdir, child.env) == ("app", "/srv/data", {"A": "1", "B": "2"})
    assert child.cmd is None  # ENTRYPOINT drops an inherited CMD
    assert child.shell == ["/bin/ash", "-eo", "pipefail", "-c"]
    assert (third.base.stage_index, third.entrypoint is not None, third.cmd is not None) == (1, True, True)
    assert base.env == {"A": "1"}  # the parent is not changed by its child
    assert not later.base.stage_ref and later.base.repository == "docker.io/library/later"


def test_cmd_in_the_same_stage_survives_entrypoint(tmp_path: Path) -> None:
    dockerfile, _ = parsed(tmp_path, "FROM a\nCMD [\"x\"]\nENTRYPOINT [\"e\"]\n")
    stage = dockerfile.stages[0]
    assert stage.cmd is not None and stage.entrypoint is not None


def test_env_forms_and_errors(tmp_path: Path) -> None:
    text = 'FROM a\nENV ONE two  three\nENV X="a b" Y=c\\ d Z=\nENV lonely\nENV K=v bad\n'
    dockerfile, problems = parsed(tmp_path, text)
    assert dockerfile.stages[0].env == {"ONE": "two  three", "X": "a b", "Y": "c d", "Z": "", "K": "v"}
    assert problems == [(4, "ENV: 'lonely' has no value"), (5, "ENV: can't find = in 'bad'; must be name=value")]


def test_copy_from_and_mounts_record_dependencies(tmp_path: Path) -> None:
    text = """\
FROM golang:1.22 AS build
FROM node:20 AS web
FROM alpine
COPY --from=build /out /bin/
COPY --from=nginx:latest /etc/nginx /etc/nginx
RUN --mount=type=bind,from=web,source=/dist,target=/dist cp -r /dist /srv
COPY --from=2 /x /y
"""
    dockerfile, problems = parsed(tmp_path, text)
    final = dockerfile.stages[2]
    assert final.depends_on == [0, 1]
    assert final.copy_from_images == ["nginx:latest"]
    assert problems == [(7, "COPY: stage '2' refers to itself")]


def test_bad_from_and_shell_are_problems(tmp_path: Path) -> None:
    text = "FROM a AS 9bad\nFROM a b\nSHELL /bin/bash -c\nFROM $NOPE\n"
    dockerfile, problems = parsed(tmp_path, text)
    assert problems == [(1, "FROM: invalid stage name '9bad'"),
                        (2, "FROM: expects an image and an optional 'AS name'"),
                        (3, 'SHELL: requires a JSON array, e.g. SHELL ["/bin/bash", "-c"]')]
    assert dockerfile.stages[2].base.unresolved_args == ["NOPE"]
    assert dockerfile.stages[1].shell == ["/bin/sh", "-c"]


def test_global_args_expand_in_order_and_stage_args_are_scoped(tmp_path: Path) -> None:
    text = "ARG A=1 B=${A}.2\nARG C\nFROM img:${B}\nARG A\nARG C\nARG D=4\nFROM img:$A\n"
    dockerfile, _ = parsed(tmp_path, text)
    first, second = dockerfile.stages
    assert dockerfile.global_args == {"A": "1", "B": "1.2", "C": None}
    assert first.base.resolved == "img:1.2" and first.args == {"A": "1", "C": None, "D": "4"}
    assert second.base.resolved == "img:1" and second.args == {}
