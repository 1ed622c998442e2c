"""Which encoder answers a project's searches now: the dense leg's state, out of ``Project``.

``JUPYMEM_ENCODER`` picks the tiers:

* unset or ``transformer`` (the default): the bundled static model (model2vec, loads in
  a few hundred milliseconds, encodes thousands of texts a second) answers first; the
  bundled transformer (all-MiniLM-L6-v2, int8 ONNX, ``transformer.py``) loads in the
  background, embeds the project's memories in the background, and takes over once every
  memory has its vector. Until then, and if it cannot load, the static tier answers.
* ``static``: the static model alone (the tier the project had before the transformer).
* ``none``: no dense leg; lexical search answers alone.
* anything else: a model2vec folder or hub name, as the static tier (``embed.py``).

Why two tiers instead of one: a kernel's first search must not wait for a transformer to
load or for 100,000 memories to be embedded (minutes on two cores), and a static search
is already better than none. Each tier keeps its own vectors (``index.SLOTS``), so the
static one never has to be recomputed when the transformer takes over, and the
transformer's survive for the next process.

A long-lived process (``interactive``: a kernel, the server, ``%%ask``) starts loading at
its first search. A one-shot command (the CLI) loads nothing in the background: it
searches with the transformer when the project's transformer vectors already exist (a
kernel or the server wrote them), since loading it then costs well under a second and
no memory has to be embedded; else with the lexical leg alone, and says so.

The transformer's sentence vectors decide the cosine, the fusion and near-duplicates; the
answerability model's word-level signals (a query word against a memory's words, a word's
specificity) come from the static model in both tiers: they need a vector per word,
which a lookup gives in microseconds and a transformer would not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..models import _Record
from . import index
from ..models import Tier
from ..storage.reads import store_for

if TYPE_CHECKING:
    from ..reports import DenseStatus
    from .embed import BackgroundEncoder, Embedder
    from .retrieve import DenseLeg

# The JUPYMEM_ENCODER value that names the bundled transformer (the shared encoder's key).
TRANSFORMER_SPEC = "transformer"
STATIC_SPEC = "static"
NOT_MADE = (
    "the transformer's vectors are not made yet (a kernel or the server makes them in the background); "
    "a command here searches without the dense leg until then"
)


@dataclass(frozen=True, eq=False, repr=False)
class Plan(_Record):
    """What a ``JUPYMEM_ENCODER`` value asks for: the static tier's spec (None is the
    bundled model) and whether the transformer tier runs; ``off`` when neither does."""

    static: str | None = None
    transformer: bool = False
    off: bool = False


def plan(spec: str | None) -> Plan:
    value = (spec or "").strip()
    low = value.lower()
    if low == "none":
        return Plan(off=True)
    if low in ("", TRANSFORMER_SPEC):
        return Plan(None, transformer=True)
    if low == STATIC_SPEC:
        return Plan(None)
    return Plan(value)


def _shared(spec: str | None) -> BackgroundEncoder:
    return index.shared_encoder(spec)


# Transformer encoders whose loading waits for the static one (``Tiers.start``).
_chained: set[Any] = set()
_chain_lock = threading.Lock()


def _after(static: BackgroundEncoder, tx: BackgroundEncoder) -> None:
    static.wait()
    tx.start()


class Tiers:
    """One project's dense leg: its encoders (shared by the process), its indexes (one per
    tier) and why it is not answering. Safe to call from several threads."""

    def __init__(self, store: Any, spec: str | None, *, interactive: bool):
        self.store = store_for(store)  # a ``reads.Store``, or a connection to wrap in one
        self.plan = plan(spec)
        self.interactive = interactive
        self._indexes: dict[str, index.DenseIndex] = {}
        self._lock = threading.Lock()
        self.note: str | None = None  # why the dense leg is not answering (or not at its best)
        self.tier: str | None = None  # the tier that answered the last search

    # -- encoders -------------------------------------------------------------

    def static_encoder(self) -> BackgroundEncoder:
        return _shared(self.plan.static)

    def transformer_encoder(self) -> BackgroundEncoder | None:
        return _shared(TRANSFORMER_SPEC) if self.plan.transformer else None

    def start(self) -> None:
        """Begin loading what this process will search with (returns at once): the static
        model first, the transformer once it has loaded. Loaded side by side they shared
        two cores and the static tier, the one that answers first, came a third later
        (1.0-1.2 s after the first search instead of 0.6-0.8, ``bench_tiers.py``)."""
        if self.plan.off:
            return
        static = self.static_encoder().start()
        tx = self.transformer_encoder()
        if tx is None or tx.state != "off" or static.state in ("ready", "failed", "off"):
            if tx is not None:
                tx.start()
            return
        with _chain_lock:
            if tx in _chained:
                return
            _chained.add(tx)
        from .quitting import started

        started(_after, args=(static, tx), name="jupymem-encoder-next")

    def _index(self, tier: str) -> index.DenseIndex:
        with self._lock:
            got = self._indexes.get(tier)
            if got is None:
                got = self._indexes[tier] = index.DenseIndex(self.store, tier)
            return got

    # -- the leg --------------------------------------------------------------

    def leg(self, rev: int, make: Callable[..., DenseLeg], *, only: str | None = None) -> DenseLeg | None:
        """The dense leg that can answer right now, best tier first (``only`` that tier);
        never waits for one (but a one-shot command loads a transformer whose vectors
        exist). ``make`` builds the ``DenseLeg`` (retrieve's, passed in so that this
        module need not import it)."""
        if only == index.TRANSFORMER and not self.plan.transformer:
            self.note = f"the transformer tier is not in use (JUPYMEM_ENCODER={self._spec_said()})"
            return None
        self.tier = None
        if self.plan.off:
            self.note = "turned off (JUPYMEM_ENCODER=none)"
            return None
        if self.store.readonly:  # vectors are written beside the memories: not here
            self.note = "the memory home is read-only, so no vectors can be stored"
            return None
        ok, why = self.store.vector_route()
        if not ok:
            self.note = why
            return None
        if self.interactive:
            self.start()
        static = self.static_encoder()
        words = static.embedder  # word-level signals, in both tiers (module docstring)
        tx_leg = self._transformer_leg(rev, make, words) if only != index.STATIC else None
        if tx_leg is not None and only is None:
            self._drop_static_copy()
        if tx_leg is not None or only == index.TRANSFORMER:
            return tx_leg
        tx_note = self.note if only is None else None
        if static.state == "off" and not self.interactive:
            self.note = tx_note or "not loaded in a one-shot command; searches in a kernel or the server use it"
            return None
        if not static.ready:
            self.note = f"encoder {static.state}: {static.reason}" if static.state != "loading" else static.reason
            return None
        # Asked for by name (evaluation, benchmarks), the static tier reads its stored vectors
        # now rather than in the background: its copy is dropped once the transformer answers.
        assert static.embedder is not None  # ready
        got = self._ready_index(index.STATIC, static.embedder, rev, background=only != index.STATIC)
        if got is None:
            return None
        self.note = tx_note  # the static tier answers; say why the transformer does not (yet)
        self.tier = index.STATIC
        return make(static.embedder, got, rev, words=None)

    def _drop_static_copy(self) -> None:
        """Once the transformer answers, the static tier's in-process copy is dead weight
        (51 MB at 100,000 memories): free it. Its vectors stay stored; asking for the
        static tier by name reads them again."""
        static = self._indexes.get(index.STATIC)
        if static is not None and static.size:
            static.reset()
            from .transformer import release_memory

            release_memory()  # the copy's pages go back to the system, not to glibc's free lists

    def _spec_said(self) -> str:
        p = self.plan
        return "none" if p.off else "static" if p.static is None else p.static

    def _transformer_leg(self, rev: int, make: Callable[..., DenseLeg], words: Embedder | None) -> DenseLeg | None:
        tx = self.transformer_encoder()
        if tx is None:
            self.note = None
            return None
        if not self.interactive and tx.state == "off":
            if not self._vectors_exist():
                self.note = NOT_MADE
                return None
            tx.start()
            tx.wait()
            static = self.static_encoder()
            if static.state == "off":
                static.start()
            static.wait()
            words = static.embedder
        if not tx.ready:
            self.note = f"transformer {tx.state}: {tx.reason}" if tx.state != "loading" else f"the transformer is {tx.reason}"
            return None
        if words is None:  # the static model gives the word-level signals: it loads first
            self.note = "the transformer is waiting for the static model"
            return None
        assert tx.embedder is not None  # ready
        got = self._ready_index(index.TRANSFORMER, tx.embedder, rev, background=self.interactive)
        if got is None:
            done, total = self._index(index.TRANSFORMER).progress
            if total:
                self.note = f"the transformer is embedding memories in the background ({done:,} of {total:,})"
            return None
        self.note = None
        self.tier = index.TRANSFORMER
        return make(tx.embedder, got, rev, words=words)

    def _vectors_exist(self) -> bool:
        """Has a long-lived process embedded (nearly) every memory with the transformer?"""
        model, stored = index.vector_counts(self.store, index.TRANSFORMER)
        if model is None or not stored:
            return False
        count = self.store.count()
        return count - stored <= index.INLINE_BUDGET

    def _ready_index(self, tier: str, embedder: Embedder, rev: int, *, background: bool = True) -> index.DenseIndex | None:
        dense = self._index(tier)
        if not dense.ready and not dense.fill_small(embedder, index.INLINE_BUDGET):
            if not background:  # a one-shot command whose vectors exist: load them now
                dense.sync(embedder, full=True)
                dense.ready = True
                return dense
            dense.start_backfill(embedder)
            self.note = dense.error or "embedding memories in the background"
            return None
        if dense.behind():
            dense.sync(embedder, limit=index.INLINE_BUDGET, wait=False)
            if dense.behind() and background:
                dense.start_backfill(embedder)
        dense.catch_up_below(embedder, rev)
        return dense

    # -- waiting, status, forgetting ------------------------------------------

    def prepare(self, rev: Callable[[], int], make: Callable[..., DenseLeg], timeout: float | None = None) -> None:
        """Load every tier and embed every memory now, waiting (evaluation, benchmarks, tests)."""
        if self.plan.off:
            return
        self.start()
        encoders = [self.static_encoder(), self.transformer_encoder()]
        for enc in encoders:
            if enc is not None:
                enc.wait(timeout)
        wanted = [index.STATIC] + ([index.TRANSFORMER] if self.plan.transformer else [])
        for tier, enc in zip(wanted, encoders):  # each tier's vectors: evaluation compares them
            if enc is None or not enc.ready:
                continue
            if self.leg(rev(), make, only=tier) is None and tier in self._indexes:
                self._indexes[tier].wait(timeout)
            dense = self._indexes.get(tier)
            if dense is not None and dense.ready and enc.embedder is not None:
                dense.sync(enc.embedder)
        self.leg(rev(), make)

    def status(self) -> DenseStatus:
        """Which legs answer searches and, when the dense leg does not (or not at its
        best), why; the encoders' states and the transformer's progress."""
        from ..reports import DenseStatus, Embedding

        static = self.static_encoder()
        tx = self.transformer_encoder()
        tier = self.tier
        if tier is not None and not (tier in self._indexes and self._indexes[tier].ready):
            tier = None  # reset since the last search (a rebuild): the copy is read again
        answering = tier is not None
        if self.note is None and not answering and not self.interactive:
            self.note = self._one_shot_note()
        shown = index.TRANSFORMER if tier == index.TRANSFORMER or (tier is None and tx is not None) else index.STATIC
        model, stored = index.vector_counts(self.store, shown)
        enc = tx if shown == index.TRANSFORMER and tx is not None else static
        dense = self._indexes.get(index.TRANSFORMER)
        done, total = dense.progress if dense is not None else (0, 0)
        return DenseStatus(
            legs=("lexical", "fuzzy", "dense") if answering else ("lexical", "fuzzy"),
            dense="on" if answering else "off",
            tier=cast("Tier | None", tier),  # one of index.SLOTS' keys
            reason=self.note if self.note else (None if answering else enc.reason),
            encoder=enc.state,
            encoder_reason=enc.reason,
            encoder_load_seconds=enc.load_seconds,
            static_encoder=static.state if not self.plan.off else "off",
            transformer=tx.state if tx is not None else "off",
            embedding=Embedding(done=done, total=total) if total else None,
            model=model,
            vectors=stored,
            driver=self.store.engine,
        )

    def _one_shot_note(self) -> str:
        """What a search in this one-shot command would use, without loading anything."""
        if self.plan.off:
            return "turned off (JUPYMEM_ENCODER=none)"
        if self.plan.transformer and not self.store.readonly:
            if self._vectors_exist():
                return "a search here loads the transformer: its vectors exist"
            return NOT_MADE
        return "not loaded in a one-shot command; searches in a kernel or the server use it"

    def wait(self, timeout: float | None = None) -> None:
        for dense in list(self._indexes.values()):
            dense.wait(timeout)

    def reset(self) -> None:
        """Forget the copies (after ``rebuild``): the next sync looks at every row again."""
        self.tier = None
        for dense in list(self._indexes.values()):
            dense.reset()

    def static_index(self) -> index.DenseIndex | None:
        return self._indexes.get(index.STATIC)

    def transformer_index(self) -> index.DenseIndex | None:
        return self._indexes.get(index.TRANSFORMER)
