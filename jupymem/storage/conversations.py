"""The ``%%ask`` conversations' tables: each notebook's messages and its rolling summary.

``assistants/conversation.py`` decides what a request carries and when to fold; this
module is where the messages are kept (migration 2: ``conversation``, its FTS5 index
``conversation_fts``, and ``conversation_summary``), outside the event log: a working set,
like staged evidence, not history to export. A message crosses this boundary as a row
(id, role, content, created_at), ids ascending in the order messages were added.

A second engine implements ``ConversationStore``; ``recall`` takes plain words, so FTS5's
query language stays here (``fts.py``). An engine without FTS5 (PostgreSQL) ranks the few
messages a notebook holds with ``rank_in_memory``: the same FTS5 table and BM25, in an
in-memory SQLite, over the rows it read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from . import database, fts

# (id, role, content, created_at)
MessageRow = tuple[int, str, str, str]


class ConversationStore(Protocol):
    def count(self, notebook: str) -> int: ...

    def messages(self, notebook: str) -> list[MessageRow]:
        """Every message still held, oldest first."""

    def recent(self, notebook: str, n: int) -> list[MessageRow]:
        """The ``n`` newest messages, newest first."""

    def recall(self, notebook: str, words: Sequence[str], before: int, limit: int) -> list[MessageRow]:
        """Messages with id < ``before`` holding any of ``words``, best BM25 first (ties: newest first)."""

    def summary(self, notebook: str) -> tuple[str | None, int]:
        """(the summary, how many messages it folded), (None, 0) before the first fold."""

    def append(self, notebook: str, role: str, content: str, at: str) -> int:
        """Store one message; its id."""

    def clear(self, notebook: str) -> None: ...

    def fold(self, notebook: str, seen: tuple[str | None, int], summary: str, folded: int, upto: int, at: str) -> bool:
        """Replace the summary and drop the messages up to id ``upto``, in one transaction,
        only if the summary is still ``seen`` (another fold may have won). True if it did."""


class SqliteConversations:
    """``ConversationStore`` over the project's SQLite connection."""

    # A notebook's one summary; on the team engine one per person (``PgConversations``).
    SUMMARY_KEY = "notebook"

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def count(self, notebook: str) -> int:
        return self.conn.execute("SELECT count(*) FROM conversation WHERE notebook = ?", (notebook,)).fetchone()[0]

    def messages(self, notebook: str) -> list[MessageRow]:
        return self.conn.execute(
            "SELECT id, role, content, created_at FROM conversation WHERE notebook = ? ORDER BY id", (notebook,)
        ).fetchall()

    def recent(self, notebook: str, n: int) -> list[MessageRow]:
        return self.conn.execute(
            "SELECT id, role, content, created_at FROM conversation WHERE notebook = ? ORDER BY id DESC LIMIT ?",
            (notebook, max(0, n)),
        ).fetchall()

    def recall(self, notebook: str, words: Sequence[str], before: int, limit: int) -> list[MessageRow]:
        if not words:
            return []
        # CROSS JOIN keeps the FTS scan outside: otherwise SQLite walks the notebook's
        # rows and re-runs the MATCH for each of them (15 ms instead of 1).
        return self.conn.execute(
            "SELECT c.id, c.role, c.content, c.created_at FROM conversation_fts"
            " CROSS JOIN conversation c ON c.id = conversation_fts.rowid"
            " WHERE conversation_fts MATCH ? AND c.notebook = ? AND c.id < ?"
            " ORDER BY bm25(conversation_fts), c.id DESC LIMIT ?",
            (fts.any_of((w, False) for w in words), notebook, before, limit),
        ).fetchall()

    def summary(self, notebook: str) -> tuple[str | None, int]:
        row = self.conn.execute(
            "SELECT summary, folded FROM conversation_summary WHERE notebook = ?", (notebook,)
        ).fetchone()
        return (row[0], row[1]) if row else (None, 0)

    def append(self, notebook: str, role: str, content: str, at: str) -> int:
        with database.transaction(self.conn):
            cur = self.conn.execute(
                "INSERT INTO conversation (notebook, role, content, created_at) VALUES (?, ?, ?, ?)",
                (notebook, role, content, at),
            )
        return cur.lastrowid

    def clear(self, notebook: str) -> None:
        with database.transaction(self.conn):
            self.conn.execute("DELETE FROM conversation WHERE notebook = ?", (notebook,))
            self.conn.execute("DELETE FROM conversation_summary WHERE notebook = ?", (notebook,))

    def fold(self, notebook: str, seen: tuple[str | None, int], summary: str, folded: int, upto: int, at: str) -> bool:
        with database.transaction(self.conn):
            if self.summary(notebook) != seen:
                return False
            self.conn.execute(
                "INSERT INTO conversation_summary (notebook, summary, folded, updated_at) VALUES (?, ?, ?, ?)"
                f" ON CONFLICT({self.SUMMARY_KEY}) DO UPDATE SET summary = excluded.summary,"
                " folded = excluded.folded, updated_at = excluded.updated_at",
                (notebook, summary, folded, at),
            )
            self.conn.execute("DELETE FROM conversation WHERE notebook = ? AND id <= ?", (notebook, upto))
        return True


def rank_in_memory(rows: Sequence[MessageRow], words: Sequence[str], limit: int) -> list[MessageRow]:
    """``recall``'s answer over ``rows`` read from another engine: the rows holding any of
    ``words``, best BM25 first (ties: newest first), ranked by the FTS5 table
    ``conversation_fts`` is (a notebook holds a few dozen messages between folds, so
    indexing them per request costs well under a millisecond each). The BM25 statistics
    are those of ``rows`` (SQLite's are those of every notebook's messages)."""
    if not words or not rows:
        return []
    scratch = database.Connection(Path(":memory:"))
    try:
        scratch.execute("CREATE VIRTUAL TABLE c USING fts5 (content, tokenize='unicode61 remove_diacritics 2')")
        scratch.executemany("INSERT INTO c (rowid, content) VALUES (?, ?)", [(r[0], r[2]) for r in rows])
        ranked = scratch.execute(
            "SELECT rowid FROM c WHERE c MATCH ? ORDER BY bm25(c), rowid DESC LIMIT ?",
            (fts.any_of((w, False) for w in words), limit),
        ).fetchall()
    finally:
        scratch.close()
    by_id = {r[0]: r for r in rows}
    return [tuple(by_id[i]) for (i,) in ranked]  # type: ignore[misc]


def _sqlite_conversations_are_a_store(store: SqliteConversations) -> ConversationStore:
    """Never called: mypy checks here that ``SqliteConversations`` implements ``ConversationStore``."""
    return store
