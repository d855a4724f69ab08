"""The secret rules as data (repocontext/secret_rules.yaml): each rule finds what it names and leaves alone
what only looks like it; the file loads, validates and ships with the package."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from repocontext import secret_rules
from repocontext.secrets import CONTENT_RULES, content_rule, markers, must_read, path_rule, redact, scrub

RULES = {rule.name: rule for rule in CONTENT_RULES}

# rule → (texts it must redact: the secret is the part after "⟨" up to "⟩", texts it must leave alone)
CASES: dict[str, tuple[list[str], list[str]]] = {
    "private-key-block": (["⟨-----BEGIN EC PRIVATE KEY-----\nMHcFAKE\n-----END EC PRIVATE KEY-----⟩\n"],
                          ["-----BEGIN PUBLIC KEY-----\nMFkw\n"]),
    "aws-access-key-id": (["id = ⟨AKIAFAKEEXAMPLE00001⟩"], ["xAKIAFAKEEXAMPLE00001", "AKIA-docs"]),
    "aws-secret-access-key": (["aws_secret_access_key = ⟨FAKEwJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLE1⟩"],
                              ["aws_secret_access_key = ${AWS_SECRET}"]),
    "github-token": (["⟨ghp_FAKE0000000000000000000000000000EXMPL⟩"], ["ghp_short"]),
    "gitlab-token": (["⟨glpat-FAKEexample0000000000⟩"], ["glpat-short"]),
    "slack-token": (["⟨xoxb-0000FAKE0000-EXAMPLE⟩"], ["axoxb-0000FAKE0000"]),
    "slack-webhook": (["https://hooks.slack.com/services/⟨T0FAKE000/B0FAKE000/FAKEwebhook00⟩"],
                      ["https://hooks.slack.com/"]),
    "google-api-key": (["⟨AIzaFAKE0000000000EXAMPLE00000000000000⟩"], ["AIzaShort"]),
    "stripe-secret-key": (["⟨sk_live_FAKE0000EXAMPLE0000000000⟩", "⟨rk_test_FAKE0000EXAMPLE0000000000⟩"],
                          ["pk_live_FAKE0000EXAMPLE0000000000"]),
    "npm-token": (["⟨npm_FAKE00000000000000000000000000EXAMPL⟩"], ["npm_install"]),
    "pypi-token": (["⟨pypi-AgEIcHlwaS5vcmcFAKE000000000000000000000000000000000000EXAMPLE⟩"], ["pypi-org"]),
    "openai-key": (["⟨sk-proj-FAKE0000EXAMPLE0000000000000000000⟩"], ["sha512-AbCsk-" + "x" * 40]),
    "sendgrid-key": (["⟨SG.FAKEsendgrid0000EXAMPL.FAKEsendgridSecret00000000000000000EXAMPLE0⟩"], ["SG.short"]),
    "jwt": (["Bearer ⟨eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKEsignature⟩"], ["eyJhbGciOiJIUzI1NiJ9"]),
    "k8s-secret": (["apiVersion: v1\n⟨kind: Secret⟩\n"], ["kind: SecretProviderClass\n"]),
    "k8s-env-value": (["- name: API_TOKEN\n  value: ⟨FAKEk8sEnvToken0⟩\n"], ["- name: LOG_LEVEL\n  value: debug\n"]),
    "docker-auth": (['{"auths": {"r.example": {"auth": "⟨RkFLRTpFWEFNUExF⟩"}}}'], ['{"auth": "basic"}']),
    "npmrc-auth": (["//registry.npmjs.org/:_authToken=⟨FAKE-npm-auth-0000⟩", "  npmAuthToken: ⟨FAKEyarn000⟩"],
                   ["self.super_password = 'secret'"]),
    "url-userinfo": (["https://ci:⟨FAKEpipT0ken⟩@pypi.example/simple", "postgres://app:⟨FAKEpw0⟩@db:5432/app"],
                     ["https://user@host/", "https://${USER}:${PASSWORD}@host/", "http://[::1]:8080/"]),
    "authorization-header": (['-H "Authorization: Bearer ⟨FAKEbearer0000⟩"'], ["Authorization: Bearer ${TOKEN}"]),
    "django-secret-key": (["SECRET_KEY = '⟨django-insecure-FAKE-0000⟩'"], ["SECRET_KEY = os.environ['KEY']"]),
    "secret-assignment": (["ARG GITHUB_TOKEN=⟨FAKEdockerArgT0ken⟩", "ENV API_KEY=⟨FAKEk3y0000⟩ APP_ENV=prod",
                           "export DB_PASSWORD=⟨FAKEpassw0rd⟩", "- POSTGRES_PASSWORD=⟨FAKEpgPassw0rd⟩"],
                          ["django-allauth==0.57.2", "API_KEY = settings.PYCON_API_KEY", "TOKEN=${TOKEN}",
                           "password = os.environ['X']", "token = get_token()"]),
    "dockerfile-env": (["ENV DB_PASSWORD ⟨FAKEdockerEnvPw⟩", "+ENV API_TOKEN ⟨FAKEdiffLine0⟩"],
                       ["ENV DB_PASSWORD $DB_PASSWORD", "ENV PATH /usr/bin"]),
    "secret-key-value": (["api_token: ⟨FAKEyamlT0ken⟩", 'api_key: "⟨FAKEyamlK3y⟩"', "password = ⟨FAKEiniPassw0rd⟩",
                          "'PASSWORD': '⟨FAKEdjangoPw0⟩',", "user: {token: ⟨FAKEkubeT0ken⟩}"],
                         ["max_tokens: 100000", "secretName: tls-cert", "token = var.datadog_key",
                          "password='password'", "FASTLY_API_KEY = False", "api_key: ${API_KEY}"]),
}


def _expected(case: str) -> tuple[str, str]:
    """(the text, the secret in it) of a case written with ⟨…⟩ around the secret."""
    before, rest = case.split("⟨", 1)
    secret, after = rest.split("⟩", 1)
    return before + secret + after, secret


def test_every_rule_has_cases() -> None:
    assert set(CASES) == set(RULES)


@pytest.mark.parametrize(("rule", "case"), [(r, c) for r, (found, _) in CASES.items() for c in found])
def test_a_rule_finds_its_value(rule: str, case: str) -> None:
    text, secret = _expected(case)
    spans = [text[start:end] for start, end in RULES[rule].spans(text)]
    assert secret in spans, spans
    cleaned = redact(text)
    assert secret not in cleaned and "REDACTED-" in cleaned


@pytest.mark.parametrize(("rule", "text"), [(r, t) for r, (_, left) in CASES.items() for t in left])
def test_a_rule_leaves_lookalikes_alone(rule: str, text: str) -> None:
    assert RULES[rule].spans(text) == []


@pytest.mark.parametrize(("path", "rule"), [
    ("frontend/.npmrc", "npmrc"), ("ci/.dockercfg", "docker-config"), ("deploy/kubeconfig", "kubeconfig"),
    ("prod.kubeconfig", "kubeconfig"), ("home/.kube/config", "secret-directory"),
    ("infra/prod.tfvars", "terraform-state"), ("terraform.tfstate", "terraform-state"), ("deploy/app.env", "dotenv"),
])
def test_new_name_rules(path: str, rule: str) -> None:
    assert path_rule(path) == rule


@pytest.mark.parametrize(("path", "read"), [
    ("requirements.txt", True), ("requirements-dev.in", True), ("api/Dockerfile", True), ("app.dockerfile", True),
    ("k8s/deploy.yaml", True), ("package.json", True), ("pyproject.toml", True), ("scripts/x.sh", True),
    ("app/settings.py", False), ("config/notify.ini", False), ("web/maps.js", False),
])
def test_must_read_files(path: str, read: bool) -> None:
    assert must_read(path) is read


def test_a_token_denies_a_source_file_but_is_redacted_in_a_manifest() -> None:
    line = "https://x:ghp_FAKE0000000000000000000000000000EXMPL@github.com/acme/app.git\n"
    assert content_rule(line, "deploy.py") == "content:github-token"
    assert content_rule(line, "requirements.txt") is None
    text, denied = scrub(line.encode(), "requirements.txt")
    assert denied is None and text is not None and "ghp_" not in text
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n"
    assert scrub(key.encode(), "values.yaml") == (None, "content:private-key-block")  # key material: always


def test_markers_name_their_rule_and_redaction_is_idempotent() -> None:
    text = "ENV API_KEY=FAKEk3y0000\nurl = https://u:FAKEpw00@h/\n"
    once = redact(text)
    assert [m.group(1) for m in markers().finditer(once)] == ["secret-assignment", "url-userinfo"]
    assert redact(once) == once


def test_the_rules_ship_with_the_package_and_load_once() -> None:
    assert resources.files("repocontext").joinpath("secret_rules.yaml").is_file()
    assert secret_rules.shipped() is secret_rules.shipped()
    text = resources.files("repocontext").joinpath("secret_rules.yaml").read_text(encoding="utf-8")
    assert len(secret_rules.parse(text).values) == len(CONTENT_RULES)  # every pattern compiles (not lazy)


def test_the_compiled_rules_are_the_yaml_and_a_stale_copy_is_ignored(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """secret_rules.json spares every process PyYAML; it must say what the YAML says, key order included (a
    file rule's place is its precedence), and after an edit of the YAML it no longer counts."""
    text = secret_rules.SHIPPED.read_text(encoding="utf-8")
    compiled = secret_rules.compiled_data(text)
    assert compiled is not None, "secret_rules.json is stale: run `python -m repocontext.secret_rules`"
    data = secret_rules.yaml_data(text)
    assert compiled == data and list(compiled["files"]) == list(data["files"])
    assert secret_rules.shipped().path_names == secret_rules.parse(text).path_names
    edited = text.replace("deny: always", "deny: file", 1)
    assert edited != text and secret_rules.compiled_data(edited) is None
    monkeypatch.setattr(secret_rules, "COMPILED", tmp_path / "missing.json")
    assert secret_rules.compiled_data(text) is None
    (tmp_path / "missing.json").write_text("{not json")
    assert secret_rules.compiled_data(text) is None
    monkeypatch.setattr(secret_rules, "SHIPPED", tmp_path / "rules.yaml")
    (tmp_path / "rules.yaml").write_text(edited)
    secret_rules.write_compiled()
    assert secret_rules.compiled_data(edited) == secret_rules.yaml_data(edited)


def test_the_compiled_rules_load_unvalidated_as_the_validated_spec() -> None:
    """shipped() builds the spec from COMPILED without validating it again (it was validated when written):
    it must be the spec validation makes, patterns joined and defaults filled, field for field."""
    text = secret_rules.SHIPPED.read_text(encoding="utf-8")
    data = secret_rules.compiled_data(text)
    assert data is not None
    validated = secret_rules.RulesSpec.model_validate(data)
    trusted = secret_rules.trusted_spec(data)
    assert trusted == validated and trusted.model_dump() == validated.model_dump()
    assert [type(v) for v in trusted.values] == [secret_rules.ValueRuleSpec] * len(validated.values)
    assert any(isinstance(p, list) for p in data["files"].values())  # a joined pattern is among them
    shipped = secret_rules.shipped()
    assert shipped.digest == secret_rules.parse(text).digest
    assert [r.spec for r in shipped.values] == list(validated.values)


def test_a_bad_rule_file_is_refused() -> None:
    good = "files: {}\ndirectories: []\nmust_read: []\n"
    with pytest.raises(ValidationError):
        secret_rules.parse(good + "values: [{name: x, pattern: a, needles: [a], deny: sometimes}]\n")
    with pytest.raises(ValidationError):
        secret_rules.parse(good + "values: [{name: x, pattern: a, needles: [], deny: never}]\n")
    with pytest.raises(re.error):
        secret_rules.parse(good + "values: [{name: x, pattern: '(', needles: [a], deny: never}]\n")


ANCHORED = [rule for rule in CONTENT_RULES if rule.anchor is not None]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["password", "PASSWORD", "Token", "api_key", "api-key", "SECRET", "auth", "=", ": ",
                                 " = ", "'", '"', "FAKEvalue00", "x.y", "\n", " ", "İ", "é", "😀", "#", "KEY",
                                 "credentials"]),
                max_size=14).map("".join))
