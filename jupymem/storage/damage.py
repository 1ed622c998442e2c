"""Telling a broken store from a bug.

A project database can be damaged (emptied, cut short, overwritten, with a bad
page), read-only (a home on a read-only mount, files a person may not write) or
out of room. None of that is a bug in jupymem, and none of it may reach a person
as a driver traceback. This module holds the two tools for it:

* ``check_file``: what the first 100 bytes and the size of a file say about it,
  before SQLite is asked to read it (SQLite takes a zero-byte file for a new, empty
  database, which is how 300 memories once vanished without a word);
* ``storage_error``: a driver error as the ``JupymemError`` it means, or None when
  it means a bug. ``database.Connection`` applies it to every statement; the faces
  apply it once more to errors met while reading rows.

A full disk and a read-only one are told apart everywhere (``disk_full``): a full
disk says so, never "read-only". SQLite reports a full disk as SQLITE_FULL when a
write is refused, but as a bare "disk I/O error" when it cannot grow its shared-memory
file, so that one is judged by asking the file system how much room is left.

Stdlib only, no SQLite connection of its own.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import DatabaseDamaged, JupymemError, ReadOnlyHome, StorageError

DOCTOR = "Run `jupymem doctor`: it checks every database and recovers what its event log still holds."


def _is_driver_error(exc: BaseException) -> bool:
    # sqlite3 and sqlean have their own exception classes with the DB-API names.
    return any(c.__name__ == "DatabaseError" for c in type(exc).__mro__)


def storage_error(exc: BaseException, path: Path | str | None = None) -> JupymemError | None:
    """The ``JupymemError`` a driver error means, or None when it means a bug.

    Damage (a malformed page, a file that is not a database), a read-only file or
    directory, a full disk and a lock held past the busy timeout are conditions of the
    machine, not of the code: they get a message naming the file and what to do.
    """
    if isinstance(exc, JupymemError):
        return exc
    if not _is_driver_error(exc):
        return None
    where = f"The memory database {path}" if path else "A memory database"
    msg = str(exc).lower()
    # "could not decode": text that is not UTF-8 any more, met by the driver as it reads a row.
    if any(h in msg for h in ("malformed", "not a database", "file is encrypted", "corrupt", "could not decode")):
        return DatabaseDamaged(f"{where} is damaged ({exc}). {DOCTOR}")
    if any(h in msg for h in ("readonly", "read-only", "attempt to write")):
        return ReadOnlyHome(
            f"{where} is read-only here ({exc}): reading works, nothing can be recorded. Make the memory "
            "home writable, or point JUPYMEM_HOME at a writable directory."
        )
    if disk_full(exc, path):
        return StorageError(f"{where} could not be written: the disk is full ({exc}). Free some space; "
                            "nothing was changed, and reading still works.")
    if "unable to open" in msg:
        return StorageError(f"{where} cannot be opened ({exc}); check that its folder exists and can be read.")
    if any(h in msg for h in ("disk i/o", "i/o error")):
        return StorageError(f"{where} could not be read or written: an I/O error below SQLite ({exc}). "
                            "Nothing was changed; check the disk.")
    if "locked" in msg or "busy" in msg:
        return StorageError(f"{where} stayed locked by another process for 30 s ({exc}); try again.")
    if "locking protocol" in msg:
        # Another process holds a lock on the shared-memory file (-shm) that SQLite's
        # protocol does not expect: a process of another user, or a hung one.
        return StorageError(f"{where} is locked in a way SQLite cannot wait out ({exc}): another process "
                            "holds its -shm file. Nothing was changed; stop that process and try again.")
    return None


_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
SQLITE_FULL = 13
_ROOM = 64 * 1024  # less free space than this, and a write that failed failed for room


def disk_full(exc: BaseException, path: Path | str | None = None) -> bool:
    """Whether ``exc`` (an OSError or a driver error) means that the disk, or the quota,
    holding ``path`` is full. A read-only file system is never full here."""
    if isinstance(exc, OSError):
        return exc.errno in _FULL_ERRNOS
    if not _is_driver_error(exc):
        return False
    if getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL or "disk is full" in str(exc).lower():
        return True
    msg = str(exc).lower()
    return path is not None and ("i/o error" in msg or "unable to open" in msg) and _no_room(Path(path))


def _no_room(path: Path) -> bool:
    folder = path if path.is_dir() else path.parent
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    if st.f_flag & os.ST_RDONLY:
        return False
    free = (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize
    return free < _ROOM or (st.f_files > 0 and st.f_ffree == 0)


def os_reason(exc: OSError) -> str:
    """Why the file system refused, in words: full, read-only, not allowed, or its own."""
    if exc.errno in _FULL_ERRNOS:
        return f"the disk is full ({exc.strerror})"
    if exc.errno == errno.EROFS:
        return f"the file system is read-only ({exc.strerror})"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"it may not be written here ({exc.strerror})"
    return exc.strerror or str(exc)


@contextlib.contextmanager
def translated(path: Path | str | None = None) -> Iterator[None]:
    """Turn driver errors that mean a condition of the machine into ``JupymemError``."""
    try:
        yield
    except Exception as exc:
        err = storage_error(exc, path)
        if err is None or err is exc:
            raise
        raise err from None


# -- the file, before SQLite reads it --------------------------------------------------

SQLITE_MAGIC = b"SQLite format 3\x00"
# quick_check reads every page: ~3 ms per MB here. Above this size it is left to
# `verify` and `doctor`, and damage shows when a query meets it.
QUICK_CHECK_MAX_BYTES = 16 * 1024 * 1024
# Beside the database: the files' stats when quick_check last passed. A file whose stats
# (ctime included, which no one can set back) have not moved since is not read again:
# every one-shot command paid 4-9 ms at 1,000 memories for a check of unchanged bytes.
CHECKED_SUFFIX = ".checked"


def _stats(path: Path) -> list[list[int] | None]:
    """The stats of the database and its WAL that any write moves."""
    out: list[list[int] | None] = []
    for p in (path, path.with_name(path.name + "-wal")):
        try:
            st = os.stat(p)
        except OSError:
            out.append(None)
        else:
            # An empty WAL holds nothing to check; SQLite touches it at every open.
            out.append([st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev] if st.st_size else [0])
    return out


def checked_since(path: Path) -> tuple[bool, list[list[int] | None]]:
    """(whether ``path`` passed quick_check and has not changed since, its stats now).
    Give the stats to ``mark_checked`` once the check passes: taken before it, so a
    write during the check leaves the next open checking again."""
    now = _stats(path)
    try:
        kept = json.loads(path.with_name(path.name + CHECKED_SUFFIX).read_bytes())
    except (OSError, ValueError):
        return False, now
    return kept == now, now


def mark_checked(path: Path, stats: list[list[int] | None]) -> None:
    """Best effort: a read-only or full home only means the next open checks again."""
    from .files import keep

    keep(path.with_name(path.name + CHECKED_SUFFIX), json.dumps(stats))


def check_file(path: Path) -> None:
    """Raise ``DatabaseDamaged`` for a file that cannot be a healthy database: empty,
    not starting with SQLite's header, or shorter than its header says. Cheap: one
    stat and 100 bytes. (A missing file raises ``FileNotFoundError``.)"""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            header = fh.read(100)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise DatabaseDamaged(f"The memory database {path} is a directory, not a file. {DOCTOR}") from None
    except OSError as exc:
        raise StorageError(f"The memory database {path} cannot be read ({exc.strerror or exc}).") from None
    if size == 0:
        raise DatabaseDamaged(f"The memory database {path} is empty (0 bytes): its memories are gone from it. {DOCTOR}")
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise DatabaseDamaged(
            f"The memory database {path} is not a SQLite database any more (its header was overwritten or cut). "
            f"{DOCTOR}"
        )
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    header_valid = header[24:28] == header[92:96]  # SQLite's own rule for trusting the page count
    wal = Path(f"{path}-wal")
    wal_pending = wal.exists() and wal.stat().st_size > 0  # a checkpoint in flight may extend the file
    if pages and header_valid and not wal_pending and size < pages * page_size:
        raise DatabaseDamaged(
            f"The memory database {path} is cut short: {size:,} bytes of the {pages * page_size:,} its header "
            f"records. {DOCTOR}"
        )
