"""Shell evidence in deployment manifests: command overrides that need a shell in the image.

Read from YAML nodes so each finding keeps its line. Kinds (stable, alongside
those of `repocontext.dockerfile.shell`):

- "deployment-shell-command": a Compose `entrypoint`/`command`/`healthcheck.test`, or a
  Kubernetes container `command`/`args`/probe or lifecycle `exec.command`, that runs a
  shell (`sh -c …`, also behind tini/gosu), or a Compose healthcheck in CMD-SHELL form.
- "deployment-script-command": such an override that runs a `*.sh` script.

Compose evidence names the Dockerfile its service builds (`dockerfile`), so that a healthcheck of one
service is never taken as evidence about another service's image.
"""

from __future__ import annotations

import posixpath
import shlex

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from repocontext import bounded
from repocontext.dockerfile.packages import SHELLS
from repocontext.dockerfile.shell import SCRIPT_SUFFIXES, program_index
from repocontext.model import ShellEvidence

CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
MAX_NODES = 200_000


def _get(node: Node | None, key: str) -> Node | None:
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.value == key:
                return v
    return None


def _argv(node: Node | None) -> list[str] | None:
    if isinstance(node, ScalarNode):
        try:
            return shlex.split(node.value)  # Compose splits string commands like a shell, without running one
        except ValueError:
            return [node.value]
    if isinstance(node, SequenceNode):
        return [item.value for item in node.value if isinstance(item, ScalarNode)]
    return None


class _Finder:
    def __init__(self, path: str) -> None:
        self.path = path
        self.found: list[ShellEvidence] = []
        self.dockerfile: str | None = None  # the Dockerfile the compose service being read builds

    def check(self, node: Node | None, where: str, argv: list[str] | None = None, program: bool = True) -> None:
        argv = _argv(node) if argv is None else argv
        if node is None or not argv:
            return
        line = node.start_mark.line + 1
        k = program_index(argv) if program else None
        text = " ".join(argv)
        detail = f"{where}: {text if len(text) <= 160 else text[:159] + '…'}"
        if k is not None and argv[k].rsplit("/", 1)[-1] in SHELLS:
            self.found.append(ShellEvidence(file=self.path, line=line, kind="deployment-shell-command", detail=detail,
                                            dockerfile=self.dockerfile))
        elif any(a.endswith(SCRIPT_SUFFIXES) for a in argv):
            self.found.append(ShellEvidence(file=self.path, line=line, kind="deployment-script-command",
                                            detail=detail, dockerfile=self.dockerfile))

    def compose(self, root: Node) -> None:
        services = _get(root, "services")
        if not isinstance(services, MappingNode):
            return
        for key, service in services.value:
            name = f"service {key.value}"
            self.dockerfile = built(self.path, _get(service, "build"))
            self.check(_get(service, "entrypoint"), f"{name} entrypoint")
            self.check(_get(service, "command"), f"{name} command", program=_get(service, "entrypoint") is None)
            self._healthcheck(_get(_get(service, "healthcheck"), "test"), name)

    def _healthcheck(self, test: Node | None, name: str) -> None:
        argv = _argv(test)
        if test is None or not argv:
            return
        if isinstance(test, ScalarNode) or argv[0] == "CMD-SHELL":  # a string test runs under /bin/sh -c
            shell_argv = ["/bin/sh", "-c", " ".join(argv[1:] if argv[0] == "CMD-SHELL" else argv)]
            self.check(test, f"{name} healthcheck", shell_argv)
        elif argv[0] == "CMD":
            self.check(test, f"{name} healthcheck", argv[1:])

    def kubernetes(self, node: Node, budget: list[int]) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            return
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode) and key.value in CONTAINER_LISTS and isinstance(value, SequenceNode):
                    for container in value.value:
                        self._container(container)
                self.kubernetes(value, budget)
        elif isinstance(node, SequenceNode):
            for item in node.value:
                self.kubernetes(item, budget)

    def _container(self, container: Node) -> None:
        name_node = _get(container, "name")
        name = f"container {name_node.value if isinstance(name_node, ScalarNode) else '?'}"
        command, args = _get(container, "command"), _get(container, "args")
        if command is not None:
            self.check(command, f"{name} command", (_argv(command) or []) + (_argv(args) or []))
        elif args is not None:
            self.check(args, f"{name} args", program=False)
        for probe in PROBES:
            self.check(_get(_get(_get(container, probe), "exec"), "command"), f"{name} {probe}")
        for hook in ("postStart", "preStop"):
            self.check(_get(_get(_get(_get(container, "lifecycle"), hook), "exec"), "command"), f"{name} {hook}")


def built(compose_path: str, build: Node | None) -> str | None:
    """The repo path of the Dockerfile a Compose `build:` names (context, then `dockerfile`, default
    `Dockerfile`), relative to the compose file's folder; None without a local build."""
    context, dockerfile = None, "Dockerfile"
    if isinstance(build, ScalarNode):
        context = build.value
    elif isinstance(build, MappingNode):
        ctx, name = _get(build, "context"), _get(build, "dockerfile")
        context = ctx.value if isinstance(ctx, ScalarNode) else "."
        dockerfile = name.value if isinstance(name, ScalarNode) and name.value else dockerfile
    if context is None or "://" in context or context.startswith(("git@", "/")) or "$" in context:
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(compose_path), context, dockerfile))
    return None if path.startswith("../") else path


def command_evidence(path: str, text: str, compose: bool) -> list[ShellEvidence]:
    """Shell evidence from one Compose file or Kubernetes manifest; [] when it does not parse."""
    finder = _Finder(path)
    try:
        for root in bounded.compose_all(text):
            if root is None:
                continue
            if compose:
                finder.compose(root)
            else:
                finder.kubernetes(root, [MAX_NODES])
    except (yaml.YAMLError, bounded.LimitExceeded):  # the caller reports why the file is unusable
        return finder.found
    return finder.found
