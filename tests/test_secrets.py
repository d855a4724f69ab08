"""Secret rules: names that are never opened, values that are never kept."""

from __future__ import annotations

import pytest

from repocontext.secrets import content_rule, path_rule, redact


@pytest.mark.parametrize(("path", "rule"), [
    (".env", "dotenv"), ("app/.env.production", "dotenv"), ("prod.env", "dotenv"), (".envrc", "dotenv"),
    ("certs/tls.pem", "pem"), ("server.key", "private-key-file"), ("store.p12", "private-key-file"),
    ("home/.ssh/config", "secret-directory"), ("id_rsa", "ssh-key"), ("id_ed25519.pub", "ssh-key"),
    ("credentials", "credentials-file"), ("deploy/credentials.json", "credentials-file"),
    (".aws/credentials", "secret-directory"), (".netrc", "credentials-file"), (".pypirc", "credentials-file"),
    ("gcp/service-account-prod.json", "credentials-file"), ("secrets.yaml", "credentials-file"),
])
def test_secret_paths(path: str, rule: str) -> None:
    assert path_rule(path) == rule


@pytest.mark.parametrize("path", ["src/env.py", "environment.yml", "keys.py", "docs/credentials.md",
                                  "tokenizer.json", "Dockerfile"])
def test_ordinary_paths(path: str) -> None:
    assert path_rule(path) is None


AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
VALUES = {
    "private-key-block": "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n",
    "aws-access-key-id": f"key = '{AWS_ID}'",
    "aws-secret-access-key": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github-token": "token: ghp_" + "a" * 36,
    "slack-token": "xoxb-" + "1234567890-abcdef",
    "stripe-secret-key": "sk_live_" + "0" * 24,
    "npm-token": "//registry.npmjs.org/:_authToken=npm_" + "A" * 36,
}


@pytest.mark.parametrize(("rule", "text"), list(VALUES.items()))
def test_secret_values_are_flagged_and_redacted(rule: str, text: str) -> None:
    assert content_rule(text) == f"content:{rule}"
    assert "[REDACTED]" in redact(text)


def test_redact_removes_every_value() -> None:
    text = " ".join(VALUES.values())
    cleaned = redact(text)
    assert AWS_ID not in cleaned and "ghp_" not in cleaned and "sk_live_" not in cleaned


def test_plain_code_is_not_flagged() -> None:
    assert content_rule("import os\nAPI_URL = 'https://example.com'\nkey = os.environ['KEY']\n") is None
