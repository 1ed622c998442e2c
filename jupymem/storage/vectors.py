"""The dense leg's stored vectors: sqlite-vec tables in the project database.

Retrieval's dense index (``retrieval/index.py``) embeds memories and searches an
in-process copy; this module is where those vectors are kept, and the only place that
knows they live in sqlite-vec ``vec0`` tables.

* ``memory_vectors``, a ``vec0`` table, holds one vector per memory row (``rowid`` =
  ``memories.rid``). It cannot be created by a migration: a connection without the
  extension cannot even open a ``vec0`` table, and a Python whose ``sqlite3`` cannot load
  extensions must still read and write memory. So it is created the first time vectors
  are written (``ensure``).
* ``memory_vector_rows``, a plain table, says which memory row has a vector for which
  model (and under which memory id, since ``rebuild`` may hand a row id to another
  memory). A row a vec-less writer added simply has no entry here, and the next process
  with the extension backfills it.

Each tier has its own pair of tables (``Slot``). A vector crosses this boundary as bytes:
float32 or, for an ``int8`` slot, int8 components (``Slot.format``); numpy stays in
retrieval. A second engine implements ``VectorStore`` (pgvector, say).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..models import _Record
from . import database

VEC_TABLE = "memory_vectors"
MAP_TABLE = "memory_vector_rows"
META_MODEL = "vector_model"
META_DIMS = "vector_dimensions"
META_FORMAT = "vector_format"

# Two tiers keep their vectors side by side, so that the static model answers while the
# transformer embeds a project in the background (``retrieval/tiers.py``).
STATIC = "static"
TRANSFORMER = "transformer"

# (rid, memory id, statement, topic, stored): stored = the row has a current vector.
PendingRow = tuple[int, str, str, "str | None", bool]


@dataclass(frozen=True, eq=False, repr=False)
class Slot(_Record):
    """Where one tier's vectors live: its tables, its meta keys, and how they are stored.

    The static tier keeps the names it always had (a project embedded before the
    transformer tier keeps its vectors). The transformer's 384 dimensions are stored as
    int8 (sqlite-vec's ``int8[]``, a quarter of float32's bytes: 38 MB at 100,000
    memories), each vector scaled by its largest component: cosine is blind to scale,
    and rounding costs under 0.001 of it (``tests/test_dense.py``)."""

    tier: str
    vec_table: str
    map_table: str
    meta_model: str
    meta_dims: str
    int8: bool = False

    @property
    def meta_format(self) -> str:
        return META_FORMAT if self.tier == STATIC else f"{META_FORMAT}_{self.tier}"

    @property
    def format(self) -> str:
        return "int8" if self.int8 else "float"


SLOTS = {
    STATIC: Slot(STATIC, VEC_TABLE, MAP_TABLE, META_MODEL, META_DIMS),
    TRANSFORMER: Slot(
        TRANSFORMER, "memory_vectors_transformer", "memory_vector_rows_transformer",
        "vector_model_transformer", "vector_dimensions_transformer", int8=True,
    ),
}


class VectorStore(Protocol):
    """One tier's stored vectors (``Slot``), as the dense index uses them."""

    slot: Slot

    def counts(self) -> tuple[str | None, int]:
        """(model, rows with a vector for it) as recorded; readable without the extension."""

    def ensure(self, model: str, dimensions: int) -> None:
        """Make ready to hold ``model``'s vectors; a different model, size or format
        starts afresh (every stored vector dropped)."""

    def pending(self, model: str, after: int, limit: int, *, only_missing: bool) -> list[PendingRow]:
        """Memory rows after ``after``, ascending, at most ``limit``: (rid, id, statement,
        topic, stored); with ``only_missing``, only those without a current vector."""

    def put(self, rows: Sequence[tuple[int, str]], vectors: Sequence[bytes], model: str) -> None:
        """Store one vector per (rid, memory id), replacing any the row had, in one transaction."""

    def load(self, model: str) -> list[tuple[int, bytes]]:
        """(rid, vector) for every row whose vector is ``model``'s and still its memory's."""

    def drop_dangling(self) -> None:
        """Forget the vectors of rows that left memory (gc)."""


def vec_route(conn: database.Connection) -> tuple[bool, str]:
    """Can this connection hold vectors? (ok, reason in words fit for ``status``)."""
    if conn.vec_loaded:
        return True, "sqlite-vec loaded"
    name = getattr(conn.module, "__name__", "sqlite3")
    if not database.can_load_extensions(conn.module):
        return False, (
            f"this Python's {name} cannot load SQLite extensions, so sqlite-vec is unavailable; "
            "install sqlean.py (pip install sqlean.py) for semantic search"
        )
    try:
        ok = conn.load_vec()
    except Exception as err:  # the driver's OperationalError: a broken or foreign binary
        return False, f"sqlite-vec failed to load ({type(err).__name__}: {err})"
    if not ok:
        return False, "sqlite-vec is not installed (pip install sqlite-vec)"
    return True, "sqlite-vec loaded"


