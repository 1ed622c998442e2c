"""Query -> ranked memories, each with a confidence, or an honest "abstained".

Three legs feed one ranking:

* **lexical** (``lexical.py``, ``postings.py``): BM25 over every word of the query,
  stemmed to prefixes;
* **fuzzy** (``fuzzy.py``): query words that occur in no memory are replaced by the
  closest name or word memory does use, before the lexical leg runs;
* **dense** (``index.py``): cosine between the query's model2vec vector and each
  memory's.

Fusion is a weighted sum of scores, not reciprocal-rank fusion: with a weak static
model, equal-weight RRF lets the dense leg's noisy ranks outvote BM25 (measured
worse than BM25 alone), while a score sum keeps the dense leg's say proportional
to how close it really is. The lexical score is BM25 divided by the best BM25 of
the query, so both terms lie in [0, 1]. The dense leg re-scores the lexical
candidates and proposes its nearest neighbours; one of those that the lexical leg
did not find enters when it stands ``DENSE_ONLY_MARGIN`` above the query's dense
background (``wordvec.background``). Weights were chosen on a tuning split held
apart from the queries we report (``benchmarks/README.md``).

Whether the best candidates *answer* the question is a separate decision, made in
``verdict`` (``judge``, ``decide``, and ``search``: rank, then decide) with the models of
``answerable.py``: every candidate a person may see gets a ``confidence``, and the
search abstains when none of the first few is confident enough, rather than handing
back the least-bad hits. This module ranks.

"What is the current X" asks for a value, not for the word "currently": such words
are left out of the query (when others remain), and with history included the
active memory ranks before the ones it replaced.
"""

from __future__ import annotations

import collections
import dataclasses
import heapq
import re
import threading
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from . import answerable, arrays, lexical, repeats, wordvec
from . import signals as pair
from .postings import COLUMN_WEIGHTS
from ..models import Memory, Tier
from ..storage.reads import SEEN, MemoryReader, bm25_expression, store_for

if TYPE_CHECKING:
    from .embed import Embedder
    from .fuzzy import Vocabulary
    from .index import DenseIndex
    from .postings import Postings

MAX_QUERY_CHARS = 20_000

# Fusion (see module docstring). Chosen on held-apart data; benchmarks/tune_fusion.py.
LEXICAL_WEIGHT = 0.45
DENSE_WEIGHT = 1.0 - LEXICAL_WEIGHT
LEXICAL_DEPTH = 100  # lexical candidates the dense leg re-scores (40 lost SciFact MRR: tune_fusion.py)
DENSE_K = 20  # nearest neighbours the dense leg proposes
# The transformer tier's fusion (``_transformer_score``); chosen on the tune split of every
# suite, reported on the others (benchmarks/tune_fusion.py, benchmarks/README.md).
TX_BEST_WEIGHT = 0.05
TX_COVER_WEIGHT = 0.3
TX_COVER_POWER = 2.0
# Per query, the words weigh more (``words_weight``, added to TX_BEST_WEIGHT) when the
# query names things (a share of capitalised words past the first: "When did Caroline go
# to the LGBTQ support group?") and the lexical leg's best stands clear of its runner-up.
# Conversation turns about a named person are found by the words they share with the
# question, which the transformer's cosine weighs less than a short turn's chit-chat; a
# question without names gets at most 0.15 more (and none when its lexical best is tied).
# Chosen leave one suite out, never below the fusion above on a suite it was chosen on
# (benchmarks/fuse_select.py, the README's table).
TX_WORDS_BASE = -0.1
TX_WORDS_LEAD = 0.25
TX_WORDS_NAMES = 1.0
DENSE_ONLY_MARGIN = 0.0
# With history included, a question about the current value ranks a closed memory's
# score this much lower than an active one's.
PAST_FACTOR = 0.8

MODES = ("hybrid", "lexical", "fts", "static", "transformer", "dense")
DENSE_MODES = frozenset({"hybrid", "static", "transformer", "dense"})
MODE_TIER = {"static": "static", "transformer": "transformer", "dense": "transformer"}
# Rankings measured as they are, without abstention (baselines for evaluation).
RANKING_ONLY = frozenset({"fts", "dense"})

