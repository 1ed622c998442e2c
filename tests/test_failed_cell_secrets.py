"""A failed cell refuses exactly what ``remember`` refuses.

Every secret shape (``secret_shapes.SHAPES``), every sentence that names one
(``PROSE``) and every file format that holds several (``FORMS``: AWS credentials,
a service account JSON, netrc, .pgpass ...) is put into a failed cell in each way
a secret gets there: in the cell's source (as written, and inside a Python string
with ``\\n`` escapes), in the exception's message (as written and as a repr),
in a note, in the cause, and in a long cell where the tail that is kept starts
inside it. The staged evidence (excerpt, value, diagnosis, and ``clean_evidence``
of it) holds no part of the secret, and ``check_statement`` accepts every text of it:
what ``remember`` would refuse never reaches the staging area.

The converse: ordinary statements in a failed cell are kept as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from jupymem.intake.capture import (
    MAX_EXCERPT_BYTES,
    MAX_MESSAGE_CHARS,
    check_statement,
    clean_evidence,
    evidence_from_exception,
    excerpt,
)
from jupymem.errors import SecretRefused
from jupymem.models import Evidence
from secret_shapes import CLEAN, FORMS, PROSE, SHAPES, _p, lines

DATA = Path(__file__).parent / "data"

CASES: list[tuple[str, str, tuple[str, ...]]] = [
    *((f"shape-{name}", token, (secret,)) for name, (_, token, secret) in SHAPES.items()),
    *((f"prose-{i}", text, (secret,)) for i, (_, text, secret) in enumerate(PROSE)),
    *((f"form-{name}", text, secrets) for name, (text, secrets) in FORMS.items()),
]


def _long_source(text: str) -> str:
    """A cell longer than the tail the excerpt reads, whose tail starts in the middle of
    ``text``; a key block after it is redacted to a few characters, so the excerpt
    reaches back to where the tail starts."""
    label = _p("RSA PRIV", "ATE KEY")
    suffix_size = 4 * MAX_EXCERPT_BYTES - len(text) // 2
    key = f"-----BEGIN {label}-----\n{lines((suffix_size - 200) // 65)}\n-----END {label}-----"
    suffix = f"\n{key}\nload(cfg)\n"
    suffix += "#" * (suffix_size - len(suffix))
    return "x = 1\n" * 50 + text + suffix


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: B036 - the raised object, traceback and all
        return caught


def _with_note(text: str) -> BaseException:
    exc = KeyError("customer_id")
    exc.add_note(text)
    return _raised(exc)


def _with_cause(text: str) -> BaseException:
    try:
        try:
            raise ValueError(text)
        except ValueError as inner:
            raise RuntimeError("loading the warehouse config failed") from inner
    except RuntimeError as outer:
        return outer


# How a secret gets into a failed cell: (source, exception) for a text.
WAYS: dict[str, Callable[[str], tuple[str, BaseException]]] = {
    "source": lambda t: (f"cfg = '''\n{t}\n'''\nload(cfg)", _raised(ValueError("bad credentials"))),
    "source-repr": lambda t: (f"cfg = {t!r}\nload(cfg)", _raised(ValueError("bad credentials"))),
    "message": lambda t: ("load(cfg)", _raised(ValueError(t))),
    "message-repr": lambda t: ("load(cfg)", _raised(ValueError(f"cannot parse {{'credentials': {t!r}}}"))),
    "note": lambda t: ("load(cfg)", _with_note(t)),
    "cause": lambda t: ("load(cfg)", _with_cause(t)),
    "long-source": lambda t: (_long_source(t), _raised(ValueError("bad credentials"))),
}


def _parts(secret: str) -> list[str]:
    """What of a secret must not be kept: every 16-character window of its token runs
    (a key's body lines, a token), or the whole of a short one (a password)."""
    runs = re.findall(r"[A-Za-z0-9+/=_.~-]{16,}", secret)
    if not runs:
        return [secret]
    return [run[i : i + 16] for run in runs for i in range(0, len(run) - 15, 8)]


def _texts(ev: Evidence) -> list[str]:
    return [ev.excerpt, ev.evalue, *ev.diagnosis]


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize(("name", "text", "secrets"), CASES, ids=[c[0] for c in CASES])
def test_a_failed_cell_keeps_nothing_that_remember_refuses(name, text, secrets, way):
    with pytest.raises(SecretRefused):
        check_statement(text)  # what remember refuses ...
    source, exc = WAYS[way](text)
    ev = evidence_from_exception(exc, session="s", source=source)
    assert ev is not None
    cleaned = clean_evidence(ev)
    assert cleaned == ev  # nothing left for a later pass to find
    kept = _texts(ev)
    for part in (p for secret in secrets for p in _parts(secret)):
        assert not [t for t in kept if part in t], (part, kept)  # ... is not kept in any part
    for t in (ev.excerpt, ev.evalue, "\n".join(ev.diagnosis)):
        if t.strip():
            assert check_statement(t)  # and what is kept, remember accepts


def test_the_cases_cover_every_shape_sentence_and_form():
    assert len(CASES) == len(SHAPES) + len(PROSE) + len(FORMS) >= 200
    assert sum("\n" in text for _, text, _ in CASES) >= 25  # written over several lines


def test_the_long_source_starts_its_tail_inside_the_text():
    text = FORMS["aws-credentials-file"][0]
    source = _long_source(text)
    cut = len(source) - 4 * MAX_EXCERPT_BYTES
    start = source.index(text)
    assert start < cut < start + len(text)
    shown = excerpt(source, None)
    assert "region = eu-west-1" in shown  # the excerpt does reach back to the text


def test_a_key_longer_than_a_message_cut_by_the_tail_is_still_redacted_whole():
    label = _p("OPENSSH PRIV", "ATE KEY")
    body = lines(MAX_MESSAGE_CHARS // 65 + 200)
    source = f"key = '''-----BEGIN {label}-----\n{body}\n-----END {label}-----'''\nload(key)"
    shown = excerpt(source, None)
    assert shown.startswith("[REDACTED:private-key]") and shown.endswith("load(key)")
    assert not [line for line in body.splitlines()[-200:] if line in shown]


def test_a_key_cut_by_the_tail_without_its_end_is_redacted_to_the_end():
    label = _p("EC PRIV", "ATE KEY")
    body = lines(200)
    source = f"-----BEGIN {label}-----\n{body}"
    shown = excerpt(source, None)
    assert not [line for line in body.splitlines() if line in shown]
    assert "[REDACTED:private-key]" in shown


def _ordinary() -> list[str]:
    out = list(CLEAN)
    for name in ("english_statements.txt", "secret_talk_statements.txt"):
        text = (DATA / name).read_text(encoding="utf-8")
        out += [line for line in text.splitlines() if line.strip() and not line.startswith("# ")]
    return out


def test_ordinary_statements_in_a_failed_cell_are_kept_as_they_are():
    statements = _ordinary()
    assert len(statements) >= 450
    for text in statements:
        ev = evidence_from_exception(_raised(ValueError(text)), session="s", source=f"check({text!r})")
        assert ev is not None
        assert ev.evalue == text.strip() or len(text) > 500, text
        assert "[REDACTED" not in ev.excerpt, (text, ev.excerpt)
