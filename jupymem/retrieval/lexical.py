"""The lexical leg's query side: user text -> the terms BM25 scores it with.

Any text a person or an assistant types is a valid query. We never hand user text to
FTS5's query language: the query is tokenized exactly as the index's ``unicode61
remove_diacritics 2`` tokenizer tokenizes memory (``tokenize.py``), and each term goes
back quoted, so ``AND``, ``*``, ``:``, quotes and parentheses are just words (or
nothing). Stopwords go. Every other word is searched, however common and however long
the prompt: dropping common words, or keeping only the rarest twelve, bought speed with
quality (issue 8: ~0.04 nDCG@10 on SciFact). Speed now comes from scoring them in memory
(``postings.py``), not from scoring fewer.

Matching is a little looser than the index's exact tokens, because people write
"joined" for "joins" and ``customerId`` for "customer id"; each looseness was kept only
where it measured better than exact words on our gold suites (``benchmarks/README.md``):

* each term is cut to a light English stem and searched as a prefix (``"partition"*``
  finds partitions, partitioned, partitioning). A stem is always a prefix of its own
  word, so a word finds itself: "properties" searches ``"propert"*`` (property and
  properties), never ``"property"*``. The index keeps its exact tokens; the query side
  stems. Short stems stay exact, since ``"id"*`` would find idea and identity.
* a camelCase word is split into its parts only when memory does not hold the whole
  word but holds every part (``customerId`` -> customer, id), and only if it is shaped
  like a code identifier: ``mRNAs``, ``Ly6C`` or ``iPSC`` stay whole. (``df_sales`` is
  already two tokens to the tokenizer.)
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..storage.database import in_batches
from .tokenize import fold as fold, tokens  # fold is lexical.fold to the rest of retrieval

# A long prompt's weight (for judging relevance, not for searching: every word is
# searched) is that of its MAX_TERMS heaviest terms, so it is judged on what it is
# about rather than on its length.
MAX_TERMS = 12
# A stem this long is searched as a prefix; shorter ones stay exact words.
PREFIX_MIN = 4

# Words as a person typed them (case kept), for spotting camelCase.
_WORD = re.compile(r"[^\W_]+")

# Query-side only: the index keeps every word, so a quote still matches exactly. Folded,
# as tokens are (für -> fur).
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
    der die das den dem des ein eine einen einem und oder ist sind nicht mit von zu im auf fur wir ich
    o os as um uma e do da dos das em no na nos nas com sem ao
    """.split()
)



def content_terms(text: str) -> list[str]:
    """Distinct non-stopword tokens in first-seen order."""
    seen: dict[str, None] = {}
    for t in tokens(text):
        if t not in STOPWORDS and t not in seen:
            seen[t] = None
    return list(seen)


# A code identifier's shape: a lower-case word, a capitalized word or an acronym, then
# more capitalized words or acronyms, letters only (customerId, accountRegion, HTTPServer,
# getJSON). Names such as mRNAs, iPSC, ompF or Ly6C do not have it.
_CAMEL_WORD = re.compile(r"(?:[a-z]{2,}|[A-Z][a-z]+|[A-Z]{2,}(?=[A-Z][a-z]))(?:[A-Z][a-z]+|[A-Z]{2,}(?=[A-Z][a-z]|$))+")
_CAMEL_PART = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|$)|[A-Z]?[a-z]+")


def identifier_parts(text: str) -> dict[str, list[str]]:
    """camelCase words -> their folded parts: ``customerId`` -> {"customerid": [customer, id]}.

    Only words shaped like code identifiers are split; ``plan`` uses the parts only when
    memory does not know the whole word and knows every part.
    """
    out: dict[str, list[str]] = {}
    for word in _WORD.findall(text):
        if word.islower() or word.isupper() or not word.isascii() or not _CAMEL_WORD.fullmatch(word):
            continue
        out[word.lower()] = [p.lower() for p in _CAMEL_PART.findall(word)]
    return out


