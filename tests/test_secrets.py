"""Secret rules: names that are never opened, values that are never kept."""

from __future__ import annotations

import pytest

from repocontext.secrets import CONTENT_RULES, content_rule, content_rule_of_bytes, path_rule, redact


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
    assert f"REDACTED-{rule}" in redact(text)
    # The file scan looks at raw bytes: the same verdict, also around bytes that are not valid UTF-8.
    assert content_rule_of_bytes(text.encode()) == f"content:{rule}"
    assert content_rule_of_bytes(b"\xff\xfe" + text.encode() + b"\xc3") == f"content:{rule}"


def test_redact_removes_every_value() -> None:
    text = " ".join(VALUES.values())
    cleaned = redact(text)
    assert AWS_ID not in cleaned and "ghp_" not in cleaned and "sk_live_" not in cleaned


def test_plain_code_is_not_flagged() -> None:
    assert content_rule("import os\nAPI_URL = 'https://example.com'\nkey = os.environ['KEY']\n") is None
    assert content_rule_of_bytes(b"SECRET_KEY = os.environ['SECRET_KEY']  # a needle, no value\n\xff") is None


@pytest.mark.parametrize(("text", "flagged"), [
    ("token xoxb-1234567890abc", True),
    ("axoxb-1234567890abc", False),  # inside a word: not a token
    ("axoxb-xoxb-1234567890", True),  # a rejected hit overlaps a real one: still found
    ("éxoxb-1234567890abc", False),  # a non-ASCII word character before it counts as a word
    ("xoxb-1234567890abc at the start", True),
    ("sha512-AbCsk-" + "x" * 40, False),  # an integrity hash holding "sk-" mid-word
])
def test_word_boundary_rules_match_as_their_pattern_does(text: str, flagged: bool) -> None:
    rules = {r.name: r for r in CONTENT_RULES}
    for rule in (rules["slack-token"], rules["openai-key"]):
        assert rule.search(text) == (rule.pattern.search(text) is not None)
    assert (content_rule(text) is not None) == flagged
