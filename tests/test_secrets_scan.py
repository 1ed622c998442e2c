"""Tests for jupymem.intake.secrets_scan: the hints that let ordinary prose skip the rules.

``find_secrets`` runs a group of rules only when its hint occurs in the text, so a
hint must be a necessary condition of every match of every rule in its group. These
tests compare the hinted scan with the full one (``_scan`` runs every rule) on texts
built to make each rule match, in many spellings, and on the statement corpora.
Case matters twice: the rules that ignore case must be hinted in every case, and
in Unicode ``ſ`` is an ``s`` and the Kelvin sign a ``k`` to them.

Fake secrets are assembled from pieces so that this file does not itself look like
a leaked credential to secret scanners.
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

import pytest

from jupymem.intake import capture, secrets_scan
from jupymem.intake.secrets_scan import _scan, find_secrets
from jupymem.intake.text import CONTROL, LINE_CONTROL
from secret_corpus_classes import CLASSES
from secret_corpus_generic import CORPUS
from secret_corpus_holdout import HOLDOUT
from secret_corpus_holdout2 import HOLDOUT2, LOOKALIKES2
from secret_lookalikes import LOOKALIKES
from secret_shapes import FORMS, PROSE, SHAPES

DATA = Path(__file__).parent / "data"

# One or more texts per rule that the rule flags (checked below, so that each rule
# really is exercised), then the same texts in other cases and in sentences.
TRIGGERS = {
    "private-key": ["-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEpAIBAAKCAQEA7bq2" + "JxQl8Hn0r3w9mZkA1bC2"],
    "jwt": ["eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N"],
    "aws-access-key": ["AKIA" + "IOSFODNN7" + "EXAMPLE", "ASIA" + "Y34FZKBOKMUTVV7A"],
    "aws-secret-key": ["aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"],
    "github-token": ["ghp_" + "a1B2c3D4e5" * 4, "github_pat_" + "11ABCDEFG0" + "123456789_abcdefghijklmnop"],
    "anthropic-key": ["sk-ant-api03-" + "abcDEF123456789_ghij" + "klmnop-QRST"],
    "openai-key": ["sk-proj-" + "abc123DEF456ghi789" + "JKL012mno345"],
    "stripe-key": ["sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc", "rk_" + "test_" + "51H8xY2eZvKYlo2C0aBc"],
    "slack-token": ["xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOp"],
    "google-api-key": ["AIza" + "SyA1234567890" + "abcdefghijklmnopqrstuv"],
    "huggingface-token": ["hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"],
    "url-credentials": ["postgresql://analyst:s3cretPass@db.internal:5432/sales"],
    "password": [
        'password = "hunter22"', "DB_PASSWORD=S3cr3t!x", 'password: str = "hunter22"', "--password hunter2",
        "psql --password=Tr0ub4dor", "the password is hunter2", "curl -u admin:hunter2 https://example.org",
        "curl --user=admin:hunter2 x", "passphrase was Tr0ub4dor&3",
    ],
    "bearer-token": ["send Bearer abc123def456ghi789jkl with each call"],
    "basic-auth": ["Authorization: Basic dXNlcjpwYXNzd29yZA=="],
    "api-key": ["API_KEY: abc123def", '{"api_key": "q8v7x6c5"}', "--api-key abc123def456", "apikey => 'zq81mx02'"],
    "secret": ["secret = 'p@ssw0rd'", "client_secret: 8f3b2a1c9d7e6f5a"],
    "token": ["?token=3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a", "refresh_token := 'abc123def456'"],
}
# Every token shape the scanner knows (tests/secret_shapes.py), bare and in a sentence.
for _kind, _token, _ in SHAPES.values():
    TRIGGERS.setdefault(_kind, []).append(_token)
for _kind, _text, _ in PROSE:
    TRIGGERS.setdefault(_kind, []).append(_text)
# What case folding makes equal to an ASCII letter in a regex that ignores case.
TWINS = {"s": "ſ", "k": "\u212a", "i": "ı", "K": "\u212a"}
FILLER = ["Use", "the", "join", "key", "value", "token", "count", "password", "policy", "é", "—", "日本", "=", ":"]


def _variants(text: str) -> list[str]:
    out = [text, text.upper(), text.lower(), text.title(), text.swapcase()]
    out += [text.replace(a, b) for a, b in TWINS.items() if a in text]
    out += [f"Note: {v} (see the wiki), café" for v in out[:5]]  # inside a sentence, and not ASCII
    return out


def _corpus() -> list[str]:
    texts = [v for group in TRIGGERS.values() for t in group for v in _variants(t)]
    texts += [v for text, _ in FORMS.values() for v in _variants(text) + _variants(repr(text))]
    # the generic layer's corpus and its look-alikes (gated rules: the gate must hide no match either)
    corpora = [*CORPUS.values(), *HOLDOUT.values(), *CLASSES.values(), *HOLDOUT2.values()]
    texts += [v for text, _ in corpora for v in _variants(text) + _variants(repr(text))]
    texts += [v for text in LOOKALIKES + LOOKALIKES2 for v in _variants(text)]
    texts += (DATA / "english_statements.txt").read_text(encoding="utf-8").splitlines()
    texts += (DATA / "secret_talk_statements.txt").read_text(encoding="utf-8").splitlines()
    texts += [line.split("\t", 1)[-1] for line in (DATA / "foreign_statements.tsv").read_text("utf-8").splitlines()]
    rng = random.Random(7)
    pieces = [t for group in TRIGGERS.values() for t in group] + FILLER + [t for t, _ in CORPUS.values()]
    for _ in range(1500):
        words = [rng.choice(pieces) for _ in range(rng.randint(1, 6))]
        cut = rng.choice(words)
        words.append(cut[: rng.randint(1, len(cut))])  # a rule's prefix alone must not be missed either
        texts.append(rng.choice([" ", "\n", ", ", "="]).join(words))
    return texts


def test_every_rule_is_exercised_by_its_triggers():
    for kind, texts in TRIGGERS.items():
        for text in texts:
            assert kind in {f.kind for f in _scan(text)}, (kind, text)


@pytest.mark.parametrize("kind", sorted(TRIGGERS))
def test_the_hints_never_hide_a_match_of_any_spelling(kind):
    for text in (v for t in TRIGGERS[kind] for v in _variants(t)):
        assert secrets_scan._found(text) == _scan(text), text


@pytest.mark.parametrize("name", sorted(FORMS))
def test_the_hints_never_hide_a_secret_of_a_file_format(name):
    text, _ = FORMS[name]
    for variant in _variants(text) + _variants(repr(text)):
        assert secrets_scan._found(variant) == _scan(variant), variant


def test_hinted_and_full_scans_agree_on_many_texts():
    # The full scan (every rule on every text) is most of this test's time: once per text.
    full = [(t, _scan(t)) for t in _corpus()]
    flagged = [t for t, found in full if found]
    assert len(flagged) > 1000  # the comparison covers findings, not only clean text
    assert [t for t, found in full if secrets_scan._found(t) != found] == []


def test_case_twins_are_found_like_the_rules_find_them():
    text = "paſſword = 'hunter22'"  # the rule ignores case, and to it ſ is an s
    (finding,) = find_secrets(text)
    assert text[finding.start : finding.end] == "hunter22"


def test_plain_prose_is_clean_and_needs_no_rule():
    text = "Join orders to customers on customer_id after deduplicating the daily export."
    assert secrets_scan._candidates(text) == []
    assert find_secrets(text) == []


def test_capture_still_exports_the_secret_api():
    assert capture.find_secrets is find_secrets
    assert capture.redact is secrets_scan.redact
    assert capture.SecretFinding is secrets_scan.SecretFinding


def test_binary_class_is_exactly_the_control_characters_but_tab_and_newline():
    binary = CONTROL
    expected = {chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cc"} - {"\t", "\n"}
    found = {chr(c) for c in range(0x110000) if binary.match(chr(c))}
    assert found == expected and len(expected) == 63
    assert binary.search("ok\x85").start() == 2
    every = {chr(c) for c in range(0x110000) if LINE_CONTROL.match(chr(c))}
    assert every == expected | {"\t", "\n"}


# A secret written encoded is found as the run between blanks that holds it: a link copied
# from an address bar, JSON's escaped slashes, full-width letters. Found on 6 December by
# an insider round: each of these was stored.
_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
_FULL_WIDTH = "".join(chr(ord(c) + 0xFEE0) for c in _TOKEN)


@pytest.mark.parametrize(("text", "kind", "run"), [
    (f"the callback is https://example.com/cb%3Ftoken%3D{_TOKEN}%26x%3D1 today", "github-token",
     f"https://example.com/cb%3Ftoken%3D{_TOKEN}%26x%3D1"),
    (f"doubly encoded: https%253A%252F%252Fx.io%252F%253Ftoken%253D{_TOKEN}", "github-token",
     f"https%253A%252F%252Fx.io%252F%253Ftoken%253D{_TOKEN}"),
    ('{"url": "postgres:\\/\\/admin:Pa55word99@db.internal:5432\\/sales"}', "url-credentials",
     '"postgres:\\/\\/admin:Pa55word99@db.internal:5432\\/sales"}'),
    (f"use {_FULL_WIDTH} for the api", "github-token", _FULL_WIDTH),
])
def test_a_secret_written_encoded_is_found_and_redacted_whole(text: str, kind: str, run: str) -> None:
    (finding,) = find_secrets(text)
    assert finding.kind == kind and text[finding.start : finding.end] == run
    assert _TOKEN not in finding.masked and "Pa55word99" not in finding.masked
    assert secrets_scan.redact(text) == text.replace(run, f"[REDACTED:{kind}]")


def test_encoded_text_that_holds_no_secret_is_clean() -> None:
    for text in ("100% of rows, 50%-ish coverage and a 20%20 typo", "see https://example.com/a%20b?q=x%2By",
                 "café, naïve, façade, Ｗｉｄｅ letters and ½ a cup", "a path: C:\\/tmp\\/x"):
        assert find_secrets(text) == [], text


@pytest.mark.parametrize("url", [
    "https://storage.googleapis.com/b/o.csv?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Date=20261206T120000Z"
    "&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=" + "a1b2c3d4" * 32,
    "https://bucket.s3.amazonaws.com/k.parquet?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261206T120000Z"
    "&X-Amz-Expires=900&X-Amz-Signature=" + "ab12" * 16,
    "https://storage.googleapis.com/b/o?GoogleAccessId=sa&Expires=1765000000&Signature=" + "AbCd%2B" * 20,
])
def test_a_signed_urls_signature_is_a_secret(url: str) -> None:
    """Whoever holds a presigned link reads the object until it expires (an insider round
    stored a GCS signed URL on 6 December)."""
    found = [f for f in find_secrets(f"Download it from {url} before noon") if f.kind == "signed-url"]
    assert len(found) == 1 and found[0].masked.endswith(url[-4:])
    assert find_secrets("the signature=verified column is a bool; Signature=abc is a test") == []
