"""``PgStore``: the ``reads.Store`` retrieval searches through, over a ``PgConnection``.

The SQL is ``SqliteStore``'s, less what only SQLite has: row-level security already
narrows every statement to the connection's project (and hides other people's private
memories), so no query names a project. Lexical search is not asked of PostgreSQL:
``bm25``, ``word_counts`` and ``prefix_count`` answer nothing, and retrieval's
in-process index (``retrieval/postings.py``), built from ``texts``, must answer every
search, with FTS5's ranking to the last bit. Its tokenizer asks SQLite's unicode61, which
any Python has; PostgreSQL's own text search tokenizes and ranks differently, so it is
not used: rankings are compared across engines.

Dense vectors are kept as bytes beside the memories (``PgVectors``, migration 6) and
searched by the same in-process index as SQLite's (``retrieval/index.py``): the same
copy, the same rankings. The ``%%ask`` conversations are ``PgConversations``: each
person's own (row-level security on their role, migration 7 for the summaries).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...models import ACTIVE
from .. import database
from ..conversations import ConversationStore, MessageRow, SqliteConversations, rank_in_memory
from ..reads import SqlRows
from ..vectors import SLOTS, PendingRow, Slot, VectorStore

_ROUTE = "vectors kept in the team database; the in-process index searches them"


class PgVectors:
    """``VectorStore`` over one tier's table in the team database (migration 6).

    The bytes are ``SqliteVectors``' (float32, int8 for an int8 slot), so the in-process
    index loads the same copy from either engine and ranks alike. What differs from
    SQLite: the table exists from the migration on (no extension to load), a row cannot be
    reused by another memory (no rebuild here; its vectors leave with it by the foreign
    key), and row-level security shows each person the vectors of the memories they may
    see. The model and dimensions are the project's (``meta``), as SQLite keeps them."""

    def __init__(self, conn: Any, tier: str) -> None:
        self.conn = conn
        self.slot: Slot = SLOTS[tier]
        self.table = self.slot.vec_table  # VECTOR_TABLES: the tiers' names, one table each

    def counts(self) -> tuple[str | None, int]:
        model = database.get_meta(self.conn, self.slot.meta_model)
        if model is None:
            return None, 0
        return model, self.conn.execute(f"SELECT count(*) FROM {self.table} WHERE model = ?", (model,)).fetchone()[0]

    def ensure(self, model: str, dimensions: int) -> None:
        conn, slot = self.conn, self.slot
        same = (
            database.get_meta(conn, slot.meta_model) == model
            and database.get_meta(conn, slot.meta_dims) == str(dimensions)
            and (database.get_meta(conn, slot.meta_format) or "float") == slot.format
        )
        if same:
            return
        with database.transaction(conn):
            # Another model's vectors are of no use (and this person may delete only those
            # they can see: a teammate's private ones go when their memory does, or are replaced).
            conn.execute(f"DELETE FROM {self.table} WHERE model <> ?", (model,))
            database.set_meta(conn, slot.meta_model, model)
            database.set_meta(conn, slot.meta_dims, str(dimensions))
            database.set_meta(conn, slot.meta_format, slot.format)

    def pending(self, model: str, after: int, limit: int, *, only_missing: bool) -> list[PendingRow]:
        stored = "(v.rid IS NOT NULL AND v.memory_id = m.id AND v.model = ?)"
        where = f" AND NOT {stored}" if only_missing else ""
        params: tuple[Any, ...] = (model, after, model, limit) if only_missing else (model, after, limit)
        rows = self.conn.execute(
            f"SELECT m.rid, m.id, m.statement, m.topic, {stored} FROM memories m LEFT JOIN {self.table} v"
            f" ON v.rid = m.rid WHERE m.rid > ?{where} ORDER BY m.rid LIMIT ?",
            params,
        ).fetchall()
        return [(r[0], r[1], r[2], r[3], bool(r[4])) for r in rows]

    def put(self, rows: Sequence[tuple[int, str]], vectors: Sequence[bytes], model: str) -> None:
        if not rows:
            return
        with database.transaction(self.conn):
            self.conn.executemany(
                # Each member's vectors are their own (migration 8): the key holds the role.
                f"INSERT INTO {self.table} (rid, memory_id, model, vector) VALUES (?, ?, ?, ?) ON CONFLICT(author_role, rid)"
                " DO UPDATE SET memory_id = excluded.memory_id, model = excluded.model, vector = excluded.vector",
                [(rid, memory_id, model, blob) for (rid, memory_id), blob in zip(rows, vectors)],
            )

    def load(self, model: str) -> list[tuple[int, bytes]]:
        rows = self.conn.execute(
            f"SELECT v.rid, v.vector FROM {self.table} v JOIN memories m ON m.rid = v.rid AND m.id = v.memory_id"
            " WHERE v.model = ? ORDER BY v.rid",
            (model,),
            binary=True,  # every vector of the project: raw bytes, not hex
        ).fetchall()
        return [(rid, bytes(blob)) for rid, blob in rows]

    def drop_dangling(self) -> None:
        return None  # the foreign key took them with their rows (migration 6)