def test_anchored_rules_match_as_a_plain_search_does(text: str) -> None:
    """The anchor is a speed-up only: the same spans as the pattern's own finditer."""
    for rule in ANCHORED:
        plain = [m.span(g) if (g := next((n for n in ("s", "b") if m.groupdict().get(n) is not None), None))
                 else m.span() for m in rule.pattern.finditer(text)]
        plain = [(a, b) for a, b in plain if secret_rules.entropy(text[a:b]) >= rule.min_entropy]
        assert rule.spans(text) == plain


@pytest.mark.parametrize(("pattern", "words"), [
    ("token|auth", ["token", "auth"]),
    ("api[_-]?key", ["api_key", "api-key", "apikey"]),
    ("credentials?", ["credentials", "credential"]),
    ("key-data|a b", ["key-data", "a b"]),
])
def test_an_alternation_of_words_becomes_its_words(pattern: str, words: list[str]) -> None:
    assert secret_rules.literal_words(pattern) == words
    # ...which start exactly where the regex matches
    text = " ".join(words) + " x" + "".join(words)
    assert sorted({m.start() for w in words for m in re.finditer(re.escape(w), text)}) == sorted(
        {i for i in range(len(text)) if re.compile(pattern).match(text, i)})


@pytest.mark.parametrize("pattern", ["a.b", "[a-z]key", "[^x]y", "key|", "(?:a|b)c", r"\btoken", "Token", "a*", "[_"])
def test_anything_but_plain_words_keeps_the_regex(pattern: str) -> None:
    assert secret_rules.literal_words(pattern) is None


