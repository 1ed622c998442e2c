"""One write to a shared repository: who writes, the journal of its events, the file's tail.

``Project`` writes through ``share.Sharing.writing``, which hands it a ``Journal``: each
event goes into the database at once and, when the repository shares its memory and the
event is not private, into a queue of lines that ``flush`` appends to this writer's file
(and fsyncs) just before the database transaction commits. Every line passes
``sharelog.check_line`` before it is queued: a line that readers would refuse would stop
this writer's chain for everyone. Every event records who wrote it (``eventlog.Event.writer``).

The file is only ever appended to. A file whose end is not a complete line (cut by a
crash, or by someone else's edit) is never cut back: what it holds may be committed
already, so the writer moves to a new file instead (``FileTail.prev`` is None).

The writer's identity is git's (``identity.py``).
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime
from typing import IO, Any

from ..errors import InvalidStatement, SharingError
from ..intake import clock, strictjson
from ..storage import database, eventlog
from ..storage.eventlog import GENESIS, LOCAL, PRIVATE, SHARED
from .sharelog import MAX_LINE_BYTES, MAX_LINES, check_line, encode

# A writer starts a new file once its file holds this many lines, so that one write of
# up to MAX_LINES - ROTATE_AT events always fits below the readers' cap.
ROTATE_AT = MAX_LINES // 2


# -- the journal ---------------------------------------------------------------------------


class FileTail:
    """The writer's open, locked file, how many lines it holds, and the hash its next line
    follows (None: the file does not end in a complete line of ours; write elsewhere)."""

    def __init__(self, fh: IO[bytes], name: str, writer: dict[str, Any], lines: int = 0):
        self.fh, self.name, self.writer, self.lines = fh, name, writer, lines
        self.prev: str | None = last_hash(fh)


class Journal:
    """The events of one write: appended to the database at once, and to the writer's file
    (when sharing is on) by ``flush``, before the transaction commits. ``writer``: who
    writes ("Name <email>"), recorded with every event."""

    def __init__(self, conn: database.Connection, tail: FileTail | None, writer: str | None = None):
        self.conn = conn
        self.tail = tail
        self.writer = writer
        self._lines: list[str] = []
        self._prev: str | None = None  # the last event's hash: the next one chains to it
        self._seq = 0  # the last event's seq (given by this writer only where ``numbers_events``)
        self._last_at: str | None = None
        self._last: datetime | None = None  # _last_at, parsed once a burst needs it
        self._deferred = False

    @property
    def shared(self) -> bool:
        return self.tail is not None

    @property
    def source(self) -> str | None:
        return self.tail.name if self.tail else None

    def append(
        self, type_: str, payload: dict[str, Any], *, private: bool = False, uid: str | None = None
    ) -> eventlog.Event:
        """A new event, in the database now and (unless private or not sharing) in the file at flush."""
        uid = uid or uuid.uuid4().hex
        if self._prev is None:  # one query for both the chain and the clock
            row = eventlog.head(self.conn)
            self._prev, after = (row[1], row[2]) if row else (GENESIS, None)
            self._seq = row[0] if row else 0
            at = eventlog.next_at(self.conn, after) if after else eventlog.next_at(self.conn)
        else:
            at = self._next_at()
        self._last_at = at
        shared = self.tail is not None and not private
        if shared:
            self.copy(uid, type_, at, payload)
        scope = PRIVATE if private else (SHARED if shared else LOCAL)
        seq = self._seq + 1 if eventlog.numbers_events(self.conn) else None
        ev = eventlog.append(self.conn, uid, type_, at, payload, prev=self._prev, scope=scope,
                          source=self.source if shared else None, writer=self.writer, seq=seq)
        self._prev, self._seq = ev.hash, ev.seq
        return ev

    def copy(self, uid: str, type_: str, at: str, payload: dict[str, Any]) -> None:
        """Queue a line for the file (an event that is, or will be, in the database)."""
        if self.tail is None:
            raise InvalidStatement("sharing is off here; nothing can be written to .jupymem/")
        if self.tail.lines + len(self._lines) >= MAX_LINES:
            raise SharingError(
                f"One write cannot add more than {MAX_LINES - ROTATE_AT:,} events to a shared repository "
                "(each writer's file holds a bounded number of lines); split it into smaller ones. Nothing was recorded."
            )
        fields = {"uid": uid, "type": type_, "at": at, "payload": payload, "writer": self.tail.writer}
        check_line(fields)  # never write a line that readers would refuse (it would stop the chain)
        assert self.tail.prev is not None  # Sharing.writing never hands out a damaged tail
        line, h = encode(uid, type_, at, payload, self.tail.writer, self.tail.prev)
        if len(line) * 4 > MAX_LINE_BYTES and len(line.encode("utf-8")) > MAX_LINE_BYTES:
            raise InvalidStatement("This event is too large for a shared file; nothing was recorded.")
        self._lines.append(line)
        self.tail.prev = h

    def defer(self) -> None:
        """The queued lines are not in the database (an import): the next read applies them."""
        self._deferred = True

    @property
    def deferred(self) -> bool:
        return self._deferred

    def flush(self) -> int:
        """Append and fsync the queued lines; returns how many were written."""
        if self.tail is None or not self._lines:
            return 0
        fh = self.tail.fh
        try:
            fh.seek(0, os.SEEK_END)
            fh.write("".join(self._lines).encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        except OSError as exc:  # the transaction rolls back; a cut line sends the next write to a new file
            raise SharingError(
                f"Cannot append to .jupymem/log/{self.tail.name} ({exc.strerror or exc}); nothing was recorded."
            ) from None
        n, self._lines = len(self._lines), []
        return n

    def _next_at(self) -> str:
        # A burst: strictly after the event before, kept as a datetime so that a bulk write
        # parses its own times back only once.
        if self._last is None:
            assert self._last_at is not None
            self._last = clock.parse_at(self._last_at) or clock.now()
        self._last = clock.after(self._last, clock.now())
        return clock.format_at(self._last)


def fstat(fh: IO[bytes]) -> tuple[int, int, int]:
    st = os.fstat(fh.fileno())
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def last_hash(fh: IO[bytes]) -> str | None:
    """The hash of the file's last line (GENESIS when empty); None when the file does not
    end in a complete, readable line. Nothing is ever cut off: a partial line may have
    been committed by now, and cutting it would delete it from the repository."""
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    if size == 0:
        return GENESIS
    chunk = min(size, MAX_LINE_BYTES + 2)
    fh.seek(size - chunk)
    tail = fh.read(chunk)
    if not tail.endswith(b"\n"):
        return None
    last = tail[:-1].rsplit(b"\n", 1)[-1]
    try:
        h = strictjson.loads(last, max_bytes=MAX_LINE_BYTES)["hash"]
    except (strictjson.StrictJSONError, KeyError, TypeError):
        return None
    return h if isinstance(h, str) and len(h) == 64 else None
