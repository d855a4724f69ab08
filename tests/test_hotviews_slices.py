"""The slice set: computed from must_read of the TCCMs in service, ranked, rendered exactly as the builder would."""

from __future__ import annotations

from pathlib import Path

import pytest
from bundle_helpers import tccm_from

from planner import tokens
from planner.bundle import keys, render
from planner.hotviews import slices
from planner.tccm.model import TCCM

CONTEXT = {
    "dependencies": {
        "requests": {"declarations": [{"file": "requirements.txt", "version": "2.30.0"}]},
        "pyyaml": {"aliases": ["PyYAML", "yaml"], "declarations": [{"file": "requirements.txt"}]},
    },
    "vulnerabilities": {"GHSA-1": {"package": "requests", "aliases": ["CVE-2023-1"]},
                        "GHSA-2": {"package": "pyyaml", "aliases": []}},
    "manifests": [{"path": "requirements.txt", "kind": "pip"}],
    "languages": {"python": {"files": 3}},
}


def _classes(tmp_path: Path) -> list[TCCM]:
    one = tccm_from(tmp_path, """
        must_read:
          - key: manifests
          - key: dependencies.${inputs.package}
        should_read:
          - key: languages
        may_read:
          - key: manifests
        budget: {max_files: 5, max_tokens: 9000, per_file_max_tokens: 3000}
    """, name="one")
    two = tccm_from(tmp_path, """
        must_read:
          - key: vulnerabilities[package=${inputs.package}]
          - key: manifests
        budget: {max_files: 5, max_tokens: 9000, per_file_max_tokens: 3000}
    """, name="two")
    return [one, two]


def test_slice_set_comes_from_must_read_ranked_by_sharing(tmp_path: Path) -> None:
    specs = slices.slice_set(_classes(tmp_path))
    assert [s.key for s in specs] == ["manifests", "dependencies.${inputs.package}",
                                      "vulnerabilities[package=${inputs.package}]"]
    assert specs[0].task_classes == ("one", "two")
    assert specs[1].task_classes == ("one",) and specs[1].inputs == ("package",)
    # every use of a key in any band gets a token count; only must_read decides the set ("languages" is not in it)
    assert specs[0].ids == (("may_read", 0), ("must_read", 0), ("must_read", 1))


def test_candidates_are_mapping_names_aliases_and_filter_values() -> None:
    assert slices.candidates(CONTEXT, "dependencies.${inputs.package}") == ["PyYAML", "pyyaml", "requests", "yaml"]
    assert slices.candidates(CONTEXT, "vulnerabilities[package=${inputs.package}]") == ["pyyaml", "requests"]
    assert slices.candidates(CONTEXT, "manifests") == []
    assert slices.candidates(CONTEXT, "dependencies.${inputs.a}.${inputs.b}") == []  # two inputs: widened only


def test_rendered_slice_equals_resolve_and_render(tmp_path: Path) -> None:
    spec = slices.slice_set(_classes(tmp_path))[1]
    for inputs in ({}, {"package": "requests"}, {"package": "PyYAML"}):
        hot = slices.render_slice(CONTEXT, spec, inputs)
        resolved = keys.resolve(CONTEXT, spec.key, inputs)
        assert hot is not None
        assert (hot.key, hot.notes, hot.value) == (resolved.key, resolved.notes, resolved.value)
        assert hot.body == render.render_value(resolved.value)
        entry_id = f"must_read:1:{resolved.key}"
        assert hot.tokens == {entry_id: tokens.count(render.block(entry_id, hot.body))}
    assert slices.render_slice(CONTEXT, spec, {"package": "absent"}) is None


def test_render_all_is_ranked_and_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    specs = slices.slice_set(_classes(tmp_path))
    rendered = [(spec.key, inputs) for spec, inputs, _ in slices.render_all(CONTEXT, specs).slices]
    assert rendered[0] == ("manifests", {})
    assert ("dependencies.${inputs.package}", {}) in rendered
    assert ("dependencies.${inputs.package}", {"package": "yaml"}) in rendered
    assert ("vulnerabilities[package=${inputs.package}]", {"package": "pyyaml"}) in rendered
    assert len(rendered) == 1 + 5 + 3
    assert slices.render_all(CONTEXT, specs).complete
    monkeypatch.setattr(slices, "MAX_SLICES", 2)
    cut = slices.render_all(CONTEXT, specs)
    assert len(cut.slices) == 2 and not cut.complete
    monkeypatch.setattr(slices, "MAX_SLICES", 100)
    monkeypatch.setattr(slices, "MAX_VALUES", 1)
    assert len(slices.render_all(CONTEXT, specs).slices) == 1 + 2 + 2
