"""Key selectors: dotted paths, aliases, filters and ${inputs.x} scoping."""

from __future__ import annotations

from planner.bundle.keys import resolve

CONTEXT = {
    "vulnerabilities": {
        "PYSEC-2023-74": {"id": "PYSEC-2023-74", "aliases": ["CVE-2023-32681", "GHSA-j8r2-6x86-q33q"],
                          "package": "requests"},
        "PYSEC-2021-142": {"id": "PYSEC-2021-142", "aliases": ["CVE-2020-14343"], "package": "pyyaml"},
    },
    "dependencies": {"pyyaml": [{"name": "pyyaml", "version": "5.3.1"}], "requests": [{"name": "requests"}]},
    "call_sites": {"yaml": {"module": "yaml", "aliases": ["pyyaml"], "sites": [{"file": "a.py", "line": 3}]}},
    "containers": {"dockerfiles": [{"path": "Dockerfile", "stages": []}, {"path": "web/Dockerfile", "stages": []}]},
    "tests": {"by_module": {"yaml": ["tests/test_a.py"]}},
}


def test_plain_dotted_path() -> None:
    assert resolve(CONTEXT, "tests.by_module.yaml", {}).value == ["tests/test_a.py"]


def test_input_substitution_and_normalised_names() -> None:
    resolved = resolve(CONTEXT, "dependencies.${inputs.package}", {"package": "PyYAML"})
    assert resolved.key == "dependencies.PyYAML" and resolved.value == [{"name": "pyyaml", "version": "5.3.1"}]


def test_any_alias_finds_the_advisory() -> None:
    record = CONTEXT["vulnerabilities"]["PYSEC-2023-74"]
    for alias in ("CVE-2023-32681", "ghsa-j8r2-6x86-q33q"):
        value = resolve(CONTEXT, "vulnerabilities.${inputs.advisory}", {"advisory": alias}).value
        assert value == {"PYSEC-2023-74": record}  # alias hits keep the advisory id as the key
    assert resolve(CONTEXT, "vulnerabilities.PYSEC-2023-74", {}).value == record


def test_distribution_name_finds_module_group() -> None:
    value = resolve(CONTEXT, "call_sites.${inputs.package}", {"package": "PyYAML"}).value
    assert value == {"yaml": CONTEXT["call_sites"]["yaml"]}


def test_missing_input_widens_and_says_so() -> None:
    resolved = resolve(CONTEXT, "vulnerabilities.${inputs.advisory}", {})
    assert resolved.key == "vulnerabilities.*"
    assert set(resolved.value) == {"PYSEC-2023-74", "PYSEC-2021-142"}
    assert resolved.notes == ["inputs.advisory not given: not narrowed"]


def test_filter_segment() -> None:
    resolved = resolve(CONTEXT, "vulnerabilities[package=${inputs.package}]", {"package": "requests"})
    assert list(resolved.value) == ["PYSEC-2023-74"] and resolved.key == "vulnerabilities[package=requests]"
    on_list = resolve(CONTEXT, "containers.dockerfiles[path=web/Dockerfile]", {}).value
    assert on_list == [{"path": "web/Dockerfile", "stages": []}]


def test_unscoped_filter_keeps_everything() -> None:
    resolved = resolve(CONTEXT, "vulnerabilities[package=${inputs.package}]", {})
    assert len(resolved.value) == 2 and resolved.key == "vulnerabilities[package=*]"


def test_absent_key_is_not_found() -> None:
    assert not resolve(CONTEXT, "dependencies.django", {}).found
    assert not resolve(CONTEXT, "tests.files", {}).found
