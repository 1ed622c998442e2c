"""The lexical leg: user text -> a safe FTS5 query over the most selective terms.

Any text a person or an assistant types is a valid query. We never hand user
text to FTS5's query language: the query is tokenized here exactly as the
``unicode61 remove_diacritics 2`` tokenizer tokenizes the index, and each
term goes back quoted, so ``AND``, ``*``, ``:``, quotes and parentheses are
just words (or nothing). Whole prompts are queries too, so stopwords go, at
most the 12 most selective terms are kept, and on large projects terms that
occur in more than 5% of memories are dropped: their BM25 weight is near zero
while scoring every row they occur in is not.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

MAX_TERMS = 12
COMMON_FRACTION = 0.05
LARGE_PROJECT = 5000

# unicode61 splits on everything that is not a letter or a number ("_" included).
_TOKEN = re.compile(r"[^\W_]+")

# Query-side only: the index keeps every word, so a quote still matches exactly.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren arent as at be because been before being
    below between both but by can cannot could couldn did didn do does doesn doing don dont down during each
    few for from further had hadn has hasn have haven having he her here hers herself him himself his how i
    if in into is isn it its itself just let lets me more most mustn my myself no nor not now of off on once
    only or other ought our ours ourselves out over own same shan she should shouldn so some such than that
    thats the their theirs them themselves then there these they this those through to too under until up
    very was wasn we were weren what whats when where which while who whom why will with won would wouldn
    you your yours yourself yourselves also us ll ve re d s t m o y via etc e g ie eg

    please thanks thank hi hello hey tell remind know want wanted think thought say said says maybe
    anything something everything someone really actually just quite rather kind sort going get got
    give us use used using make made way thing things again still already yes ok okay sure help

    el la los las un una unos unas de del al y o que en por para con sin es son se su sus lo como mas pero
    le les des du et ou est sont au aux ce cette ces qui dans pour avec sur pas une
    der die das den dem des ein eine einen einem und oder ist sind nicht mit von zu im auf für wir ich
    o os as um uma e do da dos das em no na nos nas com sem ao
    """.split()
)


def fold(text: str) -> str:
    """Casefold and strip diacritics, as the index's tokenizer does."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(fold(text))


def content_terms(text: str) -> list[str]:
    """Distinct non-stopword tokens in first-seen order."""
    seen: dict[str, None] = {}
    for t in tokens(text):
        if t not in STOPWORDS and t not in seen:
            seen[t] = None
    return list(seen)


def idf(df: int, n: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class QueryPlan:
    terms: tuple[str, ...]  # every content term of the query
    selected: tuple[str, ...]  # the ones sent to FTS5
    df: dict[str, int]
    n_docs: int

    @property
    def match(self) -> str:
        return " OR ".join(quote_term(t) for t in self.selected)

    def weight(self, term: str) -> float:
        return idf(self.df.get(term, 0), self.n_docs)


def quote_term(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def document_frequencies(conn: Any, terms: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in range(0, len(terms), 400):
        chunk = list(terms[i : i + 400])
        marks = ",".join("?" * len(chunk))
        for term, doc in conn.execute(f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", chunk):
            out[term] = doc
    return out


def plan(conn: Any, query: str, n_docs: int, extra_terms: Iterable[str] = ()) -> QueryPlan:
    terms = content_terms(query)
    for t in extra_terms:
        if t not in terms:
            terms.append(t)
    df = document_frequencies(conn, terms) if terms else {}
    present = [t for t in terms if df.get(t, 0) > 0]
    if n_docs > LARGE_PROJECT and present:
        ceiling = COMMON_FRACTION * n_docs
        rare = [t for t in present if df[t] <= ceiling]
        present = rare or [min(present, key=lambda t: df[t])]
    selected = sorted(present, key=lambda t: (df[t], t))[:MAX_TERMS]
    return QueryPlan(tuple(terms), tuple(selected), df, n_docs)
