"""Tests for jupymem.intake.capture: statements, secrets, identity and failed cells.

Fake secrets are assembled from pieces so that this file does not itself look
like a leaked credential to secret scanners.
"""

from __future__ import annotations

import argparse
import bdb
import hashlib
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jupymem.errors import InvalidStatement, JupymemError, SecretRefused
from jupymem.intake.capture import (
    MAX_EXCERPT_BYTES,
    MAX_STATEMENT_BYTES,
    SecretFinding,
    check_statement,
    diagnose,
    evidence_from_exception,
    excerpt,
    find_secrets,
    fold_quote,
    memory_id,
    new_handle,
    normalize_for_identity,
    redact,
)
from jupymem.models import Evidence

AWS_ID = "AKIA" + "IOSFODNN7" + "EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GH_TOKEN = "ghp_" + "a1B2c3D4e5" * 4
GH_PAT = "github_pat_" + "11ABCDEFG0" + "123456789_abcdefghijklmnop"
OPENAI = "sk-proj-" + "abc123DEF456ghi789" + "JKL012mno345"
OPENAI_OLD = "sk-" + "T3BlbkFJ" * 6
ANTHROPIC = "sk-ant-api03-" + "abcDEF123456789_ghij" + "klmnop-QRST"
SLACK = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOp"
GOOGLE = "AIza" + "SyA1234567890" + "abcdefghijklmnopqrstuv"
STRIPE = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRIPE_RK = "rk_" + "live_" + "51H8xY2eZvKYlo2C0aBcDeFg"
JWT = (
    "eyJhbGciOiJIUzI1NiJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
PEM_BODY = "MIIEpAIBAAKCAQEA7bq2Jx" + "Ql8Hn0r3w9mZkA1bC2dE3fG4hI5jK6lM"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    + PEM_BODY
    + "\n"
    + PEM_BODY
    + "\n-----END RSA PRIVATE KEY-----"
)


# --------------------------------------------------------------------------- check_statement


def test_check_statement_returns_the_cleaned_statement():
    assert check_statement("  Use customer_id as the key.  \n") == "Use customer_id as the key."


def test_check_statement_normalizes_line_endings_and_keeps_inner_newlines():
    text = "\r\nFirst line\r\nsecond line\rthird line\n\n"
    assert check_statement(text) == "First line\nsecond line\nthird line"


def test_check_statement_keeps_tabs_and_unicode():
    assert check_statement("Año\tfecha_alta — ok ✓") == "Año\tfecha_alta — ok ✓"


def test_check_statement_accepts_utf8_bytes():
    assert check_statement("Año de alta".encode()) == "Año de alta"


def test_check_statement_drops_a_leading_bom():
    assert check_statement("\ufeffUse UTC") == "Use UTC"


@pytest.mark.parametrize("text", ["", "   ", "\n\t \r\n", b"", b"  \n"])
def test_empty_statement_is_refused(text):
    with pytest.raises(InvalidStatement, match="empty") as info:
        check_statement(text)
    assert "write" in info.value.message  # says what to do next


def test_statement_at_the_limit_passes_and_one_byte_more_is_refused():
    assert check_statement("x" * MAX_STATEMENT_BYTES) == "x" * MAX_STATEMENT_BYTES
    with pytest.raises(InvalidStatement) as info:
        check_statement("x" * (MAX_STATEMENT_BYTES + 1))
    message = info.value.message
    assert "16,385 bytes" in message and "16,384" in message
    assert "notebook" in message and "cite" in message


def test_size_limit_counts_utf8_bytes_not_characters():
    text = "é" * 8193  # 8,193 characters, 16,386 bytes
    with pytest.raises(InvalidStatement, match="16,386 bytes"):
        check_statement(text)


def test_invalid_utf8_bytes_are_refused():
    with pytest.raises(InvalidStatement, match="not valid UTF-8") as info:
        check_statement(b"caf\xe9 con leche")
    assert "offset 3" in info.value.message


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\x0c"])
def test_binary_control_characters_are_refused(char):
    with pytest.raises(InvalidStatement, match="control character") as info:
        check_statement(f"Use UTC{char} everywhere")
    assert f"U+{ord(char):04X}" in info.value.message


def test_lone_surrogates_are_refused():
    text = b"caf\xe9 au lait".decode("utf-8", errors="surrogateescape")
    with pytest.raises(InvalidStatement, match="surrogate") as info:
        check_statement(text)
    assert "U+DCE9" in info.value.message