def _has_table(conn: Any, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


class SqliteVectors:
    """``VectorStore`` over sqlite-vec tables in the project's SQLite file."""

    def __init__(self, conn: Any, tier: str = STATIC) -> None:
        self.conn = conn
        self.slot = SLOTS[tier]

    def counts(self) -> tuple[str | None, int]:
        slot = self.slot
        model = database.get_meta(self.conn, slot.meta_model)
        if model is None or not _has_table(self.conn, slot.map_table):
            return model, 0
        n = self.conn.execute(f"SELECT count(*) FROM {slot.map_table} WHERE model = ?", (model,)).fetchone()[0]
        return model, n

    def ensure(self, model: str, dimensions: int) -> None:
        conn, slot = self.conn, self.slot
        stored_model = database.get_meta(conn, slot.meta_model)
        dims = database.get_meta(conn, slot.meta_dims)
        fmt = database.get_meta(conn, slot.meta_format) or "float"
        same = stored_model == model and dims == str(dimensions) and fmt == slot.format
        with database.transaction(conn):
            if not same or not _has_table(conn, slot.vec_table):
                conn.execute(f"DROP TABLE IF EXISTS {slot.vec_table}")
                conn.execute(f"DROP TABLE IF EXISTS {slot.map_table}")
                conn.execute(
                    f"CREATE VIRTUAL TABLE {slot.vec_table} USING vec0("
                    f"embedding {slot.format}[{int(dimensions)}] distance_metric=cosine)"
                )
                database.set_meta(conn, slot.meta_model, model)
                database.set_meta(conn, slot.meta_dims, str(dimensions))
                database.set_meta(conn, slot.meta_format, slot.format)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {slot.map_table} ("
                "rid INTEGER PRIMARY KEY, memory_id TEXT NOT NULL, model TEXT NOT NULL)"
            )

    def pending(self, model: str, after: int, limit: int, *, only_missing: bool) -> list[PendingRow]:
        stored = "(v.rid IS NOT NULL AND v.memory_id = m.id AND v.model = ?)"
        where = f" AND NOT {stored}" if only_missing else ""
        params: tuple[Any, ...] = (model, after, model, limit) if only_missing else (model, after, limit)
        return self.conn.execute(
            f"SELECT m.rid, m.id, m.statement, m.topic, {stored} FROM memories m LEFT JOIN {self.slot.map_table} v"
            f" ON v.rid = m.rid WHERE m.rid > ?{where} ORDER BY m.rid LIMIT ?",
            params,
        ).fetchall()

    def put(self, rows: Sequence[tuple[int, str]], vectors: Sequence[bytes], model: str) -> None:
        slot = self.slot
        value = "vec_int8(?)" if slot.int8 else "?"
        rids = [rid for rid, _ in rows]
        with database.transaction(self.conn):
            marks = ",".join("?" * len(rids))
            old = self.conn.execute(f"SELECT rid FROM {slot.map_table} WHERE rid IN ({marks})", rids).fetchall()
            for (rid,) in old:  # a stale vector (rebuild moved the row): vec0 has no upsert
                self.conn.execute(f"DELETE FROM {slot.vec_table} WHERE rowid = ?", (rid,))
            self.conn.executemany(
                f"INSERT INTO {slot.vec_table} (rowid, embedding) VALUES (?, {value})",
                [(rid, blob) for rid, blob in zip(rids, vectors)],
            )
            self.conn.executemany(
                f"INSERT OR REPLACE INTO {slot.map_table} (rid, memory_id, model) VALUES (?, ?, ?)",
                [(rid, memory_id, model) for rid, memory_id in rows],
            )

    def load(self, model: str) -> list[tuple[int, bytes]]:
        slot = self.slot
        return self.conn.execute(
            f"SELECT v.rowid, v.embedding FROM {slot.vec_table} v JOIN {slot.map_table} r ON r.rid = v.rowid"
            " JOIN memories m ON m.rid = r.rid AND m.id = r.memory_id WHERE r.model = ?",
            (model,),
        ).fetchall()

    def drop_dangling(self) -> None:
        slot = self.slot
        gone = [
            r[0]
            for r in self.conn.execute(
                f"SELECT rid FROM {slot.map_table} WHERE rid NOT IN (SELECT rid FROM memories)"
            ).fetchall()
        ]
        if not gone:
            return
        with database.transaction(self.conn):
            for rid in gone:
                self.conn.execute(f"DELETE FROM {slot.vec_table} WHERE rowid = ?", (rid,))
                self.conn.execute(f"DELETE FROM {slot.map_table} WHERE rid = ?", (rid,))


def _sqlite_vectors_are_a_vector_store(vectors: SqliteVectors) -> VectorStore:
    """Never called: mypy checks here that ``SqliteVectors`` implements ``VectorStore``."""
    return vectors
