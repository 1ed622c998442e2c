"""The lexical leg's BM25 over an in-memory index: FTS5's exact ranking, an order of magnitude sooner.

Why it exists: FTS5's ``bm25()`` spends about a microsecond on every row that any query
term occurs in (it decodes the row's position lists and reads its size), after walking
each term's whole doclist to count its documents. Over 100,000 memories a question's
common words reach tens of thousands of rows, ~20 ms a question. Dropping those words made
search fast and worse (issue 8); here nothing is dropped. The same BM25 is evaluated over
an inverted index held in numpy arrays, and each term's per-memory contribution (its
impact) is computed once per state of memory and reused, so a query costs one
vectorized add per term plus a partial sort of the few memories that can reach the top.

It is FTS5's ranking, not an imitation of it: the same tokens (``tokenize.py`` asks
unicode61), the same column weights, k1 = 1.2 and b = 0.75, the same IDF,
``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6 with ``n`` the memories a term or a
prefix matches, the same average length, and the same operations in the same order, so
the scores are equal to the last bit (``tests/test_postings.py`` compares them with
``bm25()`` on generated corpora). The one exception: when a prefix's words also occur in
a memory's topic or original, their 0.4 and 0.8 weights may be summed in another order,
a difference near 1e-16.

The price is memory: about 8 to 12 bytes a posting (one per distinct word of a memory)
plus the sorted words, 36 MB for SciFact's 5,183 abstracts plus 100,000 notes (about
four times that while a build runs), up to ``IMPACT_CACHE`` cached impacts; and numpy,
imported on a project's first search.

Kept in step by row id, as the typo vocabulary is: a memory's text never changes, so rows
past the last one seen are tokenized into a small tail, and a full build (which reads
every statement: a few seconds at 100,000 memories) runs in a background thread when the
tail grows large, when rows left (``gc``) or on first use of a large project. Nothing is
built for a process's first search (a command-line search would pay for numpy and the
build and never use them); until an index is ready, FTS5 answers with the same ranking,
only slower. ``refresh`` says which.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import arrays
from ..errors import warn
from .lexical import Term
from .tokenize import tokens
from ..storage.reads import MemoryReader, store_for


# bm25()'s constants (fixed inside SQLite) and the column weights every search passes it:
# statement, topic, original.
K1 = 1.2
B = 0.75
COLUMN_WEIGHTS = (1.0, 0.4, 0.8)
# Rows read and tokenized inside a search; more are read by a background thread.
INLINE_ROWS = 2000
# Searches answered by FTS5 before an index is built: a process that searches once (the
# command line) gains nothing from one, and would pay for numpy and the build.
AFTER_SEARCHES = 1
# Impacts kept for reuse, in postings (each 12 bytes); a prompt's words recur turn to turn.
IMPACT_CACHE = 2_000_000


@dataclass
class _Base:
    """A compressed inverted index over rows ``0 .. rows-1``: each term's rows ascending."""

    terms: list[str]  # sorted
    offsets: Any  # int64 (len(terms) + 1): term i's postings are [offsets[i], offsets[i+1])
    docs: Any  # int32 row numbers
    tf: Any  # weighted term frequencies, summed as bm25() sums them (float32 when all are counts)
    rows: int = 0

    def _range(self, term: Term) -> tuple[int, int]:
        """The indexes in ``terms`` that ``term`` matches (a prefix: every word it starts)."""
        lo = bisect.bisect_left(self.terms, term.key)
        if term.prefix:
            return lo, bisect.bisect_left(self.terms, term.key + "\U0010ffff", lo)
        return lo, (lo + 1 if lo < len(self.terms) and self.terms[lo] == term.key else lo)

    def span(self, term: Term) -> tuple[int, int]:
        """Where ``term``'s postings lie: the words of a prefix are neighbours, so one slice."""
        lo, hi = self._range(term)
        return int(self.offsets[lo]), int(self.offsets[hi])

    def words(self, term: Term) -> int:
        lo, hi = self._range(term)
        return hi - lo


@dataclass
class _State:
    """One consistent view: the base, the rows added since (the tail), and the lengths."""

    base: _Base
    rids: Any  # int64, row -> memories.rid (ascending)
    lengths: Any  # float64, row -> tokens in the row (every column)
    n: int
    total: int  # tokens in all rows
    top: int  # the largest rid seen
    tail: dict[str, tuple[list[int], list[float]]] = field(default_factory=dict)
    tail_terms: list[str] = field(default_factory=list)  # sorted, for prefixes
    version: int = 0
    base_df: dict[str, int] | None = None  # the base's memories per word, made on first need


