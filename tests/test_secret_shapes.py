"""Every token shape the scanner knows is found, redacted and refused, in every free-text
field; ordinary data-science statements full of hashes, UUIDs and identifiers are not.

The shapes, prose sentences and the clean corpus live in ``secret_shapes.py`` (tokens
built at run time from split prefixes and seeded random characters).
"""

from __future__ import annotations

import pytest

from jupymem import capture, secrets_scan
from jupymem.errors import SecretRefused
from jupymem.secrets_scan import find_secrets, redact
from secret_shapes import CLEAN, PROSE, SHAPES

CONTEXTS = [
    "{}",
    "The CI job used {} for months.",
    "TOKEN={}",
    'config = {{"token": "{}"}}',
    "my token is {}, do not share it",
    "line one\n  {}\nline three",
]


def test_at_least_sixty_shapes_and_fifty_clean_statements():
    assert len(SHAPES) >= 60
    assert len({kind for kind, _, _ in SHAPES.values()}) >= 60
    assert len(set(CLEAN)) >= 50


def test_every_rule_has_a_shape_or_a_sentence():
    tested = {kind for kind, _, _ in SHAPES.values()} | {kind for kind, _, _ in PROSE}
    rules = {rule.kind for rule in secrets_scan._RULES}
    assert rules - tested <= {"url-credentials", "password", "bearer-token", "basic-auth"}  # test_capture.py


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_is_found_and_redacted_in_every_context(name):
    kind, token, secret = SHAPES[name]
    for context in CONTEXTS:
        text = context.format(token)
        found = find_secrets(text)
        assert found and found[0].kind == kind, (text, found)
        assert secret not in found[0].masked
        redacted = redact(text)
        assert secret not in redacted
        assert f"[REDACTED:{kind}]" in redacted


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_is_refused_as_a_statement_and_names_what_it_is(name):
    kind, token, secret = SHAPES[name]
    with pytest.raises(SecretRefused) as info:
        capture.check_statement(f"Deploy with {token} from the ops account.")
    label = next(rule.label for rule in secrets_scan._RULES if rule.kind == kind)
    assert label in info.value.message
    assert secret not in info.value.message


@pytest.mark.parametrize(("kind", "text", "secret"), PROSE, ids=[t[:40] for _, t, _ in PROSE])
def test_keyword_value_prose_is_found(kind, text, secret):
    found = find_secrets(text)
    assert [f.kind for f in found] == [kind], found
    assert text[found[0].start : found[0].end] == secret
    assert secret not in redact(text)


@pytest.mark.parametrize("text", CLEAN, ids=[t[:40] for t in CLEAN])
def test_ordinary_statements_hold_no_secret(text):
    assert find_secrets(text) == []
    assert capture.check_statement(text) == text


def test_a_shape_split_across_a_sentence_is_not_a_secret_but_a_whole_one_is():
    kind, token, _ = SHAPES["gitlab-pat"]
    assert find_secrets(token[:10] + " " + token[10:]) == []  # a prefix and some letters: not a token
    assert [f.kind for f in find_secrets(token)] == [kind]


@pytest.mark.parametrize(
    ("unit", "findings"),
    [
        ("key for the a ", 0), ("password is ", 0), ("token: ", 0), ("api key is a1 ", 0), ("aws secret ", 0),
        ("1234567:A", 0), ("SK0", 0), ("Q~", 0), ("-----BEGIN PRIVATE KEY-----", 0), ("glpat-", 1), ("xoxb-1-", 1),
    ],
)
def test_hostile_repetitions_get_the_right_answer(unit, findings):
    # 16 KB of one fragment that several rules start on. A rule that backtracked
    # quadratically would hang here (timings themselves are in benchmarks/bench_core.py).
    text = (unit * (capture.MAX_STATEMENT_BYTES // len(unit)))[: capture.MAX_STATEMENT_BYTES]
    assert len(find_secrets(text)) == findings


def test_redact_key_blocks_takes_a_whole_multiline_key_and_nothing_else():
    _, key, _ = SHAPES["openssh"]
    text = f"ValueError: bad key\n{key}\nwhile loading the deploy config"
    out = secrets_scan.redact_key_blocks(text)
    assert out == "ValueError: bad key\n[REDACTED:private-key]\nwhile loading the deploy config"
    assert secrets_scan.redact_key_blocks("no keys here") == "no keys here"
