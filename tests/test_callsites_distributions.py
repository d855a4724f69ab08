"""Distribution ↔ import name mapping used for call-site group aliases, and group lookup."""

from __future__ import annotations

from repocontext.callsites.common import lookup
from repocontext.callsites.distributions import Providers, normalise


def dep(name: str, ecosystem: str = "PyPI") -> list[dict[str, str]]:
    return [{"ecosystem": ecosystem, "name": name, "file": "requirements.txt"}]


def test_table_covers_names_that_differ() -> None:
    providers = Providers()
    assert providers.providers("yaml") == ["pyyaml"]
    assert providers.providers("PIL") == ["pillow", "pillow-simd"]
    assert providers.providers("bs4") == ["beautifulsoup4"]
    assert providers.providers("cv2") == ["opencv-contrib-python", "opencv-python", "opencv-python-headless"]
    assert providers.providers("jwt") == ["pyjwt"]
    assert providers.providers("requests") == ["requests"]  # fallback: its own normalised name


def test_declared_dependencies_become_aliases() -> None:
    deps = {"flask-cors": dep("flask-cors"), "google-cloud-storage": dep("google-cloud-storage"),
            "lodash": dep("lodash", "npm")}
    providers = Providers(deps)
    assert providers.providers("flask_cors") == ["flask-cors"]
    assert providers.group_key("google.cloud.storage.Client") == "google.cloud.storage"
    assert providers.group_key("google.protobuf.json_format.Parse") == "google.protobuf"
    assert providers.group_key("google.other.thing") == "google"
    assert providers.group_key("yaml.safe_load") == "yaml"


def test_lookup_by_module_distribution_or_normalised_name() -> None:
    groups = {"yaml": {"module": "yaml", "aliases": ["pyyaml"]}, "PIL": {"module": "PIL", "aliases": ["pillow"]}}
    assert lookup(groups, "yaml") == ["yaml"]
    assert lookup(groups, "PyYAML") == ["yaml"]
    assert lookup(groups, "pyyaml") == ["yaml"]
    assert lookup(groups, "Pillow") == ["PIL"]
    assert lookup(groups, "pil") == ["PIL"]
    assert lookup(groups, "requests") == []
    assert normalise("Foo_Bar.baz") == "foo-bar-baz"
