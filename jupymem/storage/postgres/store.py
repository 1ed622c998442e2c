"""``PgStore``: the ``reads.Store`` retrieval searches through, over a ``PgConnection``.

The SQL is ``SqliteStore``'s, less what only SQLite has: row-level security already
narrows every statement to the connection's project (and hides other people's private
memories), so no query names a project. Lexical search is not asked of PostgreSQL:
``bm25``, ``word_counts`` and ``prefix_count`` answer nothing, and retrieval's
in-process index (``retrieval/postings.py``), built from ``texts``, must answer every
search, with FTS5's ranking to the last bit. Its tokenizer asks SQLite's unicode61, which
any Python has; PostgreSQL's own text search tokenizes and ranks differently, so it is
not used: rankings are compared across engines.

Dense vectors (pgvector) and the ``%%ask`` conversations are not here yet: the store says
so (``vector_route``) rather than pretending.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from ...errors import StorageError
from ...models import ACTIVE, RETIRED, SUPERSEDED, Memory
from .. import database
from ..conversations import ConversationStore
from ..database import in_batches
from ..projection import MEMORY_COLUMNS, memory_from_row
from ..reads import BlockRow, TextRow
from ..vectors import SLOTS, PendingRow, Slot

_NO_VECTORS = "PostgreSQL memory keeps no vectors yet (pgvector is next): search is lexical"


class NoVectors:
    """A ``VectorStore`` that holds nothing: status reads it, writes are refused."""

    def __init__(self, tier: str) -> None:
        self.slot: Slot = SLOTS[tier]

    def counts(self) -> tuple[str | None, int]:
        return None, 0

    def _refuse(self) -> NoReturn:
        raise StorageError(_NO_VECTORS + ".")

    def ensure(self, model: str, dimensions: int) -> None:
        self._refuse()

    def pending(self, model: str, after: int, limit: int, *, only_missing: bool) -> list[PendingRow]:
        return []

    def put(self, rows: Sequence[tuple[int, str]], vectors: Sequence[bytes], model: str) -> None:
        self._refuse()

    def load(self, model: str) -> list[tuple[int, bytes]]:
        return []

    def drop_dangling(self) -> None:
        return None


class PgStore:
    """``reads.Store`` over one project's ``PgConnection``."""

    # No BM25 of its own: retrieval must build its in-process index before a search, and
    # hand it to every lexical leg (``retrieval/engine.py``).
    native_bm25 = False

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    @property
    def readonly(self) -> bool:
        return bool(self.conn.readonly)

    @property
    def engine(self) -> str:
        return "postgresql"

    def vector_route(self) -> tuple[bool, str]:
        return False, _NO_VECTORS

    def vectors(self, tier: str) -> NoVectors:
        return NoVectors(tier)

    def conversations(self) -> ConversationStore:
        raise StorageError("PostgreSQL memory keeps no %%ask conversations yet; use a repository's own memory for them.")

    def active_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM memories WHERE status = ?", (ACTIVE,)).fetchone()[0]

    def changed_since(self, seq: int) -> list[BlockRow]:
        return self.conn.execute(
            "SELECT id, kind, statement, standing, created_at, topic, status, seq, source FROM memories WHERE seq > ?",
            (seq,),
        ).fetchall()

    def own_private_count(self) -> int:
        """This person's active private memories (status says how many are kept back)."""
        return self.conn.execute(
            "SELECT count(*) FROM memories WHERE private = 1 AND status = ? AND author_role = current_user", (ACTIVE,)
        ).fetchone()[0]

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
        rows = self.conn.execute("SELECT rid FROM memories WHERE status IN (?, ?) ORDER BY rid", (SUPERSEDED, RETIRED))
        return [r[0] for r in rows.fetchall()]

    def memories(self, rids: Sequence[int]) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        for chunk, marks in in_batches(list(rids)):
            for row in self.conn.execute(f"SELECT rid, {MEMORY_COLUMNS} FROM memories WHERE rid IN ({marks})", chunk):
                out[row[0]] = memory_from_row(row[1:])
        return out

    def admitted(self, rids: Sequence[int], *, include_inactive: bool, kinds: Sequence[str] | None) -> set[int]:
        out: set[int] = set()
        for chunk, marks in in_batches(list(rids)):
            sql = f"SELECT rid FROM memories WHERE rid IN ({marks})"
            params: list[Any] = list(chunk)
            if not include_inactive:
                sql += " AND status = ?"
                params.append(ACTIVE)
            if kinds:
                sql += f" AND kind IN ({','.join('?' * len(kinds))})"
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