def test_non_text_is_refused():
    with pytest.raises(InvalidStatement, match="must be text"):
        check_statement(42)  # type: ignore[arg-type]


def test_invalid_statement_is_a_jupymem_error_with_its_code():
    with pytest.raises(JupymemError) as info:
        check_statement("")
    assert info.value.code == "invalid_statement"


def test_secret_is_refused_with_kind_and_masked_preview_never_the_secret():
    with pytest.raises(SecretRefused) as info:
        check_statement(f"Deploy with key {AWS_ID} from the ops account")
    message = info.value.message
    assert "an AWS access key" in message
    assert "AKIA…MPLE" in message
    assert AWS_ID not in message
    assert "environment variable" in message  # what to do instead
    assert info.value.code == "secret_refused"


def test_secret_refusal_names_several_findings():
    with pytest.raises(SecretRefused) as info:
        check_statement(f"Use {GH_TOKEN} and password = 'hunter22' for the demo")
    message = info.value.message
    assert "a GitHub token" in message and "a password" in message
    assert GH_TOKEN not in message and "hunter22" not in message


# --------------------------------------------------------------------------- secrets: positives

POSITIVES = [
    ("aws-access-key", f"The ETL used {AWS_ID} until March."),
    ("aws-access-key", "Temporary creds ASIA" + "Y34FZKBOKMUTVV7A" + " expire hourly."),
    ("aws-secret-key", f"aws_secret_access_key = {AWS_SECRET}"),
    ("aws-secret-key", f'"aws_secret_access_key": "{AWS_SECRET}"'),
    ("github-token", f"export GITHUB_TOKEN={GH_TOKEN}"),
    ("github-token", "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a" + " is the OAuth token"),
    ("github-token", f"Fine-grained token {GH_PAT} for the bot"),
    ("openai-key", f"OPENAI_API_KEY={OPENAI}"),
    ("openai-key", f"openai.api_key = '{OPENAI_OLD}'"),
    ("anthropic-key", f"client = Anthropic(api_key='{ANTHROPIC}')"),
    ("slack-token", f"The webhook bot uses {SLACK}"),
    ("google-api-key", f"maps key {GOOGLE} in geocode.py"),
    ("stripe-key", f"stripe.api_key = '{STRIPE}'"),
    ("stripe-key", f"restricted key {STRIPE_RK}"),
    ("jwt", f"The session cookie was {JWT}"),
    ("bearer-token", "curl -H 'Authorization: Bearer abc123def456ghi789jkl' https://api"),
    ("basic-auth", "Authorization: Basic dXNlcjpwYXNzd29yZA=="),
    ("private-key", f"The deploy key is\n{PRIVATE_KEY}"),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5vbmU"),
    ("url-credentials", "postgresql://analyst:s3cretPass@db.internal:5432/sales"),
    ("url-credentials", "mongodb+srv://admin:Pa55word@cluster0.example.net/db"),
    ("url-credentials", "redis://:s3cret@cache:6379/0"),
    ("password", 'password = "hunter22"'),
    ("password", "DB_PASSWORD=S3cr3t!x"),
    ("password", 'password: str = "hunter22"'),
    ("password", "--password hunter2"),
    ("password", "psql --password=Tr0ub4dor"),
    ("password", "the password is hunter2"),
    ("password", "db_password: hunter2go"),
    ("password", "curl -u admin:hunter2 https://example.org"),
    ("api-key", "API_KEY: abc123def"),
    ("api-key", '{"api_key": "q8v7x6c5"}'),
    ("api-key", "--api-key abc123def456"),
    ("secret", "secret = 'p@ssw0rd'"),
    ("secret", "client_secret: 8f3b2a1c9d7e6f5a"),
    ("token", "http://localhost:8888/?token=3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"),
    ("huggingface-token", f"login(token=HF) with HF = {HF}"),
]