_NOW = re.compile(r"\b(?:current|currently|nowadays|presently)\b", re.IGNORECASE)
_WORD = re.compile(r"[\w']+")


@dataclass(frozen=True)
class DenseLeg:
    """What retrieval needs from the dense side, ready to answer now."""

    embedder: Embedder
    index: DenseIndex
    revision: int
    # The static model, for answerability's word-level signals when ``embedder`` is the
    # transformer (``tiers`` module docstring); None when ``embedder`` gives them itself.
    words: Embedder | None = None

    @property
    def tier(self) -> Tier:
        return cast(Tier, self.index.slot.tier)  # a slot's tier is one of SLOTS' keys

    @property
    def word_embedder(self) -> Embedder:
        return self.words if self.words is not None else self.embedder


@dataclass
class Candidate:
    rid: int
    bm25: float  # positive, larger is better; 0 when the lexical leg did not find it
    plan: lexical.QueryPlan | None = None
    memory: Memory = None  # type: ignore[assignment]  # filled by materialize, for the few looked at
    cosine: float | None = None
    score: float = 0.0
    legs: tuple[str, ...] = ("lexical",)
    confidence: float = 0.0  # filled by judge(), for the few looked at
    signals: pair.Signals | None = None
    reading: pair.Reading | None = None  # what of the question it leaves unaccounted for (judge())


def _admitted(
    store: MemoryReader, rids: Sequence[int], include_inactive: bool, kinds: tuple[str, ...] | None,
    inactive: frozenset[int] | None = None,
) -> set[int]:
    """The rows among ``rids`` that pass the status and kind filters (no JSON decoded);
    without reading them when the project's ``inactive`` rows are known and no kind is asked.
    Give ``inactive`` only for rows known to exist (FTS5's and the lexical index's, which
    follow memory's rows): the dense leg's copy may still hold a row gc has since dropped."""
    if not rids:
        return set()
    if not kinds and (include_inactive or inactive is not None):
        return {rid for rid in rids if include_inactive or rid not in inactive}  # type: ignore[operator]
    return store.admitted(rids, include_inactive=include_inactive, kinds=kinds)


def give_way(store: Any, candidates: list[Candidate], count: int) -> bool:
    """``repeats.give_way`` over this store: copies of one pattern leave room among the
    first ``count``, the most trusted of them keeping their place (``MemoryReader.origins``)."""
    store = store_for(store)

    def origins(group: Sequence[Candidate]) -> list[repeats.Origin]:
        found = store.origins([c.rid for c in group])
        return [found.get(c.rid, (_UNKNOWN, "")) for c in group]

    return repeats.give_way(candidates, count, lambda chunk: materialize(store, chunk), origins)


def share_head(store: Any, candidates: list[Candidate], count: int) -> bool:
    """``voices.share_head`` over this store: one shared file cannot hold every place of
    the first ``count`` while another source has a hit in the first ``voices.DEPTH``."""
    from . import voices

    store = store_for(store)
    if store.meta(SEEN) in (None, "{}"):  # no shared file noted (unshared, or the team engine): one source
        return False

    def origins(window: Sequence[Candidate]) -> list[repeats.Origin]:
        found = store.origins([c.rid for c in window])
        return [found.get(c.rid, (_UNKNOWN, "")) for c in window]

    return voices.share_head(candidates, count, origins)


_UNKNOWN = 1 << 30  # a row gone since it was ranked: the least trusted


def materialize(store: Any, candidates: Sequence[Candidate]) -> None:
    missing = [c for c in candidates if c.memory is None]
    if missing:
        found = store_for(store).memories([c.rid for c in missing])
        for c in missing:
            c.memory = found[c.rid]


_BM25 = bm25_expression(COLUMN_WEIGHTS)  # FTS5's scorer with the lexical leg's weights (tests compare with it)


