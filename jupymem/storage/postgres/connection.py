"""``PgConnection``: what storage asks of ``database.Connection``, over PostgreSQL.

One project per connection: ``jupymem.project`` is set when a connection is made, and
row-level security (``schema.py``) shows it that project's rows and no other's. The
shared SQL is translated on the way in (``dialect``). Two shapes behind one interface:

* one connection shared by a process's threads behind a lock, as SQLite's is (a kernel);
* a ``psycopg_pool.ConnectionPool`` (a server process): a statement borrows a connection,
  a transaction keeps one for the thread that opened it.

Every write transaction starts by taking the project's advisory lock: writers of one
project queue, so a chain is read and extended by one writer at a time (the chain
trigger would refuse a fork anyway; the lock turns that refusal into waiting) and memory
row ids ascend in commit order, which retrieval's in-process index relies on.

Because writers queue, what a transaction does while it holds the lock is the cost every
other writer of the project waits for, and on a busy machine each round trip in there
costs a turn of the scheduler for both ends. So a write transaction runs in psycopg's
pipeline mode: a statement is sent at once and its answer read only when the caller reads
it (``_Pending``). BEGIN, the lock and the chain's head (``chain_head``) go out in one
flight with the transaction's first read; the INSERTs that follow (the event, numbered by
its writer, who holds the lock: ``eventlog.append``'s ``seq``; its projection rows) go
out with COMMIT in a second. Two round trips under the lock for a record, not ten. An
error in a statement nobody read surfaces at the next read or at COMMIT, inside the
transaction: it is rolled back whole, as before.

Driver errors stop here (``pg_error``): an unreachable or dropped server, a refused row,
a full disk each become the ``JupymemError`` that says what to do. A connection that
dropped is made again on the next statement outside a transaction.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from ...errors import AccessDenied, JupymemError, ReadOnlyHome, StorageError
from ..database import Rows
from . import dialect
from .schema import SCHEMA

_HEAD = "SELECT seq, hash, at FROM chain_heads WHERE seq > 0"
# The project's write lock (the head row's row lock, members only: ``guard``) and the head, in one.
_LOCK = "SELECT head_seq, head_hash, head_at FROM write_lock() WHERE head_seq > 0"
# A stuck lock or statement gives one clear line, never a hang (``pg_error``). The lock's wait is
# short: a record holds it for two round trips. A statement may take longer (an import, a rebuild).
LOCK_TIMEOUT = "10s"
STATEMENT_TIMEOUT = "120s"
LOCKED = ("another session holds this project's write lock; retry, or ask the administrator "
          "(who can see it in pg_locks).")


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        from ...errors import MissingDependency

        raise MissingDependency(
            'A PostgreSQL memory database needs psycopg: pip install "jupymem[team]"'
        ) from None
    return psycopg


def display_url(url: str) -> str:
    """``url`` without its password, fit for messages and logs."""
    psycopg = _psycopg()
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "a PostgreSQL database (its address could not be read)"
    host = info.get("host") or "localhost"
    port = f":{info['port']}" if info.get("port") else ""
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{host}{port}/{info.get('dbname') or ''}"


def readable(url: str) -> None:
    """Raise ``StorageError`` when ``url`` is no PostgreSQL address libpq can read. psycopg's
    own error quotes the whole string, password included: it is never shown."""
    psycopg = _psycopg()
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        raise StorageError(
            "The team database's address (JUPYMEM_DATABASE_URL or --database) could not be read: write it as "
            "postgresql://USER@HOST:PORT/DBNAME (a password belongs in ~/.pgpass or PGPASSWORD)."
        ) from None


def public_url(url: str) -> str:
    """``url`` without its password, as a libpq connection string: what is remembered
    (``jupymem init --database``) and shown. A password comes from libpq's own places:
    PGPASSWORD, ~/.pgpass, or a service file (PGSERVICEFILE)."""
    psycopg = _psycopg()
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        from ...errors import JupymemError

        raise JupymemError("The database URL cannot be read; give a postgresql:// URL or libpq connection string.") from None
    info.pop("password", None)
    return str(psycopg.conninfo.make_conninfo(**{k: v for k, v in info.items() if v is not None}))


def pg_error(exc: BaseException, where: str) -> JupymemError | None:
    """The ``JupymemError`` a psycopg error means, or None when it means a bug."""
    if isinstance(exc, JupymemError):
        return exc
    psycopg = _psycopg()
    errors = psycopg.errors
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, errors.InsufficientPrivilege):
        return AccessDenied(f"{where} refused this ({first}). Ask the team's administrator to add you to the project.")
    if isinstance(exc, errors.ReadOnlySqlTransaction):
        return ReadOnlyHome(f"{where} is open read-only here: reading works, nothing can be recorded.")
    if isinstance(exc, errors.DiskFull):
        return StorageError(f"{where} could not be written: the server's disk is full ({first}). Nothing was changed.")
    if isinstance(exc, errors.SerializationFailure):
        return StorageError(f"{where}: another writer changed this project at the same moment ({first}); try again.")
    if isinstance(exc, errors.LockNotAvailable):
        return StorageError(f"{where}: {LOCKED} Nothing was changed.")
    if isinstance(exc, errors.QueryCanceled):
        return StorageError(f"{where} did not answer in time ({first}); try again.")
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        # A write whose COMMIT was under way is either whole or absent: retrying it with
        # the same event id (``eventlog.append_once``) is safe.
        return StorageError(
            f"{where} cannot be reached ({first}). Check that the server runs and can be reached, then try "
            "again; a write under way was recorded whole or not at all."
        )
    return None


class _NoLock:
    """The lock of a pooled connection: each thread has its own connection, nothing is shared."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

    def acquire(self, *args: Any) -> bool:
        return True

    def release(self) -> None:
        return None


