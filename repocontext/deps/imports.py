"""Which top-level import names a distribution provides, for matching call sites to dependencies."""

from __future__ import annotations

from repocontext.deps.common import pypi_name

# PEP 503-normalised distribution name → import names, where they differ from the default.
PYPI_IMPORTS: dict[str, tuple[str, ...]] = {
    "pyyaml": ("yaml",),
    "pillow": ("PIL",),
    "beautifulsoup4": ("bs4",),
    "scikit-learn": ("sklearn",),
    "scikit-image": ("skimage",),
    "scikit-build": ("skbuild",),
    "python-dateutil": ("dateutil",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "opencv-contrib-python": ("cv2",),
    "opencv-contrib-python-headless": ("cv2",),
    "protobuf": ("google.protobuf",),
    "attrs": ("attr", "attrs"),
    "pyjwt": ("jwt",),
    "python-jose": ("jose",),
    "msgpack-python": ("msgpack",),
    "setuptools": ("setuptools", "pkg_resources"),
    "python-dotenv": ("dotenv",),
    "pycryptodome": ("Crypto",),
    "pycryptodomex": ("Cryptodome",),
    "pycrypto": ("Crypto",),
    "pyopenssl": ("OpenSSL",),
    "pynacl": ("nacl",),
    "argon2-cffi": ("argon2",),
    "google-api-python-client": ("googleapiclient",),
    "google-auth": ("google.auth", "google.oauth2"),
    "grpcio": ("grpc",),
    "grpcio-tools": ("grpc_tools",),
    "psycopg2-binary": ("psycopg2",),
    "mysqlclient": ("MySQLdb",),
    "mysql-connector-python": ("mysql.connector",),
    "pymongo": ("pymongo", "bson", "gridfs"),
    "dnspython": ("dns",),
    "pyzmq": ("zmq",),
    "python-ldap": ("ldap",),
    "python-magic": ("magic",),
    "python-multipart": ("multipart", "python_multipart"),
    "pyserial": ("serial",),
    "pyusb": ("usb",),
    "pysocks": ("socks", "sockshandler"),
    "pywin32": ("win32api", "win32con", "win32com", "pywintypes"),
    "websocket-client": ("websocket",),
    "python-socketio": ("socketio",),
    "python-engineio": ("engineio",),
    "python-json-logger": ("pythonjsonlogger",),
    "python-slugify": ("slugify",),
    "python-levenshtein": ("Levenshtein",),
    "levenshtein": ("Levenshtein",),
    "python-gnupg": ("gnupg",),
    "python-docx": ("docx",),
    "python-pptx": ("pptx",),
    "pymupdf": ("fitz", "pymupdf"),
    "pdfminer-six": ("pdfminer",),
    "pypdf2": ("PyPDF2",),
    "gitpython": ("git",),
    "pygithub": ("github",),
    "python-gitlab": ("gitlab",),
    "python-telegram-bot": ("telegram",),
    "discord-py": ("discord",),
    "pyqt5": ("PyQt5",),
    "pyqt6": ("PyQt6",),
    "pyside2": ("PySide2",),
    "pyside6": ("PySide6",),
    "wxpython": ("wx",),
    "pygobject": ("gi",),
    "pycairo": ("cairo",),
    "pyopengl": ("OpenGL",),
    "pywavelets": ("pywt",),
    "fonttools": ("fontTools",),
    "ipython": ("IPython",),
    "pyinstaller": ("PyInstaller",),
    "pyhamcrest": ("hamcrest",),
    "py-cpuinfo": ("cpuinfo",),
    "kafka-python": ("kafka",),
    "faiss-cpu": ("faiss",),
    "faiss-gpu": ("faiss",),
    "tensorflow-cpu": ("tensorflow",),
    "tensorflow-gpu": ("tensorflow",),
    "apache-airflow": ("airflow",),
    "djangorestframework": ("rest_framework",),
    "django-cors-headers": ("corsheaders",),
    "django-filter": ("django_filters",),
    "django-environ": ("environ",),
    "python-keycloak": ("keycloak",),
    "python-snappy": ("snappy",),
    "python-xlib": ("Xlib",),
    "pyxdg": ("xdg",),
    "mecab-python3": ("MeCab",),
    "opentelemetry-api": ("opentelemetry",),
    "opentelemetry-sdk": ("opentelemetry",),
    "ruamel-yaml": ("ruamel.yaml",),
    "zope-interface": ("zope.interface",),
    "backports-zoneinfo": ("backports.zoneinfo",),
}

# Namespace families: "google-cloud-secret-manager" → "google.cloud.secretmanager",
# "azure-storage-blob" → "azure.storage.blob".
_NAMESPACES: tuple[tuple[str, str, str], ...] = (("google-cloud-", "google.cloud.", ""), ("azure-", "azure.", "."))


def _pypi(distribution: str) -> list[str]:
    key = pypi_name(distribution)
    if key in PYPI_IMPORTS:
        return list(PYPI_IMPORTS[key])
    for prefix, package, joiner in _NAMESPACES:
        if key.startswith(prefix) and len(key) > len(prefix):
            return [package + key[len(prefix):].replace("-", joiner)]
    return [distribution.strip().lower().replace("-", "_")]


def import_names(distribution: str, ecosystem: str) -> list[str]:
    """Top-level import names for a package: e.g. ("PyYAML", "PyPI") → ["yaml"].

    PyPI falls back to the lower-cased name with "-" → "_" (dots kept, for
    namespace packages like "zope.interface"); npm packages are imported by
    their own name, scope included; Go imports are module paths.
    """
    if ecosystem == "PyPI":
        return _pypi(distribution)
    return [distribution.strip()]
