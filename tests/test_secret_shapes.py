"""Every token shape the scanner knows is found, redacted and refused, in every free-text
field; ordinary data-science statements full of hashes, UUIDs and identifiers are not,
nor are statements that talk about passwords, keys and tokens without holding one.

The shapes, prose sentences, file formats and the clean corpus live in
``secret_shapes.py`` (tokens built at run time from split prefixes and seeded random
characters); the statements about credentials in ``data/secret_talk_statements.txt``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupymem.intake import capture, secrets_scan
from jupymem.errors import SecretRefused
from jupymem.intake.secrets_scan import find_secrets, redact
from secret_corpus_generic import CORPUS
from secret_corpus_holdout import HOLDOUT
from secret_shapes import CLEAN, FORMS, PROSE, SHAPES, _p, b64, hexs, lines, putty, ssh2, upper

TALK = [
    line
    for line in (Path(__file__).parent / "data" / "secret_talk_statements.txt").read_text("utf-8").splitlines()
    if line.strip() and not line.startswith("# ")
]

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


def test_the_shapes_of_the_review_and_their_families_are_all_here():
    # 115 shapes and sentences before the review's families were added
    assert len(SHAPES) + len(PROSE) + len(FORMS) >= 115 + 25
    assert len(set(TALK)) >= 150


def test_every_rule_has_a_shape_or_a_sentence():
    tested = {kind for kind, _, _ in SHAPES.values()} | {kind for kind, _, _ in PROSE}
    # the generic layer's kinds, by its corpus (test_secret_corpus_generic.py)
    tested |= {f.kind for text, _ in [*CORPUS.values(), *HOLDOUT.values()] for f in find_secrets(text)}
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


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_file_format_is_refused_and_every_secret_in_it_redacted(name):
    text, secrets = FORMS[name]
    with pytest.raises(SecretRefused):
        capture.check_statement(text)
    redacted = redact(text)
    assert [s for s in secrets if s in redacted] == []
    assert capture.check_statement(redacted)  # what is left is a statement remember takes
    # the same file pasted into a Python string, with its line breaks written as \n
    assert [s for s in secrets if s in redact(repr(text))] == []


def test_statements_about_credentials_hold_no_secret():
    flagged = [(line, find_secrets(line)) for line in TALK if find_secrets(line)]
    assert flagged == []
    assert all(capture.check_statement(line) == line for line in TALK)


# Shapes near the new families that hold no secret (but what is named): each must stay clean.
NEAR_MISSES = [
    # Mapbox public tokens are meant to be published (in a web map's page source)
    "The dashboard map uses " + _p("pk.ey", "J1Ijoi") + b64(50).replace("+", "a").replace("/", "b") + "." + "a" * 22,
    # a bot-id-like number and an identifier
    "Run 20240613:CustomerChurnModelTrainingPipeline is the baseline.",
    "Use sk-proj-placeholder-for-docs-and-examples in the README, never a real key.",
    "The dropbox folder sl.reports is synced nightly.",
    "PuTTY-User-Key-File-3: is the first line of a .ppk file; ours are in the vault.",
    "password = user_input",
    "first_pass: done",
    "second_pass = 'dedupe'",
    "connect(host=host, user=user, password=db_password)",
    "Server=db;Database=sales;Password=<from vault>;",
    "machine github.com login ana password $GITHUB_TOKEN",
    "mysql -u root -p sales",
    "host:port:database:username:password",
    "localhost:5432:*:postgres:*",
    # lines of library code and docs that a first version took for passwords
    'raise HTTPException(status_code=400, detail="Current password is incorrect.")',
    "tornado.httpclient.HTTPRequest.auth_password: attribute",
    "    password: str | Omit = omit,",
    "cls.set_password = wrapper",
    '"passwd:gecos",',
    "the debug package reads DEBUG=pw:api,pw:channel",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_of_the_new_families_hold_no_secret(text):
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "rotated in commit " + hexs(40),  # a git commit is not the secret half of the key pair
        "reads data/raw/2024/transactions/part_0001x only",  # a 40-character path
        "and CustomerLifetimeValuePredictionPipelines",  # a 40-character name
    ],
)
def test_only_a_random_value_next_to_an_aws_key_id_is_its_secret(text):
    key_id = _p("AK", "IA") + upper(16)
    assert [f.kind for f in find_secrets(f"Key {key_id} {text}")] == ["aws-access-key"]
    secret = b64(38) + "Ab"
    assert [f.kind for f in find_secrets(f"Key {key_id} {secret}")] == ["aws-access-key", "aws-secret-key"]


def test_a_shape_split_across_a_sentence_is_not_a_secret_but_a_whole_one_is():
    kind, token, _ = SHAPES["gitlab-pat"]
    assert find_secrets(token[:10] + " " + token[10:]) == []  # a prefix and some letters: not a token
    assert [f.kind for f in find_secrets(token)] == [kind]


@pytest.mark.parametrize(
    ("unit", "findings"),
    [
        ("key for the a ", 0), ("password is ", 0), ("token: ", 0), ("api key is a1 ", 0), ("aws secret ", 0),
        ("1234567:A", 0), ("SK0", 0), ("Q~", 0), ("-----BEGIN PRIVATE KEY-----", 0), ("glpat-", 1), ("xoxb-1-", 1),
        ("PuTTY-User-Key-File-3:", 0), ("PuTTY-User-Key-File-3: ssh-rsa\n", 0), ("---- BEGIN SSH2 ", 0),
        ("the password is ", 0), ("password: ", 0), ("pw is a1 ", 0), ("machine a login b ", 0), ("Password=a;", 0),
        ("a=b;", 0), ("mysql -p ", 0), ("AAAA", 0), ("sl.", 0), ("0123456789:", 0), ("AKIA0123456789ABCDEF ", 780),
        # where the generic layer's rules start: names, pairs, URLs, key material
        ('a_token: "x', 0), ("?key=a", 0), ("?key=", 0), ("tokenkey:", 0), ('key="a_token" value="', 0), (";pwd={a}", 0),
        ("a.b.password = ", 0), ("x_pass: ", 0), ("<a_password>", 0), ('("a_token", "', 0), ("https://a/hooks/", 0),
        ("LS0tLS1CRUdJTi", 0), ("MII", 0), ("auth=('a', '", 682),
    ],
)
def test_hostile_repetitions_get_the_right_answer(unit, findings):
    # 16 KB of one fragment that several rules start on. A rule that backtracked
    # quadratically would hang here (timings themselves are in benchmarks/bench_core.py).
    text = (unit * (capture.MAX_STATEMENT_BYTES // len(unit)))[: capture.MAX_STATEMENT_BYTES]
    assert len(find_secrets(text)) == findings


@pytest.mark.parametrize("name", ["openssh", "ssh2-encrypted", "pgp-armored", "rsa-encrypted-pem", "putty-v3-ed25519"])
def test_redact_key_blocks_takes_a_whole_multiline_key_and_nothing_else(name):
    kind, key, _ = SHAPES[name]
    text = f"ValueError: bad key\n{key}\nwhile loading the deploy config"
    out = secrets_scan.redact_key_blocks(text)
    assert out == f"ValueError: bad key\n[REDACTED:{kind}]\nwhile loading the deploy config"
    assert secrets_scan.redact_key_blocks("no keys here") == "no keys here"


@pytest.mark.parametrize(
    "key",
    [
        ssh2(_p("SSH2 ENCRYPTED PRIV", "ATE KEY")),
        putty(2, "ssh-rsa"),
        "-----BEGIN {0}-----\n\n{1}\n-----END {0}-----".format(_p("PGP PRIV", "ATE KEY BLOCK"), lines(4)),
    ],
)
def test_open_key_block_finds_the_header_of_a_key_cut_in_its_body(key):
    text = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\nload()\n" + key + "\nprint('done')"
    inside = text.index(key) + len(key) // 2
    header = secrets_scan.open_key_block(text, inside)
    assert header is not None and header.start() == text.index(key)
    assert secrets_scan.open_key_block(text, text.index("print")) is None  # the key has ended
    assert secrets_scan.open_key_block(text, text.index("load()")) is None  # a certificate is no key
