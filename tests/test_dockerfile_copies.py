"""COPY/ADD resolution into the final image: chain, contexts, directories, wildcards, heredocs, --from."""

from __future__ import annotations

import posixpath
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.dockerfile import copies as copying
from repocontext.dockerfile import parse
from repocontext.dockerfile.copies import chain, copied_files


def repo(tmp_path: Path, files: dict[str, str], dockerfile_path: str, dockerfile: str) -> list[str]:
    for rel, text in {**files, dockerfile_path: dockerfile}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())


def copies(tmp_path: Path, files: dict[str, str], text: str, path: str = "Dockerfile") -> list[tuple]:
    listing = repo(tmp_path, files, path, text)
    dockerfile = parse((tmp_path / path).read_text(), path).dockerfile
    return [(c.container, c.repo_path or c.image_path or c.inline, c.line, c.explicit)
            for c in copied_files(dockerfile, path, listing)]


def test_chain_follows_stage_references() -> None:
    dockerfile = parse("FROM a AS one\nFROM b AS two\nFROM one AS three\nFROM three\n", "D").dockerfile
    assert [s.index for s in chain(dockerfile)] == [0, 2, 3]
    assert chain(parse("", "D").dockerfile) == []


def test_files_directories_and_wildcards(tmp_path: Path) -> None:
    files = {"app/main.py": "", "app/lib/util.py": "", "run.sh": "", "conf/a.ini": "", "conf/b.ini": ""}
    text = """\
FROM build AS ignored
FROM python
WORKDIR /srv
COPY run.sh .
COPY run.sh /usr/local/bin/start
COPY app/ ./app
COPY conf/*.ini /etc/conf/
ADD https://example.com/x.tgz /tmp/
"""
    assert copies(tmp_path, files, text) == [
        ("/srv/run.sh", "run.sh", 4, True),
        ("/usr/local/bin/start", "run.sh", 5, True),
        ("/srv/app/lib/util.py", "app/lib/util.py", 6, False),
        ("/srv/app/main.py", "app/main.py", 6, False),
        ("/etc/conf/a.ini", "conf/a.ini", 7, False),
        ("/etc/conf/b.ini", "conf/b.ini", 7, False),
    ]


def test_context_is_the_dockerfile_directory_first_then_the_root(tmp_path: Path) -> None:
    files = {"svc/entry.sh": "", "entry.sh": "", "shared/x.sh": ""}
    text = "FROM a\nCOPY entry.sh shared/x.sh /bin/\nCOPY . /ctx\n"
    assert copies(tmp_path, files, text, "svc/Dockerfile") == [
        ("/bin/entry.sh", "svc/entry.sh", 2, True),
        ("/bin/x.sh", "shared/x.sh", 2, True),
        ("/ctx/Dockerfile", "svc/Dockerfile", 3, False),
        ("/ctx/entry.sh", "svc/entry.sh", 3, False),
    ]


def test_heredoc_and_from_sources(tmp_path: Path) -> None:
    text = 'FROM a AS b\nFROM c\nCOPY <<EOF /start.sh\n#!/bin/sh\nEOF\nCOPY <<"one" <<two /d/\nx\none\ny\ntwo\n' \
        'COPY --from=b ["/app/run.sh", "/x y/"]\n'
    assert copies(tmp_path, {}, text) == [
        ("/start.sh", "#!/bin/sh\n", 3, True),
        ("/d/one", "x\n", 6, True),
        ("/d/two", "y\n", 6, True),
        ("/x y/run.sh", "b:/app/run.sh", 11, True),
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "app", "a.b", "]", "x y"]), min_size=1, max_size=4)
                .map("/".join), min_size=0, max_size=25, unique=True),
       st.lists(st.sampled_from(["a", "b", "app", ".", "", "]", "a.b"]), max_size=4).map("/".join))
def test_a_source_without_wildcards_matches_as_the_glob_matcher_does(files: list[str], source: str) -> None:
    listing = copying.Listing(files)
    parts = [p for p in source.split("/") if p not in ("", ".")]
    assert copying._match_literal(parts, listing) == copying._match_glob(parts, listing)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["", ".", "..", "app", "/", "//", "a b", "x."]), max_size=4).map("/".join),
       st.lists(st.sampled_from(["", ".", "..", "srv", "/"]), max_size=3).map(lambda p: "/" + "/".join(p)),
       st.lists(st.sampled_from(["a", "b.py", "..a", ".env.x", "x y"]), min_size=1, max_size=3).map("/".join))
def test_a_directory_sources_files_land_where_target_puts_them(dest: str, workdir: str, below: str) -> None:
    workdir = posixpath.normpath(workdir)  # as walk() keeps it
    assert copying._directory(dest, workdir) + below == copying._target(dest, workdir, True, below)
