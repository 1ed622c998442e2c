"""The dense index: memory vectors in a sqlite-vec table, kept in step with the memories.

Three pieces, and why each is shaped so:

* The stored vectors, one per memory row and model, kept by the store
  (``storage/vectors.py``: sqlite-vec tables in the project database, created the first
  time vectors are written). Anything a vec-less writer added (another process, a build
  without extensions, an import, a rebuild) is simply a row with no vector, and the next
  process that can store them backfills it; a model change re-embeds everything.
  Retiring or superseding changes no vector: status is a filter at query time.
* An in-process copy for search. sqlite-vec 0.1's ``vec0`` scans every vector for a k-NN
  query (measured: ~50 ms at 100,000 256-d vectors) and is slower still at fetching rows
  by id, while a notebook prompt must be answered in a few milliseconds. So search runs
  over a copy loaded once, in the background, from the vec table: float16 rows (2 bytes a
  dimension) plus their sign bits, scanned by Hamming distance first on large projects and
  rescored exactly on the few hundred nearest. Vectors are written to SQLite once and never
  recomputed on the next start.

Writing vectors never happens inside ``remember``: a person's record stays as fast as
the log allows. New rows are embedded at the next search (a bounded batch inline, the rest
by a background thread), and until then the lexical leg finds them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import arrays
from .quitting import exiting
from ..errors import warn
from ..storage.reads import store_for
from ..storage.vectors import (  # noqa: F401  (the tiers and their tables, as retrieval has always named them)
    MAP_TABLE, META_DIMS, META_FORMAT, META_MODEL, SLOTS, STATIC, TRANSFORMER, VEC_TABLE, Slot,
)

if TYPE_CHECKING:
    import numpy as np

    from .embed import BackgroundEncoder, Embedder


# Rows embedded per transaction by the backfill (encode outside the lock, write inside).
BATCH = 512
# New rows a search embeds itself before answering; more are left to the background.
INLINE_BUDGET = 64
# Up to this many rows, dense search scores every row exactly; above, it scores exactly
# only the rows nearest by Hamming distance on sign bits (RESCORE of them).
EXACT_MAX = 4096
RESCORE = 768


def vec_route(conn: Any) -> tuple[bool, str]:
    """Can this project hold vectors? (ok, reason in words fit for ``status``)."""
    return store_for(conn).vector_route()


def embed_text(statement: str, topic: str | None) -> str:
    return f"{topic}: {statement}" if topic else statement


def vector_counts(conn: Any, tier: str = STATIC) -> tuple[str | None, int]:
    """(model, rows with a vector for it) as recorded; readable without the extension."""
    return store_for(conn).vectors(tier).counts()


def quantize(vectors: np.ndarray) -> np.ndarray:
    """Unit rows as int8, each scaled so that its largest component is 127 (a zero row
    stays zero). Cosine ignores the scale; ``_Copy`` keeps each row's inverse norm."""
    np = arrays.np()

    peak = np.abs(vectors).max(axis=1, keepdims=True)
    scaled = np.divide(vectors * 127.0, peak, out=np.zeros_like(vectors), where=peak > 0)
    return np.clip(np.rint(scaled), -127, 127).astype(np.int8)


@dataclass
class _Copy:
    """The in-process copy: rows in insertion order, with room to grow."""

    dims: int
    rids: Any  # int64 (capacity,)
    vecs: Any  # float16 or int8 (capacity, dims)
    bits: Any  # uint64 (words, capacity): one contiguous row a word, XORed whole
    inverse: Any  # float32 (capacity,): 1 / the row's norm as stored (int8 rows are not unit)
    size: int = 0

    @classmethod
    def empty(cls, dims: int, capacity: int = 1024, *, int8: bool = False) -> _Copy:
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


def _nearest_rows(distance: np.ndarray, count: int) -> np.ndarray:
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


