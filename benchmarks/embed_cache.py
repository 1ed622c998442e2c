"""The transformer's vectors of suite texts, kept on disk so that fits and dumps never re-embed.

    import embed_cache; embed_cache.install("/work/cache-retrieval")   # before any project opens

Embedding SciFact's 5,183 abstracts with the transformer takes minutes on this machine's two
shared cores; every collection (``fit_answerability.py``, ``tune_fusion.py dump``) loads the
same suites again. ``install`` registers, for the ``transformer`` encoder spec, the bundled
``TransformerEmbedder`` wrapped in ``CachedEmbedder``: a text's vector is read from an SQLite
file beside the others of its model (keyed by a hash of the text), computed only when missing.
The vectors are the ones the first run computed (the int8 graph quantizes activations per
batch, so a text's vector moves by a cosine of ~0.99 with its batch-mates): a cache fixes one
of those, as a project's stored vectors do. A single text (a query) is always encoded, never
cached: a timed search pays for its query's vector. Evaluation data only; the cache lives outside the
repository (the suites' licences).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class CachedEmbedder:
    """An Embedder whose vectors come from ``path`` when it has them (the ``Embedder``
    protocol: ``name``, ``dimensions``, ``embed_batch``); anything else is the inner one's."""

    def __init__(self, inner: Any, path: Path):
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS v (k BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_batch(self, texts: Sequence[str]) -> Any:
        if len(texts) == 1:
            # A query (``retrieve.query_vector`` encodes one text at a time): encoded as a
            # search would, so that a timed search pays for it (bench_lexical_100k.py).
            return self.inner.embed_batch(texts)
        keys = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).digest() for t in texts]
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        found: dict[bytes, bytes] = {}
        with self._lock:
            unique = list(dict.fromkeys(keys))
            for i in range(0, len(unique), 500):
                chunk = unique[i : i + 500]
                marks = ",".join("?" * len(chunk))
                found.update(self._db.execute(f"SELECT k, vec FROM v WHERE k IN ({marks})", chunk).fetchall())
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            fresh = self.inner.embed_batch([texts[i] for i in missing])
            with self._lock:
                self._db.executemany("INSERT OR IGNORE INTO v VALUES (?, ?)",
                                     [(keys[i], fresh[r].astype(np.float32).tobytes()) for r, i in enumerate(missing)])
            for r, i in enumerate(missing):
                found[keys[i]] = fresh[r].astype(np.float32).tobytes()
        for i, k in enumerate(keys):
            out[i] = np.frombuffer(found[k], dtype=np.float32)
        return out


def install(folder: str | Path) -> None:
    """Make this process's ``transformer`` encoder the cached one (before any project opens)."""
    from jupymem.retrieval import index
    from jupymem.retrieval.embed import BackgroundEncoder
    from jupymem.retrieval.tiers import TRANSFORMER_SPEC
    from jupymem.retrieval.transformer import TransformerEmbedder

    def load() -> CachedEmbedder:
        inner = TransformerEmbedder()
        safe = "".join(c if c.isalnum() else "_" for c in inner.name)
        return CachedEmbedder(inner, Path(folder) / f"{safe}.sqlite")

    index.register_encoder(TRANSFORMER_SPEC, BackgroundEncoder(TRANSFORMER_SPEC, loader=load))