# A light English stemmer (the common inflections only). The stem is searched as a
# prefix, so it never has to be a word, but it must be a prefix of the word it came
# from: "properties" searches "propert*", which finds property and properties alike.
# The same function stems the memory's words when judging relevance, so both sides agree.
_SUFFIXES = (
    "ational", "ization", "fulness", "ousness", "iveness", "ations", "ation", "ments", "ment",
    "ities", "ity", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s",
)


@functools.lru_cache(maxsize=65536)
def stem(term: str) -> str:
    if len(term) <= 4 or not term.isalpha():
        return term
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 4:
            if suffix == "s" and term.endswith("ss"):
                return term
            base = term[: -len(suffix)]
            if len(base) > 4 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # planned -> plann -> plan
            return base
    return term


def idf(df: int, n: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class Term:
    """One query term: ``key`` is what FTS5 searches, a word or (``prefix``) a stem."""

    word: str
    key: str
    prefix: bool

    @property
    def fts(self) -> str:
        return quote_term(self.key) + ("*" if self.prefix else "")

    def matches(self, doc_terms: Iterable[str]) -> bool:
        if self.prefix:
            return any(t.startswith(self.key) for t in doc_terms)
        return self.key in doc_terms


class Frequencies(Protocol):
    def frequencies(self, terms: Sequence[Term]) -> dict[str, int]:
        """Documents holding each term, by ``Term.key``."""


@dataclass(frozen=True)
class QueryPlan:
    terms: tuple[Term, ...]  # every content term of the query
    selected: tuple[Term, ...]  # the terms memory holds (all are searched), rarest first
    df: dict[str, int]  # by term key
    n_docs: int

    @property
    def match(self) -> str:
        return " OR ".join(t.fts for t in self.selected)

    def weight(self, term: Term) -> float:
        return self.weights[term.key]

    @functools.cached_property
    def weights(self) -> dict[str, float]:
        return {t.key: idf(min(self.df.get(t.key, 0), self.n_docs), self.n_docs) for t in self.terms}

    @functools.cached_property
    def total_weight(self) -> float:
        """The query's weight: its MAX_TERMS heaviest terms, so a long prompt is judged
        on what it is about, not on its length."""
        return sum(sorted(self.weights.values(), reverse=True)[:MAX_TERMS])

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(t.word for t in self.terms)


@functools.lru_cache(maxsize=32768)
def doc_terms(text: str) -> tuple[str, ...]:
    """A memory's content words, sorted (statements never change: cached by text)."""
    return tuple(sorted(set(content_terms(text))))


def term_span(doc: tuple[str, ...], term: Term) -> range:
    """Indexes of the words of ``doc`` that ``term`` matches."""
    lo = bisect.bisect_left(doc, term.key)
    if not term.prefix:
        return range(lo, lo + 1) if lo < len(doc) and doc[lo] == term.key else range(0)
    return range(lo, bisect.bisect_left(doc, term.key + "\U0010ffff", lo))


def quote_term(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


# Without the in-memory index (a large project's first seconds, or the plain "fts" mode),
# fts5vocab counts a term's documents by walking its postings (about 0.2 ms for a common
# word on a 100,000-memory project), and a prompt has dozens of terms. Counts only tell
# which terms memory holds and weigh them for relevance (bm25() counts its own), so they
# are cached per connection and reused while the project has grown by less than 1%
# (exactly unchanged below 100 memories).
_DF_CACHE: weakref.WeakKeyDictionary[Any, dict[str, tuple[int, int]]] = weakref.WeakKeyDictionary()
_DF_CACHE_MAX = 100_000


def _cache(conn: Any) -> dict[str, tuple[int, int]]:
    try:
        return _DF_CACHE.setdefault(conn, {})
    except TypeError:  # a connection that cannot be weakly referenced: no cache
        return {}


def _cached(cache: dict[str, tuple[int, int]], key: str, n_docs: int) -> int | None:
    hit = cache.get(key)
    if hit is None or not n_docs:
        return None
    n, df = hit
    fresh = n == n_docs if n_docs < 100 else abs(n_docs - n) <= n_docs // 100
    return df if fresh else None


def _remember(cache: dict[str, tuple[int, int]], key: str, n_docs: int, df: int) -> None:
    if len(cache) >= _DF_CACHE_MAX:
        cache.clear()
    cache[key] = (n_docs, df)


def document_frequencies(conn: Any, terms: Sequence[str], n_docs: int = 0) -> dict[str, int]:
    cache = _cache(conn)
    out: dict[str, int] = {}
    missing = []
    for t in terms:
        got = _cached(cache, t, n_docs)
        if got is None:
            missing.append(t)
        else:
            out[t] = got
    for batch, marks in in_batches(missing):
        found = dict(conn.execute(f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", list(batch)).fetchall())
        for t in batch:
            if n_docs:
                _remember(cache, t, n_docs, found.get(t, 0))
            if t in found:
                out[t] = found[t]
    return out


def prefix_frequency(conn: Any, prefix: str, n_docs: int = 0) -> int:
    """Memories holding some word that starts with ``prefix`` (what bm25() counts for the
    prefix phrase, so both scorers weigh it alike)."""
    cache = _cache(conn)
    key = prefix + "*"
    got = _cached(cache, key, n_docs)
    if got is not None:
        return got
    row = conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (quote_term(prefix) + "*",)).fetchone()
    if n_docs:
        _remember(cache, key, n_docs, int(row[0]))
    return int(row[0])


def make_terms(words: Iterable[str], *, stems: bool) -> list[Term]:
    out: dict[str, Term] = {}
    for w in words:
        s = stem(w) if stems else w
        term = Term(w, s, True) if stems and len(s) >= PREFIX_MIN else Term(w, w, False)
        out.setdefault(term.key, term)
    # A prefix that another prefix already covers adds nothing but double counting.
    keys = sorted(t.key for t in out.values() if t.prefix)
    covered: set[str] = set()
    for i, k in enumerate(keys):  # "join" covers "joins" and "joined" even with others between
        for later in keys[i + 1 :]:
            if not later.startswith(k):
                break
            covered.add(later)
    return [t for t in out.values() if not (t.prefix and t.key in covered)]


def _frequencies(conn: Any, terms: Sequence[Term], n_docs: int) -> dict[str, int]:
    exact = [t.key for t in terms if not t.prefix]
    df = document_frequencies(conn, exact, n_docs) if exact else {}
    for t in terms:
        if t.prefix:
            df[t.key] = prefix_frequency(conn, t.key, n_docs)
    return df


def plan(
    conn: Any, query: str, n_docs: int, extra_terms: Iterable[str] = (), *, stems: bool = True,
    replace: dict[str, str] | None = None, frequencies: Frequencies | None = None,
) -> QueryPlan:
    """Every content word of ``query`` becomes a term; those memory holds are searched.

    ``stems`` (the lexical leg; off for the plain "fts" baseline) searches stems as
    prefixes and splits a camelCase word that memory does not know into its parts.
    ``extra_terms`` join the query's words; ``replace`` swaps a word (a typo) for another.
    ``frequencies`` counts documents per term (a ``Postings`` index does it exactly and
    for free); without it fts5vocab answers, cached.
    """
    count = frequencies.frequencies if frequencies is not None else (lambda ts: _frequencies(conn, ts, n_docs))
    words = content_terms(query)
    if stems:
        humps = {w: p for w, p in identifier_parts(query).items() if w in words}
        if humps:
            known = count([Term(w, w, False) for w in {*humps, *(p for ps in humps.values() for p in ps)}])
            split = {w: [p for p in parts if p not in STOPWORDS] for w, parts in humps.items()
                     if not known.get(w) and all(known.get(p) for p in parts)}
            words = [p for w in words for p in split.get(w, [w])]
    if replace:
        words = [replace.get(w, w) for w in words]
    words += [w for w in extra_terms if w not in STOPWORDS]
    terms = make_terms(dict.fromkeys(words), stems=stems)
    df = count(terms)
    present = sorted((t for t in terms if df.get(t.key, 0) > 0), key=lambda t: (df[t.key], t.key))
    return QueryPlan(tuple(terms), tuple(present), df, n_docs)
