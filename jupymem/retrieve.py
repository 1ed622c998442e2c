"""Query -> ranked memories, or an honest "abstained".

The lexical leg (``lexical.py``) finds candidates with FTS5 BM25. Whether the
best of them *really* matches is a separate question, answered here with a
relevance ratio that BM25's unbounded scores cannot give: the share of the
query's weight (IDF) the memory covers, or the share of the memory's own
words the query hits, whichever is larger. A short query fully inside a long
memory and a long prompt that contains a short memory both score high; a
prompt that shares one ordinary word with a memory does not, and the answer
is "abstained" rather than the least-bad hits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import lexical
from .models import ACTIVE, Hit, Memory, SearchResult
from .projection import MEMORY_COLUMNS, memory_from_row

# Below this relevance the best candidate is not a real match (tuned on the gold suites).
ABSTAIN_BELOW = 0.45
# A candidate this much stronger than the runner-up is returned as a full record.
CLEAR_WINNER = 1.5
MAX_QUERY_CHARS = 20_000


@dataclass(frozen=True)
class Candidate:
    memory: Memory
    bm25: float  # positive, larger is better
    relevance: float  # 0..1, see module docstring


def relevance(plan: lexical.QueryPlan, memory: Memory) -> float:
    doc_terms = set(lexical.content_terms(" ".join(filter(None, (memory.statement, memory.topic, memory.original)))))
    if not doc_terms or not plan.terms:
        return 0.0
    matched = [t for t in plan.terms if t in doc_terms]
    if not matched:
        return 0.0
    # The query's weight counts at most its MAX_TERMS heaviest words, so a long
    # prompt is judged on what it is about, not on its length.
    weights = sorted((plan.weight(t) for t in plan.terms), reverse=True)[: lexical.MAX_TERMS]
    q_share = sum(plan.weight(t) for t in matched) / sum(weights)
    d_share = len(matched) / len(doc_terms)
    return min(1.0, max(q_share, d_share))


def lexical_candidates(
    conn: Any, plan: lexical.QueryPlan, *, depth: int, include_inactive: bool, kinds: tuple[str, ...] | None
) -> list[Candidate]:
    if not plan.selected:
        return []
    rows = conn.execute(
        "SELECT rowid, -bm25(memories_fts, 1.0, 0.4, 0.8) AS s FROM memories_fts"
        " WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts, 1.0, 0.4, 0.8) LIMIT ?",
        (plan.match, depth),
    ).fetchall()
    if not rows:
        return []
    scores = {rid: s for rid, s in rows}
    marks = ",".join("?" * len(scores))
    found = conn.execute(f"SELECT rid, {MEMORY_COLUMNS} FROM memories WHERE rid IN ({marks})", list(scores)).fetchall()
    out = []
    for row in found:
        memory = memory_from_row(row[1:])
        if not include_inactive and memory.status != ACTIVE:
            continue
        if kinds and memory.kind not in kinds:
            continue
        out.append(Candidate(memory, scores[row[0]], relevance(plan, memory)))
    out.sort(key=lambda c: (-c.bm25, c.memory.id))
    return out


def search(
    conn: Any,
    query: str,
    *,
    n_docs: int,
    limit: int = 10,
    include_inactive: bool = False,
    kinds: tuple[str, ...] | None = None,
) -> SearchResult:
    text = query[:MAX_QUERY_CHARS] if isinstance(query, str) else ""
    if not text.strip():
        return SearchResult(query=query if isinstance(query, str) else "", status="abstained", reason="empty query")
    plan = lexical.plan(conn, text, n_docs)
    if not plan.terms:
        return SearchResult(query=query, status="abstained", reason="the query has no searchable words")
    if not plan.selected:
        return SearchResult(query=query, status="abstained", reason="no word of the query occurs in memory")
    candidates = lexical_candidates(
        conn, plan, depth=max(4 * limit, 40), include_inactive=include_inactive, kinds=kinds
    )
    if not candidates:
        return SearchResult(query=query, status="abstained", reason="no memory matches")
    if max(c.relevance for c in candidates) < ABSTAIN_BELOW:
        return SearchResult(query=query, status="abstained", reason="nothing matches closely enough")
    hits = tuple(Hit(c.memory, round(c.bm25, 4), ("lexical",)) for c in candidates[:limit])
    full = None
    if len(candidates) == 1 or candidates[0].bm25 >= CLEAR_WINNER * candidates[1].bm25:
        if candidates[0].relevance >= ABSTAIN_BELOW:
            full = candidates[0].memory
    return SearchResult(query=query, status="ok", hits=hits, full=full)
