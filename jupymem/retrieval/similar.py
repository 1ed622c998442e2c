"""A new statement -> the active memories it nearly repeats (near-duplicates).

Audits of assistant memories elsewhere found about one entry in five repeating
another. jupymem still records the new statement (a person may mean both), but
every face names the close ones, so the person can supersede the old one instead.

Search answers "which memory answers this question?"; this answers "is this the
same statement again?", which needs an absolute score, not a ranking: BM25 is
normalized by the best candidate of each query, so it cannot say how close the
best one is. The score here is symmetric and lies in [0, 1]:

* **lexical**: the harmonic mean of two shares, the share of the statement's
  content words the memory holds and the share of the memory's own content words
  the statement hits (stems on both sides, as search judges relevance). A
  restatement scores high on both; a short memory inside a long statement, or a
  different fact on the same subject, scores high on one only. The shares are
  not weighted by IDF: in a project of a few memories every shared word looks
  common, and a restatement would go unnoticed exactly where memory starts.
* **fused**, when the dense leg is answering: ``LEXICAL_SHARE * lexical +
  (1 - LEXICAL_SHARE) * cosine`` (``TRANSFORMER_SHARE`` with the transformer's cosine). A memory is named when either score passes its
  own threshold: the words alone already name every restatement of the suite's
  tuning part, and the encoder adds paraphrases that share few words (with the
  WordNet-trained encoder the fused score alone missed restatements the words
  found). Without the dense leg the lexical score decides alone.

Candidates are the memories search would look at first (the BM25 leg's best,
and the dense leg's nearest), active ones only: a retired or superseded memory
is no longer something to supersede. Weights and thresholds were measured on
the near-duplicate suite (``tests/gold/near_duplicates.jsonl``: restatements and
updates of gold memories, against every other gold memory); see
``benchmarks/README.md``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import lexical
from .lexical import doc_terms, term_span
from .retrieve import Candidate, lexical_candidates, materialize
from ..models import Similar

if TYPE_CHECKING:
    from .postings import Postings
    from .retrieve import DenseLeg

# Chosen on the tuning half of the near-duplicate suite (benchmarks/tune_similar.py).
LEXICAL_SHARE = 0.7
FUSED_THRESHOLD = 0.70
# The transformer's cosine says more (F1 1.000 on both halves of the suite at these,
# where the static tier's weights missed one restatement of the tuning half).
TRANSFORMER_SHARE = 0.3
TRANSFORMER_THRESHOLD = 0.70
LEXICAL_THRESHOLD = 0.60
DEPTH = 10  # candidates from each leg
LIMIT = 3  # near-duplicates named at most


@dataclass
class Pair:
    """What the scores are made of, for one candidate (kept apart for tuning)."""

    candidate: Candidate
    statement_share: float  # share of the statement's content words the memory holds
    memory_share: float  # share of the memory's content words the statement hits
    cosine: float | None

    @property
    def lexical(self) -> float:
        a, b = self.statement_share, self.memory_share
        return 2 * a * b / (a + b) if a + b else 0.0

    def score(self, lexical_share: float = LEXICAL_SHARE) -> float:
        if self.cosine is None:
            return self.lexical
        return lexical_share * self.lexical + (1 - lexical_share) * max(0.0, self.cosine)


def _shares(plan: lexical.QueryPlan, text: str) -> tuple[float, float]:
    doc = doc_terms(text)
    if not doc or not plan.terms:
        return 0.0, 0.0
    covered: set[int] = set()
    hit = 0
    for t in plan.terms:
        span = term_span(doc, t)
        if span:
            hit += 1
            covered.update(span)
    return hit / len(plan.terms), len(covered) / len(doc)


def pairs(
    store: Any,
    statement: str,
    *,
    n_docs: int,
    dense: DenseLeg | None,
    exclude: Collection[str] = (),
    depth: int = DEPTH,
    index: Postings | None = None,
    closed: bool | None = False,
) -> list[Pair]:
    """Every candidate with its shares and cosine, unsorted (``similar`` and tuning use it).
    ``index``: the in-process BM25 index, for a store that has no BM25 of its own.
    ``closed``: retired and superseded memories instead of active ones, None: both (what
    an unconfirmed record must not bring back in other words, ``SearchEngine.reopens``)."""
    if not statement.strip():
        return []
    plan = lexical.plan(store, statement, n_docs, frequencies=index)
    found = {c.rid: c for c in lexical_candidates(store, plan, depth=depth, include_inactive=closed is not False, kinds=None,
                                                  index=index)}
    cosines: dict[int, float] = {}
    if dense is not None:
        qv = dense.embedder.embed_batch([statement])[0]
        for rid, cos in dense.index.nearest(qv, depth, revision=dense.revision,
                                            include_inactive=closed is not False):
            cosines[rid] = cos
            found.setdefault(rid, Candidate(rid, 0.0, plan))
        cosines.update(dense.index.cosines(qv, [rid for rid in found if rid not in cosines]))
    candidates = list(found.values())
    materialize(store, candidates)
    out = []
    for c in candidates:
        m = c.memory
        if m.id in exclude or (closed is not None and m.active == closed):
            continue
        text = " ".join(filter(None, (m.statement, m.topic, m.original)))
        a, b = _shares(plan, text)
        out.append(Pair(c, a, b, cosines.get(c.rid, 0.0) if dense is not None else None))
    return out


def similar(found: Iterable[Pair], dense: DenseLeg | None, limit: int = LIMIT) -> list[Similar]:
    """Of the ``pairs`` found with ``dense``, the memories whose score passes the
    threshold, closest first."""
    return [
        Similar(p.candidate.memory.id, p.candidate.memory.kind, p.candidate.memory.statement, round(s, 3))
        for s, p in passing(found, dense)[:limit]
    ]


def passing(found: Iterable[Pair], dense: DenseLeg | None) -> list[tuple[float, Pair]]:
    """(score, pair) for each pair whose score passes its threshold, closest first."""
    scored = []
    tx = dense is not None and dense.tier == "transformer"
    share, threshold = (TRANSFORMER_SHARE, TRANSFORMER_THRESHOLD) if tx else (LEXICAL_SHARE, FUSED_THRESHOLD)
    for p in found:
        words = p.lexical
        fused = p.score(share) if p.cosine is not None else None
        if words >= LEXICAL_THRESHOLD or (fused is not None and fused >= threshold):
            scored.append((max(words, fused or 0.0), p))
    scored.sort(key=lambda sp: (-sp[0], sp[1].candidate.memory.id))
    return scored
