"""The hash-chained event log: every change to memory, in order, each event sealed to the one before.

Each event's hash is sha256 over canonical JSON (sorted keys) of its header,
which carries the sha256 of its payload and the previous event's hash. ``gc``
may purge a payload (the header and its hash stay, so the chain still
verifies); a purge is itself an event naming what it purged. Events are appended
inside ``database.transaction`` together with their projection.

Staged evidence is deliberately *not* in the log: it is a bounded window of
recent failures, dropped freely, and becomes part of history only when a
memory cites it (then a copy travels in that memory's record event).

In a repository that shares its memory through git (``sharing/share.py``) this log is
a cache of the ``.jupymem/`` files plus this machine's own events; each event's
``scope`` says which (``LOCAL``, ``PRIVATE``, ``SHARED``), and the log is kept
in (time, uid) order, the order every clone replays (``next_at``,
``replace_log``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..models import _Record
from ..errors import CorruptLog
from ..intake import clock
from .database import in_batches

if TYPE_CHECKING:
    from .database import Connection

GENESIS = "0" * 64


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


_string = json.encoder.encode_basestring  # a str as canonical() spells it (ensure_ascii=False)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def event_hash(uid: str, type_: str, at: str, payload_hash: str, prev: str) -> str:
    """sha256 of the canonical JSON of the event's header, spelled out: json.dumps of a
    small dict cost more than the hash, and a replay hashes every event."""
    head = (f'{{"at":{_string(at)},"payload_hash":{_string(payload_hash)},"prev":{_string(prev)},'
            f'"type":{_string(type_)},"uid":{_string(uid)}}}')
    return sha256(head.encode("utf-8"))



# -- the log ----------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class Event(_Record):
    """One line of the hash-chained log, as stored."""

    seq: int
    uid: str
    type: str
    at: str
    payload: dict[str, Any] | None  # None once purged by gc
    payload_hash: str
    prev: str
    hash: str
    writer: str | None = None  # who wrote it, "Name <email>" (not hashed; see migration 4)
    source: str | None = None  # the shared file it was read from or written to (not exported)

    def to_json(self) -> dict[str, Any]:
        out = {
            "seq": self.seq,
            "uid": self.uid,
            "type": self.type,
            "at": self.at,
            "payload": self.payload,
            "payload_hash": self.payload_hash,
            "prev": self.prev,
            "hash": self.hash,
        }
        if self.writer is not None:
            out["writer"] = self.writer
        return out


EVENT_COLUMNS = "seq, uid, type, at, payload, payload_hash, prev, hash, writer, source"


def row_event(row: Any) -> Event:
    """An event from the columns of ``EVENT_COLUMNS`` (the first eight of them, for a salvage)."""
    seq, uid, type_, at, payload, payload_hash, prev, h, *rest = row
    writer, source = (rest + [None, None])[:2]
    return Event(seq, uid, type_, at, json.loads(payload) if payload is not None else None, payload_hash, prev, h,
                 writer, source)


def last_hash(conn: Connection) -> str:
    if hasattr(conn, "chain_head"):  # see ``head``
        found = head(conn)
        return found[1] if found else GENESIS
    row = conn.execute("SELECT hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    return row[0] if row else GENESIS


def last_seq(conn: Connection) -> int:
    if hasattr(conn, "chain_head"):  # see ``head``
        found = head(conn)
        return found[0] if found else 0
    row = conn.execute("SELECT max(seq) FROM events").fetchone()
    return row[0] or 0


def head(conn: Connection) -> tuple[int, str, str] | None:
    """(seq, hash, at) of the newest event; None for an empty log. The one place the head
    is read: an engine that hides some events from some readers (PostgreSQL's private
    events) keeps the head apart and says so with ``chain_head``."""
    engine_head = getattr(conn, "chain_head", None)
    if engine_head is not None:
        return engine_head()
    row = conn.execute("SELECT seq, hash, at FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    return (row[0], row[1], row[2]) if row else None


def stored_hash(conn: Connection, seq: int) -> bytes | None:
    """The hash stored at ``seq``, as bytes (b"" when empty), None without that event. Read
    as bytes: a garbled hash is damage for verify and doctor to name, not a failed read."""
    row = conn.execute("SELECT CAST(hash AS BLOB) FROM events WHERE seq = ?", (seq,)).fetchone()
    if row is None:
        return None
    return bytes(row[0]) if row[0] is not None else b""


def count(conn: Connection) -> int:
    return conn.execute("SELECT count(*) FROM events").fetchone()[0]


# Where an event lives (the ``scope`` column, migration 3).
LOCAL, PRIVATE, SHARED = "local", "private", "shared"


def private_seqs(conn: Connection) -> set[int]:
    """The sequence numbers of the private events (``PRIVATE``) this reader can see."""
    return {r[0] for r in conn.execute("SELECT seq FROM events WHERE scope = ?", (PRIVATE,))}


def append(
    conn: Connection,
    uid: str,
    type_: str,
    at: str,
    payload: dict[str, Any],
    *,
    prev: str | None = None,
    scope: str = LOCAL,
    source: str | None = None,
    writer: str | None = None,
    seq: int | None = None,
) -> Event:
    """Append one event; call inside ``transaction`` together with its projection.

    ``prev`` saves a query when the caller appends a batch and knows the last hash.
    ``scope`` and ``source`` say where the event lives (see ``LOCAL``/``PRIVATE``/``SHARED``);
    ``writer`` who wrote it. ``seq``: the event's number, given by a caller that holds
    the chain (``numbers_events``); otherwise the database numbers it and it is read back.
    """
    body = canonical(payload)
    payload_hash = sha256(body)
    if prev is None:
        prev = last_hash(conn)
    h = event_hash(uid, type_, at, payload_hash, prev)
    values = (uid, type_, at, body.decode("utf-8"), payload_hash, prev, h, scope, source, writer)
    if seq is not None:
        conn.execute(
            "INSERT INTO events (seq, uid, type, at, payload, payload_hash, prev, hash, scope, source, writer)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (seq, *values),
        )
        return Event(seq, uid, type_, at, payload, payload_hash, prev, h, writer, source)
    cur = conn.execute(
        "INSERT INTO events (uid, type, at, payload, payload_hash, prev, hash, scope, source, writer)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        values,
    )
    assert cur.lastrowid is not None  # set by the INSERT
    return Event(cur.lastrowid, uid, type_, at, payload, payload_hash, prev, h, writer, source)


def numbers_events(conn: Connection) -> bool:
    """Whether a writer names each new event's seq itself (``append``'s ``seq``): the team
    engine in a write transaction, whose lock holds the head still, so its next number is
    known, and reading the trigger's number back would cost a round trip under that lock.
    SQLite numbers its own rows (and never hands a number out twice, ``replace_log``)."""
    own = getattr(conn, "numbers_events", None)
    return bool(own is not None and own())


def append_once(
    conn: Connection, uid: str, type_: str, at: str, payload: dict[str, Any], **kw: Any
) -> Event | None:
    """``append``, unless the log holds ``uid`` already: then None and nothing is written
    (the caller applies nothing either). A write retried after its connection dropped may
    have committed the first time; its event id makes the retry harmless. Call inside
    ``transaction``, which keeps another writer from slipping in between."""
    if conn.execute("SELECT 1 FROM events WHERE uid = ?", (uid,)).fetchone() is not None:
        return None
    return append(conn, uid, type_, at, payload, **kw)


def known(conn: Connection, uids: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """Which of ``uids`` the log already holds: uid -> (type, at, payload_hash), one query per batch."""
    found: dict[str, tuple[str, str, str]] = {}
    for batch, marks in in_batches(uids):
        rows = conn.execute(f"SELECT uid, type, at, payload_hash FROM events WHERE uid IN ({marks})", batch)
        found.update((uid, (type_, at, payload_hash)) for uid, type_, at, payload_hash in rows)
    return found


def next_at(conn: Connection, after: str | None = None) -> str:
    """The time for a new event: now, or just after the latest event when that is later
    (``after``, when the caller knows it, saves the query).

    Every clone replays a shared log in (time, uid) order, so an event written here
    must sort after everything this database has applied (a teammate's clock may be
    ahead of ours); then applying it at once gives what a replay gives. The last event
    is the latest: writes go through here, and share.py applies what sorts after it or
    replays everything in order. A shared line further ahead than ``clock.MAX_SKEW``
    is never applied before its time, so following the latest moves this clock by at
    most that much; a time beyond it (a log written before that rule) is not followed.
    """
    now = clock.now()
    if after is None:
        found = head(conn)
        after = found[2] if found is not None else None
    if after is not None and not clock.ahead(after, now):
        now = clock.after(clock.parse_at(after), now)  # None: not our format (a hand-made event), ignored
    return clock.format_at(now)


# One event on its way into the log in bulk: uid, type, at, payload (None once purged),
# the payload's canonical JSON as stored, payload_hash, scope, source, writer.
LogItem = tuple[str, str, str, "dict[str, Any] | None", "str | None", str, str, "str | None", "str | None"]


def append_many(conn: Connection, items: list[LogItem], *, prev: str | None = None) -> list[Event]:
    """Append events in one statement, chained after ``prev`` (default: the last event).
    Call inside ``transaction``; the payloads were hashed and encoded by the caller."""
    return _insert_chain(conn, items, last_seq(conn) + 1, last_hash(conn) if prev is None else prev)


def replace_log(conn: Connection, items: list[LogItem]) -> list[Event]:
    """Replace the whole log with ``items``, in that order, chained afresh. Call inside
    ``transaction``.

    Only a cache rebuild (share.py) does this: the log of a shared repository is the
    union of its files, so it is re-derived, not edited. Sequence numbers continue after
    the old ones, so a revision seen before never comes back with other content.
    """
    base = last_seq(conn) + 1
    conn.execute("DELETE FROM events")
    return _insert_chain(conn, items, base, GENESIS)


def _insert_chain(conn: Connection, items: list[LogItem], base: int, prev: str) -> list[Event]:
    out, rows = [], []
    for i, (uid, type_, at, payload, body, payload_hash, scope, source, writer) in enumerate(items):
        h = event_hash(uid, type_, at, payload_hash, prev)
        rows.append((base + i, uid, type_, at, body, payload_hash, prev, h, scope, source, writer))
        out.append(Event(base + i, uid, type_, at, payload, payload_hash, prev, h, writer, source))
        prev = h
    conn.executemany(
        "INSERT INTO events (seq, uid, type, at, payload, payload_hash, prev, hash, scope, source, writer)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    return out


def events(conn: Connection, after: int = 0) -> Iterator[Event]:
    cur = conn.execute(f"SELECT {EVENT_COLUMNS} FROM events WHERE seq > ? ORDER BY seq", (after,))
    for row in cur.fetchall():
        yield row_event(row)


def check_chain(evts: list[Event] | Iterator[Event], *, source: str, linked: bool = True) -> int:
    """Verify hashes and links; returns the count. Raises CorruptLog naming the first bad event.
    ``linked`` False: each event's own hashes only, for a reader who cannot see every event
    (the team engine checks the links itself: ``maintenance._verify_team``)."""
    prev = GENESIS
    purged: set[str] = set()
    pending_nulls: list[Event] = []
    n = 0
    for ev in evts:
        n += 1
        if linked and ev.prev != prev:
            raise CorruptLog(f"{source}: event {ev.seq} does not follow the event before it (broken chain).")
        if event_hash(ev.uid, ev.type, ev.at, ev.payload_hash, ev.prev) != ev.hash:
            raise CorruptLog(f"{source}: event {ev.seq} ({ev.type}) fails its hash; it was altered.")
        if ev.payload is None:
            pending_nulls.append(ev)
        elif sha256(canonical(ev.payload)) != ev.payload_hash:
            raise CorruptLog(f"{source}: the payload of event {ev.seq} ({ev.type}) was altered.")
        if ev.type == "gc" and ev.payload is not None:
            purged.update(ev.payload.get("purged_uids", ()))
        prev = ev.hash
    for ev in pending_nulls:
        if ev.uid not in purged:
            raise CorruptLog(f"{source}: the payload of event {ev.seq} is missing and no gc event purged it.")
    return n


def parse_event(obj: Any, *, source: str, line: int) -> Event:
    try:
        return Event(
            int(obj["seq"]),
            str(obj["uid"]),
            str(obj["type"]),
            str(obj["at"]),
            obj["payload"] if obj["payload"] is None else dict(obj["payload"]),
            str(obj["payload_hash"]),
            str(obj["prev"]),
            str(obj["hash"]),
            obj.get("writer") if isinstance(obj.get("writer"), str) else None,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        raise CorruptLog(f"{source}: line {line} is not a jupymem event.") from None


def any_shared(conn: Connection) -> bool:
    """Whether this database ever took part in sharing: a shared file read, or an event
    that came from or went to one (a cache of ``.jupymem/``, or one that was)."""
    if conn.execute("SELECT 1 FROM shared_files LIMIT 1").fetchone() is not None:
        return True
    return conn.execute("SELECT 1 FROM events WHERE scope = ? LIMIT 1", (SHARED,)).fetchone() is not None
