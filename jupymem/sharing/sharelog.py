"""The shared log's file format: ``.jupymem/log/<name>-<writer>.jsonl``, read and checked.

One file per writer (one clone of one person), only ever appended to, so two people
recording at the same time change different files and git merges them without a
conflict. Each line is one event, self-describing and hash-chained within its file::

    {"at":"...","hash":"...","payload":{...},"prev":"...","type":"record",
     "uid":"...","v":1,"writer":{"email":"...","id":"3f9a2c1d4e","name":"..."}}

``hash`` is the sha256 of the canonical JSON (sorted keys, no spaces) of every other
field, with the payload replaced by ``payload_hash``, the sha256 of its own canonical JSON
(as the database's events are hashed), so the line can be checked on its own and its
payload is encoded once; ``prev`` is the hash of a line before it in the same file
(normally the one just before; after a union merge of two branches the same writer
appended to, a line may follow an earlier one, so the chain is a tree).
Order and identity come from the events (time, uid), never from line positions.

Every byte of these files is untrusted: it arrives with a pull, from anyone who could
commit. So a line is read strictly (``strictjson``: bounded size and nesting, no
duplicate keys, no NaN, 64-bit integers), must be in the canonical form jupymem writes
(what a reviewer reads is exactly what is applied), carry exactly the fields of the
format, chain to a line of its own file, name this file's writer, and pass
``check_line``, which applies the validator every entrance uses (``validate``). A line
dated more than ``clock.MAX_SKEW`` ahead of this machine's clock waits until then. A
line that fails is one ``Problem`` naming file and line, and is not applied, nor any
line that descends from it; nothing a line holds can stop a command. Lines whose order
in the file was changed are still applied (they chain all the same) and are named.

A file is read as a stream, a line at a time, and at most ``MAX_LINES`` lines of one
file are read (a writer starts a new file before that), so a huge file costs bounded
time and memory.

``together.combine`` puts the files together.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from ..errors import InvalidStatement, JupymemError
from ..intake import clock, strictjson
from ..storage.eventlog import GENESIS, canonical, sha256
from . import checkout
from .checkout import MAX_FILE_BYTES, LineReader
from .folder import FOLDER, LOG_DIR

__all__ = [
    "FOLDER", "LOG_DIR", "FORMAT", "SUFFIX", "SHARED_TYPES", "MAX_LINES", "MAX_LINE_BYTES", "Entry", "Problem",
    "Reading", "check_line", "encode", "file_name", "line_hash", "log_dir", "new_writer_id", "read_file",
    "read_stream", "lines_read", "verified_hash",
    "slug", "who", "writer_of",
]

FORMAT = 1
SUFFIX = ".jsonl"
# The types a shared file may carry; gc is a local retention decision and never shared.
SHARED_TYPES = frozenset({"record", "supersede", "retire", "confirm"})

MAX_AUTHOR_CHARS = 200
MAX_LINE_BYTES = 256 * 1024  # a statement is at most 16 KB; evidence at most 64 x ~3 KB
# Lines read from one file. A writer starts a new file before it gets there (journal).
MAX_LINES = 20_000

LINE_KEYS = frozenset({"v", "uid", "type", "at", "writer", "payload", "prev", "hash"})
WRITER_KEYS = frozenset({"id", "name", "email"})

_NAME = re.compile(r"^(?:[a-z0-9][a-z0-9-]*-)?(?P<id>[0-9a-f]{10})\.jsonl$")
_UID = re.compile(r"^[0-9a-f]{32}$")
_HASH = re.compile(r"^[0-9a-f]{64}$")
_WRITER_ID = re.compile(r"^[0-9a-f]{10}$")
# ASCII digits only: ``\d`` takes any script's digits, which strptime reads as numbers
# while text comparison sorts them after every real time (a line that waits forever).
_AT = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$")


# -- writers and file names ------------------------------------------------------------


def new_writer_id() -> str:
    return secrets.token_hex(5)


def slug(name: str | None) -> str:
    """A file-name-safe form of a person's name: ``Ana María López`` -> ``ana-mar-a-l-pez``."""
    text = re.sub(r"[^a-z0-9]+", "-", (name or "").lower()).strip("-")
    return text[:24].strip("-") or "writer"


def file_name(writer_id: str, name: str | None) -> str:
    return f"{slug(name)}-{writer_id}{SUFFIX}"


def writer_of(file: str) -> str | None:
    """The writer id in a log file's name, or None when the name is not ours."""
    m = _NAME.match(file)
    return m.group("id") if m else None


