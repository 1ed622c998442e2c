"""Query -> ranked memories, or an honest "abstained".

Three legs feed one ranking:

* **lexical** (``lexical.py``): FTS5 BM25 over the query's most selective terms,
  stemmed to prefixes;
* **fuzzy** (``fuzzy.py``): query words that occur in no memory are replaced by the
  closest name or word memory does use, before the lexical leg runs;
* **dense** (``index.py``): cosine between the query's model2vec vector and each
  memory's.

Fusion is a weighted sum of scores, not reciprocal-rank fusion: with a weak static
model, equal-weight RRF lets the dense leg's noisy ranks outvote BM25 (measured
worse than BM25 alone), while a score sum keeps the dense leg's say proportional
to how close it really is. The lexical score is BM25 divided by the best BM25 of
the query, so both terms lie in [0, 1]. Weights were chosen on a tuning split of
SciFact held apart from the queries we report (``benchmarks/README.md``).
The dense leg re-scores lexical candidates; a memory *only* the dense leg finds
enters only when it is close (cosine >= ``DENSE_ONLY_COSINE``) and clearly ahead of
the crowd (its cosine exceeds the dense leg's background, the median cosine of the
nearest ``DENSE_K``, by ``DENSE_ONLY_MARGIN``).

Whether the best candidate *really* matches is a separate question from ranking,
answered with a relevance ratio that BM25's unbounded scores cannot give: the
share of the query's weight (IDF) the memory covers, or the share of the memory's
own words the query hits, whichever is larger. A short query fully inside a long
memory and a long prompt that contains a short memory both score high; a prompt
that shares one ordinary word with a memory does not. A dense-only candidate that
passed its gate is a match too. Otherwise the answer is "abstained" rather than the
least-bad hits.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import arrays, lexical
from ..models import ACTIVE, Hit, Memory, SearchResult
from ..projection import MEMORY_COLUMNS, memory_from_row

if TYPE_CHECKING:
    from .embed import Embedder
    from .fuzzy import Vocabulary
    from .index import DenseIndex

# Below this relevance the best candidate is not a real match: the smallest value that
# abstains on >= 90% of the must-abstain queries of the gold suite's tuning third
# (benchmarks/README.md); it costs about 4% of SciFact's real queries.
ABSTAIN_BELOW = 0.32
# Lexical mode: a candidate this much stronger (BM25) than the runner-up is returned whole.
CLEAR_WINNER = 1.5
# Hybrid mode: the same, as a lead in fused score over the runner-up.
CLEAR_LEAD = 0.25
MAX_QUERY_CHARS = 20_000

# Fusion (see module docstring). Chosen on held-apart data; benchmarks/tune_fusion.py.
LEXICAL_WEIGHT = 0.6
DENSE_WEIGHT = 1.0 - LEXICAL_WEIGHT
LEXICAL_DEPTH = 100  # lexical candidates the dense leg re-scores
DENSE_K = 20  # nearest neighbours the dense leg proposes
DENSE_ONLY_COSINE = 0.6
DENSE_ONLY_MARGIN = 0.2
# Two legs agreeing is evidence neither gives alone: a memory in the top AGREE_K of both
# the lexical and the dense ranking, with at least AGREE_FLOOR relevance, is a match
# (paraphrases share few words, and must-abstain queries rarely have such agreement).
AGREE_K = 2
AGREE_FLOOR = 0.15

MODES = ("hybrid", "lexical", "fts")


@dataclass(frozen=True)
class DenseLeg:
    """What retrieval needs from the dense side, ready to answer now."""

    embedder: Embedder
    index: DenseIndex
    revision: int


@dataclass
class Candidate:
    rid: int
    bm25: float  # positive, larger is better; 0 when the lexical leg did not find it
    plan: lexical.QueryPlan | None = None
    memory: Memory = None  # type: ignore[assignment]  # filled by materialize, for the few looked at
    cosine: float | None = None
    score: float = 0.0
    legs: tuple[str, ...] = ("lexical",)
    gated: bool = False  # a dense-only candidate that passed the gate, or both legs agree

    @functools.cached_property
    def relevance(self) -> float:
        """0..1, see the module docstring; computed only for candidates someone looks at."""
        return relevance(self.plan, self.memory) if self.plan is not None else 0.0


@functools.lru_cache(maxsize=32768)
def doc_terms(text: str) -> tuple[str, ...]:
    """A memory's content words, sorted (statements never change: cached by text)."""
    return tuple(sorted(set(lexical.content_terms(text))))


