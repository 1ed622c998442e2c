"""The history mark beside each project database: how much history it held after the last write.

A database in WAL mode keeps its newest transactions in the ``-wal`` file until a
checkpoint copies them in. Delete that file (a backup or sync tool that copies only
``memory.sqlite``, a person tidying up after a killed kernel) and those events are
gone, and the database that is left is a perfectly healthy, shorter one. The
registry's mark (``registry.record_mark``) catches a shorter history only at 1, 2, 4,
8 ... events, because the registry is fsynced under a lock; so every write also
leaves this mark: ``memory.mark`` beside the database, one fixed-width line, "this
many events, the last with this hash", overwritten in place after each commit.

It costs one small write and no fsync (a few microseconds). That is enough for what
it guards against: a killed process leaves its last write in the page cache, so the
mark survives whatever the process did not finish. A power cut may lose the mark's
last update (then a loss of the last events goes unnoticed, as before this file
existed) or keep a mark newer than what the database kept of its own unsynced WAL (then
opening says the project lost those events, which is true). A mark that cannot be read
(cut short, garbled) is no mark: the registry's still applies.

Written after the commit and read before the database is asked, so another process
writing meanwhile can make the mark lag behind the database, never run ahead of it.
``opening`` writes it (``Project.on_write``) and checks it; ``doctor`` resets it when
it rebuilds a database or a person accepts a loss. Not used for a shared repository's
cache, whose sequence numbers are re-derived on replay.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..models import _Record

MARK_FILE = "memory.mark"
_FORMAT = "jupymem-mark 1 {events:020d} {last_hash}\n"
_LINE = re.compile(r"jupymem-mark 1 (\d{20}) ([0-9a-f]{64})\n")


@dataclass(frozen=True, eq=False, repr=False)
class Mark(_Record):
    """How many events the database held, and the last one's hash, when it was last seen."""

    events: int
    last_hash: str


def mark_path(database: Path) -> Path:
    return database.with_name(MARK_FILE)


def write(database: Path, events: int, last_hash: str) -> None:
    """Overwrite the mark in place (every mark has the same length). Raises OSError."""
    data = _FORMAT.format(events=events, last_hash=last_hash).encode("ascii")
    fd = os.open(mark_path(database), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.pwrite(fd, data, 0)
    finally:
        os.close(fd)


def read(database: Path) -> Mark | None:
    """The mark, or None when there is none or it cannot be read."""
    try:
        with open(mark_path(database), "rb") as fh:
            head = fh.read(len(_FORMAT.format(events=0, last_hash="0" * 64)))
    except OSError:
        return None
    found = _LINE.fullmatch(head.decode("ascii", "replace"))
    return Mark(int(found.group(1)), found.group(2)) if found else None


def remove(database: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(mark_path(database))