def _chunks(store: MemoryReader, top: int, size: int = 20000) -> Iterable[tuple[Any, ...]]:
    """Every row up to ``top``, read a chunk at a time (a writer is never held up for long,
    and no more than a chunk of statements is held at once)."""
    last = 0
    while True:
        chunk = store.texts(last, top, size)
        if not chunk:
            return
        yield from chunk
        last = chunk[-1][0]


def build(rows: Iterable[Sequence[Any]]) -> _State:
    """An index over ``rows`` = (rid, statement, topic, original), in ascending rid."""
    np = arrays.np()
    from array import array
    from collections import defaultdict

    ids: defaultdict[str, int] = defaultdict()
    ids.default_factory = ids.__len__  # a new term gets the next number
    lookup = ids.__getitem__
    chunks: list[Any] = []  # term numbers of every token, in text order
    pending: list[str] = []
    counts = array("q")  # tokens per row and column
    rids = array("q")
    for rid, *cols in rows:
        rids.append(rid)
        for text in cols:
            toks = tokens(text) if text else ()
            pending.extend(toks)
            counts.append(len(toks))
        if len(pending) > 500_000:
            chunks.append(np.fromiter(map(lookup, pending), dtype=np.int32, count=len(pending)))
            pending = []
    chunks.append(np.fromiter(map(lookup, pending), dtype=np.int32, count=len(pending)))
    n = len(rids)
    per_col = np.frombuffer(counts, dtype=np.int64).reshape(n, len(COLUMN_WEIGHTS)) if n else np.zeros((0, 3), np.int64)
    lengths = per_col.sum(axis=1)
    terms = sorted(ids)
    rank = np.empty(len(terms), dtype=np.int64)
    rank[np.fromiter((ids[t] for t in terms), dtype=np.int64, count=len(terms))] = np.arange(len(terms))
    # One sort by (term, row) groups each term's postings, rows ascending; a stable sort keeps
    # a row's instances in text order, so their weights add up in the order bm25() adds them.
    width = max(n, 1)
    key = rank[np.concatenate(chunks)]
    del chunks, rank
    key *= width
    key += np.repeat(np.arange(n, dtype=np.int32), lengths)
    order = np.argsort(key, kind="stable")
    key = key[order]
    column = np.repeat(np.tile(np.arange(len(COLUMN_WEIGHTS), dtype=np.int8), n), per_col.ravel())[order]
    del order
    starts = _distinct(key) if len(key) else np.zeros(0, dtype=np.int64)
    if column.any():  # topic or original words weigh 0.4 and 0.8: exact sums need float64
        tf = np.add.reduceat(np.asarray(COLUMN_WEIGHTS)[column], starts) if len(key) else np.zeros(0)
    else:  # every weight is 1.0: counts, exact in float32 at half the memory
        tf = np.diff(np.append(starts, len(key))).astype(np.float32)
    key = key[starts]
    docs = (key % width).astype(np.int32)
    offsets = np.searchsorted(key // width, np.arange(len(terms) + 1)).astype(np.int64)
    base = _Base(terms, offsets, docs, tf, n)
    lens = lengths.astype(np.float64)
    return _State(base, np.frombuffer(rids, dtype=np.int64).copy(), lens, n, int(lengths.sum()), rids[-1] if n else 0)


def _distinct(sorted_rows: Any) -> Any:
    """Where each run of equal values starts (``np.unique`` without its cost)."""
    np = arrays.np()

    return np.flatnonzero(np.concatenate(([True], sorted_rows[1:] != sorted_rows[:-1])))


class Postings:
    """One project's in-memory BM25 index; see the module docstring. Thread-safe."""

    def __init__(self, inline_rows: int = INLINE_ROWS, after_searches: int = AFTER_SEARCHES) -> None:
        self.inline_rows = inline_rows
        self.after_searches = after_searches
        self._unindexed = 0  # searches answered without an index so far
        self._lock = threading.RLock()
        self._state: _State | None = None
        self._builder: threading.Thread | None = None
        self._error: str | None = None
        self._failed_top = -1
        self._kd: tuple[int, Any] | None = None  # (version, k1 * (1 - b + b * D / avgdl))
        self._impacts: dict[tuple[str, bool], tuple[Any, Any]] = {}
        self._impact_version = -1
        self._cached = 0

    # -- keeping in step -------------------------------------------------------

    def refresh(self, store: Any, n_docs: int, *, force: bool = False) -> bool:
        """Bring the index up to date with memory (``n_docs`` rows); True when it answers now.
        ``store``: a ``reads.MemoryReader`` (or a connection to wrap in one).

        The first ``after_searches`` calls build nothing (FTS5 answers them) unless ``force``.
        """
        store = store_for(store)
        with self._lock:
            state = self._state
            top = store.top_rid()
            if state is not None and state.n == n_docs and state.top == top:
                return True
            if state is not None and top > state.top:  # rows were added
                new = store.texts(state.top, None, self.inline_rows + 1)
                if len(new) <= self.inline_rows and state.n + len(new) == n_docs:
                    self._append(state, new)
                    if state.n - state.base.rows > max(self.inline_rows, state.n // 20):
                        self._start_build(store)  # fold the tail into a new base; this one answers meanwhile
                    return True
            if state is None and not force and self._unindexed < self.after_searches:
                self._unindexed += 1
                return False
            # First use, rows that left (gc), or more new rows than a search should read.
            self._state = None  # stale: FTS5 answers until a fresh index is in
            if n_docs <= self.inline_rows and not self._building():
                self._install(build(store.texts(0, None)))
                return True
            self._start_build(store)
            return False

    def _building(self) -> bool:
        return self._builder is not None and self._builder.is_alive()

    def state(self) -> str:
        """For people: "ready" (it answers), "building" (FTS5 answers meanwhile), "failed: ..."
        or "not built" (FTS5 answers the first searches of a process; it is built after them)."""
        if self._state is not None:
            return "ready"
        if self._building():
            return "building"
        return f"failed: {self._error}" if self._error else "not built"

    def _start_build(self, store: MemoryReader) -> None:
        if self._building():
            return
        top = store.top_rid()
        if self._error is not None and top == self._failed_top:
            return  # it failed on this very memory; try again once memory changes, not every search
        self._builder = threading.Thread(target=self._build_logged, args=(store, top), name="jupymem-postings", daemon=True)
        self._builder.start()

    def _build_logged(self, store: MemoryReader, top: int) -> None:
        try:
            state = build(_chunks(store, top))
            with self._lock:
                self._install(state)
            self._error = None
        except Exception as err:  # a background thread reports instead of dying silently
            self._error, self._failed_top = f"{type(err).__name__}: {err}", top
            # SQLite's FTS5 answers meanwhile; an engine without BM25 of its own (the team
            # engine) has nothing else, and its searches say why themselves.
            meanwhile = "FTS5 answers meanwhile" if getattr(store, "native_bm25", True) else "searches wait for it"
            warn("jupymem: building the search index failed (%s): %s", meanwhile, self._error)

    def _install(self, state: _State) -> None:
        old = self._state
        state.version = (old.version + 1) if old is not None else 0
        self._state = state
        self._kd = None
        self._impacts.clear()
        self._cached = 0

    def _append(self, state: _State, rows: Sequence[Sequence[Any]]) -> None:
        """Add rows past ``state.top`` to the tail."""
        np = arrays.np()

        if not rows:
            return
        need = state.n + len(rows)
        if need > len(state.rids):
            cap = max(need, 2 * len(state.rids), 1024)
            state.rids = np.concatenate([state.rids[: state.n], np.zeros(cap - state.n, dtype=np.int64)])
            state.lengths = np.concatenate([state.lengths[: state.n], np.zeros(cap - state.n)])
        for rid, *cols in rows:
            row = state.n
            counts: dict[str, float] = {}
            length = 0
            for weight, text in zip(COLUMN_WEIGHTS, cols):
                if not text:
                    continue
                toks = tokens(text)
                length += len(toks)
                for t in toks:
                    counts[t] = counts.get(t, 0.0) + weight
            for t, f in counts.items():
                entry = state.tail.get(t)
                if entry is None:
                    entry = state.tail[t] = ([], [])
                    bisect.insort(state.tail_terms, t)
                entry[0].append(row)
                entry[1].append(f)
            state.rids[row] = rid
            state.lengths[row] = length
            state.n += 1
            state.total += length
            state.top = rid
        state.version += 1

    def wait(self, timeout: float | None = None) -> None:
        builder = self._builder
        if builder is not None:
            builder.join(timeout)

    @property
    def error(self) -> str | None:
        return self._error

    # -- answering ------------------------------------------------------------

    def frequencies(self, terms: Sequence[Term]) -> dict[str, int]:
        """Memories holding each term (a prefix term: some word with that prefix), exactly."""
        with self._lock:
            state = self._state
            if state is None:
                return {}
            return {t.key: len(self._impacts_of(state, t)[0]) for t in terms}

    def word_frequencies(self, words: Iterable[str]) -> dict[str, int]:
        """Memories holding each word (an exact token), for weighing a memory's own words
        when judging it (``verdict.judge``); a word no memory holds is left out. Read off
        the postings' offsets (a dict made once per build, a few MB): no impact is computed."""
        with self._lock:
            state = self._state
            if state is None:
                return {}
            if state.base_df is None:
                base = state.base
                state.base_df = dict(zip(base.terms, (base.offsets[1:] - base.offsets[:-1]).tolist()))
            base_df, tail = state.base_df, state.tail
            out: dict[str, int] = {}
            for w in words:
                df = base_df.get(w, 0)
                extra = tail.get(w)
                if extra is not None:
                    df += len(extra[0])
                if df:
                    out[w] = df
            return out

    def top(self, terms: Sequence[Term], k: int) -> list[tuple[int, float]]:
        """The ``k`` best (rid, BM25) over ``terms``, best first, ties by rid: what
        ``bm25(memories_fts, 1.0, 0.4, 0.8)`` ranks first for the OR of the same terms."""
        np = arrays.np()

        with self._lock:
            state = self._state
            if state is None or state.n == 0 or not terms or k <= 0:
                return []
            scores = np.zeros(state.n)
            touched = []
            for term in terms:  # in the order bm25() adds its phrases
                docs, impact = self._impacts_of(state, term)
                if len(docs):
                    scores[docs] += impact
                    touched.append(docs)
            if not touched:
                return []
            rows = self._best_rows(scores, touched, k)
            return list(zip(state.rids[rows].tolist(), scores[rows].tolist()))

    @staticmethod
    def _best_rows(scores: Any, touched: list[Any], k: int) -> Any:
        """Rows of the k highest scores, best first, ties by row, without sorting them all.

        The k-th best score among a few rows we know scored is a lower bound for the
        k-th best of all, so one comparison over ``scores`` leaves only rows that can be
        in the top k. The rarest terms' rows serve; duplicates are removed first, since
        a row counted twice would lift the bound above the truth.
        """
        np = arrays.np()

        touched = sorted(touched, key=len)
        pool, size = [], 0
        for docs in touched:
            pool.append(docs)
            size += len(docs)
            if size >= 2 * k:
                break
        sample = pool[0]
        if len(pool) > 1:
            sample = np.sort(np.concatenate(pool))
            sample = sample[_distinct(sample)]
        if len(sample) >= k:
            values = scores[sample]
            floor = np.partition(values, len(values) - k)[len(values) - k]
            rows = np.flatnonzero(scores >= floor)
        else:
            rows = np.flatnonzero(scores > 0)
        order = np.lexsort((rows, -scores[rows]))[:k]
        return rows[order]

    @staticmethod
    def _postings(state: _State, term: Term) -> tuple[Any, Any]:
        """(rows ascending, weighted tf) of ``term``; a prefix sums its words per row."""
        np = arrays.np()

        lo, hi = state.base.span(term)
        docs, tf = state.base.docs[lo:hi], state.base.tf[lo:hi]
        words = state.base.words(term)
        if state.tail:
            if term.prefix:
                i = bisect.bisect_left(state.tail_terms, term.key)
                j = bisect.bisect_left(state.tail_terms, term.key + "\U0010ffff", i)
                extra = [state.tail[t] for t in state.tail_terms[i:j]]
            else:
                got = state.tail.get(term.key)
                extra = [got] if got else []
            if extra:
                words += len(extra)
                docs = np.concatenate([docs, *(np.asarray(e[0], dtype=np.int32) for e in extra)])
                tf = np.concatenate([tf.astype(np.float64), *(np.asarray(e[1], dtype=np.float64) for e in extra)])
        if words > 1 and len(docs):  # several words under one prefix: a row may hold more than one
            order = np.argsort(docs, kind="stable")
            docs, tf = docs[order], tf[order]
            starts = _distinct(docs)
            if len(starts) < len(docs):
                docs, tf = docs[starts], np.add.reduceat(tf.astype(np.float64), starts)
        return docs, tf

    def _impacts_of(self, state: _State, term: Term) -> tuple[Any, Any]:
        """(rows, BM25 contribution of ``term`` to each), cached for this state of memory."""
        if self._impact_version != state.version:
            self._impacts.clear()
            self._cached = 0
            self._impact_version = state.version
        key = (term.key, term.prefix)
        got = self._impacts.get(key)
        if got is not None:
            return got
        docs, tf = self._postings(state, term)
        n, df = state.n, len(docs)
        if df == 0:
            got = (docs, tf)
        else:
            idf = math.log((n - df + 0.5) / (df + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            tf = tf.astype("float64", copy=False)  # float32 counts would make float32 arithmetic
            got = (docs, idf * ((tf * (K1 + 1.0)) / (tf + self._k_d(state)[docs])))
        if self._cached + df > IMPACT_CACHE:
            self._impacts.clear()
            self._cached = 0
        self._impacts[key] = got
        self._cached += df
        return got

    def _k_d(self, state: _State) -> Any:
        """k1 * (1 - b + b * D / avgdl) per row, written as bm25() evaluates it."""
        kd = self._kd
        if kd is not None and kd[0] == state.version:
            return kd[1]
        avgdl = state.total / state.n
        value = K1 * ((1 - B) + (B * state.lengths[: state.n]) / avgdl)
        self._kd = (state.version, value)
        return value

    @property
    def size(self) -> int:
        state = self._state
        return state.n if state is not None else 0