def term_span(doc: tuple[str, ...], term: lexical.Term) -> range:
    """Indexes of the words of ``doc`` that ``term`` matches."""
    lo = bisect.bisect_left(doc, term.key)
    if not term.prefix:
        return range(lo, lo + 1) if lo < len(doc) and doc[lo] == term.key else range(0)
    return range(lo, bisect.bisect_left(doc, term.key + "\U0010ffff", lo))


def relevance(plan: lexical.QueryPlan, memory: Memory) -> float:
    doc = doc_terms(" ".join(filter(None, (memory.statement, memory.topic, memory.original))))
    if not doc or not plan.terms:
        return 0.0
    covered: set[int] = set()
    matched = []
    for t in plan.terms:
        span = term_span(doc, t)
        if span:
            matched.append(t)
            covered.update(span)
    if not matched:
        return 0.0
    q_share = sum(plan.weight(t) for t in matched) / plan.total_weight
    d_share = len(covered) / len(doc)
    return min(1.0, max(q_share, d_share))


def _memories(conn: Any, rids: Sequence[int]) -> dict[int, Memory]:
    out: dict[int, Memory] = {}
    rids = list(rids)
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT rid, {MEMORY_COLUMNS} FROM memories WHERE rid IN ({marks})", chunk):
            out[row[0]] = memory_from_row(row[1:])
    return out


def _admitted(conn: Any, rids: Sequence[int], include_inactive: bool, kinds: tuple[str, ...] | None) -> set[int]:
    """The rows among ``rids`` that pass the status and kind filters (no JSON decoded)."""
    if not rids:
        return set()
    marks = ",".join("?" * len(rids))
    sql, params = f"SELECT rid FROM memories WHERE rid IN ({marks})", list(rids)
    if not include_inactive:
        sql += " AND +status = ?"  # unary +: look rows up by rid, not through the status index
        params.append(ACTIVE)
    if kinds:
        sql += f" AND +kind IN ({','.join('?' * len(kinds))})"
        params.extend(kinds)
    return {r[0] for r in conn.execute(sql, params).fetchall()}


def materialize(conn: Any, candidates: Sequence[Candidate]) -> None:
    missing = [c for c in candidates if c.memory is None]
    if missing:
        found = _memories(conn, [c.rid for c in missing])
        for c in missing:
            c.memory = found[c.rid]


def lexical_candidates(
    conn: Any, plan: lexical.QueryPlan, *, depth: int, include_inactive: bool, kinds: tuple[str, ...] | None
) -> list[Candidate]:
    """BM25 candidates, best first, with their memory rows not yet read (``materialize``)."""
    if not plan.selected:
        return []
    # ORDER BY the result column rather than a second bm25() expression: the same rows in
    # the same order, and ~6% less time in this query (most of a search's time) at 100,000.
    rows = conn.execute(
        "SELECT rowid, bm25(memories_fts, 1.0, 0.4, 0.8) AS s FROM memories_fts"
        " WHERE memories_fts MATCH ? ORDER BY s LIMIT ?",
        (plan.match, depth),
    ).fetchall()
    keep = _admitted(conn, [r[0] for r in rows], include_inactive, kinds)
    out = [Candidate(rid, -score, plan) for rid, score in rows if rid in keep]
    out.sort(key=lambda c: (-c.bm25, c.rid))
    return out


@dataclass
class _Query:
    text: str
    plan: lexical.QueryPlan
    fixed: dict[str, str] = field(default_factory=dict)


def _plan(conn: Any, text: str, n_docs: int, mode: str, vocab: Vocabulary | None) -> _Query:
    stems = mode != "fts"
    plan = lexical.plan(conn, text, n_docs, stems=stems)
    if vocab is None or mode == "fts":
        return _Query(text, plan)
    unknown = {t.word for t in plan.terms if plan.df.get(t.key, 0) == 0}
    if not unknown:
        return _Query(text, plan)
    from .fuzzy import corrections

    if not vocab.refresh(conn):  # still reading a large project's names in the background
        return _Query(text, plan)
    fixed = corrections(vocab, text, unknown)
    if not fixed:
        return _Query(text, plan)
    return _Query(text, lexical.plan(conn, text, n_docs, stems=stems, replace=fixed), fixed)


def _abstained(query: str, reason: str) -> SearchResult:
    return SearchResult(query=query, status="abstained", reason=reason)


