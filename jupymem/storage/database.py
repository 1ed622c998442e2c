"""The project database: its driver, its migrations, its connection and its meta table.

Every change to memory is an event appended to ``events`` (``eventlog``); the tables
that answer questions (``memories``, ``history``, ``cited_evidence`` and the FTS5
index kept in step by triggers) are a projection of that log, written in the same
transaction as the event (``transaction``). So a process killed mid-write leaves
either both or neither, and ``rebuild`` can always recreate the projection by replay.
The schema changes only through numbered, append-only ``MIGRATIONS``.

Opening never guesses. A file that is not a database any more is named as
damaged before SQLite is asked to read it (``damage.check_file``), and a small
database passes SQLite's ``quick_check`` first (once after each change: ``damage.checked_since``); a home that cannot be written is
opened read-only (reads work, writes are refused by ``Project``), without
switching its journal mode. Driver errors that mean damage, a read-only file or a
full disk become the ``JupymemError`` that says so (``damage.storage_error``), in
``Connection`` and at the faces as a last resort.

Split from the event log (``eventlog``) because this module is about SQLite, the
engine, while the log's hash chain is the same whatever engine holds it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..errors import DatabaseDamaged, ReadOnlyHome, SchemaTooNew, StorageError
from . import files
from .damage import (
    DOCTOR, QUICK_CHECK_MAX_BYTES, check_file, checked_since, disk_full, mark_checked, storage_error, translated,
)

# -- driver -----------------------------------------------------------------------


def _pick_driver() -> Any:
    # Extension loading is needed only for sqlite-vec (the dense leg); where the
    # stdlib build lacks it (pyenv's Python), sqlean.py is a drop-in that has it.
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import sqlean  # type: ignore[import-not-found]
    except ImportError:
        return sqlite3
    return sqlean


_driver: Any = None


def driver(name: str | None = None) -> Any:
    """The sqlite3-compatible module in use: "sqlite3", "sqlean" or the best available."""
    global _driver
    if name == "sqlite3":
        return sqlite3
    if name == "sqlean":
        import sqlean  # type: ignore[import-not-found]

        return sqlean
    if _driver is None:
        _driver = _pick_driver()
    return _driver


def can_load_extensions(mod: Any) -> bool:
    return hasattr(mod.Connection, "enable_load_extension")


# -- migrations -------------------------------------------------------------------

# A memory row's own columns, between its keys and its order (``seq``): the same in
# both engines' first migration (``postgres.schema``), so that the two cannot drift.
# Released text: never edit it (``tests/test_migrations.py``); a new column is a new migration.
MEMORY_COLUMNS_DDL = """kind TEXT NOT NULL,
        topic TEXT,
        statement TEXT NOT NULL,
        original TEXT,
        standing TEXT NOT NULL,
        status TEXT NOT NULL,
        recorder TEXT NOT NULL,
        notebook TEXT,
        cell_id TEXT,
        execution_count INTEGER,
        session TEXT,
        quote TEXT,
        evidence TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        valid_from TEXT NOT NULL,
        valid_to TEXT,
        supersedes TEXT,
        superseded_by TEXT,
        retire_reason TEXT,
        confirmed_at TEXT,"""

# Numbered and append-only: a migration, once released, is never edited.
MIGRATIONS: tuple[str, ...] = (
    # 1: the log, its projection and the lexical index
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        uid TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        at TEXT NOT NULL,
        payload TEXT,
        payload_hash TEXT NOT NULL,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE
    );
    CREATE TABLE memories (
        rid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        """ + MEMORY_COLUMNS_DDL + """
        seq INTEGER NOT NULL
    );
    CREATE INDEX memories_status ON memories (status, kind);
    CREATE TABLE history (
        memory_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        at TEXT NOT NULL,
        action TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX history_memory ON history (memory_id, seq);
    CREATE TABLE cited_evidence (
        handle TEXT PRIMARY KEY,
        memory_id TEXT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE TABLE staged_evidence (
        handle TEXT PRIMARY KEY,
        session TEXT NOT NULL,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX staged_session ON staged_evidence (session, created_at);
    CREATE VIRTUAL TABLE memories_fts USING fts5 (
        statement, topic, original,
        content='memories', content_rowid='rid',
        tokenize='unicode61 remove_diacritics 2'
    );
    CREATE VIRTUAL TABLE memories_vocab USING fts5vocab (memories_fts, 'row');
    CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, statement, topic, original)
        VALUES (new.rid, new.statement, new.topic, new.original);
    END;
    CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, statement, topic, original)
        VALUES ('delete', old.rid, old.statement, old.topic, old.original);
    END;
    CREATE TRIGGER memories_au AFTER UPDATE OF statement, topic, original ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, statement, topic, original)
        VALUES ('delete', old.rid, old.statement, old.topic, old.original);
        INSERT INTO memories_fts (rowid, statement, topic, original)
        VALUES (new.rid, new.statement, new.topic, new.original);
    END;
    """,
    # 2: each notebook's conversation with %%ask (conversation.py). Like staged
    # evidence it is a working set, not history: kept out of the event log.
    """
    CREATE TABLE conversation (
        id INTEGER PRIMARY KEY,
        notebook TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX conversation_notebook ON conversation (notebook, id);
    CREATE TABLE conversation_summary (
        notebook TEXT PRIMARY KEY,
        summary TEXT NOT NULL,
        folded INTEGER NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE VIRTUAL TABLE conversation_fts USING fts5 (
        content,
        content='conversation', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER conversation_ai AFTER INSERT ON conversation BEGIN
        INSERT INTO conversation_fts (rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER conversation_ad AFTER DELETE ON conversation BEGIN
        INSERT INTO conversation_fts (conversation_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END;
    """,
    # 3: sharing through git (share.py). An event's scope says where it lives: 'local'
    # (this database only, until `share` writes it out), 'private' (never leaves this
    # machine) or 'shared' (read from, or written to, the file named by source).
    # shared_files remembers what was applied from each file, so a read compares stats.
    # Memories gain the recorder's git identity and a private mark. The indexes are
    # partial, so a repository that shares nothing pays nothing for them: shared events by
    # file, memories that replace another (to find two replacements of one), private ones.
    """
    ALTER TABLE events ADD COLUMN scope TEXT NOT NULL DEFAULT 'local';
    ALTER TABLE events ADD COLUMN source TEXT;
    CREATE INDEX events_shared ON events (source) WHERE scope = 'shared';
    ALTER TABLE memories ADD COLUMN author TEXT;
    ALTER TABLE memories ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX memories_supersedes ON memories (supersedes) WHERE supersedes IS NOT NULL;
    CREATE INDEX memories_private ON memories (status) WHERE private = 1;
    CREATE TABLE shared_files (
        name TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        ino INTEGER NOT NULL,
        lines INTEGER NOT NULL,
        applied INTEGER NOT NULL,
        problems TEXT NOT NULL DEFAULT '[]',
        tail_ok INTEGER NOT NULL DEFAULT 1
    );
    """,
    # 4: who wrote each event ("Name <email>": the git identity of this machine's writes,
    # the writer a shared line names), so history says who retired, superseded or
    # confirmed a memory; it is not part of the event's hash (an older log has none).
    # A shared file's ``due``: the time its first line dated ahead of the clock comes due.
    # A memory's ``source``: the shared file its record came from (NULL: this machine), so
    # that no one file can take all of the block's places (block.assemble).
    """
    ALTER TABLE events ADD COLUMN writer TEXT;
    ALTER TABLE shared_files ADD COLUMN due TEXT;
    ALTER TABLE memories ADD COLUMN source TEXT;
    """,
    # 5: a shared file's ctime beside its mtime: a rewrite of the same size that puts the
    # old mtime back (touch -m, a restore tool) still changes the ctime, which no one sets.
    """
    ALTER TABLE shared_files ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT 0;
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)

# Tables recreated by ``rebuild`` (the FTS index follows through triggers).
DERIVED_TABLES = ("memories", "history", "cited_evidence")


def migrate(conn: Any) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        where = getattr(conn, "path", None) or "This memory database"
        raise SchemaTooNew(
            f"The memory database {where} was written by a newer jupymem (schema {version}; this one knows up to "
            f"{SCHEMA_VERSION}). Upgrade jupymem (pip install -U jupymem); nothing was changed."
        )
    for number in range(version + 1, SCHEMA_VERSION + 1):
        with transaction(conn):
            for statement in _split_sql(MIGRATIONS[number - 1]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")


def _split_sql(script: str) -> list[str]:
    # executescript() would COMMIT our transaction; split on statement ends instead,
    # keeping trigger bodies (which contain ';') whole.
    out, buf, depth = [], [], 0
    for line in script.strip().splitlines():
        buf.append(line)
        upper = line.strip().upper()
        if upper.startswith("CREATE TRIGGER"):
            depth += 1
        if upper == "END;":
            depth -= 1
        if depth == 0 and line.rstrip().endswith(";"):
            out.append("\n".join(buf))
            buf = []
    if "".join(buf).strip():
        out.append("\n".join(buf))
    return out


# -- connections ------------------------------------------------------------------


class Rows:
    """The rows a statement produced, read in full (see ``Connection.execute``): what
    callers used of a cursor, ``fetchone``/``fetchall``/iteration and ``lastrowid``."""

    __slots__ = ("rows", "lastrowid")

    def __init__(self, rows: list[Any], lastrowid: int | None):
        self.rows, self.lastrowid = rows, lastrowid

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[Any]:
        return self.rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)


class Connection:
    """One SQLite connection shared by the threads of a process, behind a lock.

    WAL lets readers in other processes proceed while one writer commits; writes
    start with BEGIN IMMEDIATE so two writers queue on the busy timeout instead
    of failing at COMMIT. ``readonly`` connections (a home that cannot be written)
    never change the file: no journal-mode switch, no writes; ``immutable`` ones are
    for a read-only folder where SQLite cannot even create its shared-memory file.
    """

    def __init__(
        self, path: Path, *, driver_name: str | None = None, readonly: bool = False, immutable: bool = False,
        create: bool = True,
    ):
        mod = driver(driver_name)
        self.module = mod
        self.path = path
        self.readonly = readonly or immutable
        self.readonly_reason: str | None = None
        self.disk_full = False  # read-only only because the disk is full (see _connect)
        if str(path) == ":memory:":
            self.raw = mod.connect(":memory:", isolation_level=None, check_same_thread=False)
        else:
            mode = "ro" if self.readonly else ("rwc" if create else "rw")
            uri = f"file:{path}?mode={mode}" + ("&immutable=1" if immutable else "")
            self.raw = mod.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=30)
        self.lock = threading.RLock()
        self.vec_loaded = False
        self.store: Any = None  # the ``reads.SqliteStore`` over this connection, made on first use
        try:
            self.raw.execute("PRAGMA busy_timeout = 30000")
            # A read that opens the file (and, in WAL mode, its shared memory): an
            # unreadable file or folder fails here, not at the first query.
            journal = self.raw.execute("PRAGMA journal_mode").fetchone()[0]
            if not self.readonly and str(path) != ":memory:":
                if journal != "wal":  # set once, when the file is created; a read never switches it
                    self.raw.execute("PRAGMA journal_mode = WAL")
                # NORMAL in WAL survives a killed process (not a power cut) and keeps a
                # record under a few milliseconds.
                self.raw.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            self.raw.close()
            raise

    def execute(self, sql: str, params: Any = ()) -> Rows:
        # Rows are read under the lock: a cursor stepped after it is released would race
        # another thread's close() (a background index build reading while a server shuts
        # down), which crashes the process rather than raising.
        with self.lock:
            try:
                cur = self.raw.execute(sql, params)
                return Rows(cur.fetchall(), cur.lastrowid)
            except Exception as exc:  # inline, not `translated`: this is the hottest call there is
                err = storage_error(exc, self.path)
                if err is None:
                    raise
                raise err from None

    def executemany(self, sql: str, rows: Any) -> Any:
        with self.lock, translated(self.path):
            return self.raw.executemany(sql, rows)

    def close(self) -> None:
        with self.lock:
            self.raw.close()

    def writable(self) -> bool:
        """Whether this file can take a write here, without writing: a RESERVED lock is
        what every write starts with, and a read-only file or folder refuses it. A lock
        held by another writer means the file is writable."""
        if self.readonly:
            return False
        with self.lock:
            self.raw.execute("PRAGMA busy_timeout = 0")
            try:
                self.raw.execute("BEGIN IMMEDIATE")
                self.raw.execute("ROLLBACK")
            except Exception as exc:
                err = storage_error(exc, self.path)
                if isinstance(err, ReadOnlyHome) or "unable to open" in str(exc).lower():
                    return False
                if err is None or not isinstance(err, StorageError):  # busy is fine; damage is not ours to judge
                    raise
            finally:
                self.raw.execute("PRAGMA busy_timeout = 30000")
        return True

    def load_vec(self) -> bool:
        """Load sqlite-vec into this connection; False when this build cannot."""
        if self.vec_loaded:
            return True
        if not can_load_extensions(self.module):
            return False
        try:
            import sqlite_vec  # type: ignore[import-not-found]
        except ImportError:
            return False
        with self.lock:
            self.raw.enable_load_extension(True)
            try:
                sqlite_vec.load(self.raw)
            finally:
                self.raw.enable_load_extension(False)
        self.vec_loaded = True
        return True


@contextlib.contextmanager
def transaction(conn: Any, *, chain: bool = True) -> Iterator[Any]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error. Re-entrant per thread.
    A connection of another engine brings its own (``postgres.PgConnection.transaction``);
    ``chain=False`` tells it that nothing of the event log is written (staged failures),
    so it need not queue behind the project's writers."""
    own = getattr(conn, "transaction", None)
    if own is not None:
        with own(chain=chain):
            yield conn
        return
    lock = getattr(conn, "lock", None)
    raw = getattr(conn, "raw", conn)
    if lock is not None:
        lock.acquire()
    try:
        if raw.in_transaction:
            yield conn
            return
        with translated(getattr(conn, "path", None)):
            raw.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            with contextlib.suppress(Exception):  # a failed COMMIT may have rolled back already
                raw.execute("ROLLBACK")
            raise
        with translated(getattr(conn, "path", None)):
            raw.execute("COMMIT")
    finally:
        if lock is not None:
            lock.release()


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def open_database(path: Path, *, create: bool, driver_name: str | None = None, check: bool = True) -> Connection:
    """The migrated database at ``path``; with ``create``, made if missing.

    An existing file is looked at before SQLite reads it (``check_file``) and, when
    small, passes ``quick_check``. A file or folder that cannot be written is opened
    read-only (``Connection.readonly``, with the reason), so reading still works.
    """
    if create:
        try:
            files.private_dir(path.parent)
        except OSError as exc:
            if disk_full(exc):
                raise StorageError(f"Cannot create {path.parent}: the disk is full ({exc.strerror}).") from None
            raise ReadOnlyHome(f"Cannot create {path.parent} ({exc.strerror or exc}); is the memory home writable?") from None
    elif not path.exists():
        raise FileNotFoundError(path)
    else:
        files.close_to_others(path.parent)  # made 0755 by an earlier version
    if path.exists():
        check_file(path)
    conn = _connect(path, create=create, driver_name=driver_name)
    try:
        with translated(path):
            if check and path.stat().st_size <= QUICK_CHECK_MAX_BYTES:
                unchanged, stats = checked_since(path)
                if not unchanged:
                    result = conn.raw.execute("PRAGMA quick_check").fetchone()[0]
                    if result != "ok":
                        raise DatabaseDamaged(
                            f"The memory database {path} fails SQLite's integrity check ({result}). {DOCTOR}")
                    if conn.writable():
                        mark_checked(path, stats)
            migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _connect(path: Path, *, create: bool, driver_name: str | None) -> Connection:
    """Read-write if the file and its folder allow it, else read-only, else immutable."""
    first: BaseException | None = None
    try:
        conn = Connection(path, driver_name=driver_name, create=create)
    except Exception as exc:
        err = storage_error(exc, path)
        if create or not isinstance(err, (ReadOnlyHome, StorageError)) or isinstance(err, DatabaseDamaged):
            raise (err or exc) from None
        first = exc
    else:
        if conn.writable():
            return conn
        conn.close()
        first = PermissionError(f"{path} cannot be written")
    for immutable in (False, True):
        try:
            conn = Connection(path, driver_name=driver_name, readonly=True, immutable=immutable, create=False)
        except Exception as exc:
            if immutable:
                raise (storage_error(exc, path) or exc) from None
            continue
        conn.readonly_reason = _reason(first)
        # Opened for reading because the disk is full, not because it may not be written:
        # Project says "disk full" when asked to write (a full disk is never "read-only").
        conn.disk_full = disk_full(first, path)
        return conn
    raise AssertionError("unreachable")


def memory_database(driver_name: str | None = None) -> Connection:
    """A fresh, migrated in-memory database: the target of a verification replay."""
    conn = Connection(Path(":memory:"), driver_name=driver_name)
    migrate(conn)
    return conn


def integrity_check(conn: Connection) -> str:
    """SQLite's full integrity check: "ok", or the first problem it names."""
    return conn.execute("PRAGMA integrity_check").fetchone()[0]


def checkpoint(conn: Connection) -> None:
    """Fold the WAL into the database file and empty it (between timed runs)."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


# SQLite's limit on bound parameters was 999 before 3.32: an ``IN (...)`` list longer
# than that is asked for a batch at a time.
IN_BATCH = 500
_T = TypeVar("_T")


def in_batches(items: Sequence[_T], size: int = IN_BATCH) -> Iterator[tuple[Sequence[_T], str]]:
    """``items`` a batch at a time, each with its placeholders (``"?,?,?"``) for ``IN (...)``."""
    for i in range(0, len(items), size):
        batch = items[i : i + size]
        yield batch, ",".join("?" * len(batch))


def get_meta(conn: Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))
