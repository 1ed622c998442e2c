"""Vector maths for the verdict: the dense background and the encoder's word vectors.

``background`` is a query's median cosine to generic project notes (``BACKGROUND``), so
that a cosine means the same in a project of one memory as in one of 100,000.
``WordVectors`` compares the query's words that a memory lacks with the memory's own
words, by the static encoder's word vectors (``signals``: ``soft_coverage``, ``soft_min``,
``specific_missed``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from . import arrays

if TYPE_CHECKING:
    from .embed import Embedder

# Generic notes of the kind every project keeps, about nothing in particular. A query's
# median cosine to them is what "close" means for that query before any memory is read.
BACKGROUND = (
    "The notebook reads the input file, cleans the columns and writes the result to disk.",
    "Run the cells from top to bottom after restarting the kernel.",
    "The team meets every week to review progress and plan the next steps.",
    "Ask the owner of the dataset before changing its schema.",
    "Results are stored in a shared folder with the date in the file name.",
    "The script failed with an error and was fixed by updating a dependency.",
    "Use the configuration file instead of hard-coding values in the code.",
    "Charts need a title, labelled axes and a short caption.",
    "The job runs every night and sends an email when it fails.",
    "Document every decision in the project wiki with the reason behind it.",
    "The model is trained on historical data and evaluated on a held-out sample.",
    "Keep secrets out of the repository and read them from the environment.",
    "A colleague reviews each change before it is merged into the main branch.",
    "Large tables should be filtered early so that the query stays fast.",
    "The report is shared with stakeholders at the end of every month.",
    "Version numbers of the libraries are pinned in the requirements file.",
    "Tests use small synthetic examples rather than production data.",
    "The meeting notes are kept in the shared drive.",
    "When a number looks wrong, check the units and the time zone first.",
    "The old approach was replaced because it was too slow.",
    "Missing values are handled before the features are computed.",
    "The dashboard shows the main metrics for each region and month.",
    "Install packages in the project environment, not globally.",
    "The pipeline has three steps: load, transform and export.",
    "Prefer readable code with clear names over clever one-liners.",
    "The customer list is updated from the source system every morning.",
    "Backups are taken daily and kept for thirty days.",
    "Questions about access go to the platform team.",
    "The experiment compared two variants and the second one won.",
    "Logs are written to a file and rotated every week.",
    "The budget for the project was approved last quarter.",
    "Clean up temporary files when the analysis is finished.",
)

_WORD_CACHE_MAX = 50_000
_word_cache: dict[int, tuple[Any, _Words]] = {}
_background_cache: dict[int, tuple[Any, Any]] = {}
_background_lock = threading.Lock()


def background(embedder: Embedder, query_vector: Any) -> float:
    """The query's median cosine to ``BACKGROUND`` (embedded once per embedder)."""
    np = arrays.np()

    with _background_lock:
        held = _background_cache.get(id(embedder))
        if held is None or held[0] is not embedder:
            if len(_background_cache) >= 8:  # tests make many small embedders
                _background_cache.clear()
            held = _background_cache[id(embedder)] = (embedder, embedder.embed_batch(list(BACKGROUND)))
            # The transformer's batch leaves ~30 MB on glibc's free lists, in the thread of
            # the first search (a kernel's main thread): hand it back, once per embedder.
            release = getattr(embedder, "release", None)
            if release is not None:
                release()
    sims = held[1] @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
    return float(np.median(sims))


# OpenBLAS runs a matrix product at or above this many multiply-adds on several threads,
# which then spin for a while after it; on a busy two-core machine that costs more CPU
# than it saves at a search's sizes. Products are cut into pieces below it.
_THREADED_PRODUCT = 262_144