@contextlib.contextmanager
def _pipelined(raw: Any) -> Iterator[None]:
    """psycopg's pipeline mode for the block; leaving it reads every answer still due (and
    raises the first error among them). After an error in the block, the pipeline's own
    complaint on leaving (the same failure, met again) is not logged as a second one."""
    pipe = raw.pipeline()
    pipe.__enter__()
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):
            pipe.__exit__(None, None, None)
        raise
    pipe.__exit__(None, None, None)


class _Pending(Rows):
    """A statement's answer inside a pipelined transaction, read from the server only when
    the caller first asks for it (that read also carries every statement queued before it)."""

    def __init__(self, owner: PgConnection, cur: Any, text: str, returning: bool) -> None:  # no Rows.__init__
        self._owner, self._cur, self._returning = owner, cur, returning
        self._has_rows = dialect.returns_rows(text)  # a pipelined cursor's description comes with its answer
        self._read: tuple[list[Any], int | None] | None = None

    def _resolve(self) -> tuple[list[Any], int | None]:
        if self._read is None:
            with self._owner._translated():
                rows = self._cur.fetchall() if self._has_rows else []
            self._read = ([], rows[0][0] if rows else None) if self._returning else (rows, None)
        return self._read

    @property
    def rows(self) -> list[Any]:  # type: ignore[override]  # Rows' slot, read lazily here
        return self._resolve()[0]

    @property
    def lastrowid(self) -> int | None:  # type: ignore[override]
        return self._resolve()[1]


