"""Which distributions provide an import name: a small table plus the dependency section.

The call-site groups are keyed by import name (`yaml`), while advisories and
TCCM keys speak of distributions (`PyYAML`). A group's `aliases` bridge the
two. Sources, merged: the table below (common cases where the names differ),
`repocontext.deps.imports.import_names` (same idea, kept by the dependency
probes), and the repository's own dependency section (a declared distribution whose normalised
name equals the normalised module name, or whose import names include it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from repocontext.deps.imports import import_names as deps_import_names

# distribution (any spelling) -> import names it provides
KNOWN: dict[str, tuple[str, ...]] = {
    "PyYAML": ("yaml",),
    "Pillow": ("PIL",),
    "Pillow-SIMD": ("PIL",),
    "beautifulsoup4": ("bs4",),
    "scikit-learn": ("sklearn",),
    "scikit-image": ("skimage",),
    "python-dateutil": ("dateutil",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "opencv-contrib-python": ("cv2",),
    "attrs": ("attr", "attrs"),
    "PyJWT": ("jwt",),
    "protobuf": ("google.protobuf",),
    "grpcio": ("grpc",),
    "pyOpenSSL": ("OpenSSL",),
    "pycryptodome": ("Crypto",),
    "pycryptodomex": ("Cryptodome",),
    "python-jose": ("jose",),
    "python-multipart": ("multipart", "python_multipart"),
    "python-dotenv": ("dotenv",),
    "mysqlclient": ("MySQLdb",),
    "psycopg2-binary": ("psycopg2",),
    "psycopg-binary": ("psycopg",),
    "pyserial": ("serial",),
    "pyzmq": ("zmq",),
    "pymongo": ("pymongo", "bson", "gridfs"),
    "dnspython": ("dns",),
    "websocket-client": ("websocket",),
    "python-magic": ("magic",),
    "PyNaCl": ("nacl",),
    "PyGithub": ("github",),
    "GitPython": ("git",),
    "python-ldap": ("ldap",),
    "python-socketio": ("socketio",),
    "python-engineio": ("engineio",),
    "python-json-logger": ("pythonjsonlogger",),
    "python-slugify": ("slugify",),
    "python-docx": ("docx",),
    "python-pptx": ("pptx",),
    "PyMuPDF": ("fitz", "pymupdf"),
    "pdfminer.six": ("pdfminer",),
    "djangorestframework": ("rest_framework",),
    "django-cors-headers": ("corsheaders",),
    "google-api-python-client": ("googleapiclient",),
    "google-auth": ("google.auth", "google.oauth2"),
    "google-cloud-storage": ("google.cloud.storage",),
    "azure-identity": ("azure.identity",),
    "azure-storage-blob": ("azure.storage.blob",),
    "apache-airflow": ("airflow",),
    "apache-beam": ("apache_beam",),
    "msgpack-python": ("msgpack",),
    "tensorflow-gpu": ("tensorflow",),
    "faiss-cpu": ("faiss",),
    "pywin32": ("win32api", "win32con", "pywintypes"),
    "PyWavelets": ("pywt",),
    "ruamel.yaml": ("ruamel.yaml",),
    "setuptools": ("setuptools", "pkg_resources"),
    "typing-extensions": ("typing_extensions",),
}


def normalise(name: str) -> str:
    """PEP 503 normalisation (also applied to import names, so `flask_cors` ~ `flask-cors`)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def import_names(distribution: str) -> set[str]:
    """Import names a PyPI distribution provides: the table here plus `repocontext.deps.imports`."""
    norm = normalise(distribution)
    names = {m for dist, modules in KNOWN.items() if normalise(dist) == norm for m in modules}
    names.update(deps_import_names(distribution, "PyPI"))
    return names


def python_dependencies(dependencies: Mapping[str, Any] | None) -> list[str]:
    """Normalised names of the PyPI dependencies in a `dependencies` section (plain JSON)."""
    found: set[str] = set()
    for key, records in (dependencies or {}).items():
        for record in records if isinstance(records, list) else ():
            if isinstance(record, Mapping) and record.get("ecosystem") == "PyPI":
                found.add(normalise(str(record.get("name") or key)))
    return sorted(found)


class Providers:
    """Import name → providing distributions, built once per run from the table and the dependencies."""

    def __init__(self, dependencies: Mapping[str, Any] | None = None) -> None:
        self._by_module: dict[str, set[str]] = {}
        for dist, modules in KNOWN.items():
            for module in modules:
                self._by_module.setdefault(module, set()).add(normalise(dist))
        self._declared: dict[str, str] = {}  # normalised module name → declared distribution
        self._declared_modules: set[str] = set()  # top-level import names of declared distributions
        for dist in python_dependencies(dependencies):
            self._declared[dist] = dist
            for module in import_names(dist):
                self._by_module.setdefault(module, set()).add(dist)
                self._declared_modules.add(module.partition(".")[0])
        # Dotted import names provided by one distribution (`google.protobuf`) make narrower groups.
        self.namespaces = frozenset(m for m in self._by_module if "." in m)
        self.namespace_roots = frozenset(m.split(".", 1)[0] for m in self.namespaces)

    def providers(self, module: str) -> list[str]:
        """Normalised distribution names providing `module`; its own normalised name when nothing is known."""
        found = set(self._by_module.get(module, ()))
        declared = self._declared.get(normalise(module))
        if declared:
            found.add(declared)
        return sorted(found or {normalise(module)})

    def is_declared(self, top: str) -> bool:
        """Whether a declared dependency provides top-level import name `top`."""
        return top in self._declared_modules or normalise(top) in self._declared

    def group_key(self, dotted: str) -> str:
        """The group a qualified Python name belongs to: its top-level module or a known namespace part."""
        top = dotted.split(".", 1)[0]
        if top not in self.namespace_roots:
            return top
        parts = dotted.split(".")
        for end in range(len(parts), 1, -1):
            candidate = ".".join(parts[:end])
            if candidate in self.namespaces:
                return candidate
        return top