def lexical_candidates(
    store: Any, plan: lexical.QueryPlan, *, depth: int, include_inactive: bool, kinds: tuple[str, ...] | None,
    index: Postings | None = None, inactive: frozenset[int] | None = None,
) -> list[Candidate]:
    """BM25 candidates, best first (ties by rid), with their memory rows not yet read
    (``materialize``). Every term memory holds is searched: FTS5's ``bm25()`` over the OR
    of them, or the same ranking from ``index`` (``postings.py``) when it is ready."""
    if not plan.selected:
        return []
    store = store_for(store)
    if index is not None:
        rows = [(rid, -score) for rid, score in index.top(plan.selected, depth)]
    else:
        rows = store.bm25(plan.search_terms, COLUMN_WEIGHTS, depth)
    keep = _admitted(store, [r[0] for r in rows], include_inactive, kinds, inactive)
    out = [Candidate(rid, -score, plan) for rid, score in rows if rid in keep]
    out.sort(key=lambda c: (-c.bm25, c.rid))
    return out


@dataclass
class _Query:
    text: str
    plan: lexical.QueryPlan
    fixed: dict[str, str] = field(default_factory=dict)


def _plan(store: MemoryReader, text: str, n_docs: int, mode: str, vocab: Vocabulary | None, index: Postings | None = None) -> _Query:
    stems = mode != "fts"
    plan = lexical.plan(store, text, n_docs, stems=stems, frequencies=index)
    if vocab is None or mode == "fts":
        return _Query(text, plan)
    unknown = {t.word for t in plan.terms if plan.df.get(t.key, 0) == 0}
    if not unknown:
        return _Query(text, plan)
    from .fuzzy import corrections

    if not vocab.refresh(store):  # still reading a large project's names in the background
        return _Query(text, plan)
    fixed = corrections(vocab, text, unknown)
    if not fixed:
        return _Query(text, plan)
    return _Query(text, lexical.plan(store, text, n_docs, stems=stems, replace=fixed, frequencies=index), fixed)


def lexical_order(
    store: Any, text: str, *, n_docs: int, kinds: tuple[str, ...], depth: int,
    vocab: Vocabulary | None = None, postings: Postings | None = None, inactive: frozenset[int] | None = None,
) -> list[int]:
    """The active rows of ``kinds`` among the lexical leg's first ``depth`` for ``text``,
    best first: its ranking alone, none of what a search adds (no fusion, no reading)."""
    store = store_for(store)
    text = text[:MAX_QUERY_CHARS]
    index = postings if postings is not None and postings.refresh(store, n_docs) else None
    plan = _plan(store, without_now_words(text)[0], n_docs, "lexical", vocab, index).plan
    found = lexical_candidates(store, plan, depth=depth, include_inactive=False, kinds=kinds, index=index,
                               inactive=inactive)
    return [c.rid for c in found]


# -- ranking ----------------------------------------------------------------------------


@dataclass
class Ranking:
    """Every candidate of one search, best first, before the answerability decision."""

    query: str
    candidates: list[Candidate]
    legs: tuple[str, ...]  # the legs that ran
    side: pair.QuerySide | None = None
    hybrid: bool = False
    reason: str | None = None  # why there is nothing to rank
    n_docs: int = 0
    embedder: Embedder | None = None  # the dense leg's word-level encoder (``DenseLeg.word_embedder``)
    index: Postings | None = None  # the in-memory index, when it answered
    tier: Tier | None = None  # the dense leg's tier, when it ran
    # Active memories (``n_docs`` less the superseded and retired): the project's size for
    # the verdict, so that retired rows never move a question into another band.
    active: int = -1

    def __post_init__(self) -> None:
        if self.active < 0:
            self.active = self.n_docs


def without_now_words(text: str) -> tuple[str, bool]:
    """(``text`` without "current"/"currently"..., whether it had them). The words stay
    when nothing else would be left to search."""
    stripped = _NOW.sub(" ", text)
    if stripped == text:
        return text, False
    return (stripped if lexical.content_terms(stripped) else text), True