def log_dir(root: Path) -> Path:
    return root / FOLDER / LOG_DIR


def who(writer: dict[str, Any]) -> str:
    """How a line's writer is named to people: ``Ana <ana@example.com>`` (as git names
    an author), or ``writer 3f9a2c1d4e`` when the line names nobody."""
    name, email = writer.get("name"), writer.get("email")
    if name and email:
        return f"{name} <{email}>"
    return name or (f"<{email}>" if email else f"writer {writer.get('id')}")


# -- lines ---------------------------------------------------------------------------


def line_hash(fields: dict[str, Any], payload_hash: str | None = None) -> str:
    """The hash a line must carry: over every field but ``hash``, the payload by its sha256."""
    if payload_hash is None:
        payload_hash = sha256(canonical(fields.get("payload")))
    head = {k: v for k, v in fields.items() if k not in ("hash", "payload")}
    head["payload_hash"] = payload_hash
    return sha256(canonical(head))


def encode(
    uid: str, type_: str, at: str, payload: dict[str, Any], writer: dict[str, Any], prev: str
) -> tuple[str, str]:
    """(the line with its newline, its hash) for one event."""
    fields = {"v": FORMAT, "uid": uid, "type": type_, "at": at, "writer": writer, "payload": payload, "prev": prev}
    h = line_hash(fields)
    return canonical({**fields, "hash": h}).decode("utf-8") + "\n", h


@dataclass(frozen=True)
class Entry:
    """One accepted line: an event ready to apply."""

    line: int
    uid: str
    type: str
    at: str
    payload: dict[str, Any]
    writer: dict[str, Any]
    hash: str
    body: str  # the payload's canonical JSON, as the database stores it
    payload_hash: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.at, self.uid)

    @property
    def who(self) -> str:
        return who(self.writer)

    def same_event(self, other: Entry) -> bool:
        return (self.type, self.at, self.payload_hash) == (other.type, other.at, other.payload_hash)


@dataclass
class Problem:
    """A line that is not applied (and how many lines after it go with it), one that
    waits for its time, or one that is applied but was moved (``applied``)."""

    file: str
    line: int
    message: str
    following: int = 0
    due: str | None = None  # it waits until this time (a line dated ahead of the clock)
    applied: bool = False  # said for the record: the line is applied all the same

    def __str__(self) -> str:
        n = self.following
        if self.applied:
            tail = " It is applied."
        elif self.due:
            tail = f" It and the {n:,} line{'s' if n != 1 else ''} after it wait until then." if n else " It waits until then."
        elif n:
            lines = f"{n} line that follows" if n == 1 else f"{n:,} lines that follow"
            tail = f" It and the {lines} it in this writer's chain are not applied."
        else:
            tail = " It is not applied."
        where = (f" line {self.line}" if self.line > 0
                 else ", a line that a commit took out (read from git's history)" if self.line < 0 else "")
        return f"{FOLDER}/{LOG_DIR}/{self.file}{where}: {self.message.rstrip('.')}.{tail}"


@dataclass
class Reading:
    """What one file holds: the accepted entries in file order, and the problems."""

    file: str
    lines: int = 0
    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # The last complete line was applied (or there is none): a line appended after it
    # will be applied. When False, the writer must start a new file.
    tail_ok: bool = True
    due: str | None = None  # the earliest time a waiting line comes due

    @property
    def full(self) -> bool:
        """The file holds as many lines as a writer may write to one file."""
        return self.lines >= MAX_LINES


@dataclass
class _Line:
    number: int
    obj: dict[str, Any]
    hash: str
    prev: str
    body: bytes
    payload_hash: str


