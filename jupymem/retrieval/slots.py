"""Where each tier's vectors are stored and how: the slots, int8 quantization, and the search copy's rows.

Two tiers keep their vectors side by side (``Slot``: the tables and meta keys of one
tier), so that the static model answers while the transformer embeds a project in the
background. The transformer's vectors are stored as int8 (``quantize``). Search reads an
in-process copy (``Copy``): float16 or int8 rows plus their sign bits (``sign_bits``),
scanned by Hamming distance first on large projects (``nearest_rows``) and rescored
exactly. ``vec_route`` says whether a connection can hold vectors at all. ``index`` keeps
the dense index itself (the tables in step with the memories, the backfill, the copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..storage import database
from . import arrays

if TYPE_CHECKING:
    np = arrays.np()

VEC_TABLE = "memory_vectors"
MAP_TABLE = "memory_vector_rows"
META_MODEL = "vector_model"
META_DIMS = "vector_dimensions"
META_FORMAT = "vector_format"


# Two tiers keep their vectors side by side (``Slot``), so that the static model answers
# while the transformer embeds a project in the background, and a project whose
# transformer vectors exist is searched by a one-shot command without re-embedding.
STATIC = "static"


TRANSFORMER = "transformer"


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


def has_table(conn: database.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


@dataclass(frozen=True)
class Slot:
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


def vector_counts(conn: database.Connection, tier: str = STATIC) -> tuple[str | None, int]:
    """(model, rows with a vector for it) as recorded; readable without the extension."""
    slot = SLOTS[tier]
    model = database.get_meta(conn, slot.meta_model)
    if model is None or not has_table(conn, slot.map_table):
        return model, 0
    n = conn.execute(f"SELECT count(*) FROM {slot.map_table} WHERE model = ?", (model,)).fetchone()[0]
    return model, n


def quantize(vectors: np.ndarray) -> np.ndarray:
    """Unit rows as int8, each scaled so that its largest component is 127 (a zero row
    stays zero). Cosine ignores the scale; ``Copy`` keeps each row's inverse norm."""
    np = arrays.np()

    peak = np.abs(vectors).max(axis=1, keepdims=True)
    scaled = np.divide(vectors * 127.0, peak, out=np.zeros_like(vectors), where=peak > 0)
    return np.clip(np.rint(scaled), -127, 127).astype(np.int8)


@dataclass
class Copy:
    """The in-process copy: rows in insertion order, with room to grow."""

    dims: int
    rids: Any  # int64 (capacity,)
    vecs: Any  # float16 or int8 (capacity, dims)
    bits: Any  # uint64 (words, capacity): one contiguous row a word, XORed whole
    inverse: Any  # float32 (capacity,): 1 / the row's norm as stored (int8 rows are not unit)
    size: int = 0

    @classmethod
    def empty(cls, dims: int, capacity: int = 1024, *, int8: bool = False) -> Copy:
        np = arrays.np()

        words = (dims + 63) // 64
        return cls(
            dims,
            np.zeros(capacity, dtype=np.int64),
            np.zeros((capacity, dims), dtype=np.int8 if int8 else np.float16),
            np.zeros((words, capacity), dtype=np.uint64),
            np.ones(capacity, dtype=np.float32),
        )

    def rows_as_float(self, rows: Any) -> Any:
        """Stored rows as unit float32 vectors (as near as their storage keeps them)."""
        np = arrays.np()

        vecs = self.vecs[rows]
        if vecs.dtype == np.int8:
            return vecs.astype(np.float32) * self.inverse[rows][:, None]
        return _as_float32(vecs)


_HALF: Any = None  # every float16 bit pattern's float32 value (256 KB), made on first use


def _as_float32(half: np.ndarray) -> np.ndarray:
    """float16 rows as float32, the same values ``astype`` gives, read from a table:
    numpy converts float16 one element at a time, about twice as slowly."""
    global _HALF
    np = arrays.np()

    if _HALF is None:
        _HALF = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    return np.take(_HALF, half.view(np.uint16))


def nearest_rows(distance: np.ndarray, count: int) -> np.ndarray:
    """Every row at or under the Hamming distance of the ``count``-th nearest: a superset
    of ``argpartition``'s choice (which breaks ties at that distance arbitrarily), found
    from a histogram of the few hundred possible distances, six times sooner than
    ``argpartition`` over 100,000 rows. A crowded last distance falls back to it."""
    np = arrays.np()

    if count >= len(distance):
        return np.arange(len(distance))
    cut = int(np.searchsorted(np.cumsum(np.bincount(distance)), count))
    rows = np.flatnonzero(distance <= cut)
    return rows if len(rows) <= 4 * count else np.argpartition(distance, count)[:count]


def sign_bits(vectors: np.ndarray) -> np.ndarray:
    np = arrays.np()

    words = (vectors.shape[1] + 63) // 64
    packed = np.packbits(vectors > 0, axis=1)
    pad = words * 8 - packed.shape[1]
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)