class PgConversations(SqliteConversations):
    """``ConversationStore`` in the team database: ``SqliteConversations``' SQL, less FTS5.

    Row-level security keeps each person's messages and summaries their own (an
    ``author_role`` on each row, set by the database): two people asking in the same
    notebook hold two conversations, and neither reads, folds or clears the other's.
    ``recall`` reads the notebook's older messages and ranks them as SQLite does
    (``conversations.rank_in_memory``). A message is one statement, committed alone: it
    does not wait on the project's write lock as memory writes do. ``fold`` takes the
    project's lock (two folds never both see the same summary), as on SQLite."""

    SUMMARY_KEY = "author_role, notebook"  # the connecting role's: one summary per person

    def recall(self, notebook: str, words: Sequence[str], before: int, limit: int) -> list[MessageRow]:
        if not words:
            return []
        rows = self.conn.execute(
            "SELECT id, role, content, created_at FROM conversation WHERE notebook = ? AND id < ? ORDER BY id",
            (notebook, before),
        ).fetchall()
        return rank_in_memory(rows, words, limit)

    def append(self, notebook: str, role: str, content: str, at: str) -> int:
        return int(self.conn.execute(
            "INSERT INTO conversation (notebook, role, content, created_at) VALUES (?, ?, ?, ?)",
            (notebook, role, content, at),
        ).lastrowid)


class PgStore(SqlRows):
    """``reads.Store`` over one project's ``PgConnection``: ``SqlRows``' reads, translated."""

    # No BM25 of its own: retrieval must build its in-process index before a search, and
    # hand it to every lexical leg (``retrieval/engine.py``).
    native_bm25 = False

    def __init__(self, conn: Any) -> None:
        super().__init__(conn)
        self._conversations: PgConversations | None = None

    @property
    def readonly(self) -> bool:
        return bool(self.conn.readonly)

    @property
    def engine(self) -> str:
        return "postgresql"

    def vector_route(self) -> tuple[bool, str]:
        return True, _ROUTE

    def vectors(self, tier: str) -> PgVectors:
        return self._vectors_for(tier, PgVectors)

    def conversations(self) -> ConversationStore:
        if self._conversations is None:
            self._conversations = PgConversations(self.conn)
        return self._conversations

    def own_private_count(self) -> int:
        """This person's active private memories (status says how many are kept back)."""
        return self.conn.execute(
            "SELECT count(*) FROM memories WHERE private = 1 AND status = ? AND author_role = current_user", (ACTIVE,)
        ).fetchone()[0]

    def bm25(self, terms: Sequence[tuple[str, bool]], weights: Sequence[float], depth: int) -> list[tuple[int, float]]:
        return []  # retrieval's in-process index answers (see the module's docstring)

    def word_counts(self, words: Sequence[str]) -> dict[str, int]:
        return {}

    def prefix_count(self, prefix: str) -> int:
        return 0


def _pg_store_is_a_store(store: PgStore) -> Any:
    """Never called: mypy checks here that ``PgStore`` implements every method of ``Store``."""
    from ..reads import Store

    checked: Store = store
    return checked


def _pg_vectors_are_a_vector_store(vectors: PgVectors) -> VectorStore:
    """Never called: mypy checks here that ``PgVectors`` implements ``VectorStore``."""
    return vectors