class DenseIndex:
    """One project's vectors: the tables, the backfill, and the copy that search reads.

    ``ready`` is true once the copy holds every row that existed when the backfill began;
    rows recorded later are embedded at the next search (``INLINE_BUDGET`` at a time) or
    by the backfill thread. Everything here is safe to call from several threads.
    """

    def __init__(self, store: Any, tier: str = STATIC):
        self.store = store_for(store)  # a ``reads.Store``, or a connection to wrap in one
        self.vectors = self.store.vectors(tier)
        self.slot = self.vectors.slot
        self._lock = threading.RLock()  # the copy: held briefly, by searches too
        self._sync_lock = threading.Lock()  # embedding and writing: searches never wait on it
        self._copy: _Copy | None = None
        self._row: dict[int, int] = {}
        self._model: str | None = None
        self._synced_rid = 0  # every row up to this rid has been looked at
        self._inactive_rev = -1
        self._below_rev = -1  # the revision ``catch_up_below`` last found nothing missing at
        self._inactive: Any = None  # bool mask over copy rows
        self._thread: threading.Thread | None = None
        self._backfill_error: str | None = None
        self.ready = False
        # The backfill's progress, for status: rows embedded of rows to embed (0, 0 when idle).
        self.progress: tuple[int, int] = (0, 0)
        self.last_backfill_seconds: float | None = None
        # Exact scoring up to this many rows; above, only the `rescore` Hamming-nearest
        # (settable, so a test can take the large-project path with a few rows).
        self.exact_max = EXACT_MAX
        self.rescore = RESCORE

    # -- writing --------------------------------------------------------------

    def _write(self, embedder: Embedder, rows: Sequence[tuple[Any, ...]]) -> int:
        """Embed ``rows`` into the copy; store the vectors of those that have none. Returns stored."""
        np = arrays.np()

        rows = [r for r in rows if not (r[4] and r[0] in self._row)]
        if not rows:
            return 0
        vectors = embedder.embed_batch([embed_text(r[2], r[3]) for r in rows])
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        slot = self.slot
        stored_form = quantize(vectors) if slot.int8 else vectors
        store_idx = [i for i, r in enumerate(rows) if not r[4]]  # another process stored the rest
        if store_idx:
            self.vectors.put(
                [(rows[i][0], rows[i][1]) for i in store_idx], [stored_form[i].tobytes() for i in store_idx],
                embedder.name,
            )
        self._add([r[0] for r in rows], stored_form)
        return len(store_idx)

    def sync(self, embedder: Embedder, *, limit: int | None = None, full: bool = False, wait: bool = True) -> int:
        """Embed rows that have no vector for ``embedder`` yet; returns how many.

        ``full`` looks at every row (after a rebuild or import, or at first load);
        otherwise only rows added since the last sync. ``limit`` bounds the work.
        With ``wait=False`` (a search), nothing happens while another sync runs.
        """
        if not self._sync_lock.acquire(blocking=wait):
            return 0
        try:
            if self._model != embedder.name:
                self.vectors.ensure(embedder.name, embedder.dimensions)
                self._load(embedder)
                full = True
            top = self.store.top_rid()
            after = 0 if full else self._synced_rid
            done = 0
            if limit is None:  # a backfill: count what it has to do, for status
                todo = self.store.count_after(after)
                self.progress = (0, max(0, todo - (self.size if full else 0)))
            while True:
                take = BATCH if limit is None else min(BATCH, limit - done)
                if take <= 0 or exiting():  # the process is exiting: the rest is done next time
                    break
                rows = self.vectors.pending(embedder.name, after, take, only_missing=full)
                if not rows:
                    after = max(after, top)
                    break
                done += self._write(embedder, rows)
                after = rows[-1][0]
                if limit is None:
                    self.progress = (min(done, self.progress[1]), self.progress[1])
            self._synced_rid = max(self._synced_rid, after)
            if full and not exiting():
                self.vectors.drop_dangling()
            return done
        finally:
            if limit is None:
                self.progress = (0, 0)
            self._sync_lock.release()

    def behind(self) -> bool:
        """True when rows were added since the last sync (one indexed lookup)."""
        return self.store.has_after(self._synced_rid)

    def catch_up_below(self, embedder: Embedder, revision: int) -> int:
        """Add rows that appeared *below* the last synced row id; returns how many. Once a
        revision, two counts. On the team engine a row can: a teammate's private memory
        becomes visible when they record it again where it is shared (row-level security
        hid it until then), and ``behind`` only looks above. Never waits for a sync."""
        if revision == self._below_rev or self._copy is None or self._model != embedder.name:
            return 0
        if not self._sync_lock.acquire(blocking=False):
            return 0  # a sync runs: the next search looks again
        try:
            synced = self._synced_rid
            if self.store.count() - self.store.count_after(synced) <= self.size:
                self._below_rev = revision  # the usual case (on SQLite, gc leaves the copy larger)
                return 0
            missing = [rid for rid in self.store.rids() if rid <= synced and rid not in self._row][:INLINE_BUDGET]
            rows = [row for rid in missing for row in self.vectors.pending(embedder.name, rid - 1, 1, only_missing=False)]
            return self._write(embedder, rows)  # more than a budget's worth: the next search goes on
        finally:
            self._sync_lock.release()

    # -- the in-process copy --------------------------------------------------

    def _load(self, embedder: Embedder) -> None:
        """Read every stored vector of this model into the copy."""
        np = arrays.np()

        dims, slot = embedder.dimensions, self.slot
        rows = self.vectors.load(embedder.name)
        copy = _Copy.empty(dims, max(1024, len(rows) * 5 // 4), int8=slot.int8)
        with self._lock:
            self._copy, self._row, self._model = copy, {}, embedder.name
            self._inactive_rev = -1
        if rows:
            rids = [r[0] for r in rows]
            dtype = np.int8 if slot.int8 else np.float32
            vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=dtype).reshape(len(rows), dims)
            self._add(rids, vecs)
        self._synced_rid = 0

    def _add(self, rids: Sequence[int], vectors: np.ndarray) -> None:
        np = arrays.np()

        with self._lock:
            copy = self._copy
            assert copy is not None
            new = [i for i, rid in enumerate(rids) if rid not in self._row]
            need = copy.size + len(new)
            if need > len(copy.rids):
                cap = max(need, 2 * len(copy.rids))
                grown = _Copy.empty(copy.dims, cap, int8=copy.vecs.dtype == np.int8)
                grown.rids[: copy.size] = copy.rids[: copy.size]
                grown.vecs[: copy.size] = copy.vecs[: copy.size]
                grown.bits[:, : copy.size] = copy.bits[:, : copy.size]
                grown.inverse[: copy.size] = copy.inverse[: copy.size]
                grown.size = copy.size
                self._copy = copy = grown
            bits = sign_bits(vectors)
            int8 = copy.vecs.dtype == np.int8
            if int8:
                norms = np.linalg.norm(vectors.astype(np.float32), axis=1)
                inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
            for i, rid in enumerate(rids):
                row = self._row.get(rid)
                if row is None:
                    row = copy.size
                    copy.size += 1
                    self._row[rid] = row
                    copy.rids[row] = rid
                copy.vecs[row] = vectors[i] if int8 else vectors[i].astype(np.float16)
                copy.bits[:, row] = bits[i]
                if int8:
                    copy.inverse[row] = inverse[i]
            self._inactive_rev = -1

    def _inactive_mask(self, revision: int) -> Any:
        np = arrays.np()

        copy = self._copy
        assert copy is not None
        if self._inactive_rev != revision or self._inactive is None or len(self._inactive) < copy.size:
            mask = np.zeros(copy.size, dtype=bool)
            for rid in self.store.closed_rids():
                row = self._row.get(rid)
                if row is not None and row < copy.size:
                    mask[row] = True
            self._inactive, self._inactive_rev = mask, revision
        return self._inactive

    # -- searching ------------------------------------------------------------

    def nearest(self, query: np.ndarray, k: int, *, revision: int, include_inactive: bool) -> list[tuple[int, float]]:
        """The ``k`` rows nearest ``query`` (a unit vector): [(rid, cosine)], best first."""
        np = arrays.np()

        with self._lock:
            copy = self._copy
            if copy is None or copy.size == 0:
                return []
            n = copy.size
            q = np.asarray(query, dtype=np.float32).reshape(-1)
            if n <= self.exact_max:
                rows = np.arange(n)
            else:
                qbits = sign_bits(q[None, :])[0]
                # A 64-bit word of every row at a time, summed in uint16 (no wrap-around at
                # 256 differing bits): three times sooner than XORing (rows, words) against
                # a broadcast query, and ten than sum(axis=1).
                distance = np.bitwise_count(copy.bits[0, :n] ^ qbits[0]).astype(np.uint16)
                for j in range(1, len(qbits)):
                    distance += np.bitwise_count(copy.bits[j, :n] ^ qbits[j])
                rows = _nearest_rows(distance, self.rescore)
            sims = copy.rows_as_float(rows) @ q
            if not include_inactive:
                sims = np.where(self._inactive_mask(revision)[rows], -2.0, sims)
            take = min(k, len(rows))
            top = np.argpartition(-sims, take - 1)[:take]
            top = top[np.argsort(-sims[top], kind="stable")]
            return [(int(copy.rids[rows[i]]), float(sims[i])) for i in top if sims[i] > -2.0]

    def cosines(self, query: np.ndarray, rids: Sequence[int]) -> dict[int, float]:
        np = arrays.np()

        with self._lock:
            copy = self._copy
            if copy is None:
                return {}
            known = [(rid, self._row[rid]) for rid in rids if rid in self._row]
            if not known:
                return {}
            rows = np.array([r for _, r in known])
            sims = copy.rows_as_float(rows) @ np.asarray(query, dtype=np.float32).reshape(-1)
            return {rid: float(s) for (rid, _), s in zip(known, sims)}

    @property
    def size(self) -> int:
        copy = self._copy
        return copy.size if copy is not None else 0

    # -- background -----------------------------------------------------------

    def start_backfill(self, embedder: Embedder, *, full: bool = False) -> None:
        """Load the copy and embed every missing row in a daemon thread (once at a time)."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            from .quitting import started

            self._thread = started(self._backfill, args=(embedder, full), name="jupymem-vectors")

    def fill_small(self, embedder: Embedder, max_rows: int) -> bool:
        """Embed a project of at most ``max_rows`` memories inline and become ready (a few
        milliseconds with a static model), so its next search has the dense leg instead
        of waiting for a thread. False, doing nothing, for a larger project, while a
        backfill runs, or when embedding failed (``error`` says why)."""
        if self.ready:
            return True
        thread = self._thread
        if thread is not None and thread.is_alive():
            return False
        if self.store.count() > max_rows:
            return False
        started = time.perf_counter()
        try:
            self.sync(embedder, full=True, wait=False)
        except Exception as err:  # reported like the background backfill's failures
            self._backfill_error = f"{type(err).__name__}: {err}"
            warn("jupymem: embedding memories failed: %s", self._backfill_error)
            return False
        if self._model != embedder.name or self.behind():  # another sync held the lock
            return False
        self._backfill_error = None
        self.ready = True
        self.last_backfill_seconds = time.perf_counter() - started
        return True

    def _backfill(self, embedder: Embedder, full: bool) -> None:
        try:
            self.sync(embedder, full=full or not self.ready)
            self._backfill_error = None
            self.ready = True
        except Exception as err:  # a background thread reports instead of dying silently
            self._backfill_error = f"{type(err).__name__}: {err}"
            warn("jupymem: embedding memories failed: %s", self._backfill_error)
        # Batches leave freed memory that glibc keeps (the transformer's most, the static
        # tier's too: 30 MB of a kernel's growth): hand it back once the backfill is done.
        release = getattr(embedder, "release", None)
        if release is not None:
            release()
        else:
            from .transformer import release_memory

            release_memory()

    def wait(self, timeout: float | None = None) -> bool:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.ready

    @property
    def error(self) -> str | None:
        return self._backfill_error

    def reset(self) -> None:
        """Forget the copy (after ``rebuild``): the next sync looks at every row again."""
        with self._sync_lock, self._lock:
            self._copy, self._row, self._model = None, {}, None
            self._synced_rid = 0
            self._below_rev = -1
            self.ready = False


# -- one encoder per process and model ------------------------------------------

_encoders: dict[str | None, BackgroundEncoder] = {}
_encoders_lock = threading.Lock()


def _key(spec: str | None) -> str | None:
    """The bundled static model has one key however it is named (unset, "", "static")."""
    value = spec.strip() if spec else ""
    return None if not value or value.lower() == "static" else value


def register_encoder(spec: str | None, encoder: BackgroundEncoder) -> None:
    """Make ``encoder`` the process's encoder for the ``JUPYMEM_ENCODER`` value ``spec``
    (e.g. a ``BackgroundEncoder(loader=...)`` with a small embedder, in tests)."""
    with _encoders_lock:
        _encoders[_key(spec)] = encoder


def forget_encoder(spec: str | None) -> None:
    """Drop the encoder registered or made for ``spec``; the next use makes a new one."""
    with _encoders_lock:
        _encoders.pop(_key(spec), None)


def shared_encoder(spec: str | None) -> BackgroundEncoder:
    """The process's ``BackgroundEncoder`` for a ``JUPYMEM_ENCODER`` value (not started)."""
    from .embed import BackgroundEncoder

    key = _key(spec)
    with _encoders_lock:
        enc = _encoders.get(key)
        if enc is None:
            enc = _encoders[key] = BackgroundEncoder(key)
        return enc
