"""The lexical leg: user text -> a safe FTS5 query over the most selective terms.

Any text a person or an assistant types is a valid query. We never hand user
text to FTS5's query language: the query is tokenized here exactly as the
``unicode61 remove_diacritics 2`` tokenizer tokenizes the index, and each
term goes back quoted, so ``AND``, ``*``, ``:``, quotes and parentheses are
just words (or nothing). Whole prompts are queries too, so stopwords go, at
most the 12 most selective terms are kept, and on large projects terms that
occur in more than 5% of memories are dropped: their BM25 weight is near zero
while scoring every row they occur in is not.

Matching is a little looser than the index's exact tokens, because people
write "joined" for "joins" and ``customerId`` for "customer id":

* each term is cut to a light English stem and searched as a prefix
  (``"partition"*`` finds partitions, partitioned, partitioning). The index
  keeps its exact tokens (changing its tokenizer would need a migration and a
  re-index); the query side does the stemming. Short stems stay exact, since
  ``"id"*`` would find idea and identity.
* identifiers are split: ``customerId`` also searches customer and id
  (``df_sales`` is already two tokens to the tokenizer).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

MAX_TERMS = 12
COMMON_FRACTION = 0.05
LARGE_PROJECT = 5000
# FTS5 scores every row any selected term occurs in, so a query's cost follows the sum
# of its terms' document frequencies. Terms are taken rarest first until this many
# postings (always at least one term): the rarest words carry the meaning, and on a
# 100,000-memory project a whole prompt stays within a few milliseconds. A project of
# up to LARGE_PROJECT memories never reaches it (5% of 5,000 times 12 terms is 3,000).
POSTINGS_BUDGET = 4000
# A stem this long is searched as a prefix; shorter ones stay exact words.
PREFIX_MIN = 4

# unicode61 splits on everything that is not a letter or a number ("_" included).
_TOKEN = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

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
    if text.isascii():
        return text.lower()
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


def split_identifiers(text: str) -> list[str]:
    """The parts of camelCase words (``customerId`` -> customer, id), folded."""
    out: list[str] = []
    for word in re.findall(r"[^\W_]+", text):
        if word.islower() or word.isupper() or word.isdigit():
            continue
        parts = _CAMEL.findall(word)
        if len(parts) > 1:
            out.extend(fold(p) for p in parts)
    return out


# A light English stemmer (the common inflections only). It never has to produce a
# word: the stem is a prefix for FTS5, and the same function stems the memory's words
# when judging relevance, so both sides agree.
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
            base = term[: -len(suffix)]
            if suffix in ("ies", "ied", "ities"):
                base += "y" if suffix != "ities" else ""
            if suffix == "s" and term.endswith("ss"):
                return term
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


@dataclass(frozen=True)
class QueryPlan:
    terms: tuple[Term, ...]  # every content term of the query
    selected: tuple[Term, ...]  # the ones sent to FTS5
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


def quote_term(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


# fts5vocab counts a term's documents by walking its postings (about 0.2 ms for a common
# word on a 100,000-memory project), and a prompt has dozens of terms. Counts only choose
# and weigh terms, so they are cached per connection and reused while the project has
# grown by less than 1% (exactly unchanged below 100 memories).
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
    for i in range(0, len(missing), 400):
        chunk = list(missing[i : i + 400])
        marks = ",".join("?" * len(chunk))
        found = dict(conn.execute(f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", chunk).fetchall())
        for t in chunk:
            if n_docs:
                _remember(cache, t, n_docs, found.get(t, 0))
            if t in found:
                out[t] = found[t]
    return out


def prefix_frequency(conn: Any, prefix: str, n_docs: int = 0) -> int:
    """Documents holding some word that starts with ``prefix`` (an upper bound: a
    document with two such words counts twice, which only makes the term look commoner)."""
    cache = _cache(conn)
    key = prefix + "*"
    got = _cached(cache, key, n_docs)
    if got is not None:
        return got
    row = conn.execute(
        "SELECT coalesce(sum(doc), 0) FROM memories_vocab WHERE term >= ? AND term < ?",
        (prefix, prefix + "\U0010ffff"),
    ).fetchone()
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


def plan(
    conn: Any, query: str, n_docs: int, extra_terms: Iterable[str] = (), *, stems: bool = True,
    replace: dict[str, str] | None = None,
) -> QueryPlan:
    """``extra_terms`` join the query's words; ``replace`` swaps a word (a typo) for another."""
    words = content_terms(query)
    if stems:
        words += [w for w in split_identifiers(query) if w not in STOPWORDS]
    if replace:
        words = [replace.get(w, w) for w in words]
    words += [w for w in extra_terms if w not in STOPWORDS]
    terms = make_terms(dict.fromkeys(words), stems=stems)
    exact = [t.key for t in terms if not t.prefix]
    df = document_frequencies(conn, exact, n_docs) if exact else {}
    for t in terms:
        if t.prefix:
            df[t.key] = prefix_frequency(conn, t.key, n_docs)
    present = [t for t in terms if df.get(t.key, 0) > 0]
    if n_docs > LARGE_PROJECT and present:
        ceiling = COMMON_FRACTION * n_docs
        rare = [t for t in present if df[t.key] <= ceiling]
        present = rare or [min(present, key=lambda t: df[t.key])]
    selected: list[Term] = []
    postings = 0
    for t in sorted(present, key=lambda t: (df[t.key], t.key))[:MAX_TERMS]:
        if selected and postings + df[t.key] > POSTINGS_BUDGET:
            break
        selected.append(t)
        postings += df[t.key]
    return QueryPlan(tuple(terms), tuple(selected), df, n_docs)
