"""The dense index: memory vectors in a sqlite-vec table, kept in step with the memories.

Three pieces, and why each is shaped so:

* ``memory_vectors``, a sqlite-vec ``vec0`` table in the project database, holds one
  float32 vector per memory row (``rowid`` = ``memories.rid``). It cannot be created by a
  migration: a connection without the extension cannot even open a ``vec0`` table, and a
  Python whose ``sqlite3`` cannot load extensions must still read and write memory. So it
  is created lazily, the first time vectors are written.
* ``memory_vector_rows``, a plain table, says which memory row has a vector for which model
  (and under which memory id, since ``rebuild`` may hand a row id to another memory). It
  is created with the vec table. Anything a vec-less writer added (another process, a
  build without extensions, an import, a rebuild) is simply a row with no entry here, and
  the next process that has the extension backfills it; a model change re-embeds
  everything. Retiring or superseding changes no vector: status is a filter at query time.
* An in-process copy for search. sqlite-vec 0.1's ``vec0`` scans every vector for a k-NN
  query (measured: ~50 ms at 100,000 256-d vectors) and is slower still at fetching rows
  by id, while a notebook prompt must be answered in a few milliseconds. So search runs
  over a copy loaded once, in the background, from the vec table: float16 rows (2 bytes a
  dimension) plus their sign bits, scanned by Hamming distance first on large projects and
  rescored exactly on the few hundred nearest. Vectors are written to SQLite once and never
  recomputed on the next start.

Where each tier's tables are, int8 quantization and the copy's rows (float16, sign bits,
Hamming preselection) are ``slots``'s; this module keeps them in step and searches them.

Writing vectors never happens inside ``remember``: a person's record stays as fast as
the log allows. New rows are embedded at the next search (a bounded batch inline, the rest
by a background thread), and until then the lexical leg finds them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..storage import database
from . import arrays
from .slots import SLOTS, STATIC, Copy, has_table, nearest_rows, quantize, sign_bits
from ..models import RETIRED, SUPERSEDED

if TYPE_CHECKING:
    np = arrays.np()

    from .embed import BackgroundEncoder, Embedder

log = logging.getLogger(__name__)


# Rows embedded per transaction by the backfill (encode outside the lock, write inside).
BATCH = 512
# New rows a search embeds itself before answering; more are left to the background.
INLINE_BUDGET = 64
# Up to this many rows, dense search scores every row exactly; above, it scores exactly
# only the rows nearest by Hamming distance on sign bits (RESCORE of them).
EXACT_MAX = 4096
RESCORE = 768


def embed_text(statement: str, topic: str | None) -> str:
    return f"{topic}: {statement}" if topic else statement


class DenseIndex:
    """One project's vectors: the tables, the backfill, and the copy that search reads.

    ``ready`` is true once the copy holds every row that existed when the backfill began;
    rows recorded later are embedded at the next search (``INLINE_BUDGET`` at a time) or
    by the backfill thread. Everything here is safe to call from several threads.
    """

    def __init__(self, conn: database.Connection, tier: str = STATIC):
        self.conn = conn
        self.slot = SLOTS[tier]
        self._lock = threading.RLock()  # the copy: held briefly, by searches too
        self._sync_lock = threading.Lock()  # embedding and writing: searches never wait on it
        self._copy: Copy | None = None
        self._row: dict[int, int] = {}
        self._model: str | None = None
        self._synced_rid = 0  # every row up to this rid has been looked at
        self._inactive_rev = -1
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

    def _ensure_tables(self, embedder: Embedder) -> None:
        """Create the tables for ``embedder``; a different model, size or format starts them afresh."""
        conn, slot = self.conn, self.slot
        model = database.get_meta(conn, slot.meta_model)
        dims = database.get_meta(conn, slot.meta_dims)
        fmt = database.get_meta(conn, slot.meta_format) or "float"
        same = model == embedder.name and dims == str(embedder.dimensions) and fmt == slot.format
        with database.transaction(conn):
            if not same or not has_table(conn, slot.vec_table):
                conn.execute(f"DROP TABLE IF EXISTS {slot.vec_table}")
                conn.execute(f"DROP TABLE IF EXISTS {slot.map_table}")
                conn.execute(
                    f"CREATE VIRTUAL TABLE {slot.vec_table} USING vec0("
                    f"embedding {slot.format}[{int(embedder.dimensions)}] distance_metric=cosine)"
                )
                database.set_meta(conn, slot.meta_model, embedder.name)
                database.set_meta(conn, slot.meta_dims, str(embedder.dimensions))
                database.set_meta(conn, slot.meta_format, slot.format)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {slot.map_table} ("
                "rid INTEGER PRIMARY KEY, memory_id TEXT NOT NULL, model TEXT NOT NULL)"
            )

    def _pending(self, model: str, after: int, limit: int, *, only_missing: bool) -> list[tuple[Any, ...]]:
        """Rows after ``after``: (rid, id, statement, topic, stored), stored = has a current vector."""
        stored = "(v.rid IS NOT NULL AND v.memory_id = m.id AND v.model = ?)"
        where = f" AND NOT {stored}" if only_missing else ""
        params: tuple[Any, ...] = (model, after, model, limit) if only_missing else (model, after, limit)
        return self.conn.execute(
            f"SELECT m.rid, m.id, m.statement, m.topic, {stored} FROM memories m LEFT JOIN {self.slot.map_table} v"
            f" ON v.rid = m.rid WHERE m.rid > ?{where} ORDER BY m.rid LIMIT ?",
            params,
        ).fetchall()

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
        value = "vec_int8(?)" if slot.int8 else "?"
        store_idx = [i for i, r in enumerate(rows) if not r[4]]  # another process stored the rest
        if store_idx:
            rids = [rows[i][0] for i in store_idx]
            with database.transaction(self.conn):
                marks = ",".join("?" * len(rids))
                old = self.conn.execute(f"SELECT rid FROM {slot.map_table} WHERE rid IN ({marks})", rids).fetchall()
                for (rid,) in old:  # a stale vector (rebuild moved the row): vec0 has no upsert
                    self.conn.execute(f"DELETE FROM {slot.vec_table} WHERE rowid = ?", (rid,))
                self.conn.executemany(
                    f"INSERT INTO {slot.vec_table} (rowid, embedding) VALUES (?, {value})",
                    [(rows[i][0], stored_form[i].tobytes()) for i in store_idx],
                )
                self.conn.executemany(
                    f"INSERT OR REPLACE INTO {slot.map_table} (rid, memory_id, model) VALUES (?, ?, ?)",
                    [(rows[i][0], rows[i][1], embedder.name) for i in store_idx],
                )
        self._add([r[0] for r in rows], stored_form)
        return len(store_idx)

    def _drop_dangling(self) -> None:
        """Forget vectors of rows that left ``memories`` (gc)."""
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
                self._ensure_tables(embedder)
                self._load(embedder)
                full = True
            top = self.conn.execute("SELECT coalesce(max(rid), 0) FROM memories").fetchone()[0]
            after = 0 if full else self._synced_rid
            done = 0
            if limit is None:  # a backfill: count what it has to do, for status
                todo = self.conn.execute("SELECT count(*) FROM memories WHERE rid > ?", (after,)).fetchone()[0]
                self.progress = (0, max(0, todo - (self.size if full else 0)))
            while True:
                take = BATCH if limit is None else min(BATCH, limit - done)
                if take <= 0:
                    break
                rows = self._pending(embedder.name, after, take, only_missing=full)
                if not rows:
                    after = max(after, top)
                    break
                done += self._write(embedder, rows)
                after = rows[-1][0]
                if limit is None:
                    self.progress = (min(done, self.progress[1]), self.progress[1])
            self._synced_rid = max(self._synced_rid, after)
            if full:
                self._drop_dangling()
            return done
        finally:
            if limit is None:
                self.progress = (0, 0)
            self._sync_lock.release()

    def behind(self) -> bool:
        """True when rows were added since the last sync (one indexed lookup)."""
        row = self.conn.execute("SELECT 1 FROM memories WHERE rid > ? LIMIT 1", (self._synced_rid,)).fetchone()
        return row is not None

    # -- the in-process copy --------------------------------------------------

    def _load(self, embedder: Embedder) -> None:
        """Read every stored vector of this model into the copy."""
        np = arrays.np()

        dims, slot = embedder.dimensions, self.slot
        rows = self.conn.execute(
            f"SELECT v.rowid, v.embedding FROM {slot.vec_table} v JOIN {slot.map_table} r ON r.rid = v.rowid"
            " JOIN memories m ON m.rid = r.rid AND m.id = r.memory_id WHERE r.model = ?",
            (embedder.name,),
        ).fetchall()
        copy = Copy.empty(dims, max(1024, len(rows) * 5 // 4), int8=slot.int8)
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
                grown = Copy.empty(copy.dims, cap, int8=copy.vecs.dtype == np.int8)
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
            # IN, not "!= active": the status index answers it without scanning every row.
            closed = self.conn.execute("SELECT rid FROM memories WHERE status IN (?, ?)", (SUPERSEDED, RETIRED))
            for (rid,) in closed.fetchall():
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
                rows = nearest_rows(distance, self.rescore)
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
            self._thread = threading.Thread(
                target=self._backfill, args=(embedder, full), name="jupymem-vectors", daemon=True
            )
            self._thread.start()

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
        if self.conn.execute("SELECT count(*) FROM memories").fetchone()[0] > max_rows:
            return False
        started = time.perf_counter()
        try:
            self.sync(embedder, full=True, wait=False)
        except Exception as err:  # reported like the background backfill's failures
            self._backfill_error = f"{type(err).__name__}: {err}"
            log.warning("jupymem: embedding memories failed: %s", self._backfill_error)
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
            log.warning("jupymem: embedding memories failed: %s", self._backfill_error)
        release = getattr(embedder, "release", None)  # the transformer's batches leave freed memory
        if release is not None:
            release()

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
