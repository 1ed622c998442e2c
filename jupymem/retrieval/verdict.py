"""Whether the ranked candidates answer the query: judging them, and the result a person sees.

``retrieve.rank`` orders every candidate; this decides. ``judge`` gives the first few
their answerability signals and a confidence (``signals``, ``answerable``), weighing each
memory's words once per project size; ``decide`` turns the ranking into a
``SearchResult``: the hits, the best one whole when it clearly wins, or an abstention
that still shows the closest memories. ``search`` is the two together, with hits cut from
one pattern giving way to distinct ones first (``repeats``).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, cast

from . import answerable, lexical, reading, wordvec
from . import signals as pair
from ..models import Hit, Memory, SearchResult
from ..storage.reads import MemoryReader, store_for
from .retrieve import Candidate, Ranking, give_way, materialize, rank, share_head

if TYPE_CHECKING:
    from .fuzzy import Vocabulary
    from .postings import Postings
    from .retrieve import DenseLeg

# Lexical mode: a candidate this much stronger (BM25) than the runner-up is returned whole.
CLEAR_WINNER = 1.5
# Hybrid mode: the same, as a lead in fused score over the runner-up.
CLEAR_LEAD = 0.25
# An abstention still shows people this many of the nearest memories (``SearchResult.closest``).
CLOSEST = 5
# How deep a search ranks to get past copies of one pattern (``repeats``) that fill its ranking.
DEEPEST = 2560


def judge(store: Any, ranking: Ranking, count: int, start: int = 0) -> None:
    """Give candidates ``start`` to ``count`` their signals and confidence."""
    chosen = ranking.candidates[start:count]
    if not chosen or ranking.side is None:
        return
    store = store_for(store)
    materialize(store, chosen)
    if start == 0:  # the names memory writes, however the query spells them (``with_names``)
        first = ranking.candidates[: answerable.ANSWER_K]
        materialize(store, first)
        ranking.side = pair.with_names(ranking.side, ranking.query, [c.memory.statement for c in first])
    n = max(ranking.n_docs, 1)
    texts = [" ".join(filter(None, (c.memory.statement, c.memory.topic, c.memory.original))) for c in chosen]
    docs = [lexical.doc_terms(text) for text in texts]
    weighed = _weighed(store)
    known = [_fresh(weighed.get(text), ranking.n_docs) for text in texts]
    # Word counts for every word of a memory not weighed yet, and for the matched words of
    # the others: from the in-memory index when it answered (fts5vocab walks a word's
    # postings to count them), else from the store (``reads.MemoryReader.word_counts``).
    found = [pair.spans(ranking.side, doc) for doc in docs]
    words = list(dict.fromkeys(
        w for doc, got, at in zip(docs, known, found) for w in (doc if got is None else pair.matched_words(doc, at))
    ))
    if ranking.index is not None:
        df = ranking.index.word_frequencies(words)
    else:
        df = lexical.document_frequencies(store, words, ranking.n_docs)
    by_df: dict[int, float] = {}  # most words share a handful of small counts
    idf = {}
    for w in words:
        d = min(df.get(w, 0), n)
        got = by_df.get(d)
        if got is None:
            got = by_df[d] = lexical.idf(d, n)
        idf[w] = got
    limit = answerable.COMPARED_WORDS
    for i, (text, doc) in enumerate(zip(texts, docs)):
        if known[i] is None:
            compared = doc if len(doc) <= limit else tuple(sorted(doc, key=lambda w: (-idf[w], w))[:limit])
            entry = (ranking.n_docs, sum(idf[w] for w in doc), compared)
            known[i] = entry
            if len(weighed) >= _WEIGHED_MAX:
                weighed.clear()
            weighed[text] = entry
    ready = cast("list[tuple[int, float, tuple[str, ...]]]", known)  # every one filled above
    vectors = wordvec.WordVectors(ranking.embedder) if ranking.hybrid and ranking.embedder is not None else None
    if vectors is not None:
        vectors.table([t.word for t in ranking.side.terms], (w for got in ready for w in got[2]))
    for c, doc, (_, own, compared), at in zip(chosen, docs, ready, found):
        read: list[pair.Reading] = []
        c.signals = pair.signals(ranking.side, doc, c.memory.statement, idf, c.cosine, vectors, compared, own, at, read)
        c.reading = read[0]
        band = answerable.band(ranking.active, len(c.memory.statement))
        c.confidence = reading.judged(c.signals, c.reading, band=band, hybrid=ranking.hybrid, tier=ranking.tier)


# Per project, each memory's own weight (the IDF of its words, summed) and the words it is
# compared by in hybrid mode (its ``COMPARED_WORDS`` rarest), keyed by its text: computing
# them reads every word's count, so they are kept while the project has grown by under 1%
# (exactly unchanged below 100 memories), as word counts are (``lexical.document_frequencies``).
_WEIGHED_CACHE: weakref.WeakKeyDictionary[Any, dict[str, tuple[int, float, tuple[str, ...]]]] = (
    weakref.WeakKeyDictionary()
)
_WEIGHED_MAX = 20_000


def _weighed(store: MemoryReader) -> dict[str, tuple[int, float, tuple[str, ...]]]:
    try:
        return _WEIGHED_CACHE.setdefault(store, {})
    except TypeError:  # a store that cannot be weakly referenced: no cache
        return {}


def _fresh(
    got: tuple[int, float, tuple[str, ...]] | None, n_docs: int
) -> tuple[int, float, tuple[str, ...]] | None:
    if got is None:
        return None
    n = got[0]
    return got if (n == n_docs if n_docs < 100 else abs(n_docs - n) <= n_docs // 100) else None


def search(
    store: Any,
    query: str,
    *,
    n_docs: int,
    limit: int = 10,
    include_inactive: bool = False,
    kinds: tuple[str, ...] | None = None,
    mode: str = "hybrid",
    dense: DenseLeg | None = None,
    vocab: Vocabulary | None = None,
    postings: Postings | None = None,
    inactive: frozenset[int] | None = None,
) -> SearchResult:
    """``mode``: "hybrid" (every leg available), "lexical" (BM25 with stems and fuzzy
    identifiers, no vectors) or "fts" (plain FTS5 BM25 over the query's words, for
    measuring the others). ``postings`` computes the lexical leg's BM25 in memory once it
    has caught up with memory (the same ranking as FTS5's, sooner); "fts" never uses it.
    ``store``: a ``reads.MemoryReader`` (or a connection to wrap in one)."""
    store = store_for(store)
    depth = max(4 * limit, 40)
    while True:
        ranking = rank(
            store, query, n_docs=n_docs, mode=mode, dense=dense, vocab=vocab, include_inactive=include_inactive,
            kinds=kinds, depth=depth, postings=postings, inactive=inactive,
        )
        if ranking.legs in (("fts",), ("dense",)):  # the baselines rank, nothing more
            break
        # Copies of one pattern give way to distinct hits (``repeats``); when they filled
        # the whole ranking, rank deeper, as far as ``DEEPEST``. Only a flood pays for that.
        short = give_way(store, ranking.candidates, max(limit, answerable.ANSWER_K))
        if not short or depth >= DEEPEST or len(ranking.candidates) < depth:
            break
        depth *= 8
    if ranking.legs not in (("fts",), ("dense",)):
        share_head(store, ranking.candidates, max(limit, answerable.ANSWER_K))  # one file holds no head whole
    return decide(store, ranking, limit)


def decide(store: Any, ranking: Ranking, limit: int) -> SearchResult:
    """The answer a person sees: the first ``limit`` candidates, or an abstention when
    none of the first ``ANSWER_K`` is confident enough."""
    store = store_for(store)
    query, legs = ranking.query, ranking.legs
    if not ranking.candidates:
        return SearchResult(query=query, status="abstained", reason=ranking.reason or "no memory matches", legs=legs)
    count = max(limit, answerable.ANSWER_K)
    # The decision reads the first ANSWER_K candidates (and any no leg scored, only a small
    # project has): judge those first, and the rest only for an answer. Most searches of a
    # larger project that abstain do so on questions memory does not hold, and weighing
    # hits nobody will see was most of their time.
    first = answerable.ANSWER_K if all(c.score > 0 for c in ranking.candidates) else count
    judge(store, ranking, min(first, count))
    if ranking.legs in (("fts",), ("dense",)):
        judge(store, ranking, count, start=first)
        materialize(store, ranking.candidates[:limit])  # judge reads none without a query side
        # The plain FTS5 baseline has no notion of an answer: it ranks, and is measured as
        # a ranking; our abstention would only take its hits away.
        hits = tuple(Hit(c.memory, round(c.score, 4), c.legs, round(c.confidence, 4)) for c in ranking.candidates[:limit])
        return SearchResult(query=query, status="ok", hits=hits, legs=legs, tier=ranking.tier)
    # A candidate no leg scored (a small project's) counts only when confident, and without
    # the dense leg only when it holds some word of the query (a singular for a plural):
    # nothing else speaks for a memory that shares no word with the question.
    candidates = [c for c in ranking.candidates if c.score > 0 or _unscored_counts(c, hybrid=ranking.hybrid)]
    decisive = candidates[: answerable.ANSWER_K] + [c for c in candidates if c.score <= 0]
    if not any(c.confidence >= answerable.ANSWER_AT for c in decisive):
        if CLOSEST > first:  # candidates are best first, so these are the ones shown
            judge(store, ranking, CLOSEST, start=first)
        shown = [c for c in candidates if c.score > 0][: min(limit, CLOSEST)]
        closest = tuple(Hit(c.memory, round(c.score, 4), c.legs, round(c.confidence, 4)) for c in shown)
        return SearchResult(
            query=query, status="abstained", reason="nothing matches closely enough", legs=legs, closest=closest, tier=ranking.tier
        )
    judge(store, ranking, count, start=first)
    hits = tuple(Hit(c.memory, round(c.score, 4), c.legs, round(c.confidence, 4)) for c in candidates[:limit])
    return SearchResult(
        query=query, status="ok", hits=hits, full=_full(candidates, hybrid=ranking.hybrid), legs=legs,
        tier=ranking.tier,
    )


def _unscored_counts(c: Candidate, *, hybrid: bool) -> bool:
    coverage = c.signals.coverage if c.signals else 0.0
    return c.confidence >= answerable.ANSWER_AT and (hybrid or coverage > 0)


def _full(candidates: list[Candidate], *, hybrid: bool) -> Memory | None:
    top = candidates[0]
    if top.confidence < answerable.ANSWER_AT:
        return None
    if len(candidates) == 1:
        return top.memory
    second = candidates[1].score
    clear = top.score - second >= CLEAR_LEAD if hybrid else top.score >= CLEAR_WINNER * second
    return top.memory if clear else None
