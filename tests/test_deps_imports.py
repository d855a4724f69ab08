"""Distribution name → import names."""

from __future__ import annotations

import pytest

from repocontext.deps.imports import PYPI_IMPORTS, import_names


@pytest.mark.parametrize(("distribution", "expected"), [
    ("PyYAML", ["yaml"]),
    ("Pillow", ["PIL"]),
    ("beautifulsoup4", ["bs4"]),
    ("scikit-learn", ["sklearn"]),
    ("scikit_learn", ["sklearn"]),
    ("python-dateutil", ["dateutil"]),
    ("opencv-python", ["cv2"]),
    ("protobuf", ["google.protobuf"]),
    ("attrs", ["attr", "attrs"]),
    ("PyJWT", ["jwt"]),
    ("python-jose", ["jose"]),
    ("msgpack-python", ["msgpack"]),
    ("setuptools", ["setuptools", "pkg_resources"]),
    ("ruamel.yaml", ["ruamel.yaml"]),
    ("google-cloud-secret-manager", ["google.cloud.secretmanager"]),
    ("azure-storage-blob", ["azure.storage.blob"]),
    ("Flask-Cors", ["flask_cors"]),
    ("requests", ["requests"]),
    ("zope.interface", ["zope.interface"]),
])
def test_pypi(distribution: str, expected: list[str]) -> None:
    assert import_names(distribution, "PyPI") == expected


def test_other_ecosystems_keep_the_name() -> None:
    assert import_names("@types/node", "npm") == ["@types/node"]
    assert import_names("lodash", "npm") == ["lodash"]
    assert import_names("github.com/pkg/errors", "Go") == ["github.com/pkg/errors"]


def test_table_is_keyed_by_normalised_names_and_is_large_enough() -> None:
    from repocontext.deps.common import pypi_name

    assert all(pypi_name(k) == k for k in PYPI_IMPORTS)
    assert len(PYPI_IMPORTS) >= 40
