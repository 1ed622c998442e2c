"""What retrieval reads of memory, as a protocol a second engine can implement.

Retrieval (``retrieval/``) ranks memories; it never writes SQL and never holds a
connection. It is handed a ``Store`` and asks it, in retrieval's own words, for what a
search needs: memories by row id, which of some rows pass the status and kind filters,
the texts to index, BM25 candidates for a few terms, how many memories hold a word, and
the dense leg's vectors (``vectors.VectorStore``). ``SqliteStore`` answers from the
project's SQLite file (FTS5 for BM25, fts5vocab for word counts, sqlite-vec for vectors).

What a second engine must provide to serve retrieval (PostgreSQL, next):

* every method of ``MemoryReader`` below, with the same orders and ties (row ids
  ascending where it says so): rankings are compared across engines;
* ``bm25`` as FTS5 computes it (column weights, a prefix term matching every word that
  starts with it, scores negative: smaller is better), or retrieval's in-memory index
  (``retrieval/postings.py``), which reproduces it from ``texts``, must answer every
  search; the engine then returns ``[]`` until it is ready;
* ``vectors(tier)``: a ``vectors.VectorStore`` (the stored vectors of one tier);
* ``conversations()``: a ``conversations.ConversationStore`` (the ``%%ask`` messages);
* ``readonly``, ``engine`` (a name for status) and ``vector_route()``;
* for the block (``core/block.py``): ``active_count``, ``changed_since`` and ``meta``.

Writes are not in this protocol yet: memory changes through ``eventlog.append`` and
``projection`` over a SQLite connection, and a second engine needs those too.

A raw SQLite connection is still accepted where retrieval is entered (``store_for``): the
tests and a few callers hold one; it is wrapped once per connection, so the per-project
caches retrieval keeps (keyed by the store) live as long as the connection.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from ..models import ACTIVE, RETIRED, SUPERSEDED, Memory
from . import database, fts
from .database import in_batches
from .conversations import ConversationStore, SqliteConversations
from .projection import MEMORY_COLUMNS, memory_from_row
from .vectors import SqliteVectors, VectorStore, vec_route

# The meta key under which ``sharing.share`` keeps when this clone first saw each shared
# file (``share.SEEN``; tests/test_block.py holds the two equal): an order no line can
# claim, read by the block's turns and by ``origins``.
SEEN = "share_seen"

_V = TypeVar("_V", bound=VectorStore)

# (rid, statement, topic, original): what the lexical index and the typo vocabulary read.
TextRow = tuple[int, str, "str | None", "str | None"]
# (id, kind, statement, standing, created_at, topic, status, seq, source): what the block shows.
BlockRow = tuple[str, str, str, str, str, "str | None", str, int, "str | None"]


class MemoryReader(Protocol):
    """Memory as retrieval reads it. Row ids (``rid``) are the engine's integer keys of
    memory rows: ascending in the order rows were added, reused by no other memory."""

    def top_rid(self) -> int:
        """The largest row id (0 for an empty project)."""

    def count(self) -> int:
        """Memory rows, whatever their status."""

    def has_after(self, rid: int) -> bool:
        """Whether some row has an id above ``rid``."""

    def count_after(self, rid: int) -> int:
        """Rows with an id above ``rid``."""

    def rids(self) -> list[int]:
        """Every row id, ascending."""

    def closed_rids(self) -> list[int]:
        """Row ids of superseded and retired memories."""

    def memories(self, rids: Sequence[int]) -> dict[int, Memory]:
        """The memories at ``rids`` (ids with no row are left out)."""

    def origins(self, rids: Sequence[int]) -> dict[int, tuple[int, str]]:
        """Where each memory came from, for choosing among copies (``repeats``): (when this
        clone first saw its shared file, ``SEEN``: -1 for this machine's own memories and
        a team database's rows; its writer: the shared file, else the author)."""

    def admitted(self, rids: Sequence[int], *, include_inactive: bool, kinds: Sequence[str] | None) -> set[int]:
        """The ids among ``rids`` whose row exists, is active (unless ``include_inactive``)
        and is of one of ``kinds`` (any kind when None)."""

    def texts(self, after: int, upto: int | None = None, limit: int | None = None) -> list[TextRow]:
        """(rid, statement, topic, original) for rows after ``after`` (up to ``upto``),
        ascending by rid, at most ``limit``."""

    def bm25(self, terms: Sequence[tuple[str, bool]], weights: Sequence[float], depth: int) -> list[tuple[int, float]]:
        """The ``depth`` best rows holding any of ``terms`` = (word, prefix), as (rid, score):
        BM25 over (statement, topic, original) weighted by ``weights``, negative (smaller is
        better), ties by rid."""

    def word_counts(self, words: Sequence[str]) -> dict[str, int]:
        """Rows holding each exact (tokenized) word; words no row holds are left out."""

    def prefix_count(self, prefix: str) -> int:
        """Rows holding some word that starts with ``prefix``."""


class Store(MemoryReader, Protocol):
    """One project's memory as retrieval and the assistants use it."""

    @property
    def readonly(self) -> bool:
        """True when nothing may be written (vectors included)."""

    @property
    def engine(self) -> str:
        """The engine's name, for status ("sqlite3", "sqlean", ...)."""

    def vector_route(self) -> tuple[bool, str]:
        """Can this store hold vectors? (ok, the reason in words fit for status)."""

    def vectors(self, tier: str) -> VectorStore:
        """The stored vectors of one tier (``vectors.SLOTS``)."""

    def conversations(self) -> ConversationStore:
        """The ``%%ask`` conversations (``conversations.py``)."""

    def active_count(self) -> int:
        """Active memories."""

    def changed_since(self, seq: int) -> list[BlockRow]:
        """The block's columns of every memory row last written by an event after ``seq``
        (any status: a closed one leaves the block)."""

    def meta(self, key: str) -> str | None:
        """A value the project keeps beside its memory (``database.get_meta``)."""


class SqlRows:
    """The reads every engine answers with the same SQL (``postgres.dialect`` translates
    it): memory rows by row id, the filters, the texts to index, the block's columns.
    ``SqliteStore`` and ``postgres.store.PgStore`` add what differs: lexical search,
    vectors, conversations."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._vectors: dict[str, Any] = {}

    def _vectors_for(self, tier: str, make: Callable[[Any, str], _V]) -> _V:
        """The engine's vector store of ``tier``, made once: it keeps what it has loaded."""
        got = self._vectors.get(tier)
        if got is None:
            got = self._vectors[tier] = make(self.conn, tier)
        return got

    def active_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM memories WHERE status = ?", (ACTIVE,)).fetchone()[0]

    def changed_since(self, seq: int) -> list[BlockRow]:
        return self.conn.execute(
            "SELECT id, kind, statement, standing, created_at, topic, status, seq, source FROM memories WHERE seq > ?",
            (seq,),
        ).fetchall()

    def meta(self, key: str) -> str | None:
        return database.get_meta(self.conn, key)

    # -- MemoryReader -----------------------------------------------------------------

    def top_rid(self) -> int:
        return self.conn.execute("SELECT coalesce(max(rid), 0) FROM memories").fetchone()[0]

    def count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM memories").fetchone()[0]

    def has_after(self, rid: int) -> bool:
        return self.conn.execute("SELECT 1 FROM memories WHERE rid > ? LIMIT 1", (rid,)).fetchone() is not None

    def count_after(self, rid: int) -> int:
        return self.conn.execute("SELECT count(*) FROM memories WHERE rid > ?", (rid,)).fetchone()[0]

    def rids(self) -> list[int]:
        return [r[0] for r in self.conn.execute("SELECT rid FROM memories ORDER BY rid").fetchall()]

    def closed_rids(self) -> list[int]:
        # IN, not "!= active": the status index answers it without scanning every row.
        rows = self.conn.execute("SELECT rid FROM memories WHERE status IN (?, ?)", (SUPERSEDED, RETIRED))
        return sorted(r[0] for r in rows.fetchall())  # one order on every engine

    def memories(self, rids: Sequence[int]) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        for chunk, marks in in_batches(list(rids)):
            for row in self.conn.execute(f"SELECT rid, {MEMORY_COLUMNS} FROM memories WHERE rid IN ({marks})", chunk):
                out[row[0]] = memory_from_row(row[1:])
        return out

    def origins(self, rids: Sequence[int]) -> dict[int, tuple[int, str]]:
        seen: dict[str, int] = {}
        with contextlib.suppress(ValueError):  # a damaged value orders nothing; the ranking decides
            got = json.loads(self.meta(SEEN) or "{}")
            seen = {k: v for k, v in got.items() if isinstance(k, str) and type(v) is int} if isinstance(got, dict) else {}
        unnoted = max(seen.values(), default=0) + 1  # a file this clone has not noted yet: after every file it has
        out: dict[int, tuple[int, str]] = {}
        for chunk, marks in in_batches(list(rids)):
            sql = f"SELECT rid, source, author FROM memories WHERE rid IN ({marks})"
            for rid, source, author in self.conn.execute(sql, chunk).fetchall():
                when = -1 if source is None else seen.get(source, unnoted)
                out[rid] = (when, f"file:{source}" if source is not None else f"author:{author or ''}")
        return out

    def admitted(self, rids: Sequence[int], *, include_inactive: bool, kinds: Sequence[str] | None) -> set[int]:
        out: set[int] = set()
        for chunk, marks in in_batches(list(rids)):
            sql = f"SELECT rid FROM memories WHERE rid IN ({marks})"
            params: list[Any] = list(chunk)
            if not include_inactive:
                sql += " AND +status = ?"  # unary +: SQLite looks rows up by rid, not through the status index
                params.append(ACTIVE)
            if kinds:
                sql += f" AND +kind IN ({','.join('?' * len(kinds))})"
                params.extend(kinds)
            out.update(r[0] for r in self.conn.execute(sql, params).fetchall())
        return out

    def texts(self, after: int, upto: int | None = None, limit: int | None = None) -> list[TextRow]:
        sql = "SELECT rid, statement, topic, original FROM memories WHERE rid > ?"
        params: list[Any] = [after]
        if upto is not None:
            sql += " AND rid <= ?"
            params.append(upto)
        sql += " ORDER BY rid"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self.conn.execute(sql, params).fetchall()


class SqliteStore(SqlRows):
    """``Store`` over one project's SQLite connection (``database.Connection``): FTS5 for
    BM25, fts5vocab for word counts, sqlite-vec (or numpy) for vectors."""

    def __init__(self, conn: Any) -> None:
        super().__init__(conn)
        self._conversations = SqliteConversations(conn)

    @property
    def readonly(self) -> bool:
        return bool(getattr(self.conn, "readonly", False))

    @property
    def engine(self) -> str:
        return getattr(getattr(self.conn, "module", None), "__name__", "sqlite3")

    def vector_route(self) -> tuple[bool, str]:
        return vec_route(self.conn)

    def vectors(self, tier: str) -> SqliteVectors:
        return self._vectors_for(tier, SqliteVectors)

    def conversations(self) -> SqliteConversations:
        return self._conversations

    def bm25(self, terms: Sequence[tuple[str, bool]], weights: Sequence[float], depth: int) -> list[tuple[int, float]]:
        if not terms:
            return []
        score = bm25_expression(weights)
        # ORDER BY the result column rather than a second bm25() expression: the same rows in
        # the same order, and ~6% less time in this query at 100,000.
        return self.conn.execute(
            f"SELECT rowid, {score} AS s FROM memories_fts WHERE memories_fts MATCH ? ORDER BY s, rowid LIMIT ?",
            (fts.any_of(terms), depth),
        ).fetchall()

    def word_counts(self, words: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        words = list(words)
        # Held across the reads: another thread's commit would abort an open fts5vocab cursor.
        with getattr(self.conn, "lock", None) or contextlib.nullcontext():
            for chunk, marks in in_batches(words):
                out.update(self.conn.execute(f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", chunk).fetchall())
        return out

    def prefix_count(self, prefix: str) -> int:
        row = self.conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (fts.phrase(prefix, True),))
        return int(row.fetchone()[0])


def bm25_expression(weights: Sequence[float]) -> str:
    """FTS5's BM25 over (statement, topic, original) with ``weights``, as an SQL expression."""
    return "bm25(memories_fts, {}, {}, {})".format(*weights)


def store_for(source: Any) -> Any:
    """The ``Store`` for ``source``: itself when it is one, else the ``SqliteStore`` over a
    SQLite connection, made once per connection (retrieval's caches are keyed by it)."""
    if hasattr(source, "bm25"):  # already a store (a Protocol isinstance check costs a search ~20 us)
        return source
    got = getattr(source, "store", None)
    if got is None:
        got = SqliteStore(source)
        try:
            source.store = got
        except AttributeError:  # a connection that takes no attribute (a raw driver's): not cached
            pass
    return got


def _sqlite_store_is_a_store(store: SqliteStore) -> Store:
    """Never called: mypy checks here that ``SqliteStore`` implements every method of ``Store``."""
    return store