def search(
    conn: Any,
    query: str,
    *,
    n_docs: int,
    limit: int = 10,
    include_inactive: bool = False,
    kinds: tuple[str, ...] | None = None,
    mode: str = "hybrid",
    dense: DenseLeg | None = None,
    vocab: Vocabulary | None = None,
) -> SearchResult:
    """``mode``: "hybrid" (every leg available), "lexical" (BM25 with stems and fuzzy
    identifiers, no vectors) or "fts" (plain FTS5 BM25, for measuring the others)."""
    text = query[:MAX_QUERY_CHARS] if isinstance(query, str) else ""
    if not text.strip():
        return _abstained(query if isinstance(query, str) else "", "empty query")
    if mode != "hybrid":
        dense = None
    q = _plan(conn, text, n_docs, mode, vocab)
    plan = q.plan
    if not plan.terms and dense is None:
        return _abstained(query, "the query has no searchable words")
    depth = LEXICAL_DEPTH if dense is not None else max(4 * limit, 40)
    candidates = lexical_candidates(conn, plan, depth=depth, include_inactive=include_inactive, kinds=kinds)
    if q.fixed:
        for c in candidates:
            c.legs = ("lexical", "fuzzy")
    if dense is not None:
        candidates = _fuse(conn, text, candidates, dense, include_inactive=include_inactive, kinds=kinds)
    else:
        for c in candidates:
            c.score = c.bm25
    if not candidates:
        if not plan.selected and dense is None:
            return _abstained(query, "no word of the query occurs in memory")
        return _abstained(query, "no memory matches")
    materialize(conn, candidates[:limit])
    if not any(c.relevance >= ABSTAIN_BELOW or c.gated for c in candidates[:limit]):
        materialize(conn, candidates)
        if not any(c.relevance >= ABSTAIN_BELOW or c.gated for c in candidates):
            return _abstained(query, "nothing matches closely enough")
    hits = tuple(Hit(c.memory, round(c.score, 4), c.legs) for c in candidates[:limit])
    return SearchResult(query=query, status="ok", hits=hits, full=_full(candidates, hybrid=dense is not None))


def _full(candidates: list[Candidate], *, hybrid: bool) -> Memory | None:
    top = candidates[0]
    if not (top.relevance >= ABSTAIN_BELOW or top.gated):
        return None
    if len(candidates) == 1:
        return top.memory
    second = candidates[1].score
    clear = top.score - second >= CLEAR_LEAD if hybrid else top.score >= CLEAR_WINNER * second
    return top.memory if clear else None


def _fuse(
    conn: Any,
    text: str,
    lex: list[Candidate],
    dense: DenseLeg,
    *,
    include_inactive: bool,
    kinds: tuple[str, ...] | None,
) -> list[Candidate]:
    np = arrays.np()

    qv = dense.embedder.embed_batch([text])[0]
    if not np.any(qv):
        for c in lex:
            c.score = c.bm25
        return lex
    near = dense.index.nearest(qv, DENSE_K, revision=dense.revision, include_inactive=include_inactive)
    cos = dense.index.cosines(qv, [c.rid for c in lex])
    background = float(np.median([s for _, s in near])) if near else 0.0
    by_rid = {c.rid: c for c in lex}
    dense_top = {rid for rid, _ in near[:AGREE_K]}
    materialize(conn, lex[:AGREE_K])
    for c in lex[:AGREE_K]:  # lex is in BM25 order
        if c.rid in dense_top and c.relevance >= AGREE_FLOOR:
            c.gated = True
    fresh = [
        (rid, s)
        for rid, s in near
        if rid not in by_rid and s >= DENSE_ONLY_COSINE and s - background >= DENSE_ONLY_MARGIN
    ]
    out = list(lex)
    if fresh:
        keep = _admitted(conn, [rid for rid, _ in fresh], include_inactive, kinds)
        out += [Candidate(rid, 0.0, None, cosine=s, legs=("dense",), gated=True) for rid, s in fresh if rid in keep]
    best = max((c.bm25 for c in lex), default=0.0) or 1.0
    for c in out:
        if c.cosine is None:
            c.cosine = cos.get(c.rid)
        if c.cosine is not None and c.bm25 > 0:
            c.legs = (*c.legs, "dense")
        c.score = LEXICAL_WEIGHT * (c.bm25 / best) + DENSE_WEIGHT * max(0.0, c.cosine or 0.0)
    out.sort(key=lambda c: (-c.score, c.rid))
    return out