def rank(
    store: Any,
    query: str,
    *,
    n_docs: int,
    mode: str = "hybrid",
    dense: DenseLeg | None = None,
    vocab: Vocabulary | None = None,
    include_inactive: bool = False,
    kinds: tuple[str, ...] | None = None,
    depth: int = 40,
    postings: Postings | None = None,
    inactive: frozenset[int] | None = None,
) -> Ranking:
    """The candidates for ``query``, scored and ordered, none of them judged yet.
    ``store``: a ``reads.MemoryReader`` (or a connection to wrap in one).
    ``inactive``: the project's superseded and retired rows, when the caller keeps them."""
    store = store_for(store)
    text = query[:MAX_QUERY_CHARS] if isinstance(query, str) else ""
    if not text.isascii():  # full-width letters and ligatures as a keyboard types them: "ｒｅｖｅｎｕｅ" is revenue
        text = unicodedata.normalize("NFKC", text)
    query = query if isinstance(query, str) else ""
    if mode not in DENSE_MODES:
        dense = None
    legs: tuple[str, ...] = ("fts",) if mode == "fts" else ("lexical", "fuzzy") if vocab is not None else ("lexical",)
    if mode == "dense":
        legs = ()
    if dense is not None:
        legs += ("dense",)
    if not text.strip():
        return Ranking(query, [], legs, reason="empty query")
    if mode == "dense":
        return _dense_only(store, query, text, dense, legs, depth, include_inactive, kinds, n_docs)
    text, now = without_now_words(text)
    index = postings if postings is not None and mode != "fts" and postings.refresh(store, n_docs) else None
    q = _plan(store, text, n_docs, mode, vocab, index)
    plan = q.plan
    if not plan.terms and dense is None:
        return Ranking(query, [], legs, reason="the query has no searchable words")
    depth = max(depth, LEXICAL_DEPTH if dense is not None else 0)
    candidates = lexical_candidates(
        store, plan, depth=depth, include_inactive=include_inactive, kinds=kinds, index=index, inactive=inactive
    )
    if q.fixed:
        for c in candidates:
            c.legs = ("lexical", "fuzzy")
    side = pair.query_side(plan, text, q.fixed)
    active = n_docs - len(inactive) if inactive is not None else n_docs
    small = 0 < active <= answerable.SMALL_PROJECT
    if dense is not None:
        candidates, background = _fuse(
            store, text, candidates, dense, include_inactive=include_inactive, kinds=kinds, small=small,
            names=names_share(query[:MAX_QUERY_CHARS]),
        )
        side = dataclasses.replace(side, background=background)
    else:
        for c in candidates:
            c.score = c.bm25
        if mode != "fts" and small:  # also "hybrid" while the dense leg cannot answer
            candidates += _unmatched(
                store, candidates, plan, include_inactive=include_inactive, kinds=kinds, inactive=inactive
            )
    if now and include_inactive and candidates:
        _prefer_active(store, candidates)
    reason = None
    if not candidates:
        reason = "no word of the query occurs in memory" if not plan.selected and dense is None else "no memory matches"
    embedder = dense.word_embedder if dense is not None else None
    tier = dense.tier if dense is not None else None
    return Ranking(query, candidates, legs, side, dense is not None, reason, n_docs, embedder, index, tier, active)


# The last few query vectors, per encoder: an assistant's request is encoded for its search
# and again for the lessons that may apply (``nearest_of_kinds``); with the transformer that
# is a few milliseconds a prompt, paid once.
_QUERY_VECTORS: collections.OrderedDict[tuple[int, str], tuple[Any, Any]] = collections.OrderedDict()
_QUERY_VECTORS_MAX = 16
_query_lock = threading.Lock()


def query_vector(embedder: Embedder, text: str) -> Any:
    """``embedder``'s vector for ``text`` (read-only: callers never write into it)."""
    key = (id(embedder), text)
    with _query_lock:
        held = _QUERY_VECTORS.get(key)
        if held is not None and held[0] is embedder:
            _QUERY_VECTORS.move_to_end(key)
            return held[1]
    vector = embedder.embed_batch([text])[0]
    with _query_lock:
        _QUERY_VECTORS[key] = (embedder, vector)
        while len(_QUERY_VECTORS) > _QUERY_VECTORS_MAX:
            _QUERY_VECTORS.popitem(last=False)
    return vector


