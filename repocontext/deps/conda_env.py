"""conda environment files (environment*.yml): the pip requirements under `dependencies: - pip: [...]`.

Only the `pip:` list is recorded: its items are pip requirement lines (pins,
`-r file` / `-c file` includes, `-e` and URL references), with includes
relative to the environment file as conda runs pip from there. The conda
packages around it are another ecosystem. Read with PyYAML's safe composer,
which keeps each item's line and builds no Python objects from tags.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import yaml

from repocontext import bounded
from repocontext.deps.common import Issue, Parsed, is_dev_name
from repocontext.deps.requirements import parse_line

SECTION = "dependencies.pip"


def parse_conda_env(path: str, text: str) -> Parsed:
    try:
        root = bounded.compose(text)
    except bounded.LimitExceeded as exc:
        return Parsed(issues=[Issue(bounded.describe(exc), path, exc.line, "error")])
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return Parsed(issues=[Issue(f"invalid YAML: {str(exc).splitlines()[0]}", path,
                                    mark.line + 1 if mark else None, "error")])
    result = Parsed()
    dev = is_dev_name(PurePosixPath(path).name.split(".")[0])
    for item in _pip_items(root):
        if not isinstance(item, yaml.ScalarNode) or not str(item.value).strip():
            result.issues.append(Issue("pip: item is not a requirement string", path, item.start_mark.line + 1))
            continue
        result.add(parse_line(path, item.start_mark.line + 1, str(item.value).strip(), dev, SECTION))
    return result


def _pip_items(root: yaml.Node | None) -> list[yaml.Node]:
    """The nodes of every `- pip: [...]` list inside the top-level `dependencies` list."""
    dependencies = _value(root, "dependencies")
    if not isinstance(dependencies, yaml.SequenceNode):
        return []
    found: list[yaml.Node] = []
    for entry in dependencies.value:
        pip = _value(entry, "pip")
        if isinstance(pip, yaml.SequenceNode):
            found.extend(pip.value)
    return found


def _value(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)