class _Lines:
    """(number, the line without its newline or None when too long, its size, whether it
    ended in a newline), never holding more than one bounded line in memory, and reading
    at most ``MAX_FILE_BYTES`` of the file (``over`` says the budget ran out). A CR before
    a line's end is git's checkout (``eol=crlf``), never ours: canonical JSON holds none."""

    def __init__(self, fh: LineReader, taken: int = 0, taken_bytes: int = 0):
        self.fh = fh
        # The stream starts with ``taken`` lines (``taken_bytes``) that history took out of
        # the file (``reading.with_taken``): numbered -taken..-1, so that the file's own
        # lines keep their numbers, and counted on top of the file's budget and its line
        # cap, so that lines a commit put in and took out cannot push the file's own out.
        self.budget = MAX_FILE_BYTES + taken_bytes
        self.over = False
        self.taken = taken

    def _readline(self, size: int) -> bytes:
        raw = self.fh.readline(min(size, self.budget + 1))
        self.budget -= len(raw)
        if self.budget < 0:
            self.over = True
            return b""
        return raw

    def __iter__(self) -> Iterator[tuple[int, bytes | None, int, bool]]:
        number = -(self.taken + 1) if self.taken else 0
        while True:
            raw = self._readline(MAX_LINE_BYTES + 2)
            if not raw:
                return
            number += 1 if number != -1 else 2  # -1, then 1: no line 0 (the file as a whole)
            if raw.endswith(b"\n"):
                body = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
                yield number, body, len(body), True
                continue
            if len(raw) <= MAX_LINE_BYTES + 1:
                yield number, raw, len(raw), False  # the end of the file, without a newline
                return
            size = len(raw)
            ended = False
            while True:  # skip the rest of an oversized line, a megabyte at a time
                chunk = self._readline(1 << 20)
                size += len(chunk)
                if not chunk or chunk.endswith(b"\n"):
                    ended = chunk.endswith(b"\n")
                    break
            if self.over:
                return
            yield number, None, size - ended, ended

    def count_rest(self) -> int:
        """How many more lines the file holds, counted a megabyte at a time (none is
        parsed), within the budget."""
        n = 0
        while chunk := self._readline(1 << 20):
            n += chunk.count(b"\n")
        return n


def read_stream(name: str, fh: IO[bytes], now: datetime | None = None, taken: int = 0,
                taken_bytes: int = 0) -> Reading:
    """Read and check every line of one writer's file (see the module docstring).
    ``taken``: the stream starts with that many lines (``taken_bytes``) that history took
    out of the file."""
    reading = Reading(name)
    writer_id = writer_of(name)
    if writer_id is None:
        reading.problems.append(Problem(name, 0, "is not named <name>-<writer id>.jsonl, so no writer owns it"))
        return reading
    now = now or clock.now()
    valid = {GENESIS}
    caused_by: dict[str, Problem] = {}  # hash of a line not applied -> the problem it descends from
    waiting: dict[str, list[_Line]] = {}  # prev not seen yet -> lines that follow it
    seen: dict[str, tuple[str, int]] = {}  # uid -> (hash, line)
    last_hash: str | None = None  # of the last complete line in file order
    lines = _Lines(checkout.open_lines(fh), taken, taken_bytes)
    for number, raw, size, ended in lines:
        if number > MAX_LINES:
            rest = 1 + lines.count_rest()
            reading.lines += rest
            more = " and the rest of the file" if lines.over else ""
            reading.problems.append(Problem(
                name, number, f"is past the {MAX_LINES:,} lines one writer's file may hold, so it and the "
                f"{rest - 1:,} lines after it{more} are not read (jupymem starts a new file long before that)"))
            reading.tail_ok = False
            lines.over = False  # said with the lines past the cap
            break
        if not ended:
            if raw is not None and not raw.strip():
                break
            reading.lines += 1
            reading.problems.append(Problem(name, number, "is incomplete (no line end): a write was cut short"))
            reading.tail_ok = False
            break
        if raw is not None and not raw.strip():
            continue
        reading.lines += 1
        last_hash = None
        parsed, why = _parse(raw, size)
        if why and raw is not None and (undone := checkout.unexpand_ident(raw)) != raw:
            again, why_again = _parse(undone, len(undone))  # git's `ident` expanded a $Id$ the line holds
            if not why_again:
                parsed, why = again, why_again
        if why:
            p = Problem(name, number, why)
            reading.problems.append(p)
            # Altered, but its stated hash is what the next line follows; unless history read
            # back the line as written, which the next line then follows.
            if parsed is not None and parsed.hash not in valid:
                caused_by.setdefault(parsed.hash, p)
            continue
        assert parsed is not None
        parsed.number = number
        last_hash = parsed.hash
        if parsed.prev in caused_by:
            _follows(caused_by, parsed)
            continue
        if parsed.prev not in valid:
            waiting.setdefault(parsed.prev, []).append(parsed)
            continue
        _take(reading, parsed, writer_id, now, valid, caused_by, waiting, seen, in_order=True)
    if lines.over:
        reading.problems.append(Problem(
            name, 0, f"is larger than the {checkout.MAX_FILE_BYTES // (1 << 20)} MB one writer's file may hold, so "
            "what lies past that is not read (jupymem starts a new file long before that)"))
        reading.tail_ok = False
    for waiters in waiting.values():  # never reached: their line was removed or altered
        for ln in waiters:
            if ln.prev in caused_by:
                _follows(caused_by, ln)
                continue
            p = Problem(name, ln.number, "does not follow any line of this file (a line before it was removed or "
                                         "changed)")
            reading.problems.append(p)
            caused_by[ln.hash] = p
    if last_hash is not None:
        reading.tail_ok = last_hash in valid
    elif reading.lines:
        reading.tail_ok = False
    reading.problems.sort(key=lambda p: p.line)
    dues = [p.due for p in reading.problems if p.due]
    reading.due = min(dues) if dues else None
    return reading


