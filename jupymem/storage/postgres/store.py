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
from ...models import ACTIVE
from ..conversations import ConversationStore
from ..reads import SqlRows
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


class PgStore(SqlRows):
    """``reads.Store`` over one project's ``PgConnection``: ``SqlRows``' reads, translated."""

    # No BM25 of its own: retrieval must build its in-process index before a search, and
    # hand it to every lexical leg (``retrieval/engine.py``).
    native_bm25 = False

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
