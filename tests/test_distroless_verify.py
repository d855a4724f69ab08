"""Build checks of a migrated Dockerfile (verify.py): an item may succeed only when its file passes them."""

from __future__ import annotations

from subgraphs.distroless_migration.migrate import migrate_dockerfile
from subgraphs.distroless_migration.models import DockerfileMigration, ItemBlocker, MigrationOptions
from subgraphs.distroless_migration.verify import check, syntax_errors

GOOD = """\
FROM cgr.dev/chainguard/wolfi-base:latest AS build
RUN apk add --no-cache gcc=14.2.0-r1 glibc-dev python3 \\
    && if [ "$(uname -m)" = x86_64 ]; then echo $(( 1 + 2 )); else echo arm; fi
RUN <<EOF
set -e
case "$TARGETARCH" in amd64) echo x ;; *) echo y ;; esac
EOF
FROM build AS test
FROM scratch
COPY --from=build /out /out
"""


def _kinds(found: list[ItemBlocker]) -> list[tuple[int, str]]:
    return [(b.line, b.message.split(":")[0]) for b in found]


def test_a_file_that_builds_passes() -> None:
    assert check("Dockerfile", GOOD) == []


def test_alpine_names_wolfi_lacks_fail_at_their_line() -> None:
    text = "FROM cgr.dev/chainguard/wolfi-base\nRUN apk add --no-cache git \\\n    g++ musl-dev\n"
    found = check("svc/Dockerfile", text)
    assert _kinds(found) == [(3, "apk add g++"), (3, "apk add musl-dev")]
    assert all(b.kind == "check-failed" and b.file == "svc/Dockerfile" for b in found)


def test_broken_control_flow_fails_sh_n() -> None:
    text = "FROM cgr.dev/chainguard/wolfi-base\nRUN if [ -n x ] ; apk add --no-cache curl; apk add git; fi\n"
    (found,) = check("Dockerfile", text)
    assert found.line == 2 and "sh -n" in found.message


def test_a_broken_heredoc_script_fails() -> None:
    text = "FROM cgr.dev/chainguard/wolfi-base\nRUN <<EOF\nfor x in a b; echo $x; done\nEOF\n"
    assert [b.line for b in check("Dockerfile", text)] == [2]


def test_leftover_distro_manager_and_foreign_from_fail() -> None:
    text = "FROM debian:12\nRUN apt-get update && apk add --no-cache curl\n"
    assert _kinds(check("Dockerfile", text)) == [
        (1, "FROM debian"), (2, "`apt-get` is left in the RUN; Chainguard images have no apt-get")]


def test_kept_stages_and_written_images_are_accepted() -> None:
    text = "FROM grpc/probe:1 AS probe\nFROM registry.acme.dev/hardened/jre:17\nCOPY --from=probe /p /p\n"
    assert check("Dockerfile", text, kept=[1], written=["registry.acme.dev/hardened/jre:17"]) == []


def test_syntax_errors_batches_and_names_each_failing_script() -> None:
    found = syntax_errors(["echo ok", "if true; echo x; fi", "(", "echo $(( 1 + 2 ))"])
    assert sorted(found) == [1, 2]


def test_a_failed_check_blocks_even_with_keep_unconverted() -> None:
    failed = check("Dockerfile", "FROM cgr.dev/chainguard/wolfi-base\nRUN for x; echo; done\n")
    migration = DockerfileMigration(path="Dockerfile", new_text="", changed=True, keep_unconverted=True, checks=failed)
    assert failed and migration.blocked


def test_alpine_names_are_mapped_and_the_file_passes() -> None:
    text = ("FROM alpine:3.18 AS build\nRUN apk add --no-cache git cmake make g++ linux-headers musl-dev=1.2.4-r2\n"
            "RUN make\nFROM alpine:3.18\nRUN apk add --no-cache libc6-compat gcompat curl\n"
            "COPY --from=build /app /app\nCMD [\"/app\"]\n")
    migration = migrate_dockerfile("Dockerfile", text, MigrationOptions())
    assert migration.checks == [] and not migration.blocked
    assert "RUN apk add --no-cache git cmake make gcc linux-headers glibc-dev\n" in migration.new_text
    notes = {p.old: p.note for p in migration.packages}
    assert "glibc-based" in notes["gcompat"] and "glibc-based" in notes["libc6-compat"]
    assert "'=1.2.4-r2' removed" in notes["musl-dev"]


def test_tzdata_is_kept_where_the_catalog_says_the_image_lacks_it() -> None:
    text = ("FROM python:3.12-slim\nRUN apt-get update && apt-get install -y --no-install-recommends tzdata\n"
            "COPY app.py /app/app.py\nCMD [\"python\", \"/app/app.py\"]\n")
    migration = migrate_dockerfile("Dockerfile", text, MigrationOptions())
    assert "tzdata" in migration.new_text  # python's images have no tzdata (catalog data): never dropped as present
    assert not any("RUN dropped" in n for n in migration.notes)