class PgConnection:
    """One project's memory in a PostgreSQL database, as ``database.Connection`` offers it."""

    module_name = "postgresql"

    def __init__(
        self, url: str, project: str, *, readonly: bool = False, pool_size: int | None = None,
        connect_timeout: int = 10, check_member: bool = True, candidates: tuple[str, ...] = (),
    ) -> None:
        """``candidates``: other keys the project may have (the repository's root commits,
        ``team.root_commits``): the one of them this person is a member of is the project,
        ``project`` first."""
        psycopg = _psycopg()
        self.url = url
        self.project = project
        self.path = f"{display_url(url)} (project {project})"
        self.readonly = readonly
        self.readonly_reason: str | None = "opened read-only" if readonly else None
        self.disk_full = False
        self._store: Any = None
        self._salt: str | None = None
        options = (f"-c search_path={SCHEMA} -c lock_timeout={LOCK_TIMEOUT} -c statement_timeout={STATEMENT_TIMEOUT}"
                   + (" -c default_transaction_read_only=on" if readonly else ""))
        self._kwargs = {"autocommit": True, "options": options, "connect_timeout": connect_timeout}
        self._local = threading.local()  # the connection a thread's transaction holds
        self._pool: Any = None
        self.raw: Any = None
        readable(url)
        if pool_size:
            from psycopg_pool import ConnectionPool  # only a server process pools

            self.lock: Any = _NoLock()
            with self._translated():
                self._pool = ConnectionPool(
                    url, min_size=1, max_size=pool_size, kwargs=self._kwargs, configure=self._configure,
                    open=True, timeout=connect_timeout,
                )
        else:
            self.lock = threading.RLock()
            with self._translated():
                self.raw = psycopg.connect(url, **self._kwargs)
                self._configure(self.raw)
        self.role: str = self.execute("SELECT current_user").fetchone()[0]
        self._check_schema()
        others = [c for c in candidates if c != project]
        if others and not self.is_member():
            found = self.execute(
                "SELECT project FROM members WHERE role = current_user AND project = ANY(?) ORDER BY project", (others,)
            ).fetchone()
            if found is not None:
                self._rekey(found[0])
        if check_member and not self.is_member():
            self.close()
            raise AccessDenied(
                f"You are not a member of project {project!r} in {display_url(url)}. Ask the team's administrator "
                "to add you (jupymem.storage.postgres.admin.add_member)."
            )

    def _check_schema(self) -> None:
        """People never migrate the team schema (their roles may not, by design: see
        ``admin``); they find it made, at the version this jupymem speaks."""
        from ...errors import SchemaTooNew
        from .schema import SCHEMA_VERSION

        where = display_url(self.url)
        if self.execute(f"SELECT to_regclass('{SCHEMA}.schema_migrations')").fetchone()[0] is None:
            self.close()
            raise StorageError(
                f"{where} holds no jupymem team schema yet. The team's administrator makes it once: "
                "python -c 'from jupymem.storage.postgres import admin; admin.create_schema(URL)'."
            )
        try:
            version = self.execute("SELECT count(*) FROM schema_migrations").fetchone()[0]
        except AccessDenied:  # before migration 5 people could not read the version
            version = 0
        if version > SCHEMA_VERSION:
            self.close()
            raise SchemaTooNew(
                f"{where} has team schema {version}; this jupymem knows up to {SCHEMA_VERSION}. "
                "Upgrade jupymem (pip install -U jupymem)."
            )
        if version < SCHEMA_VERSION:
            self.close()
            raise StorageError(
                f"{where} has an older team schema than this jupymem needs ({SCHEMA_VERSION}). The team's "
                "administrator brings it up to date: admin.create_schema(URL) (safe to run again)."
            )

    # The database derives memories, history and cited evidence from each appended event
    # (``guard.project_event``): ``projection.apply`` writes nothing here.
    derives_projection = True

    @property
    def private_owner(self) -> str:
        """What a private memory's id is salted with (``capture.memory_id``): the role row-level
        security keys on, and that role's secret (``guard``: ``private_salt``), so that a
        teammate cannot compute the id of a guess at someone's private words."""
        if self._salt is None:
            self._salt = str(self.execute("SELECT private_salt()").fetchone()[0])
        return f"{self.role}:{self._salt}"

    def _rekey(self, project: str) -> None:
        """This connection now speaks for ``project`` (every connection of a pool, too)."""
        self.project = project
        self.path = f"{display_url(self.url)} (project {project})"
        if self._pool is not None:
            self._pool.close()
            from psycopg_pool import ConnectionPool

            with self._translated():
                self._pool = ConnectionPool(self.url, min_size=1, max_size=self._pool.max_size, kwargs=self._kwargs,
                                            configure=self._configure, open=True)
        else:
            self._configure(self.raw)

    def _configure(self, raw: Any) -> None:
        # Session-wide, so it holds for every statement, inside a transaction or not.
        raw.execute("SELECT set_config('jupymem.project', %s, false)", (self.project,))

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            err = pg_error(exc, f"The memory database {self.path}")
            if err is None:
                raise
            raise err from None

    @contextlib.contextmanager
    def _borrowed(self) -> Iterator[Any]:
        """The connection for one statement: the thread's transaction's, the shared one, or a pooled one."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
        elif self._pool is not None:
            with self._pool.connection() as raw:
                yield raw
        else:
            if self.raw.closed:  # dropped earlier: outside a transaction, connect again
                self.raw = _psycopg().connect(self.url, **self._kwargs)
                self._configure(self.raw)
            yield self.raw

    # -- what storage calls --------------------------------------------------------

    def execute(self, sql: str, params: Any = (), *, binary: bool = False) -> Rows:
        """``binary``: rows in PostgreSQL's binary format (bytea as raw bytes, not hex:
        half the bytes on the wire for the dense leg's vectors, ``PgVectors.load``)."""
        text, returning = dialect.translate(sql)
        with self.lock, self._translated(), self._borrowed() as raw:
            cur = raw.cursor(binary=True).execute(text, tuple(params)) if binary else raw.execute(text, tuple(params))
            if getattr(self._local, "conn", None) is raw:  # a pipelined transaction: read when asked
                if dialect.moves_head(text):
                    self._local.head = None
                return _Pending(self, cur, text, returning)
            rows = cur.fetchall() if cur.description is not None else []
        if returning:  # sqlite3's INSERT returns no rows, only lastrowid
            return Rows([], rows[0][0] if rows else None)
        return Rows(rows, None)

    def executemany(self, sql: str, rows: Any) -> None:
        text, _ = dialect.translate(sql, returning=False)
        with self.lock, self._translated(), self._borrowed() as raw:
            if getattr(self._local, "conn", None) is raw and dialect.moves_head(text):
                self._local.head = None
            raw.cursor().executemany(text, [tuple(r) for r in rows])  # in a transaction: queued

    @contextlib.contextmanager
    def transaction(self, *, chain: bool = True) -> Iterator[PgConnection]:
        """BEGIN, the project's write lock, ... COMMIT, pipelined (see the module's
        docstring); rolled back on any error. Re-entrant per thread (an inner transaction
        joins the outer one). ``chain=False``: nothing of the log is written (a person's
        staged failures), so the write lock is not taken: a failed cell never waits behind
        a teammate's import."""
        if getattr(self._local, "conn", None) is not None:
            yield self
            return
        with self.lock, self._translated():
            with contextlib.ExitStack() as stack:
                if self._pool is not None:
                    raw = stack.enter_context(self._pool.connection())
                else:
                    raw = stack.enter_context(self._borrowed())
                try:
                    with _pipelined(raw):
                        raw.execute("BEGIN")
                        if chain:
                            # Writers of one project's log queue here (see the module's docstring);
                            # the head they will extend is read in the same flight, behind the lock.
                            self._local.head = _Pending(self, raw.execute(_LOCK), _LOCK, False)
                        self._local.conn = raw
                        yield self
                        raw.execute("COMMIT")  # leaving the pipeline reads every answer still due
                except BaseException:
                    with contextlib.suppress(Exception):  # a dropped connection has rolled back already
                        raw.execute("ROLLBACK")
                    raise
                finally:
                    self._local.conn = None
                    self._local.head = None

    @property
    def store(self) -> Any:
        """The ``PgStore`` over this connection, made once (``reads.store_for`` finds it
        here, so retrieval handed this connection reads through the right engine)."""
        if self._store is None:
            from .store import PgStore

            self._store = PgStore(self)
        return self._store

    def chain_head(self) -> tuple[int, str, str] | None:
        """(seq, hash, at) of the project's newest event, None for an empty log. Read from
        the head row: the newest event this person can see may not be the newest there is
        (others' private events are hidden from them), and the chain must follow the newest."""
        held = getattr(self._local, "head", None)  # read under this transaction's lock, not moved since
        row = held.fetchone() if held is not None else self.execute(_HEAD).fetchone()
        return (row[0], row[1], row[2]) if row else None

    def numbers_events(self) -> bool:
        """Whether a writer gives each event its seq (``eventlog.append``): yes, in a write
        transaction, whose lock keeps the head where this transaction read it. Naming it
        spares the round trip that reading the trigger's number back would cost."""
        return getattr(self._local, "conn", None) is not None

    def is_member(self) -> bool:
        row = self.execute("SELECT 1 FROM members WHERE project = ? AND role = current_user", (self.project,))
        return row.fetchone() is not None

    def writable(self) -> bool:
        return not self.readonly

    def close(self) -> None:
        with self.lock:
            if self._pool is not None:
                self._pool.close()
            elif self.raw is not None:
                self.raw.close()
