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

import codecs
import os
import uuid
from datetime import datetime
from typing import IO, Any

from ..errors import InvalidStatement, SharingError
from ..intake import clock, strictjson
from ..storage import database, eventlog
from ..storage.damage import disk_full, os_reason
from ..storage.eventlog import GENESIS, LOCAL, PRIVATE, SHARED
from .checkout import MAX_FILE_BYTES
from .sharelog import MAX_LINE_BYTES, MAX_LINES, check_line, encode

# A writer starts a new file once its file holds this many lines or bytes, so that one
# write of up to MAX_LINES - ROTATE_AT events (or half the bytes) always fits below the
# readers' caps.
ROTATE_AT = MAX_LINES // 2
ROTATE_AT_BYTES = MAX_FILE_BYTES // 2


# -- the journal ---------------------------------------------------------------------------


class FileTail:
    """The writer's open, locked file, how many lines it holds, and the hash its next line
    follows (None: the file does not end in a complete line of ours; write elsewhere)."""

    def __init__(self, fh: IO[bytes], name: str, writer: dict[str, Any], lines: int = 0):
        self.fh, self.name, self.writer, self.lines = fh, name, writer, lines
        self.prev: str | None = last_hash(fh)
        self.size = os.fstat(fh.fileno()).st_size

    @property
    def full(self) -> bool:
        """Time for a new file (``ROTATE_AT``)."""
        return self.lines >= ROTATE_AT or self.size >= ROTATE_AT_BYTES


class Journal:
    """The events of one write: appended to the database at once, and to the writer's file
    (when sharing is on) by ``flush``, before the transaction commits. ``writer``: who
    writes ("Name <email>"), recorded with every event."""

    def __init__(self, conn: database.Connection, tail: FileTail | None, writer: str | None = None):
        self.conn = conn
        self.tail = tail
        self.writer = writer
        self._lines: list[str] = []
        self._bytes = 0  # of the queued lines
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
        if self.tail.lines + len(self._lines) >= MAX_LINES or self.tail.size + self._bytes >= MAX_FILE_BYTES:
            raise SharingError(
                f"One write cannot add more than {MAX_LINES - ROTATE_AT:,} events to a shared repository "
                "(each writer's file holds a bounded number of lines); split it into smaller ones. Nothing was recorded."
            )
        fields = {"uid": uid, "type": type_, "at": at, "payload": payload, "writer": self.tail.writer}
        check_line(fields)  # never write a line that readers would refuse (it would stop the chain)
        assert self.tail.prev is not None  # Sharing.writing never hands out a damaged tail
        line, h = encode(uid, type_, at, payload, self.tail.writer, self.tail.prev)
        size = len(line) if line.isascii() else len(line.encode("utf-8"))
        if size > MAX_LINE_BYTES:
            raise InvalidStatement("This event is too large for a shared file; nothing was recorded.")
        self._lines.append(line)
        self._bytes += size
        self.tail.prev = h

    def defer(self) -> None:
        """The queued lines are not in the database (an import): the next read applies them."""
        self._deferred = True

    @property
    def deferred(self) -> bool:
        return self._deferred

    def flush(self) -> int:
        """Append and fsync the queued lines; returns how many were written.

        All or nothing: a write the disk refuses part of (full, over quota) is cut back to
        the bytes the file held before it, so no torn half-line is left for a commit to
        carry to every clone. Those bytes were written by this call under our lock, so no
        one can have committed them. The lines go straight to the descriptor (no buffer
        that closing the file would try, and fail, to write again)."""
        if self.tail is None or not self._lines:
            return 0
        fd = self.tail.fh.fileno()
        data = "".join(self._lines).encode("utf-8")
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:  # O_APPEND: every write lands at the end
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:  # the transaction rolls back
            self._lines = []
            raise SharingError(self._undo(fd, start, exc)) from None
        n, self._lines = len(self._lines), []
        return n

    def _undo(self, fd: int, start: int, exc: OSError) -> str:
        """Cut the file back to ``start``; the sentence that says what happened."""
        assert self.tail is not None
        where = f".jupymem/log/{self.tail.name}"
        try:
            os.ftruncate(fd, start)
            os.fsync(fd)
        except OSError:  # the file keeps a cut line: the next write goes to a new file
            self.tail.prev = None
            return (f"Cannot append to {where} ({os_reason(exc)}), and its last line could not be taken back: "
                    "`jupymem verify` names it; restore the file with git. Nothing was recorded.")
        self.tail.prev = last_hash(self.tail.fh)
        if disk_full(exc):
            return f"Cannot append to {where}: {os_reason(exc)}. Free some space and record again; nothing was recorded."
        return f"Cannot append to {where} ({os_reason(exc)}); nothing was recorded."

    def _next_at(self) -> str:
        # A burst: strictly after the event before, kept as a datetime so that a bulk write
        # parses its own times back only once.
        if self._last is None:
            assert self._last_at is not None
            self._last = clock.parse_at(self._last_at) or clock.now()
        self._last = clock.after(self._last, clock.now())
        return clock.format_at(self._last)


def fstat(fh: IO[bytes]) -> tuple[int, int, int, int]:
    """(size, mtime_ns, ctime_ns, inode): what the cache compares to notice a change."""
    st = os.fstat(fh.fileno())
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


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
    # A CR before the end and a byte order mark at the start are git's checkout (checkout.py).
    last = tail[:-1].rsplit(b"\n", 1)[-1].removesuffix(b"\r").removeprefix(codecs.BOM_UTF8)
    try:
        h = strictjson.loads(last, max_bytes=MAX_LINE_BYTES)["hash"]
    except (strictjson.StrictJSONError, KeyError, TypeError):
        return None
    return h if isinstance(h, str) and len(h) == 64 else None