@pytest.mark.parametrize(("kind", "text"), POSITIVES)
def test_secret_kinds_are_found_and_redacted(kind, text):
    found = find_secrets(text)
    assert [f.kind for f in found] == [kind], found
    finding = found[0]
    secret = text[finding.start : finding.end]
    assert len(secret) >= 4
    assert secret not in finding.masked
    assert "…" in finding.masked
    assert finding.label
    redacted = redact(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted
    with pytest.raises(SecretRefused):
        check_statement(text)


def test_every_documented_kind_has_a_positive_test():
    kinds = {kind for kind, _ in POSITIVES}
    assert {
        "aws-access-key", "aws-secret-key", "github-token", "openai-key", "anthropic-key",
        "slack-token", "google-api-key", "stripe-key", "jwt", "bearer-token", "private-key",
        "url-credentials", "password", "api-key", "secret", "token",
    } <= kinds  # fmt: skip


def test_masked_preview_shows_ends_of_long_secrets_only():
    (finding,) = find_secrets(f"key {AWS_ID}")
    assert finding == SecretFinding(
        "aws-access-key", "an AWS access key", 4, 4 + len(AWS_ID), "AKIA…MPLE"
    )


def test_short_password_preview_shows_one_character():
    (finding,) = find_secrets('password = "hunter22"')
    assert finding.masked == "h…"


def test_private_key_preview_is_the_header_only():
    (finding,) = find_secrets(PRIVATE_KEY)
    assert finding.masked == "-----BEGIN RSA PRIVATE KEY-----…"
    assert (finding.start, finding.end) == (0, len(PRIVATE_KEY))


def test_specific_kind_wins_over_generic_assignment():
    found = find_secrets(f"GITHUB_TOKEN = '{GH_TOKEN}'")
    assert [f.kind for f in found] == ["github-token"]


def test_several_secrets_are_found_in_order_and_all_redacted():
    text = f"id {AWS_ID}, then {GH_TOKEN} and postgres://u:pw4secret@h/db"
    found = find_secrets(text)
    assert [f.kind for f in found] == ["aws-access-key", "github-token", "url-credentials"]
    assert [f.start for f in found] == sorted(f.start for f in found)
    assert redact(text) == (
        "id [REDACTED:aws-access-key], then [REDACTED:github-token] "
        "and postgres://u:[REDACTED:url-credentials]@h/db"
    )


def test_redact_leaves_clean_text_alone():
    text = "token = os.environ['TOKEN']  # read at runtime"
    assert redact(text) == text


# --------------------------------------------------------------------------- secrets: negatives

NEGATIVES = [
    "The password policy requires rotation every 90 days.",
    "token = os.environ['TOKEN']",
    'api_key=getenv("X")',
    "password=<your password>",
    'password = "***"',
    "Tokenize the text with the BERT tokenizer before counting tokens.",
    "We use sk-learn style estimators for the custom transformers.",
    "Clone with https://user@host/org/repo.git, the repo is private.",
    "postgresql://etl:${PASSWORD}@warehouse:5432/analytics is the connection string.",
    "df.groupby('customer_id')['amount'].sum().sort_values(ascending=False)",
    "max_tokens: 512 is enough for the summaries.",
    "password = getpass.getpass()",
    "token = hashlib.sha256(email.encode()).hexdigest()",
    "secret_key = settings.SECRET_KEY",
    "The access token expires after one hour, so refresh it in the loop.",
    "Read the API key from the OPENAI_API_KEY environment variable, never paste it into a cell.",
    "Set api_key=None to use the default credentials chain.",
    "client_secret = vault.read('crm/client_secret')",
    'The Authorization header is built as f"Bearer {token}" in utils/http.py.',
    "headers = {\"Authorization\": f\"Bearer {os.environ['API_TOKEN']}\"}",
    'engine = create_engine(f"postgresql://{user}:{password}@{host}/{db}")',
    "mysql://reader:%(password)s@db/sales is templated by the config loader.",
    "Pass --password-file ~/.pgpass instead of --password on the command line.",
    "The token count per document is 380 on average; truncate at 512 tokens.",
    "AKIA prefixes mean long-term AWS keys and ASIA prefixes mean temporary ones.",
    'JWT tokens start with eyJ because that is base64 for {".',
    "A private key file starts with -----BEGIN PRIVATE KEY----- and must never be committed.",
    'password: str = os.environ["DB_PASSWORD"]',
    "The column secret_flag marks customers with hidden profiles.",
    "The token_type column is either 'access' or 'refresh'.",
    "api_key: ${OPENAI_API_KEY}",
    "DB_PASSWORD=changeme in .env.example is a placeholder, the real one is in the vault.",
    'password = "" means anonymous access for the public bucket.',
    "Bearer authentication is required for every request to the scoring API.",
    "secrets.token_hex(16) generates the salt for hashing emails.",
    "The xoxb- prefix marks Slack bot tokens; ours live in the secret manager.",
    "Use sk_live_ keys only in production; notebooks use the test environment.",
    'token: str = Field(..., description="the API token")',
    'if password is None: raise ValueError("set DB_PASSWORD first")',
    "The KeyError: 'api_key' came from a missing entry in config.yaml.",
    "password_hash = bcrypt.hashpw(pw, bcrypt.gensalt())",
    "credentials = service_account.Credentials.from_service_account_file('sa.json')",
    "GOOGLE_APPLICATION_CREDENTIALS points to key.json outside the repository.",
    "curl -u $USER:$PASS https://example.org/export.csv",
    "Use the secret manager: token = secrets_client.get('warehouse')",
    "The password is rotated by the platform team, ask them when the job fails.",
    "api_key = 'YOUR_API_KEY'",
    "password = 'xxxxxxxx'",
    "token = '<token>'",
    "df['password_reset'] = df['events'].str.contains('reset')",
    "Column tokens_used is an integer; cast it before summing.",
    "s3://bucket/raw/2024/ is readable with the instance role, no keys needed.",
    "sklearn.feature_extraction.text.CountVectorizer(token_pattern=r'(?u)\\b\\w+\\b')",
    "Split on whitespace, then strip punctuation from each token.",
]


def test_there_are_many_negative_statements():
    assert len(set(NEGATIVES)) >= 30


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_notebook_statements_hold_no_secret(text):
    assert find_secrets(text) == []
    assert check_statement(text) == text.strip()
    assert redact(text) == text


def test_the_english_statement_corpus_holds_no_secret():
    path = Path(__file__).parent / "data" / "english_statements.txt"
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    flagged = [(line, find_secrets(line)) for line in lines if find_secrets(line)]
    assert len(lines) >= 200 and flagged == []


def test_find_secrets_on_empty_text():
    assert find_secrets("") == []


# --------------------------------------------------------------------------- identity


def test_normalize_for_identity_folds_case_quotes_dashes_space_and_final_stop():
    a = "Don’t use “fecha_alta” — use  signup_date.\n"
    b = "don't USE \"fecha_alta\" - use signup_date"
    assert normalize_for_identity(a) == normalize_for_identity(b)
    assert normalize_for_identity(a) == "don't use \"fecha_alta\" - use signup_date"


def test_normalize_for_identity_applies_nfkc():
    assert normalize_for_identity("Ｕｓｅ ＵＴＣ") == "use utc"
    assert normalize_for_identity("ﬁle size…") == "file size"


def test_normalize_for_identity_keeps_meaningful_differences():
    assert normalize_for_identity("Use customer_id") != normalize_for_identity("Use customerid")
    assert normalize_for_identity("version 1.2") != normalize_for_identity("version 12")


def test_memory_id_is_m_and_twelve_hex_of_the_normalized_sha256():
    text = "  Use UTC everywhere. "
    expected = hashlib.sha256(b"use utc everywhere").hexdigest()[:12]
    assert memory_id(text) == "m-" + expected
    assert re.fullmatch(r"m-[0-9a-f]{12}", memory_id("anything"))


def test_same_statement_twice_is_one_id_and_different_statements_differ():
    assert memory_id("Use UTC.") == memory_id("use   utc")
    assert memory_id("Use UTC") != memory_id("Use local time")


def test_fold_quote_finds_a_quote_typed_with_other_quotes_and_spaces():
    prompt = "Please remember:  don’t  use the “raw” table — it’s stale."
    quote = "don't use the \"raw\" table - it's stale"
    assert fold_quote(quote) in fold_quote(prompt)


def test_fold_quote_keeps_case_so_a_changed_quote_does_not_match():
    prompt = "the ID column is unique"
    assert fold_quote("the ID column") in fold_quote(prompt)
    assert fold_quote("the id column") not in fold_quote(prompt)


def test_fold_quote_strips_and_collapses_whitespace():
    assert fold_quote("\n a\u00a0\tb  c \n") == "a b c"


# --------------------------------------------------------------------------- diagnose


def _raise(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: B036 - the test wants the raised object
        return caught


def _caught(fn) -> BaseException:
    try:
        fn()
    except BaseException as exc:  # noqa: B036
        return exc
    raise AssertionError("expected an exception")


def _no_framing(lines):
    for line in lines:
        assert "Traceback" not in line
        assert 'File "' not in line
        assert "During handling" not in line
        assert "direct cause" not in line
        assert "\x1b" not in line


def test_diagnose_key_error():
    exc = _caught(lambda: {}["customer_id"])
    assert diagnose(exc) == ("KeyError: 'customer_id'",)


def test_diagnose_exception_without_message_is_its_name():
    assert diagnose(_raise(KeyError())) == ("KeyError",)


def test_diagnose_explicit_cause_comes_after_the_final_error():
    def run():
        try:
            {}["customer_id"]
        except KeyError as exc:
            raise ValueError("could not build features") from exc

    lines = diagnose(_caught(run))
    assert lines == ("ValueError: could not build features", "KeyError: 'customer_id'")
    _no_framing(lines)


def test_diagnose_implicit_context_is_walked():
    def run():
        try:
            1 / 0  # noqa: B018 - raises the real ZeroDivisionError
        except ZeroDivisionError:
            raise KeyError("x")  # noqa: B904 - the implicit context is the point

    assert diagnose(_caught(run)) == ("KeyError: 'x'", "ZeroDivisionError: division by zero")


def test_diagnose_suppressed_context_is_not_walked():
    def run():
        try:
            1 / 0  # noqa: B018 - raises the real ZeroDivisionError
        except ZeroDivisionError:
            raise KeyError("x") from None

    assert diagnose(_caught(run)) == ("KeyError: 'x'",)


def test_diagnose_keeps_three_distinct_lines_of_a_long_chain():
    def run():
        try:
            try:
                try:
                    int("abc")
                except ValueError as exc:
                    raise KeyError("customer_id") from exc
            except KeyError as exc:
                raise RuntimeError("feature build failed") from exc
        except RuntimeError as exc:
            raise OSError("pipeline aborted") from exc

    lines = diagnose(_caught(run))
    assert lines == (
        "OSError: pipeline aborted",
        "RuntimeError: feature build failed",
        "KeyError: 'customer_id'",
    )


def test_diagnose_drops_repeated_errors():
    def run():
        try:
            {}["customer_id"]
        except KeyError as exc:
            raise KeyError("customer_id") from exc

    assert diagnose(_caught(run)) == ("KeyError: 'customer_id'",)


def test_diagnose_survives_a_cycle_in_the_chain():
    a, b = ValueError("a"), TypeError("b")
    a.__context__, b.__context__ = b, a
    assert diagnose(a) == ("ValueError: a", "TypeError: b")


def test_diagnose_syntax_error_from_compile_shows_message_and_line():
    exc = _caught(lambda: compile("a = 1\nb = 2\nc = = 3\n", "<cell>", "exec"))
    assert isinstance(exc, SyntaxError)
    assert diagnose(exc) == ("SyntaxError: invalid syntax (line 3)",)


def test_diagnose_indentation_error_is_a_syntax_error_line():
    exc = _caught(lambda: compile("if True:\nprint(1)\n", "<cell>", "exec"))
    (line,) = diagnose(exc)
    assert line.startswith("IndentationError: expected an indented block")
    assert line.endswith("(line 2)")


def test_diagnose_multi_line_message_keeps_meaningful_lines_and_drops_framing():
    message = (
        "\x1b[31mcould not load sales\x1b[0m\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/etl/load.py", line 12, in <module>\n'
        "    load()\n"
        "       ^^^^\n"
        "[SQL: SELECT * FROM sales]\n"
    )
    lines = diagnose(_raise(RuntimeError(message)))
    assert lines == ("RuntimeError: could not load sales", "[SQL: SELECT * FROM sales]")
    _no_framing(lines)


def test_diagnose_gives_each_exception_a_line_before_extra_message_lines():
    def run():
        try:
            raise KeyError("customer_id")
        except KeyError as exc:
            raise ValueError("bad merge\nleft has 10 rows\nright has 0 rows") from exc

    lines = diagnose(_caught(run))
    assert lines == (
        "ValueError: bad merge",
        "left has 10 rows | right has 0 rows",
        "KeyError: 'customer_id'",
    )


@pytest.mark.skipif(sys.version_info < (3, 11), reason="add_note is 3.11+")
def test_diagnose_includes_notes():
    exc = ValueError("shape mismatch")
    exc.add_note("while scoring df_test")
    assert diagnose(_raise(exc)) == ("ValueError: shape mismatch", "while scoring df_test")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is 3.11+")
def test_diagnose_exception_group_shows_members():
    members = [ValueError("no rows"), TypeError("bad dtype")]
    group = ExceptionGroup("two checks failed", members)  # noqa: F821
    assert diagnose(_raise(group)) == (
        "ExceptionGroup: two checks failed (2 sub-exceptions)",
        "ValueError: no rows",
        "TypeError: bad dtype",
    )


def test_diagnose_clips_long_lines():
    (line,) = diagnose(_raise(ValueError("x" * 5000)))
    assert len(line) <= 300
    assert line.endswith("…")


def test_diagnose_redacts_secrets():
    exc = _raise(PermissionError(f"401 for token {GH_TOKEN}"))
    (line,) = diagnose(exc)
    assert GH_TOKEN not in line
    assert line == "PermissionError: 401 for token [REDACTED:github-token]"


def test_diagnose_redacts_a_secret_beyond_the_clip_point():
    exc = _raise(ValueError("x" * 290 + " " + GH_TOKEN))
    (line,) = diagnose(exc)
    assert GH_TOKEN[:12] not in line


def test_diagnose_is_short_on_a_huge_message():
    # e.g. a ValueError that embeds the repr of a whole DataFrame (its time: benchmarks/bench_inputs.py)
    message = "shapes differ\n" + ("0  1.0  2.0  customer_x\n" * 400_000)
    lines = diagnose(_raise(ValueError(message)))
    assert lines[0] == "ValueError: shapes differ"
    assert sum(len(line) for line in lines) <= 3 * 300


def test_diagnose_survives_a_broken_str():
    class Broken(Exception):
        def __str__(self):
            raise RuntimeError("no")

    assert diagnose(_raise(Broken())) == ("Broken: <unprintable Broken>",)


# --------------------------------------------------------------------------- excerpt


def test_excerpt_joins_source_and_error_lines():
    source = "df = load()\ndf.groupby('customer_id').sum()\n"
    exc = _caught(lambda: {}["customer_id"])
    assert excerpt(source, exc) == (
        "df = load()\ndf.groupby('customer_id').sum()\n\nKeyError: 'customer_id'"
    )


def test_excerpt_without_exception_is_the_source():
    assert excerpt("x = 1\n", None) == "x = 1"


def test_excerpt_without_source_is_the_diagnosis():
    assert excerpt("", _raise(ValueError("bad"))) == "ValueError: bad"


@pytest.mark.parametrize("unit", ["a", "é", "日", "🙂", "line\n", "ñandú 🙂\n"])
def test_excerpt_is_at_most_2048_bytes_and_says_it_was_clipped(unit):
    source = unit * 5000
    text = excerpt(source, _raise(ValueError("boom")))
    assert len(text.encode("utf-8")) <= MAX_EXCERPT_BYTES
    assert text.startswith("…")
    assert text.endswith("ValueError: boom")
    text.encode("utf-8").decode("utf-8")  # whole characters only


def test_excerpt_keeps_the_tail_of_the_source():
    source = "\n".join(f"step_{i} = run({i})" for i in range(500))
    text = excerpt(source, _raise(ValueError("boom")))
    assert "step_499 = run(499)" in text
    assert "step_0 = run(0)" not in text
    assert text.startswith("…\n")  # clipped at a line boundary


def test_excerpt_redacts_the_source():
    source = f"import boto3\nkey = '{AWS_ID}'\nboto3.client('s3')\n"
    text = excerpt(source, _raise(ValueError("denied")))
    assert AWS_ID not in text
    assert "[REDACTED:aws-access-key]" in text


def test_excerpt_redacts_before_clipping():
    # The secret sits where the clip falls: clipped first, its tail would no
    # longer look like a token and would slip through.
    source = "x = 1\n" * 300 + f"token = '{GH_TOKEN}' " + "y" * 2030
    text = excerpt(source, None)
    assert len(text.encode("utf-8")) <= MAX_EXCERPT_BYTES
    assert text.startswith("…") and text.endswith("y" * 2030)
    for i in range(len(GH_TOKEN) - 8):
        assert GH_TOKEN[i : i + 8] not in text


def test_excerpt_strips_ansi_from_the_source():
    assert excerpt("\x1b[1mprint(1)\x1b[0m", None) == "print(1)"


# --------------------------------------------------------------------------- evidence


def test_new_handle_format_and_uniqueness():
    handles = {new_handle() for _ in range(200)}
    assert len(handles) == 200
    assert all(re.fullmatch(r"ev-[0-9a-f]{8}", h) for h in handles)


def test_evidence_from_exception_fills_every_field():
    source = "df = pd.DataFrame()\ndf['customer_id']\n"
    exc = _caught(lambda: {}["customer_id"])
    before = datetime.now(timezone.utc).replace(microsecond=0)
    ev = evidence_from_exception(
        exc,
        source=source,
        session="kernel-1",
        cell_id="c-42",
        execution_count=7,
        notebook="notebooks/01_load.ipynb",
    )
    assert isinstance(ev, Evidence)
    assert re.fullmatch(r"ev-[0-9a-f]{8}", ev.handle)
    assert ev.session == "kernel-1"
    assert (ev.ename, ev.evalue) == ("KeyError", "'customer_id'")
    assert ev.diagnosis == ("KeyError: 'customer_id'",)
    assert ev.excerpt.endswith("KeyError: 'customer_id'")
    assert (ev.cell_id, ev.execution_count, ev.notebook) == ("c-42", 7, "notebooks/01_load.ipynb")
    # UTC, to the second at least (microseconds keep a burst of failures in order)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z", ev.created_at)
    created = datetime.fromisoformat(ev.created_at.replace("Z", "+00:00"))
    assert before <= created <= datetime.now(timezone.utc)
    assert ev.to_dict()["diagnosis"] == ["KeyError: 'customer_id'"]


def test_evidence_optional_fields_default_to_none():
    ev = evidence_from_exception(_raise(ValueError("x")), session="s")
    assert ev is not None
    assert (ev.cell_id, ev.execution_count, ev.notebook) == (None, None, None)


def test_evidence_value_is_redacted_and_clipped():
    exc = _raise(ValueError(f"bad key {STRIPE} " + "y" * 2000))
    ev = evidence_from_exception(exc, session="s", source=f"stripe.api_key = '{STRIPE}'")
    assert ev is not None
    assert STRIPE not in ev.evalue and STRIPE not in ev.excerpt
    assert "[REDACTED:stripe-key]" in ev.evalue
    assert len(ev.evalue) <= 500
    assert all(STRIPE not in line for line in ev.diagnosis)


def test_keyboard_interrupt_is_not_evidence():
    assert evidence_from_exception(_raise(KeyboardInterrupt()), session="s") is None


@pytest.mark.parametrize("code", [0, None])
def test_clean_system_exit_is_not_evidence(code):
    assert evidence_from_exception(_raise(SystemExit(code)), session="s") is None


def test_failing_system_exit_is_evidence(capsys):
    # argparse in a notebook exits with 2: a failure worth a lesson.
    parser = argparse.ArgumentParser()
    exc = _caught(lambda: parser.parse_args(["--epochs", "3"]))
    capsys.readouterr()
    ev = evidence_from_exception(exc, session="s")
    assert ev is not None
    assert ev.ename == "SystemExit"
    assert ev.diagnosis == ("SystemExit: 2",)


def test_quitting_the_debugger_is_not_evidence():
    assert evidence_from_exception(_raise(bdb.BdbQuit()), session="s") is None


def test_generator_exit_is_not_evidence():
    assert evidence_from_exception(_raise(GeneratorExit()), session="s") is None


# --------------------------------------------------------------------------- cost


@pytest.mark.parametrize(
    "unit", ["a.", "a-", "a_", "a:", "sk-", "A1", "eyJabcdefgh.", "http://a:", "token = ", "'a "]
)
def test_secret_scan_finishes_on_hostile_input(unit):
    # Repetitions that make a backtracking pattern explode; how long each takes is
    # measured in benchmarks/bench_inputs.py. Here: the scan ends, and finds only what is there.
    text = (unit * (MAX_STATEMENT_BYTES // len(unit)))[:MAX_STATEMENT_BYTES]
    assert {f.kind for f in find_secrets(text)} == ({"jwt"} if unit.startswith("eyJ") else set())


def test_capture_imports_nothing_heavy():
    code = (
        "import sys, jupymem.intake.capture\n"
        "heavy = {'IPython', 'numpy', 'pandas', 'sqlite3', 'litellm', 'model2vec', 'tornado'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