def read_file(path: Path, now: datetime | None = None) -> Reading:
    """One file by its path (tools and tests; the cache reads through ``folder``), opened
    without following a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        reading = Reading(path.name, tail_ok=False)
        reading.problems.append(Problem(path.name, 0, f"cannot be read ({exc.strerror or exc})"))
        return reading
    with os.fdopen(fd, "rb") as fh:
        return read_stream(path.name, fh, now)


def _follows(caused_by: dict[str, Problem], ln: _Line) -> None:
    cause = caused_by[ln.prev]
    cause.following += 1
    caused_by[ln.hash] = cause


def _take(
    reading: Reading, ln: _Line, writer_id: str, now: datetime, valid: set[str], caused_by: dict[str, Problem],
    waiting: dict[str, list[_Line]], seen: dict[str, tuple[str, int]], *, in_order: bool,
) -> None:
    """Check a line whose predecessor is applied; then the lines that were waiting for it."""
    todo = [(ln, in_order)]
    while todo:
        ln, in_order = todo.pop()
        problem = _check(reading.file, ln, writer_id, now)
        if problem is None and ln.obj["uid"] in seen:
            first_hash, first_line = seen[ln.obj["uid"]]
            if first_hash == ln.hash:  # the same line twice (a union merge kept both copies): one event
                continue
            problem = Problem(reading.file, ln.number, f"repeats the uid of line {first_line} with other content")
        if problem is not None:
            reading.problems.append(problem)
            caused_by[ln.hash] = problem
            for child in waiting.pop(ln.hash, ()):
                _follows(caused_by, child)
            continue
        valid.add(ln.hash)
        seen[ln.obj["uid"]] = (ln.hash, ln.number)
        o = ln.obj
        reading.entries.append(Entry(ln.number, o["uid"], o["type"], o["at"], o["payload"], o["writer"], ln.hash,
                                     ln.body.decode("utf-8"), ln.payload_hash))
        if not in_order and ln.number > 0:  # a line history took out is read first on purpose
            reading.problems.append(Problem(
                reading.file, ln.number, "comes before the line it follows: the file's lines were reordered",
                applied=True))
        todo.extend((child, False) for child in waiting.pop(ln.hash, ()))


def lines_read(fh: IO[bytes]) -> set[bytes]:
    """Every complete line of a file that ``read_stream`` reads (within the file's caps),
    as it reads it (past a byte order mark, decoded from UTF-16, a CR before the line end
    aside, git's ``ident`` undone): what history asks when it asks whether the file still
    holds a line. A line pushed past the caps by lines put before it is not held."""
    out: set[bytes] = set()
    for number, raw, _, ended in _Lines(checkout.open_lines(fh)):
        if number > MAX_LINES:
            break
        if raw is not None and ended:
            out.add(raw)
            out.add(checkout.unexpand_ident(raw))
    return out


def verified_hash(raw: bytes) -> str | None:
    """The hash of ``raw`` when it is a line as the format writes it and its hash holds,
    else None. What history follows a line by: a line that only quotes another line's
    hash (``{"hash":"<hers>"}``) is not that line, and cannot stand in for it."""
    line, why = _parse(raw, len(raw))
    return line.hash if line is not None and not why else None


def _parse(raw: bytes | None, size: int) -> tuple[_Line | None, str]:
    """A line as the format writes it and "", or why it is not one (with the line, when
    its stated hash can still be read: the lines that follow it name it)."""
    if raw is None or size > MAX_LINE_BYTES:
        return None, f"is {size:,} bytes, more than any event can be"
    try:
        obj = strictjson.loads(raw, max_bytes=MAX_LINE_BYTES)
    except strictjson.StrictJSONError as exc:
        return None, f"is not a jupymem event: it {exc}"
    if not isinstance(obj, dict) or not {"uid", "payload", "prev", "hash"} <= obj.keys():
        return None, "is not a jupymem event (a hand edit or a merge conflict marker?)"
    if obj.get("v") != FORMAT:
        from ..storage import validate  # only where a line is refused: see check_line

        shown = validate.quoted(obj.get("v"), 20)
        return None, f"has format {shown}; this jupymem reads format {FORMAT} (upgrade jupymem?)"
    if obj.keys() != LINE_KEYS:
        from ..storage import validate

        extra = sorted(obj.keys() - LINE_KEYS)
        what = f"a field the format does not have ({validate.quoted(extra[0])})" if extra else (
            f"no {sorted(LINE_KEYS - obj.keys())[0]!r}")
        return None, f"has {what}"
    stated, prev = obj["hash"], obj["prev"]
    if not isinstance(stated, str) or not _HASH.match(stated) or not isinstance(prev, str) or not _HASH.match(prev):
        return None, "has a hash or prev that is not 64 hex digits"
    if canonical(obj) != raw:
        # Same values, other bytes: what a reviewer reads must be exactly what is applied.
        return None, "is not in the canonical form jupymem writes (sorted keys, no spaces, no escapes it avoids)"
    # The payload's own canonical JSON is a slice of the line: keys are sorted, so it sits
    # between the "hash" and the "prev" fields, and no string inside it can hold an
    # unescaped quote (so the last ',"prev":"' is the line's own).
    start = raw.index(b',"payload":') + len(b',"payload":')
    body = raw[start : raw.rindex(b',"prev":"')]
    payload_hash = hashlib.sha256(body).hexdigest()
    line = _Line(0, obj, stated, prev, body, payload_hash)
    if line_hash(obj, payload_hash) != stated:
        return line, "fails its hash: the line was altered after it was written"
    return line, ""


def _check(file: str, ln: _Line, writer_id: str, now: datetime) -> Problem | None:
    """The checks of a line that follows an applied one: its writer, its time, its event."""
    obj = ln.obj
    writer = obj["writer"]
    message = None
    due = None
    if not isinstance(writer, dict) or writer.keys() != WRITER_KEYS or writer.get("id") != writer_id:
        message = "was written by another writer than the one this file belongs to"
    else:
        try:
            check_line(obj)
        except JupymemError as exc:
            message = f"is refused: {' '.join(exc.message.split())}"
        else:
            if clock.ahead(obj["at"], now):
                message = (f"is dated {obj['at']}, more than {clock.skew_text()} ahead of this machine's clock "
                           f"({clock.format_at(now)})")
                due = obj["at"]
    return None if message is None else Problem(file, ln.number, message, due=due)


# -- the validator --------------------------------------------------------------------


def check_line(event: dict[str, Any]) -> dict[str, Any]:
    """Refuse an event from a shared file that this machine must not apply; return it.

    Every line read from ``.jupymem/`` and every line about to be written passes here.
    The event itself is checked by the validator every entrance uses (``validate``:
    kinds, standings, ids derived from statements, timestamps, the sizes, characters
    and secrets of every text field); on top of it a shared line must be one of the
    types a shared file carries, have a uid and time in the shared format, name its
    writer in short lines of text, and never carry a private memory. References to
    other memories are checked for their form only: the memory a line retires may come
    from another writer's file, read in any order, and replay applies events in
    (time, uid) order. Raises a ``JupymemError`` naming the field.
    """
    # Not at import: validation brings capture and the secret scan's compiled patterns,
    # which `jupymem status` in a repository without shared lines never needs.
    from ..storage import validate

    uid, type_, at, payload = event.get("uid"), event.get("type"), event.get("at"), event.get("payload")
    if not isinstance(uid, str) or not _UID.match(uid):
        raise InvalidStatement("its uid is not 32 hex digits")
    if type_ not in SHARED_TYPES:
        raise InvalidStatement(f"event type {validate.quoted(type_)} is not one a shared file can carry")
    if not isinstance(at, str) or not _AT.match(at):
        raise InvalidStatement("its time is not a UTC timestamp like 2025-01-02T03:04:05.000000Z")
    if not isinstance(payload, dict):
        raise InvalidStatement("it has no payload")
    writer = event.get("writer")
    if not isinstance(writer, dict) or not _WRITER_ID.match(str(writer.get("id"))):
        raise InvalidStatement("its writer has no id of 10 hex digits")
    for key in ("name", "email"):
        if writer.get(key) is not None:
            validate.check_label(writer[key], f"writer.{key}", MAX_AUTHOR_CHARS)
    memory = payload.get("memory")
    if isinstance(memory, dict) and memory.get("private"):
        raise InvalidStatement("a private memory cannot be in a shared file")
    validate.check_event({"uid": uid, "type": type_, "at": at, "payload": payload}, validate.ANY_ID, purged_ok=False)
    return event
