"""SQLite's SQL, as the storage modules write it, spoken to PostgreSQL.

"One SQL, two dialects": eventlog, projection and the reads are written once, in the
small SQL that both engines almost share, and this module bridges the rest, one rule
each, on the text of a statement (cached: the same few hundred statements recur):

* ``?`` placeholders become ``%s`` (and a literal ``%`` becomes ``%%``, psycopg's
  escape); a ``?`` inside a string literal would be ambiguous, so it is refused;
* ``INSERT OR IGNORE INTO`` becomes ``INSERT INTO ... ON CONFLICT DO NOTHING``;
* ``ON CONFLICT(key)`` becomes ``ON CONFLICT (project, key)``: every unique key is
  per project in PostgreSQL (``schema.py``), and PostgreSQL wants the whole key named;
* a unary ``+`` (SQLite's hint to keep the planner off an index) is dropped;
* ``CAST(... AS BLOB)`` becomes ``CAST(... AS BYTEA)``;
* an INSERT into a table with a serial key gets ``RETURNING`` that key, so the caller
  reads ``lastrowid`` as it does from sqlite3, unless it names the key itself (it knows
  the value: ``eventlog.append``'s ``seq``; a pipelined transaction then need not wait
  for the answer).

What it cannot bridge it refuses by name (``Unsupported``): FTS5 tables, PRAGMA,
sqlite_master, ``INSERT OR REPLACE`` and SQLite's JSON functions. Those statements
belong to SQLite-only modules, and meeting one here is a bug to fix at its source.
Pure text in, text out: no driver is imported.
"""

from __future__ import annotations

import functools
import re

# Tables whose rows get a generated key, and its name (``Rows.lastrowid``).
SERIAL_KEYS = {"events": "seq", "memories": "rid", "conversation": "id"}

_LITERAL = re.compile(r"'(?:[^']|'')*'")
_INSERT = re.compile(r"^\s*INSERT\s+(OR\s+IGNORE\s+)?INTO\s+(\w+)\s*(\([^)]*\))?", re.IGNORECASE)
_CONFLICT_TARGET = re.compile(r"ON\s+CONFLICT\s*\(\s*([\w\s,]+?)\s*\)", re.IGNORECASE)
_UNARY_PLUS = re.compile(r"(\bAND\s+|\bWHERE\s+|\(\s*)\+(?=[A-Za-z_])", re.IGNORECASE)
_BLOB = re.compile(r"\bAS\s+BLOB\b", re.IGNORECASE)
_SQLITE_ONLY = re.compile(
    r"\b(memories_fts|memories_vocab|conversation_fts|PRAGMA|sqlite_master|sqlite_schema|rowid|"
    r"json_extract|json_each|json_group_array|json_object|INSERT\s+OR\s+REPLACE)\b",
    re.IGNORECASE,
)


class Unsupported(ValueError):
    """A statement that only SQLite can run (an FTS5 table, a PRAGMA ...)."""


@functools.lru_cache(maxsize=1024)
def translate(sql: str, returning: bool = True) -> tuple[str, bool]:
    """``sql`` in PostgreSQL's words, and whether RETURNING was added for ``lastrowid``
    (``returning``: whether it may be)."""
    code = _LITERAL.sub(_check_literal, sql)
    found = _SQLITE_ONLY.search(code)
    if found:
        raise Unsupported(f"SQLite-only SQL reached PostgreSQL ({found.group(0)}): {sql.strip()[:200]}")
    out = sql.replace("%", "%%")
    out = _placeholders(out)
    out = _CONFLICT_TARGET.sub(lambda m: f"ON CONFLICT (project, {m.group(1)})", out)
    out = _UNARY_PLUS.sub(r"\1", out)
    out = _BLOB.sub("AS BYTEA", out)
    insert = _INSERT.match(out)
    if insert:
        ignore, table = insert.group(1), insert.group(2).lower()
        if ignore:
            out = out[: insert.start(1)] + out[insert.end(1):]
            out = out.rstrip().rstrip(";") + " ON CONFLICT DO NOTHING"
        key = SERIAL_KEYS.get(table)
        named = insert.group(3) is not None and key in re.findall(r"\w+", insert.group(3).lower())
        if returning and key and not named and "RETURNING" not in out.upper():
            return out.rstrip().rstrip(";") + f" RETURNING {key}", True
    return out, False


@functools.lru_cache(maxsize=1024)
def returns_rows(sql: str) -> bool:
    """Whether ``sql`` (translated) answers with rows: a query, or a change with RETURNING."""
    head = sql.lstrip()[:7].upper()
    return not head.startswith(("INSERT", "UPDATE", "DELETE")) or "RETURNING" in sql.upper()


@functools.lru_cache(maxsize=64)
def moves_head(sql: str) -> bool:
    """Whether ``sql`` (translated) appends events, and so moves the chain's head (the
    ``events_chain`` trigger): a head read before it is stale after it."""
    found = _INSERT.match(sql)
    return found is not None and found.group(2).lower() == "events"


def _check_literal(m: re.Match[str]) -> str:
    if "?" in m.group(0):
        raise Unsupported(f"A '?' inside a string literal is ambiguous as a placeholder: {m.group(0)}")
    return "''"  # literals are blanked before looking for SQLite-only words


def _placeholders(sql: str) -> str:
    # Only outside literals; _check_literal already refused a '?' inside one.
    parts, last = [], 0
    for m in _LITERAL.finditer(sql):
        parts.append(sql[last : m.start()].replace("?", "%s"))
        parts.append(m.group(0))
        last = m.end()
    parts.append(sql[last:].replace("?", "%s"))
    return "".join(parts)