def _product(a: Any, b: Any) -> Any:
    """``a @ b.T`` in pieces that OpenBLAS runs on one thread."""
    np = arrays.np()

    step = max(1, (_THREADED_PRODUCT - 1) // max(1, a.shape[0] * a.shape[1]))
    if len(b) <= step:
        return a @ b.T
    return np.concatenate([a @ b[i : i + step].T for i in range(0, len(b), step)], axis=1)


class _Words:
    """One encoder's single-word vectors: a row each, in one array that grows, so that a
    search takes the rows it needs in one step instead of stacking a vector a word."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.vectors: Any = None
        self._lock = threading.Lock()

    def add(self, words: Sequence[str], vectors: Any) -> None:
        np = arrays.np()

        with self._lock:
            words = [w for w in words if w not in self.index]
            if not words:
                return
            vectors = np.asarray(vectors[-len(words) :], dtype=np.float32) if len(vectors) != len(words) else vectors
            count = len(self.index)
            held = self.vectors
            if held is None or count + len(words) > len(held):
                # Doubling, but never past the cache's cap (a row is 1 KB: 50 MB at most).
                rows = max(1024, min(2 * (count + len(words)), _WORD_CACHE_MAX), count + len(words))
                grown = np.zeros((rows, vectors.shape[1]), dtype=np.float32)
                if held is not None:
                    grown[:count] = held[:count]
                held = grown
            held[count : count + len(words)] = vectors
            self.vectors = held  # published before the index names its new rows
            self.index.update(zip(words, range(count, count + len(words))))


class WordVectors:
    """Single-word vectors from the dense leg's encoder, cached per encoder (memories repeat
    their words), for ``signals``' word-level similarity and specificity."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self.specificity: Callable[[Sequence[str]], Sequence[float]] | None = getattr(embedder, "specificity", None)
        self._words = self._held()

    def _held(self, fresh: bool = False) -> _Words:
        with _background_lock:
            held = _word_cache.get(id(self.embedder))
            if fresh or held is None or held[0] is not self.embedder:
                if len(_word_cache) >= 8:
                    _word_cache.clear()
                held = _word_cache[id(self.embedder)] = (self.embedder, _Words())
        return held[1]

    def prefetch(self, words: Iterable[str]) -> None:
        """Embed the words not seen yet, in one batch (one tokenizer call a search)."""
        index = self._words.index
        missing = [w for w in dict.fromkeys(words) if w not in index]
        if missing:
            if len(index) + len(missing) > _WORD_CACHE_MAX:
                self._words = self._held(fresh=True)
            embed_words = getattr(self.embedder, "embed_words", None)
            if embed_words is not None:  # one tokenization for the vectors and specificity
                self._words.add(missing, embed_words(missing))
            else:
                self._words.add(missing, self.embedder.embed_batch(missing))
                if self.specificity is not None:
                    self.specificity(missing)  # fills the encoder's own cache

    def _matrix(self, words: Sequence[str]) -> Any:
        index = self._words.index
        rows = [index[w] for w in words]
        return self._words.vectors[rows]

    def table(self, query_words: Sequence[str], doc_words: Iterable[str]) -> None:
        """Every query word's cosine to every word of a search's candidates, in one product:
        ``near`` then only picks columns (one product a search instead of one a candidate)."""
        columns = list(dict.fromkeys(doc_words))
        rows = list(dict.fromkeys(query_words))
        self.prefetch([*rows, *columns])
        if not rows or not columns:
            return
        self._rows = {w: i for i, w in enumerate(rows)}
        self._columns = {w: i for i, w in enumerate(columns)}
        self._sims = _product(self._matrix(rows), self._matrix(columns))

    _rows: dict[str, int] = {}
    _columns: dict[str, int] = {}
    _sims: Any = None

    def near(self, query_words: Sequence[str], doc_words: Sequence[str]) -> list[float]:
        """Per query word, its best cosine to one of ``doc_words``."""
        np = arrays.np()

        if not query_words or not doc_words:
            return [0.0] * len(query_words)
        rows, columns = self._rows, self._columns
        try:
            sims = self._sims[np.ix_([rows[w] for w in query_words], [columns[w] for w in doc_words])]
        except (KeyError, TypeError):  # words outside the table (or none made): compare them now
            self.prefetch([*query_words, *doc_words])
            sims = _product(self._matrix(query_words), self._matrix(doc_words))
        return [float(v) for v in sims.max(axis=1)]