def _dense_only(
    store: MemoryReader, query: str, text: str, dense: DenseLeg | None, legs: tuple[str, ...], depth: int,
    include_inactive: bool, kinds: tuple[str, ...] | None, n_docs: int,
) -> Ranking:
    """The dense leg's nearest memories by cosine alone (a reference, not a face's search)."""
    if dense is None:
        return Ranking(query, [], legs, reason="the transformer is not ready")
    np = arrays.np()

    qv = query_vector(dense.embedder, text)
    if not np.any(qv):
        return Ranking(query, [], legs, reason="the query has nothing to encode")
    near = dense.index.nearest(qv, depth, revision=dense.revision, include_inactive=include_inactive)
    keep = _admitted(store, [rid for rid, _ in near], include_inactive, kinds)
    candidates = [Candidate(rid, 0.0, None, cosine=s, score=s, legs=("dense",)) for rid, s in near if rid in keep]
    return Ranking(query, candidates, legs, None, True, None, n_docs, dense.word_embedder, None, dense.tier)


def nearest_of_kinds(
    store: Any, text: str, dense: DenseLeg, kinds: frozenset[str], limit: int, margin: float, depth: int = 200,
    *, lexical: Mapping[int, int] | None = None, rank_k: float = 3.0, exclude: Collection[str] = (),
) -> list[tuple[Memory, float]]:
    """The active memories of ``kinds`` nearest ``text`` by meaning alone, at least
    ``margin`` above the text's dense background: [(memory, cosine)], nearest first; or,
    given ``lexical`` (row -> its rank in the lexical leg's order), the first ``limit`` of
    those in the order of ``1/(rank_k + dense rank) + 1/(rank_k + lexical rank)``. Memories
    ``exclude`` names are left out before either rank is counted.
    (Lessons for a request that no memory answers: ``Project.applicable``.)"""
    store = store_for(store)
    np = arrays.np()

    qv = query_vector(dense.embedder, text[:MAX_QUERY_CHARS])
    if not np.any(qv):
        return []
    background = wordvec.background(dense.embedder, qv)
    near = [(rid, s) for rid, s in dense.index.nearest(qv, depth, revision=dense.revision, include_inactive=False)
            if s - background >= margin]
    keep = _admitted(store, [rid for rid, _ in near], False, tuple(sorted(kinds)))
    chosen = [Candidate(rid, 0.0, cosine=s) for rid, s in near if rid in keep]
    if exclude:
        materialize(store, chosen[: limit + len(exclude)])
        chosen = [c for c in chosen if c.memory is None or c.memory.id not in exclude]
    give_way(store, chosen, limit)  # copies of one lesson leave room
    chosen = chosen[:limit]
    if lexical:
        def fused(i: int) -> float:
            at = lexical.get(chosen[i].rid)
            return 1.0 / (rank_k + i) + (1.0 / (rank_k + at) if at is not None else 0.0)

        chosen = [chosen[i] for i in sorted(range(len(chosen)), key=lambda i: (-fused(i), i))]
    materialize(store, chosen)
    return [(c.memory, c.cosine) for c in chosen if c.memory is not None and c.cosine is not None]


def _unmatched(
    store: MemoryReader, found: Sequence[Candidate], plan: lexical.QueryPlan, *, include_inactive: bool,
    kinds: tuple[str, ...] | None, inactive: frozenset[int] | None = None,
) -> list[Candidate]:
    """A small project's memories that BM25 did not reach, after the ones it did (score 0).
    Without the dense leg this is how "missing ages" still reaches "Impute age ...":
    answerability matches a word's singular and plural, which a prefix cannot. Only those
    it finds confident are shown (``decide``)."""
    rids = store.rids()
    seen = {c.rid for c in found}
    keep = _admitted(store, [rid for rid in rids if rid not in seen], include_inactive, kinds, inactive)
    return [Candidate(rid, 0.0, plan) for rid in sorted(keep)]


def _prefer_active(store: MemoryReader, candidates: list[Candidate]) -> None:
    """A question about the current value: closed memories rank after the active ones
    that replaced them (history was asked for, so both are shown)."""
    materialize(store, candidates)
    for c in candidates:
        if not c.memory.active:
            c.score *= PAST_FACTOR
    candidates.sort(key=lambda c: (-c.score, c.rid))