def test_the_shipped_anchors_are_plain_words() -> None:
    """Both anchored rules take the one-pass word search; the property test above checks its spans."""
    assert ANCHORED and all(rule.anchor_words is not None for rule in ANCHORED)


def test_an_anchor_regex_that_is_not_plain_words_still_finds_every_match() -> None:
    spec = secret_rules.ValueRuleSpec(name="x", pattern=r"(?i:to+ken)=(?P<s>\w{4,})", needles=("oken",),
                                      anchor="to+ken", deny="never")
    rule = secret_rules.ValueRule(spec)
    assert rule.anchor_words is None
    text = "TOKEN=abcd tooken=efgh token=ij"
    assert rule.spans(text) == [(6, 10), (18, 22)]


NEEDLES = sorted({needle for rule in CONTENT_RULES for needle in rule.needles})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*NEEDLES, "x", " ", "\n", "é", "İ", "\0", "=", "k", "ey"]), max_size=20).map("".join))
def test_the_needle_index_finds_the_rules_a_substring_test_finds(text: str) -> None:
    """One Aho-Corasick pass names the same rules, in rule order, as testing each needle with `in` (str and
    bytes alike: needles are ASCII, so a UTF-8 encoding holds a needle exactly where the text does)."""
    expected = [rule for rule in CONTENT_RULES if any(needle in text for needle in rule.needles)]
    index = secret_rules.shipped().needles
    assert index.rules_in(text) == expected
    assert index.rules_in(text.encode()) == expected


def test_text_with_a_lone_surrogate_is_scanned_like_any_other() -> None:
    """Text decoded with surrogateescape (a file's undecodable bytes) is not UTF-8; the one-pass searches fall
    back without changing what is found."""
    text = "\udce9 password = 'Zx9-vB2q-Lm4w' \udcff token=\udce9 ghp_" + "a" * 36
    expected = [rule for rule in CONTENT_RULES if any(needle in text for needle in rule.needles)]
    assert secret_rules.shipped().needles.rules_in(text) == expected
    for rule in ANCHORED:
        plain = [m for m in rule.pattern.finditer(text)]
        assert [m.span() for m in rule._anchored_matches(text)] == [m.span() for m in plain]
    assert "Zx9-vB2q-Lm4w" not in redact(text) and "\udce9" in redact(text)