PROBE = """\
FROM ghcr.io/grpc-ecosystem/grpc-health-probe:v0.4.24 AS probe
FROM golang:1.22 AS build
WORKDIR /src
COPY . .
RUN go build -o /app .
FROM debian:12-slim
RUN apt-get update && apt-get install -y ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=probe /ko-app/grpc-health-probe /bin/grpc_health_probe
COPY --from=build /app /app
ENTRYPOINT ["/app"]
"""


def test_a_third_party_copy_source_stage_is_left_while_the_rest_migrates() -> None:
    migration = migrate_dockerfile("Dockerfile", PROBE, MigrationOptions())
    assert not migration.blocked and migration.checks == []
    assert migration.new_text.startswith("FROM ghcr.io/grpc-ecosystem/grpc-health-probe:v0.4.24 AS probe\n"
                                         "FROM cgr.dev/chainguard/go:1.22-dev AS build\n")
    assert migration.stages[0].notes[0].startswith("left unchanged: only a COPY --from source")
    assert "FROM cgr.dev/chainguard/glibc-dynamic:latest\n" in migration.new_text


def test_install_helpers_are_package_installs() -> None:
    text = ("FROM bitnami/minideb:bookworm AS build\nRUN install_packages git make \\\n    && make\n"
            "FROM debian:bookworm-slim\nRUN clean-install ca-certificates curl\nCOPY --from=build /x /x\n"
            "ENTRYPOINT [\"curl\"]\n")
    migration = migrate_dockerfile("Dockerfile", text, MigrationOptions())
    assert migration.checks == [] and not migration.blocked
    assert "RUN apk add --no-cache git make \\\n    && make\n" in migration.new_text
    assert "RUN apk add --no-cache ca-certificates curl\n" in migration.new_text
    assert [(p.old, p.new) for p in migration.packages][:2] == [("git", ["git"]), ("make", ["make"])]


def test_user_root_only_where_a_run_writes_or_installs() -> None:
    text = ("FROM node:20 AS deps\nWORKDIR /app\nCOPY package.json .\nRUN npm ci\n"
            "FROM node:20\nWORKDIR /app\nCOPY --from=deps /app/node_modules ./node_modules\nCOPY . .\n"
            "RUN echo \"built $(date)\" && ls -la\nCMD [\"node\", \"server.js\"]\n")
    migration = migrate_dockerfile("Dockerfile", text, MigrationOptions())
    assert [s.user_root_added for s in migration.stages[:2]] == [True, False]


NODE_WITH_PYTHON = """\
FROM ubuntu:22.04
ENV NODE_VERSION=16.x
RUN apt-get update && apt-get install -y python3 make g++ curl \\
    && curl -fsSL https://deb.nodesource.com/setup_$NODE_VERSION | bash - \\
    && apt-get install -y nodejs
WORKDIR /app
COPY . .
RUN npm ci
CMD ["node", "server.js"]
"""


def test_the_runtime_the_cmd_runs_picks_the_image_and_its_pin_is_kept() -> None:
    migration = migrate_dockerfile("Dockerfile", NODE_WITH_PYTHON, MigrationOptions())
    notes = migration.stages[0].notes
    assert migration.stages[0].new_image == "cgr.dev/chainguard/node:16-dev"
    assert "node version 16 kept from the pin at line 2: NODE_VERSION=16.x" in notes
    assert any("also installs python: node chosen because its CMD/ENTRYPOINT runs it" in n for n in notes)


def test_apk_lines_of_a_file_already_on_wolfi_keep_their_pins() -> None:
    text = "FROM cgr.dev/chainguard/wolfi-base\nRUN apk add --no-cache curl=8.11.1-r0\nCMD [\"curl\"]\n"
    migration = migrate_dockerfile("Dockerfile", text, MigrationOptions())
    assert "RUN apk add --no-cache curl=8.11.1-r0\n" in migration.new_text and migration.checks == []


def test_a_dev_final_stage_goes_back_to_the_images_user_after_its_build_steps() -> None:
    text = ("FROM opensearchproject/opensearch:2.11.0\n"
            "RUN /usr/share/opensearch/bin/opensearch-plugin install --batch analysis-icu\n")
    migration = migrate_dockerfile("Dockerfile", text, MigrationOptions())
    assert migration.new_text == ("FROM cgr.dev/chainguard/opensearch:2.11-dev\nUSER root\n"
                                  "RUN /usr/share/opensearch/bin/opensearch-plugin install --batch analysis-icu\n"
                                  "USER 65532\n")
    assert any("Chainguard's usual nonroot user; the catalog data does not list this image" in n
               for n in migration.runtime.notes)


def test_an_entrypoint_that_drops_privileges_itself_keeps_starting_as_root() -> None:
    text = ("FROM python:3.12-slim\nRUN pip install flask\nCOPY entry.sh /entry.sh\n"
            "ENTRYPOINT [\"/entry.sh\"]\nCMD [\"flask\", \"run\"]\n")
    migration = migrate_dockerfile("Dockerfile", text, MigrationOptions(),
                                   lambda path: "#!/bin/sh\nexec gosu app \"$@\"\n" if path == "entry.sh" else None)
    assert "USER root\n" in migration.new_text and "USER 65532" not in migration.new_text
