"""repocontext.sections: an empty section is validated and dumped without its TypeAdapter, to the same result."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from repocontext import sections
from repocontext.model import Containers, Conventions, Dependency, RepoContext

OPTIONAL = [name for name, field in RepoContext.model_fields.items() if not field.is_required()]


@pytest.mark.parametrize("name", OPTIONAL)
def test_an_empty_section_is_what_its_adapter_makes_of_it(name: str) -> None:
    adapter = TypeAdapter(RepoContext.model_fields[name].annotation)
    default = RepoContext.model_fields[name].get_default(call_default_factory=True)
    as_json = adapter.dump_python(default)
    sections.adapter.cache_clear()
    assert sections.dump_json(name, default) == adapter.dump_json(default)
    validated, expected = sections.validate(name, as_json), adapter.validate_python(as_json)
    assert validated == expected and type(validated) is type(expected)
    assert sections.adapter.cache_info().currsize == 0  # neither built the section's adapter
    assert adapter.dump_json(validated) == adapter.dump_json(expected)
    if hasattr(expected, "model_fields_set"):
        assert validated.model_fields_set == expected.model_fields_set


def test_anything_else_goes_through_the_adapter() -> None:
    dep = {"ecosystem": "PyPI", "name": "x", "file": "requirements.txt"}
    assert sections.validate("dependencies", {"x": [dep]}) == {"x": [Dependency.model_validate(dep)]}
    assert sections.dump_json("conventions", Conventions(ci=["ci.yml"])).startswith(b'{"formatters":[],"linters":[],')
    with pytest.raises(ValueError):  # a wrong type is refused as the adapter refuses it
        sections.validate("dependencies", [])
    with pytest.raises(ValueError):
        sections.validate("containers", {"dockerfiles": None, "shell_evidence": [], "deployment_manifests": [],
                                         "deployments": []})
    assert sections.validate("containers", {"dockerfiles": [], "shell_evidence": [], "deployment_manifests": [],
                                            "deployments": []}) == Containers()


def test_build_all_leaves_no_model_to_build_on_first_use() -> None:
    from repocontext import model

    sections.build_all()
    models = [m for m in vars(model).values() if isinstance(m, type) and issubclass(m, model._Model)]
    assert [m.__name__ for m in models if not m.__pydantic_complete__] == ["_Model", "_Sparse"]
    assert sections.adapter.cache_info().currsize == len(RepoContext.model_fields)


def test_the_advisory_models_are_deferred_and_build_models_builds_them_all() -> None:
    """A gather whose packages no advisory names never parses one (~10 ms of its imports); the daemon builds
    them before it forks (planner/daemon/server.py)."""
    import subprocess
    import sys

    from pydantic import BaseModel

    from repocontext.osv import schema

    fresh = subprocess.run([sys.executable, "-c", "from repocontext.osv import schema; "
                            "print(schema.Advisory.__pydantic_complete__)"], capture_output=True, text=True)
    assert fresh.stdout.strip() == "False"  # deferred in a new process
    schema.build_models()
    models = [m for m in vars(schema).values() if isinstance(m, type) and issubclass(m, BaseModel)
              and m.__module__ == schema.__name__ and not m.__name__.startswith("_")]
    assert {m.__name__ for m in models} >= {"Advisory", "Affected", "Range", "Event", "Package", "LoadIssue"}
    assert [m.__name__ for m in models if not m.__pydantic_complete__] == []
    assert schema.Advisory.model_validate({"id": "X-1", "affected": None}).affected == []