def names_share(text: str) -> float:
    """The share of a query's words past the first that begin with a capital letter
    (names, acronyms; the first word is capitalised in any sentence)."""
    words = _WORD.findall(text)
    if len(words) < 2:
        return 0.0
    return sum(1 for w in words[1:] if w[:1].isupper()) / (len(words) - 1)


def words_weight(lead: float, names: float) -> float:
    """The words' extra weight in the transformer's fusion for one query: ``lead`` is how
    far the lexical leg's best BM25 stands above its runner-up's (1 - second/best),
    ``names`` the query's ``names_share``. Both are known before any answer is."""
    return min(1.0, max(0.0, TX_WORDS_BASE + TX_WORDS_LEAD * lead + TX_WORDS_NAMES * names))


def _transformer_score(c: Candidate, best: float, weight: float, extra: float = 0.0) -> float:
    """The transformer tier's fusion: its cosine orders, the words add a bonus. Its cosine
    says more than the static model's, and BM25 over the query's best is 1 for the
    best lexical candidate of any query, even one that shares only a common word with
    memory (a paraphrase); the query's covered weight (BM25 over the query's own IDF
    weight) is what the words really say, on one scale for every query. ``extra``
    (``words_weight``) adds to the best's weight for a query that names things."""
    cosine = max(0.0, c.cosine or 0.0)
    if c.bm25 <= 0:
        return cosine
    cover = min(1.0, c.bm25 / weight) if weight > 0 else 0.0
    return cosine + (TX_BEST_WEIGHT + extra) * (c.bm25 / best) + TX_COVER_WEIGHT * cover**TX_COVER_POWER


def _fuse(
    store: MemoryReader,
    text: str,
    lex: list[Candidate],
    dense: DenseLeg,
    *,
    include_inactive: bool,
    kinds: tuple[str, ...] | None,
    small: bool = False,
    names: float = 0.0,
) -> tuple[list[Candidate], float | None]:
    """Lexical candidates re-scored with their cosines, plus the dense leg's own finds;
    and the query's dense background (None when the query has no vector). In a ``small``
    project every memory is a candidate: those below the background get score 0 and are
    shown only when answerability finds them confident (``decide``). ``names``: the
    query's ``names_share``."""
    np = arrays.np()

    qv = query_vector(dense.embedder, text)
    if not np.any(qv):
        for c in lex:
            c.score = c.bm25
        return lex, None
    background = wordvec.background(dense.embedder, qv)
    near = dense.index.nearest(qv, DENSE_K, revision=dense.revision, include_inactive=include_inactive)
    cos = dense.index.cosines(qv, [c.rid for c in lex])
    by_rid = {c.rid: c for c in lex}
    fresh = [(rid, s) for rid, s in near if rid not in by_rid and (small or s - background >= DENSE_ONLY_MARGIN)]
    out = list(lex)
    if fresh:
        keep = _admitted(store, [rid for rid, _ in fresh], include_inactive, kinds)  # read: see _admitted
        out += [Candidate(rid, 0.0, None, cosine=s, legs=("dense",)) for rid, s in fresh if rid in keep]
    best = max((c.bm25 for c in lex), default=0.0) or 1.0
    transformer = dense.tier == "transformer"
    weight = next((c.plan.total_weight for c in lex if c.plan is not None), 0.0)
    extra = 0.0
    if transformer:
        top = heapq.nlargest(2, (c.bm25 for c in lex if c.bm25 > 0))
        extra = words_weight(1.0 - top[1] / top[0] if len(top) == 2 else 1.0, names)
    for c in out:
        if c.cosine is None:
            c.cosine = cos.get(c.rid)
        if c.cosine is not None and c.bm25 > 0:
            c.legs = (*c.legs, "dense")
        if transformer:
            c.score = _transformer_score(c, best, weight, extra)
        else:
            c.score = LEXICAL_WEIGHT * (c.bm25 / best) + DENSE_WEIGHT * max(0.0, c.cosine or 0.0)
        if c.bm25 <= 0 and (c.cosine or 0.0) - background < DENSE_ONLY_MARGIN:
            c.score = 0.0  # a small project's memory below the background
    out.sort(key=lambda c: (-c.score, c.rid))
    return out, background
