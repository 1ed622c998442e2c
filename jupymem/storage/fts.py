"""FTS5's query language, written in one place.

User text never reaches FTS5's query language as it is: every term goes in quoted
(a ``"`` doubled), so ``AND``, ``*``, ``:``, quotes and parentheses are just words, and a
prefix is a quoted term followed by ``*``. Retrieval's lexical leg (``retrieval/lexical.py``)
and the conversation search (``conversation.py``) both build their MATCH expressions here.

``unicode61_tokens`` asks FTS5's tokenizer itself how it cuts text (``retrieval/tokenize.py``
mirrors it exactly in Python), in a private in-memory database.

A second engine receives the same terms as ``(word, prefix)`` pairs through the reader
(``reads.MemoryReader.bm25``), never an FTS5 string, so this syntax stays SQLite's.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence


def quote_term(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def phrase(word: str, prefix: bool = False) -> str:
    """One term of a MATCH expression: the quoted word, searched as a prefix with ``prefix``."""
    return quote_term(word) + ("*" if prefix else "")


def any_of(terms: Iterable[tuple[str, bool]]) -> str:
    """The MATCH expression for rows holding any of ``terms`` = (word, prefix)."""
    return " OR ".join(phrase(word, prefix) for word, prefix in terms)


class Unavailable(Exception):
    """This Python's SQLite cannot tokenize as FTS5 does (no FTS5)."""


_tokenizer: sqlite3.Connection | None = None
_tokenizer_lock = threading.Lock()


def unicode61_tokens(texts: Sequence[str]) -> list[list[str]]:
    """The tokens FTS5's ``unicode61 remove_diacritics 2`` makes of each of ``texts``, in
    order, asked of an in-memory FTS5 table (any SQLite gives the project's answer:
    unicode61's tables are frozen). Raises ``Unavailable`` without FTS5."""
    global _tokenizer
    with _tokenizer_lock:
        try:
            if _tokenizer is None:
                conn = sqlite3.connect(":memory:", check_same_thread=False)
                conn.execute("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize='unicode61 remove_diacritics 2')")
                conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")
                _tokenizer = conn
            conn = _tokenizer
            with conn:
                conn.execute("DELETE FROM t")
                conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", list(enumerate(texts)))
                found: dict[int, list[str]] = {}
                for term, doc in conn.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
                    found.setdefault(doc, []).append(term)
        except sqlite3.Error as err:
            raise Unavailable(str(err)) from err
    return [found.get(i, []) for i in range(len(texts))]
