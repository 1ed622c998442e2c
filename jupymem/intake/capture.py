"""Statements and failed cells -> clean records.

Everything that enters memory passes through here first, so this is where the
promises of SPEC 2 and 3 are kept: a statement is valid text of sensible size,
it never carries a secret, the same statement always gets the same id, and a
failed cell becomes a short, redacted diagnosis instead of a traceback.

It is pure and dependency-free (stdlib only, regexes compiled at import) because
it runs inside the kernel's post-run hook and in every face: importing it must
cost next to nothing and calling it must never touch disk, network or SQLite.

Finding secrets is a job of its own (``secrets_scan``); ``find_secrets``,
``redact`` and ``SecretFinding`` stay importable from here.
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import re
import secrets
import unicodedata
from typing import Any, cast

from ..errors import InvalidStatement, SecretRefused
from ..models import Evidence, Fix
from .clock import now_at
from .secrets_scan import ELLIPSIS, SecretFinding, find_secrets, open_key_block, redact
from .text import control, hidden, strip_control, strip_hidden, unify_newlines

__all__ = [
    "MAX_STATEMENT_BYTES",
    "MAX_EXCERPT_BYTES",
    "SecretFinding",
    "check_statement",
    "find_secrets",
    "redact",
    "normalize_for_identity",
    "memory_id",
    "fold_quote",
    "diagnose",
    "excerpt",
    "new_handle",
    "evidence_from_exception",
    "raising_line",
    "clean_evidence",
]

MAX_STATEMENT_BYTES = 16 * 1024
MAX_EXCERPT_BYTES = 2048
MAX_DIAGNOSIS_LINES = 3
MAX_LINE_CHARS = 300
MAX_EVALUE_CHARS = 500
MAX_MESSAGE_CHARS = 64 * 1024

# --------------------------------------------------------------------------- statements

def check_statement(text: str | bytes, what: str = "statement") -> str:
    """Return ``text`` cleaned for storage, or raise why it cannot be a memory.

    Line endings become ``\\n`` and the ends are stripped; inner newlines stay.
    Raises ``InvalidStatement`` for undecodable, empty, oversized or binary input
    and ``SecretRefused`` when ``find_secrets`` finds anything. ``what`` names the
    text in messages ("The topic contains ...") when it is not the statement.
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidStatement(
                f"The {what} is not valid UTF-8 (bad byte at offset {exc.start}); "
                "save it as UTF-8 text and record it again."
            ) from None
    if not isinstance(text, str):
        raise InvalidStatement(
            f"A statement must be text, not {type(text).__name__}; pass a str."
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidStatement(
            f"The {what} holds an unpaired surrogate (U+{ord(text[exc.start]):04X} at "
            f"character {exc.start}), usually from bytes decoded with 'surrogateescape'; "
            "decode the source as UTF-8 and record it again."
        ) from None
    text = unify_newlines(text).lstrip("\ufeff").strip()
    if not text:
        raise InvalidStatement(
            f"The {what} is empty; write the decision, constraint or lesson to remember."
        )
    size = len(text.encode("utf-8"))
    if size > MAX_STATEMENT_BYTES:
        raise InvalidStatement(
            f"The {what} is {size:,} bytes; the limit is {MAX_STATEMENT_BYTES:,} bytes. "
            "A memory is a statement: keep it short, put long material in a notebook "
            "or file and cite it."
        )
    binary = control(text)
    if binary:
        raise InvalidStatement(
            f"The {what} holds a binary control character (U+{ord(binary.group()):04X} at "
            f"character {binary.start()}); record plain text, not binary data."
        )
    why = hidden(text)
    if why:
        raise InvalidStatement(
            f"The {what} {why}: such characters can carry text that people do not see and "
            "assistants read. Remove them (retype the text, or paste it as plain text) and record it again."
        )
    found = find_secrets(text)
    if found:
        found_what = "; ".join(f"{f.label} ({f.masked})" for f in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        raise SecretRefused(
            f"The {what} contains {found_what}{more}. Secrets are never stored: remove it, "
            "say where the secret lives instead (e.g. an environment variable name), "
            "and record the statement again."
        )
    return text


# --------------------------------------------------------------------------- identity

_QUOTES = {
    **dict.fromkeys("‘’‚‛′´", "'"),
    **dict.fromkeys("“”„‟″«»", '"'),
    **dict.fromkeys("‐‑‒–—―−", "-"),
    **dict.fromkeys("\u200b\u200c\u200d\u2060\u00ad\ufeff", ""),
}
_FOLD = str.maketrans(_QUOTES)
_SPACE = re.compile(r"\s+")


def fold_quote(text: str) -> str:
    """Fold what typing and rendering change but a person did not: compatibility
    forms (NFKC: full-width letters, ``…`` -> ``...``, no-break spaces), curly
    quotes, dashes and runs of whitespace.

    Case is kept: a quote proves that a person said these words, and in a
    notebook case carries meaning (``ID`` and ``id`` are different columns).
    Check a quote with ``fold_quote(quote) in fold_quote(prompt)``.
    """
    if not text.isascii():  # ASCII is its own NFKC form and holds nothing in _FOLD
        text = unicodedata.normalize("NFKC", text).translate(_FOLD)
    return _SPACE.sub(" ", text).strip()


def normalize_for_identity(text: str) -> str:
    """The form a statement's id is derived from: ``fold_quote`` plus casefold and
    without a trailing full stop, so trivially different spellings of the same
    statement are one memory."""
    text = fold_quote(text).casefold()
    # casefold can produce characters that NFKC would fold again (rare, e.g. "ﬅ").
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return text.rstrip(". \t\n")


def memory_id(text: str, owner: str | None = None) -> str:
    """``m-`` and the first 12 hex digits of the normalized statement's SHA-256.

    ``owner``: a private memory on the team engine, whose id also derives from its
    author's database role. Ids are unique per project, and one person's private "X"
    must neither block a teammate's shared "X" nor tell them that it exists."""
    key = normalize_for_identity(text)
    if owner is not None:
        key += "\x00private:" + owner
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
    return "m-" + digest[:12]


# --------------------------------------------------------------------------- failed cells

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_FRAMING = re.compile(
    r"^(?:Traceback \(most recent call last\):"
    r"|During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:"
    r"|-{10,}|\"\"\"|'''|[\s^~]*)$"
)
_GROUP: type | None = getattr(builtins, "BaseExceptionGroup", None)  # Python 3.11+
_FRAME = re.compile(r"^\s*(?:File \".*\", line \d+|Cell In\[\d*\], line \d+|\S+\.py:\d+)")


def _clip(text: str, limit: int = MAX_LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + ELLIPSIS


def _message(exc: BaseException) -> str:
    """``str(exc)``, bounded and redacted (see ``_redacted_whole``)."""
    try:
        text = str(exc)
    except Exception:  # a broken __str__ must not break the hook; the type still tells
        return f"<unprintable {type(exc).__name__}>"
    return _redacted_whole(text)


def _redacted_whole(text: str) -> str:
    """A message or note, bounded and redacted as a whole, before it is split into lines.

    Only the first lines of a message can ever be shown, and a message may embed a
    whole DataFrame: the cut falls on a line boundary so that no half secret is left
    for the redactor to miss. Redacted whole because many secrets span lines: a key
    file (its header alone holds nothing secret and its body looks like nothing), the
    secret half of an AWS key pair under its key id, a netrc entry. Line by line, the
    diagnosis would keep what ``remember`` refuses.
    """
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS].rpartition("\n")[0]
    return redact(_ANSI.sub("", text))


def _clean_lines(message: str) -> list[str]:
    """The meaningful lines of a message: no colours, framing or stack frames."""
    lines: list[str] = []
    skip_code = False
    for raw in _ANSI.sub("", message).splitlines():
        line = strip_control(raw, " ").rstrip()
        if _FRAME.match(line):
            skip_code = True  # the next indented line is the frame's source
            continue
        if skip_code and line[:1].isspace():
            skip_code = False
            continue
        skip_code = False
        if _FRAMING.match(line.strip()):
            continue
        lines.append(line.strip())
    return lines


def _exception_lines(exc: BaseException) -> list[str]:
    """The exception's lines, each already redacted: its message and notes are redacted
    whole, once, before they are split (``_redacted_whole``)."""
    name = type(exc).__name__
    if isinstance(exc, SyntaxError):
        msg = _redacted_whole(exc.msg or "").strip()
        head = f"{name}: {msg}" if msg else name
        if exc.lineno:
            head += f" (line {exc.lineno})"
        rest: list[str] = []
    else:
        lines = _clean_lines(_message(exc))
        head = f"{name}: {lines[0]}" if lines else name
        rest = lines[1:]
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, (list, tuple)):
        rest += [line for note in notes if isinstance(note, str) for line in _clean_lines(_redacted_whole(note))]
    return [head, *rest]


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception, then (for groups) its members, then what it was raised from."""
    out: list[BaseException] = []
    seen: set[int] = set()
    todo = [exc]
    while todo and len(out) < 16:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        out.append(current)
        nxt = list(cast(Any, current).exceptions[:3]) if _GROUP and isinstance(current, _GROUP) else []
        if current.__cause__ is not None:
            nxt.append(current.__cause__)
        elif current.__context__ is not None and not current.__suppress_context__:
            nxt.append(current.__context__)
        todo = nxt + todo
    return out


def diagnose(exc: BaseException) -> tuple[str, ...]:
    """Up to three distinct error lines, final exception first, then its causes.

    Each exception in the chain gets a line (``KeyError: 'customer_id'``) before
    any exception gets a second one; further lines of a multi-line message fill
    the slots left over, and what does not fit is joined onto its exception's
    last line. Framing, stack frames and colours are dropped, secrets redacted,
    lines clipped to ~300 characters.
    """
    groups: list[list[str]] = []
    seen: set[str] = set()
    for e in _chain(exc):
        head, *rest = _exception_lines(e)
        if head in seen:
            continue  # the same error raised again from its cause: nothing new to say
        lines = [head] + [line for line in dict.fromkeys(rest) if line not in seen]
        seen.update(lines)
        groups.append(lines)
        if len(groups) == MAX_DIAGNOSIS_LINES:
            break
    spare = MAX_DIAGNOSIS_LINES - len(groups)
    out: list[str] = []
    for lines in groups:
        take = 1 + min(spare, len(lines) - 1)
        spare -= take - 1
        kept = lines[:take]
        if len(lines) > take:
            kept[-1] = " | ".join([kept[-1], *lines[take:]])
        out.extend(_clip(line) for line in kept)
    return tuple(out)


def _clip_bytes_head(text: str, limit: int) -> str:
    """The start of ``text`` in at most ``limit`` UTF-8 bytes, ending in ``…``."""
    if len(text.encode("utf-8")) <= limit:
        return text
    room = limit - len(ELLIPSIS.encode("utf-8"))
    clipped = text.encode("utf-8")[:room].decode("utf-8", errors="ignore")
    return clipped + ELLIPSIS


def _clip_bytes_tail(text: str, limit: int) -> str:
    """The end of ``text`` in at most ``limit`` UTF-8 bytes, starting with ``…``.

    Starts at a line boundary when one is near, so the excerpt opens on a whole line.
    """
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = limit - len((ELLIPSIS + "\n").encode("utf-8"))
    if room <= 0:
        return ""
    tail = data[-room:].decode("utf-8", errors="ignore")
    newline = tail.find("\n")
    if 0 <= newline < len(tail) - 1 and newline < room // 2:
        return ELLIPSIS + "\n" + tail[newline + 1 :]
    return ELLIPSIS + tail


def excerpt(source: str, exc: BaseException | None) -> str:
    """A redacted excerpt of a failed cell, at most 2048 UTF-8 bytes: the tail of
    its source (where the error usually is), a blank line, then the diagnosis.

    Clipped text is marked with ``…``; the diagnosis is kept before the source.
    """
    errors = "\n".join(diagnose(exc)) if exc is not None else ""
    errors = _clip_bytes_head(errors, MAX_EXCERPT_BYTES // 2) if errors else ""
    # Redact before clipping, so that a cut never hides half a secret from the
    # detector; only a bounded tail is scanned, as cells can be huge.
    src = unify_newlines(source or "")
    src = _ANSI.sub("", src).rstrip()
    src = _redacted_tail(src) if len(src) > _SOURCE_TAIL else redact(src)
    if not errors:
        return _clip_bytes_tail(src, MAX_EXCERPT_BYTES)
    separator = "\n\n" if src else ""
    room = MAX_EXCERPT_BYTES - len((separator + errors).encode("utf-8"))
    src = _clip_bytes_tail(src, room)
    return f"{src}{separator if src else ''}{errors}"


_SOURCE_TAIL = 4 * MAX_EXCERPT_BYTES  # how much of a long cell's source is read
_LOOK_BACK = 1024  # how far above the tail a secret's context may start (a key id, a netrc machine)


def _redacted_tail(src: str) -> str:
    """The last lines of a long cell's source, about ``_SOURCE_TAIL`` characters, redacted
    as the whole source would be.

    Only the tail is read, as cells can be huge, but from a little above it, or from
    the header of a key block still open where it starts: a secret whose context lies
    above the cut (a key's header, an AWS key id, a netrc machine) is found as it would
    be in the whole text, and one that straddles the cut is replaced from the cut on.
    """
    cut = len(src) - _SOURCE_TAIL
    newline = src.find("\n", cut)
    cut = newline + 1 if newline >= 0 else cut
    header = open_key_block(src, cut)
    if header is not None and cut - header.start() > MAX_MESSAGE_CHARS:
        # A key longer than a message (pathological): its header is set before the tail, so
        # that the rest of the block is still taken whole.
        return redact(f"{header.group()}\n{src[cut:]}")
    begin = header.start() if header is not None else max(0, cut - _LOOK_BACK)
    window, at = src[begin:], cut - begin
    out: list[str] = []
    for f in find_secrets(window):
        if f.end > at:
            out.append(window[at : max(at, f.start)] + f"[REDACTED:{f.kind}]")
            at = f.end
    out.append(window[at:])
    return "".join(out)


def new_handle() -> str:
    """A fresh evidence handle, ``ev-`` and 8 lowercase hex digits."""
    return "ev-" + secrets.token_hex(4)


def _not_a_failure(exc: BaseException) -> bool:
    """Interrupts and clean exits: the person stopped the cell, nothing went wrong.

    ``SystemExit`` with a non-zero code *is* staged (``argparse`` in a notebook
    exits with 2, a classic lesson); with code 0 or None it is a deliberate stop.
    ``bdb.BdbQuit`` is quitting the debugger.
    """
    if isinstance(exc, (KeyboardInterrupt, GeneratorExit)):
        return True
    if isinstance(exc, SystemExit):
        return exc.code in (0, None)
    return type(exc).__name__ == "BdbQuit" and type(exc).__module__ == "bdb"


def evidence_from_exception(
    exc: BaseException,
    *,
    session: str,
    source: str = "",
    cell_id: str | None = None,
    execution_count: int | None = None,
    notebook: str | None = None,
) -> Evidence | None:
    """Stage-ready evidence for a failed cell, or None when it was not a failure
    (see ``_not_a_failure``: KeyboardInterrupt, GeneratorExit, SystemExit(0/None),
    bdb.BdbQuit). Everything kept is redacted and clipped."""
    if _not_a_failure(exc):
        return None
    evalue = "\n".join(_clean_lines(_message(exc)))
    # strip_hidden: a failure reaches assistants (%%ask shows staged failures), so text
    # people cannot see is dropped here, as every entrance refuses it (text.py).
    return Evidence(
        handle=new_handle(),
        session=session,
        ename=type(exc).__name__,
        evalue=strip_hidden(_clip(redact(evalue), MAX_EVALUE_CHARS)),
        diagnosis=tuple(strip_hidden(line) for line in diagnose(exc)),
        excerpt=strip_hidden(excerpt(source, exc)),
        created_at=now_at(),  # microseconds: failures in a burst keep their order in the window
        cell_id=cell_id,
        execution_count=execution_count,
        notebook=notebook,
    )


def raising_line(exc: BaseException, namespace: dict[str, Any] | None) -> int | None:
    """The 1-based line of the failed cell that raised, or None when it cannot be told.

    A cell runs as a module whose globals are the shell's namespace: the first
    traceback frame with those globals is the cell's own, and its line is the
    statement that raised (a call into a library points at the call). A
    ``SyntaxError`` carries its line instead. Pairing uses it to name the line
    that failed in a suggested lesson.
    """
    if isinstance(exc, SyntaxError):
        return exc.lineno if isinstance(exc.lineno, int) and exc.lineno > 0 else None
    if namespace is None:
        return None
    tb = exc.__traceback__
    steps = 0
    while tb is not None and steps < 64:  # a deep recursion is not worth walking
        if tb.tb_frame.f_globals is namespace and tb.tb_frame.f_code.co_name == "<module>":
            return tb.tb_lineno
        tb = tb.tb_next
        steps += 1
    return None
_KEEP_AS_IS = ("handle", "session", "created_at", "cell_id", "notebook")


def clean_evidence(ev: Evidence) -> Evidence:
    """Staged evidence as it may be cited today: every text field redacted again (the
    scanner may have learned a shape since the failure was staged), without control
    characters, and clipped back to its limits. Clean evidence comes back as it was."""
    changes: dict[str, object] = {}
    for f in dataclasses.fields(ev):
        value = getattr(ev, f.name)
        if f.name in _KEEP_AS_IS:
            continue
        if f.name == "diagnosis" and isinstance(value, tuple):
            new: object = tuple(_clip(_clean_text(line, one_line=True)) for line in value)
        elif f.name == "evalue" and isinstance(value, str):
            new = _clip(_clean_text(value), MAX_EVALUE_CHARS)
        elif f.name == "excerpt" and isinstance(value, str):
            new = _clip_bytes_tail(_clean_text(value), MAX_EXCERPT_BYTES)
        elif f.name == "ename" and isinstance(value, str):
            new = _clean_text(value, one_line=True)
        elif isinstance(value, str):  # a field this version does not know by name
            new = _clean_text(value)
        elif isinstance(value, Fix):
            new = dataclasses.replace(
                value, source=_clean_text(value.source), diff=_clean_text(value.diff),
                after=_clean_text(value.after, one_line=True) if value.after else value.after,
            )
        else:
            continue
        if new != value:
            changes[f.name] = new
    return dataclasses.replace(ev, **changes) if changes else ev  # type: ignore[arg-type]


def _clean_text(text: str, one_line: bool = False) -> str:
    text = redact(text)
    text = strip_hidden(strip_control(text, " "))
    return text.replace("\t", " ").replace("\n", " ") if one_line else text
