"""Is there an answer? A calibrated decision, apart from ranking.

Ranking orders memories; it cannot say whether the best of them answers the question. A
question about a person, a tool or a column that memory does not hold shares words with
memories that are about something else ("what does Lena Marsh review?" against "Lena Park
reviews every change to the pricing model"), and so does a question about an attribute
memory never records ("what is Lena Park's email?"). A single overlap ratio got both
wrong, and it gave a word that no memory contains the largest IDF, so a natural question
about the only relevant memory of a small project abstained.

So each (query, memory) pair gets thirteen signals (eighteen with the dense leg), and a
logistic model fitted on data turns them into a ``confidence`` from 0 to 1
(``benchmarks/fit_answerability.py`` fits it on our own suites with generated negatives;
the coefficients below are its output). There are six models: lexical or hybrid (with
the dense leg's signals), for small projects (up to ``SMALL_PROJECT`` memories), for the
statements of larger ones, and for documents (memories of ``DOCUMENT_CHARS`` or more). A search answers when
one of its first ``ANSWER_K`` candidates reaches ``ANSWER_AT``; each model's intercept is
set at fitting time so that this threshold is 0.5.

The signals, and why each:

* ``coverage``: the share of the query's weight (IDF) the memory matches. A word that no
  memory holds gets the median weight of the words that do occur (not the largest IDF):
  it still counts against the match, but cannot outweigh everything that matched.
  ``words``: the plain share of the query's words the memory matches, because a swapped
  word that is common in the project ("the *product* dimension" against "the store
  dimension") weighs almost nothing by IDF. ``missed_known``: the weight of the query's
  words that memory holds elsewhere but this memory lacks (a swapped word usually names
  something else the project knows; a paraphrase's words are usually new to it).
* ``self_match``: the share of the memory's own weight (IDF of its words) the query
  matches, i.e. the query's BM25 against the memory's self-match score with one
  occurrence a word (statements are short). A long prompt that contains a short memory
  scores high here and low on coverage.
* ``salient_missed`` and ``salient_unknown``: whether a name, identifier, number or
  acronym of the query (``Lena``, ``df_sales``, ``4471``, ``GPU``) is missing from this
  memory, and whether one is missing from every memory. An invented or swapped entity
  shows up here first. People type names in lower case too, or start a question with
  one, so the names the first candidates write ("Lena Park", "CRM") are names in the query
  however it spells them, and so is a word no memory holds where memory writes the other
  half of such a name ("lena *marsh*") (``names``, ``with_names``).
* ``type_missed``: the question asks who (a name), when (a time), or how many, how
  much, how long or how often (a number or a period), or its focus is a value ("which
  *version* of Optuna", "what is the *cost* of ..."), and the memory holds nothing of
  that type. ``focus_missed``: the memory lacks the noun the question asks for ("what is
  the *memory limit* of the shared kernel?", "which *team* is Lena Park in?"), whatever
  else it shares with the question. ``attribute_missed``: the memory has the query's names but not the
  attribute asked of them ("Lena Park's *email*"); ``only_names``: it has the names but
  none of the query's other words ("where does Tomasz Nowak *sit*?").
  ``neighbour_swapped``: two adjacent query words of which the memory has one, next to a
  word of its own instead ("the
  *toxicity* filter" against "the spam filter", "duplicate *images*" against "duplicate
  reviews", "the *billing* API" against "the CRM API"); participles that memory does not
  know ("missing ages", "computing areas") do not count.
* ``unknown``: the share of the query's words that occur in no memory at all, e.g. the
  attribute of an absent-attribute question.
* ``foreign``: the query is not in English (memory is), so its words say little and only
  the dense leg can judge it. (The query's length was a signal too, until it turned out to
  stand for "a SciFact claim" more than for anything about answers; without it the tune
  split abstained more on the gold suite's unanswerable questions at the same false rate.)
* hybrid mode adds ``cosine`` (the dense leg's) and ``margin``: that cosine minus the
  query's median cosine to ``BACKGROUND``, generic project notes that answer nothing. A
  query close to everything is not close to this memory in particular; and the margin
  means the same in a one-memory project as in one of 100,000, where the project's own
  nearest neighbours would be no background at all. ``soft_coverage`` and ``soft_min``:
  each query word the memory lacks is compared with the memory's words by the encoder's
  word vectors ("resolution" is close to "pixels", "email" to nothing in "Lena Park
  reviews every change to the pricing model"); the IDF-weighted mean, and the worst word.
  ``specific_missed``: the most specific of the query's words that the memory lacks, and
  has nothing close to. How specific a word is comes from the encoder's own token weights
  (``Model2VecEmbedder.specificity``): a paraphrase leaves out words like "come" or
  "opened", a question about something else leaves out "laptop" or "pricing".
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import math
import re
import statistics
import threading
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import arrays, lexical

if TYPE_CHECKING:
    from .embed import Embedder

# A search answers when one of its first ANSWER_K candidates is at least this confident.
ANSWER_K = 3
ANSWER_AT = 0.5
# Words for people: STRONG and above, "strong"; ANSWER_AT and above, "likely"; else "weak".
STRONG = 0.8
# A long memory's words compared one by one with the query's (hybrid mode): its rarest
# ones. Statements are shorter; a long abstract or prompt costs no more than one this long.
COMPARED_WORDS = 64
# Projects up to this size have their own models: every memory is a candidate there, and
# IDF over a handful of memories says little, so the signals mean something else.
SMALL_PROJECT = 10
# A memory this long is a document (an abstract, a pasted page), not a statement, and has
# its own models: a long text holds a query's names somewhere and has other words beside
# the query's everywhere, so a missing name or a swapped neighbour, which betray a
# question about something else in a one-line statement, say little there. Our suites'
# statements are under 180 characters and SciFact's abstracts mostly over 800; a person's
# long statement (up to 16 KB) is judged as a document, whose model abstains on almost
# nothing answerable, padded notes included (``benchmarks/fit_answerability.py``).
DOCUMENT_CHARS = 400
BANDS = ("small", "large", "document")

LEXICAL_FEATURES = (
    "coverage", "words", "missed_known", "self_match", "salient_missed", "salient_unknown", "type_missed",
    "attribute_missed", "only_names", "neighbour_swapped", "unknown", "foreign", "focus_missed",
)
HYBRID_FEATURES = LEXICAL_FEATURES + ("cosine", "margin", "soft_coverage", "soft_min", "specific_missed")
LANGUAGE_CHARS = 600  # enough of a prompt to tell its language


@dataclass(frozen=True)
class Model:
    """A logistic model: ``confidence = 1 / (1 + exp(-(intercept + coef . x)))``."""

    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float

    def confidence(self, x: Sequence[float]) -> float:
        z = self.intercept + sum(c * v for c, v in zip(self.coef, x))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


# BEGIN FITTED: written by benchmarks/fit_answerability.py --write; do not edit by hand.
HYBRID_DOCUMENT = Model(
    HYBRID_FEATURES,
    (0.6727, 0.4785, -0.0981, 2.5915, 0.3029, -1.22, -0.7721, -1.3802, -0.5025, -0.3138, -0.5813, 1.8444, -0.5753, 3.1158, 5.6332, 0.6263, 0.8324, 0.1344),
    -2.1895,
)
HYBRID_LARGE = Model(
    HYBRID_FEATURES,
    (0.4542, 0.7799, -0.4708, 4.9369, -0.9764, -2.0359, -1.0489, -1.5951, -0.7413, -0.8169, 0.1568, 2.159, -0.2252, 2.5064, 1.3312, 1.6831, -0.2785, -1.0946),
    -0.3205,
)
HYBRID_SMALL = Model(
    HYBRID_FEATURES,
    (0.7676, 0.8373, 0.3127, 0.5306, -2.4153, -1.1202, -3.4761, -3.3236, -0.6727, -0.4941, -1.0135, 0.0, -0.3973, 2.1218, 1.7228, 2.7914, 0.2284, -0.6585),
    -0.9676,
)
LEXICAL_DOCUMENT = Model(
    LEXICAL_FEATURES,
    (1.7686, 1.4438, 0.4544, 4.4441, 0.5158, -1.2507, -0.9349, -0.829, -0.9015, 0.139, -1.0679, 1.4315, -0.8943),
    -0.1019,
)
LEXICAL_LARGE = Model(
    LEXICAL_FEATURES,
    (1.5732, 2.1995, -0.5472, 6.0013, -1.1236, -2.1419, -1.5886, -1.7475, -0.6437, -0.7004, -0.6806, 1.8043, -0.2133),
    0.1728,
)
LEXICAL_SMALL = Model(
    LEXICAL_FEATURES,
    (2.3873, 2.2997, -0.4712, 1.2553, -2.6945, -1.1916, -3.5755, -3.1829, -0.6977, -0.2684, -1.8141, 0.0, -0.1616),
    0.804,
)
# END FITTED


def level(confidence: float) -> str:
    """The word a person sees for a confidence."""
    return "strong" if confidence >= STRONG else "likely" if confidence >= ANSWER_AT else "weak"


# -- the query's side, computed once a search ----------------------------------------

# Chunks of raw text as a person wrote them: words, numbers, identifiers (df_sales, 2.0).
_CHUNK = re.compile(r"[^\W_][\w.\-]*")
_SENTENCE_END = re.compile(r"[.?!¿¡:;\n]\s*$")
# "Lena Park's email", "Pablo's phone number": the attribute asked of a name.
_POSSESSIVE = re.compile(r"\b[A-Z][\w-]*['’]s?\s+([^\W\d_]+)")


def salient_words(text: str, *, english: bool = True) -> list[str]:
    """The folded words of ``text`` that name something: parts of identifiers, numbers
    and acronyms; in English also capitalised words that do not start a sentence (other
    languages capitalise nouns)."""
    out: dict[str, None] = {}
    chunks = list(_CHUNK.finditer(text))
    cased = not _case_says_nothing([m.group() for m in chunks])
    for i, m in enumerate(chunks):
        chunk = m.group().rstrip(".-")
        if not chunk:
            continue
        starts = i == 0 or bool(_SENTENCE_END.search(text[max(0, m.start() - 3) : m.start()]))
        named = any(c.isdigit() for c in chunk) or _identifier(chunk) or (cased and len(chunk) > 1 and chunk.isupper())
        if english and cased and not named:
            named = chunk[0].isupper() and not starts and chunk != "s"
        if named:
            for part in lexical.tokens(chunk):
                if part not in lexical.STOPWORDS:
                    out.setdefault(part, None)
    return list(out)


def _case_says_nothing(chunks: Sequence[str]) -> bool:
    """A query in Title Case or in capitals ("Who Owns The Demand Planning Notebooks?"):
    nearly every word is capitalised, so capitals mark no name. Its names are then the
    ones memory writes (``with_names``), its identifiers and its numbers."""
    words = [c for c in chunks[1:] if c.isalpha() and len(c) > 1 and c.lower() not in _MINOR]
    return len(words) >= 2 and sum(c[0].isupper() for c in words) >= 0.75 * len(words)


# The short words a title leaves in lower case ("Impact of Diet on the Risk of Cancer").
_MINOR = frozenset("a an the of in on at to for by and or but nor as from with vs via into onto per".split())


def attribute_words(text: str) -> list[str]:
    """The attribute asked of a name: "Lena Park's *email*", "Pablo's *phone* number"."""
    words = (lexical.fold(m.group(1)) for m in _POSSESSIVE.finditer(text))
    return [w for w in words if w not in lexical.STOPWORDS]


def names(statement: str, wanted: Iterable[str]) -> dict[str, set[int]]:
    """Which of ``wanted`` (a query's folded words) ``statement`` writes as names:
    capitalised where no sentence starts ("Park", "Optuna"), a sentence's first word when
    a name follows it ("Lena Park"), and acronyms ("GPU"). Each maps to the sides (-1, +1)
    on which the memory writes another name beside it: "lena" -> {+1}, "park" -> {-1}.
    Only the wanted words are looked for (a 250-word abstract is read in C, not word by
    word)."""
    plain = statement if statement.isascii() else statement.translate(_unaccented())
    lower = plain.lower()
    out: dict[str, set[int]] = {}
    if len(lower) != len(statement):
        lower = None  # a letter whose lower case is longer: compare chunk by chunk
    for word in wanted:
        for at, end in _occurrences(statement, lower, word):
            sides = _name_sides(statement, at, end)
            if sides is not None:
                out.setdefault(word, set()).update(sides)
    return out


@functools.lru_cache(maxsize=1)
def _unaccented() -> dict[int, int]:
    """Latin letters with diacritics -> the letter without them, one character for one, so
    that positions stay those of the statement ("José" is found as "jose")."""
    table = {}
    for code in range(0xC0, 0x250):
        base = unicodedata.normalize("NFKD", chr(code))[0]
        if base != chr(code) and base.isascii() and base.isalpha():
            table[code] = ord(base)
    return table


def _occurrences(statement: str, lower: str | None, word: str) -> Iterable[tuple[int, int]]:
    """Where ``statement`` holds ``word`` capitalised, as a whole chunk: (start, end)."""
    if lower is None:
        for m in _CHUNK.finditer(statement):
            chunk = m.group().rstrip(".-")
            if chunk[0].isupper() and lexical.fold(chunk) == word:
                yield m.start(), m.start() + len(chunk)
        return
    at = lower.find(word)
    while at >= 0:
        end = at + len(word)
        before = statement[at - 1] if at else " "
        after = statement[end : end + 2]
        if statement[at].isupper():  # a name is capitalised: most occurrences stop here
            joined = before.isalnum() or before == "_" or (after[:1] in (".", "-") and after[1:].isalnum())
            if not joined and not (after[:1].isalnum() or after[:1] == "_"):
                yield at, end
        at = lower.find(word, end)


_NEXT_CHUNK = re.compile(r"\s+([^\W_][\w.\-]*)")
_LAST_CHUNK = re.compile(r"([^\W_][\w.\-]*)\s+\Z")


def _capital(chunk: str) -> bool:
    return len(chunk) > 1 and chunk[0].isupper() and chunk.isalpha() and lexical.fold(chunk) not in lexical.STOPWORDS


def _name_sides(statement: str, at: int, end: int) -> set[int] | None:
    """The sides of the chunk at ``at:end`` on which a name stands, or None if it is no name."""
    chunk = statement[at:end]
    if not _capital(chunk):
        return None
    nxt = _NEXT_CHUNK.match(statement, end)
    next_name = nxt is not None and _capital(nxt.group(1).rstrip(".-"))
    starts = at == 0 or bool(_SENTENCE_END.search(statement[max(0, at - 3) : at]))
    if starts and not chunk.isupper() and not next_name:
        return None  # a sentence's first word, and no name after it
    last = _LAST_CHUNK.search(statement, max(0, at - 80), at)
    prev_name = last is not None and last.group(1) == last.group(1).rstrip(".-") and _capital(last.group(1))
    return {side for side, beside in ((-1, prev_name), (1, next_name)) if beside}


# "lena's email", "Lena's email": a possessive, whatever the case; its owner must be a name
# memory knows (``with_names``).
_POSSESSIVE_ANY = re.compile(r"\b([^\W\d_][\w-]*)['’]s?\s+([^\W\d_]+)", re.IGNORECASE)


# What a question asks for by name: "what is the *memory limit* of ...", "which *version*
# of Optuna", "what *salt* does ... use", "how many *agents* ...". After "what", the words
# must be followed by a preposition or an auxiliary verb, so a verb is not taken for a noun
# ("what happens with ..."); "which" and "how many" are always followed by their noun.
_AUX = r"(?:of|for|in|on|at|does|do|did|is|are|was|were|should|can|could|will|would|has|have)\b"
_WORD_ = r"[^\W\d_][\w-]*"
_FOCUS_STRICT = re.compile(
    rf"^\W*(?:what|which)(?:['’]s|\s+(?:is|are|was|were))?\s+(?:the\s+|our\s+|an?\s+)?((?:{_WORD_}\s+){{1,2}}?){_AUX}",
    re.IGNORECASE,
)
_FOCUS_LOOSE = re.compile(rf"^\W*(?:which|how\s+many)\s+({_WORD_})\b", re.IGNORECASE)


def focus_words(text: str) -> list[str]:
    """The noun a question asks for (with its modifier): "what is the memory limit of the
    shared kernel?" -> memory, limit; "which version of Optuna" -> version."""
    m = _FOCUS_STRICT.match(text) or _FOCUS_LOOSE.match(text)
    if not m:
        return []
    return [w for w in lexical.tokens(m.group(1)) if w not in lexical.STOPWORDS]


def _identifier(chunk: str) -> bool:
    inner = chunk.strip("._-")
    if "_" in inner or ("." in inner and not inner.replace(".", "").isdigit()):
        return True
    return any(c.isupper() for c in inner[1:]) and any(c.islower() for c in inner)


# What a question asks for, and the words of a memory that can answer it.
_WANTS_NAME = re.compile(r"^\W*(?:who|whom|whose)\b", re.IGNORECASE)
_WANTS_AMOUNT = re.compile(r"^\W*how\s+(?:many|much|long|often|far|big|large|old)\b", re.IGNORECASE)
# "when was/is/does ..." asks for a time; "when should/can we ..." asks for a condition.
_WANTS_TIME = re.compile(
    r"^\W*(?:when\s+(?:was|were|did|will|is|does|do)\b|(?:what|which)\s+(?:time|day|date|weekday)\b)",
    re.IGNORECASE,
)
_TIME_WORDS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays
    fridays saturdays sundays weekend weekends january february march april may june july august september
    october november december daily weekly monthly nightly hourly quarterly yearly annually morning
    afternoon evening night midnight noon today yesterday tomorrow day days week weeks month months year
    years quarter hour hours minute minutes every""".split()
)
_NUMBER = re.compile(r"(?<![\w.])\d[\d,.]*%?(?![\w.])")
_AMOUNT_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty
    hundred thousand million billion dozen half twice double every each daily weekly monthly nightly hourly
    quarterly yearly annually minute minutes hour hours day days week weeks month months year years""".split()
)


# A question whose focus is one of these asks for a value of that kind: "which *version*
# of Optuna" wants a version number, "what is the *cost* of ..." a number.
_VALUE_NOUNS = {
    "version": "version",
    **dict.fromkeys(
        """cost costs price prices budget salary size accuracy precision recall lift wape mape rmse auc
        percentage share count limit latency uptime port""".split(),
        "amount",
    ),
}
_VERSION = re.compile(r"\d+\.\d+|==|\bv\d")


def wanted_type(text: str) -> str | None:
    """"name" for who-questions, "time" for when-was questions, "amount" for how
    many/much/long/often or a question about a cost, a size, an accuracy ..., "version"
    for a question about a version; else None."""
    if _WANTS_NAME.match(text):
        return "name"
    if _WANTS_AMOUNT.match(text):
        return "amount"
    if _WANTS_TIME.match(text):
        return "time"
    for word in focus_words(text):
        if word in _VALUE_NOUNS:
            return _VALUE_NOUNS[word]
    return None


def _has_type(statement: str, wanted: str) -> bool:
    if wanted == "version":
        return bool(_VERSION.search(statement))
    if wanted in ("amount", "time"):
        words = _AMOUNT_WORDS if wanted == "amount" else _TIME_WORDS
        return bool(_NUMBER.search(statement)) or any(w in words for w in lexical.tokens(statement))
    chunks = list(_CHUNK.finditer(statement))
    for i, m in enumerate(chunks):
        chunk = m.group()
        starts = i == 0 or bool(_SENTENCE_END.search(statement[max(0, m.start() - 3) : m.start()]))
        if chunk[0].isupper() and not starts and not chunk.isupper() and not _identifier(chunk):
            return True
        if chunk.lower() in ("team", "teams"):
            return True
    return False


@dataclass(frozen=True)
class QuerySide:
    """What the signals need from the query: its terms and floored weights, its salient
    words (each with the plan term that searches it), and the dense background."""

    terms: tuple[lexical.Term, ...]
    weights: tuple[float, ...]
    known: tuple[bool, ...]  # per term: some memory holds it
    salient: tuple[tuple[str, lexical.Term | None, bool], ...]  # (word, term, known to memory)
    unknown: float
    foreign: bool
    wants: str | None
    salient_terms: frozenset[int] = frozenset()  # indexes into terms
    attribute_terms: frozenset[int] = frozenset()
    pairs: tuple[tuple[int, int], ...] = ()  # adjacent query words, as indexes into terms
    focus_terms: frozenset[int] = frozenset()  # what the question asks for (focus_words)
    background: float | None = None
    # Per salient word, the index of the very term that searches it (its matches are that
    # term's), or None: a memory's signals then read them off its spans.
    salient_at: tuple[int | None, ...] = ()
    # Memory words already found to match no query term (``_swapped``), shared by every
    # memory judged for this query: candidates repeat their words.
    foreign_words: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.salient_at) != len(self.salient):
            place = {id(t): i for i, t in enumerate(self.terms)}
            at = tuple(None if t is None else place.get(id(t)) for _, t, _ in self.salient)
            object.__setattr__(self, "salient_at", at)


def query_side(plan: lexical.QueryPlan, text: str, fixed: Mapping[str, str]) -> QuerySide:
    """``fixed`` maps mistyped words to the words memory uses (the fuzzy leg's fixes)."""
    from ..intake.language import detect

    terms = plan.terms
    dfs = [plan.df.get(t.key, 0) for t in terms]
    n = max(plan.n_docs, 1)
    seen = [lexical.idf(min(df, n), n) for df in dfs if df > 0]
    floor = statistics.median(seen) if seen else 1.0
    weights = tuple(lexical.idf(min(df, n), n) if df > 0 else floor for df in dfs)
    foreign = detect(text[:LANGUAGE_CHARS]) != "en"
    by_word = {t.word: t for t in terms}
    by_key = {t.key: t for t in terms}
    index = {t.key: i for i, t in enumerate(terms)}

    def term_of(word: str) -> lexical.Term | None:
        return by_word.get(word) or by_key.get(word) or by_key.get(lexical.stem(word))

    salient = []
    for word in salient_words(text, english=not foreign):
        word = fixed.get(word, word)
        term = term_of(word)
        known = term is not None and plan.df.get(term.key, 0) > 0
        salient.append((word, term, known))
    salient_terms = frozenset(index[t.key] for _, t, _ in salient if t is not None)
    attribute_terms = frozenset(
        index[t.key] for t in (term_of(fixed.get(w, w)) for w in ([] if foreign else attribute_words(text)))
        if t is not None
    ) - salient_terms
    pairs: dict[tuple[int, int], None] = {}
    previous: lexical.Term | None = None
    for word in lexical.tokens(text[:LANGUAGE_CHARS]):
        term = None if word in lexical.STOPWORDS else term_of(fixed.get(word, word))
        if term is not None and previous is not None and term.key != previous.key:
            pairs.setdefault((index[previous.key], index[term.key]), None)
        previous = term
    unknown = sum(1 for df in dfs if df == 0) / len(dfs) if dfs else 1.0
    wants = None if foreign else wanted_type(text)
    known = tuple(df > 0 for df in dfs)
    focus = frozenset(
        index[t.key] for t in (term_of(fixed.get(w, w)) for w in ([] if foreign else focus_words(text)))
        if t is not None
    ) | attribute_terms
    return QuerySide(
        terms, weights, known, tuple(salient), unknown, foreign, wants,
        salient_terms, attribute_terms, tuple(pairs), focus,
    )


def with_names(q: QuerySide, text: str, statements: Iterable[str]) -> QuerySide:
    """``q`` with the names the first candidates' ``statements`` write (``names``) salient
    in the query however it spells them: "what is lena park's email?" and "Lena's email?"
    (a sentence's first word) name Lena as "what is Lena Park's email?" does; the word
    after such a name's possessive is the attribute asked."""
    if q.foreign or not q.terms:
        return q
    sequence = lexical.tokens(text[:LANGUAGE_CHARS])
    wanted = {w for w in sequence if w.isalpha() and w not in lexical.STOPWORDS}
    known_names: dict[str, set[int]] = {}
    for statement in statements:
        for word, sides in names(statement, wanted).items():
            known_names.setdefault(word, set()).update(sides)
    if not known_names:
        return q
    by_word = {t.word: i for i, t in enumerate(q.terms)}
    by_key = {t.key: i for i, t in enumerate(q.terms)}

    def index_of(word: str) -> int | None:
        found = by_word.get(word)
        return found if found is not None else by_key.get(word, by_key.get(lexical.stem(word)))

    salient = list(q.salient)
    have = {w for w, _, _ in salient}
    salient_terms = set(q.salient_terms)
    for at, word in enumerate(sequence):
        if word not in known_names:
            continue
        # The name itself, and a word that no memory holds where memory writes the other
        # half of the name: a name memory does not know ("lena *marsh*", "*tom* olsen").
        beside = [sequence[at + side] for side in known_names[word] if 0 <= at + side < len(sequence)]
        for other in [word, *beside]:
            if other in have or other in lexical.STOPWORDS or (i := index_of(other)) is None:
                continue
            if other == word:
                salient.append((word, q.terms[i], True))
            elif other not in known_names and not q.known[i] and not other.endswith(_PARTICIPLE):
                salient.append((other, q.terms[i], False))
            else:
                continue
            salient_terms.add(i)
            have.add(other)
    attribute_terms = set(q.attribute_terms)
    for m in _POSSESSIVE_ANY.finditer(text[:LANGUAGE_CHARS]):
        attribute = lexical.fold(m.group(2))
        if lexical.fold(m.group(1)) in known_names and attribute not in lexical.STOPWORDS:
            if (i := index_of(attribute)) is not None and i not in salient_terms:
                attribute_terms.add(i)
    if len(salient) == len(q.salient) and attribute_terms == q.attribute_terms:
        return q
    return dataclasses.replace(
        q, salient=tuple(salient), salient_at=(), salient_terms=frozenset(salient_terms),
        attribute_terms=frozenset(attribute_terms - salient_terms),
        focus_terms=q.focus_terms | frozenset(attribute_terms - salient_terms),
    )


# -- the memory's side ------------------------------------------------------------------


def _exact(doc: Sequence[str], word: str) -> range:
    lo = bisect.bisect_left(doc, word)
    return range(lo, lo + 1) if lo < len(doc) and doc[lo] == word else range(0)


def _matches(doc: Sequence[str], term: lexical.Term) -> range:
    """Indexes of the words of ``doc`` (sorted) that ``term`` matches. A word also matches
    its singular or plural ("ages" and "age"), which a prefix cannot."""
    found = lexical.term_span(doc, term)
    if not found:
        word = term.word
        other = word[:-1] if word.endswith("s") and len(word) > 3 and not word.endswith("ss") else word + "s"
        found = _exact(doc, other) or _exact(doc, word)
    return found


_PARTICIPLE = ("ing", "ed")


def spans(q: QuerySide, doc: Sequence[str]) -> list[range]:
    """Per query term, the indexes of the words of ``doc`` (sorted) it matches: computed
    once per memory, for ``matched_words`` and ``signals`` alike."""
    return [_matches(doc, t) for t in q.terms]


def matched_words(doc: Sequence[str], found: Sequence[range]) -> list[str]:
    """The words of ``doc`` that some query term matches (``found``: ``spans``)."""
    at: set[int] = set()
    for span in found:
        at.update(span)
    return [doc[i] for i in sorted(at)]


def _token_matches(token: str, term: lexical.Term) -> bool:
    if term.prefix and token.startswith(term.key):
        return True
    return token in (term.key, term.word) or token + "s" == term.word or token == term.word + "s"


def _swapped(q: QuerySide, hits: Sequence[bool], sequence: Sequence[str]) -> bool:
    """Does the memory hold one of two adjacent query words next to another word of its own?"""
    distinct = set(sequence)
    kept_at: dict[int, list[int]] = {}  # query term -> where the memory has it
    foreign = q.foreign_words  # a memory word -> matches no query term
    for a, b in q.pairs:
        if hits[a] == hits[b]:
            continue
        kept, lost = (b, a) if hits[b] else (a, b)
        if q.terms[lost].word.endswith(_PARTICIPLE) and not q.known[lost]:
            continue  # "missing ages": a participle; "billing API": a word memory knows
        step = -1 if kept == b else 1  # where the memory's own word would stand
        if kept not in kept_at:
            word = q.terms[kept].word  # every token it matches starts as it does: a cheap first test
            head = word[:2] if len(word) > 2 else word[:1]
            matching = {t for t in distinct if t.startswith(head) and _token_matches(t, q.terms[kept])}
            kept_at[kept] = [i for i, token in enumerate(sequence) if token in matching]
        for i in kept_at[kept]:
            j = i + step
            if not 0 <= j < len(sequence):
                continue
            other = sequence[j]
            if other in lexical.STOPWORDS or other.endswith(_PARTICIPLE) or other.isdigit():
                continue
            if other not in foreign:
                foreign[other] = not any(_token_matches(other, t) for t in q.terms)
            if foreign[other]:
                return True
    return False


def signals(
    q: QuerySide,
    doc: Sequence[str],
    statement: str,
    idf: Mapping[str, float],
    cosine: float | None,
    vectors: WordVectors | None = None,
    compared: Sequence[str] | None = None,
    own: float | None = None,
    found: Sequence[range] | None = None,
) -> tuple[float, ...]:
    """The signals of one memory, in ``HYBRID_FEATURES`` order (the lexical model reads
    the first ``len(LEXICAL_FEATURES)``). ``doc`` is the memory's sorted content words,
    ``statement`` its text; ``idf`` holds the weight of (at least) its words the query
    matches, ``own`` their sum over all its words (computed from ``idf`` when None); ``vectors``
    (hybrid mode) gives, per query word, its best cosine to a word of the memory (the
    dense leg's word vectors) and how specific each word is (1 for a typical word), over
    ``compared``, the memory's words it compares (default: all of ``doc``); ``found`` its
    ``spans`` when the caller has them."""
    if found is None:
        found = spans(q, doc)
    covered: set[int] = set()
    matched_weight = missed_known = 0.0
    matched = 0
    hits = []
    for span, w, known in zip(found, q.weights, q.known):
        hits.append(bool(span))
        if span:
            matched += 1
            matched_weight += w
            covered.update(span)
        elif known:
            missed_known += w
    total = sum(q.weights)
    coverage = matched_weight / total if total else 0.0
    missed_known = missed_known / total if total else 0.0
    words = matched / len(q.terms) if q.terms else 0.0
    if doc:
        if own is None:
            own = sum(idf.get(d, 0.0) for d in doc)
        self_match = sum(idf.get(doc[i], 0.0) for i in covered) / own if own else 0.0
    else:
        self_match = 0.0
    missed = unknown = 0
    doc_set = set(doc)
    for (word, term, known), at in zip(q.salient, q.salient_at):
        if at is not None:
            hit = hits[at]
        else:
            hit = bool(_matches(doc, term)) if term is not None else word in doc_set
        missed += not hit
        unknown += not known
    type_missed = 1.0 if q.wants and not _has_type(statement, q.wants) else 0.0
    others = [hits[i] for i in range(len(q.terms)) if i not in q.salient_terms]
    named = any(hits[i] for i in q.salient_terms)
    attribute_missed = 1.0 if named and any(not hits[i] for i in q.attribute_terms) else 0.0
    only_names = 1.0 if named and others and not any(others) else 0.0
    focus_missed = 1.0 if any(not hits[i] for i in q.focus_terms) else 0.0
    split = any(hits[a] != hits[b] for a, b in q.pairs)  # reading the statement's words only then
    swapped = 1.0 if split and _swapped(q, hits, lexical.tokens(statement)) else 0.0
    cos = cosine if cosine is not None else 0.0
    margin = cos - q.background if (cosine is not None and q.background is not None) else 0.0
    soft_coverage = soft_min = coverage
    specific_missed = 0.0
    if vectors is not None and q.terms:
        lacking = [i for i, hit in enumerate(hits) if not hit]
        compared = doc if compared is None else compared
        near = dict(zip(lacking, vectors.near([q.terms[i].word for i in lacking], compared))) if lacking and compared else {}
        soft = [1.0 if hit else max(0.0, near.get(i, 0.0)) for i, hit in enumerate(hits)]
        soft_coverage = sum(w * v for w, v in zip(q.weights, soft)) / total if total else 0.0
        soft_min = min(soft)
        if lacking and vectors.specificity is not None:
            spec = vectors.specificity([q.terms[i].word for i in lacking])
            specific_missed = max(s * (1.0 - soft[i]) for s, i in zip(spec, lacking))
    return (
        coverage,
        words,
        missed_known,
        self_match,
        1.0 if missed else 0.0,
        1.0 if unknown else 0.0,
        type_missed,
        attribute_missed,
        only_names,
        swapped,
        q.unknown,
        1.0 if q.foreign else 0.0,
        focus_missed,
        cos,
        margin,
        soft_coverage,
        soft_min,
        specific_missed,
    )


def band(n_docs: int, chars: int) -> str:
    """Which model judges a memory of ``chars`` characters in a project of ``n_docs``."""
    if n_docs <= SMALL_PROJECT:
        return "small"
    return "document" if chars >= DOCUMENT_CHARS else "large"


_MODELS = {
    (True, "small"): HYBRID_SMALL, (True, "large"): HYBRID_LARGE, (True, "document"): HYBRID_DOCUMENT,
    (False, "small"): LEXICAL_SMALL, (False, "large"): LEXICAL_LARGE, (False, "document"): LEXICAL_DOCUMENT,
}


# The transformer tier's models, by band (its cosines have their own scale); fitted by
# benchmarks/fit_answerability.py. A band without one uses the static hybrid model.
_TRANSFORMER_MODELS: dict[str, Model] = {}


def model_for(*, hybrid: bool, band: str, tier: str | None = None) -> Model:
    if hybrid and tier == "transformer":
        got = _TRANSFORMER_MODELS.get(band)
        if got is not None:
            return got
    return _MODELS[(hybrid, band)]


def confidence(x: Sequence[float], *, hybrid: bool, band: str, tier: str | None = None) -> float:
    model = model_for(hybrid=hybrid, band=band, tier=tier)
    return model.confidence(x[: len(model.features)])


# -- the dense background ------------------------------------------------------------------

# Generic notes of the kind every project keeps, about nothing in particular. A query's
# median cosine to them is what "close" means for that query before any memory is read.
BACKGROUND = (
    "The notebook reads the input file, cleans the columns and writes the result to disk.",
    "Run the cells from top to bottom after restarting the kernel.",
    "The team meets every week to review progress and plan the next steps.",
    "Ask the owner of the dataset before changing its schema.",
    "Results are stored in a shared folder with the date in the file name.",
    "The script failed with an error and was fixed by updating a dependency.",
    "Use the configuration file instead of hard-coding values in the code.",
    "Charts need a title, labelled axes and a short caption.",
    "The job runs every night and sends an email when it fails.",
    "Document every decision in the project wiki with the reason behind it.",
    "The model is trained on historical data and evaluated on a held-out sample.",
    "Keep secrets out of the repository and read them from the environment.",
    "A colleague reviews each change before it is merged into the main branch.",
    "Large tables should be filtered early so that the query stays fast.",
    "The report is shared with stakeholders at the end of every month.",
    "Version numbers of the libraries are pinned in the requirements file.",
    "Tests use small synthetic examples rather than production data.",
    "The meeting notes are kept in the shared drive.",
    "When a number looks wrong, check the units and the time zone first.",
    "The old approach was replaced because it was too slow.",
    "Missing values are handled before the features are computed.",
    "The dashboard shows the main metrics for each region and month.",
    "Install packages in the project environment, not globally.",
    "The pipeline has three steps: load, transform and export.",
    "Prefer readable code with clear names over clever one-liners.",
    "The customer list is updated from the source system every morning.",
    "Backups are taken daily and kept for thirty days.",
    "Questions about access go to the platform team.",
    "The experiment compared two variants and the second one won.",
    "Logs are written to a file and rotated every week.",
    "The budget for the project was approved last quarter.",
    "Clean up temporary files when the analysis is finished.",
)

_WORD_CACHE_MAX = 50_000
_word_cache: dict[int, tuple[Any, _Words]] = {}
_background_cache: dict[int, tuple[Any, Any]] = {}
_background_lock = threading.Lock()


def background(embedder: Embedder, query_vector: Any) -> float:
    """The query's median cosine to ``BACKGROUND`` (embedded once per embedder)."""
    np = arrays.np()

    with _background_lock:
        held = _background_cache.get(id(embedder))
        if held is None or held[0] is not embedder:
            if len(_background_cache) >= 8:  # tests make many small embedders
                _background_cache.clear()
            held = _background_cache[id(embedder)] = (embedder, embedder.embed_batch(list(BACKGROUND)))
    sims = held[1] @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
    return float(np.median(sims))


# OpenBLAS runs a matrix product at or above this many multiply-adds on several threads,
# which then spin for a while after it; on a busy two-core machine that costs more CPU
# than it saves at a search's sizes. Products are cut into pieces below it.
_THREADED_PRODUCT = 262_144


def _product(a: Any, b: Any) -> Any:
    """``a @ b.T`` in pieces that OpenBLAS runs on one thread."""
    np = arrays.np()

    step = max(1, (_THREADED_PRODUCT - 1) // max(1, a.shape[0] * a.shape[1]))
    if len(b) <= step:
        return a @ b.T
    return np.concatenate([a @ b[i : i + step].T for i in range(0, len(b), step)], axis=1)


class _Words:
    """One encoder's single-word vectors: a row each, in one array that grows, so that a
    search takes the rows it needs in one step instead of stacking a vector a word."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.vectors: Any = None
        self._lock = threading.Lock()

    def add(self, words: Sequence[str], vectors: Any) -> None:
        np = arrays.np()

        with self._lock:
            words = [w for w in words if w not in self.index]
            if not words:
                return
            vectors = np.asarray(vectors[-len(words) :], dtype=np.float32) if len(vectors) != len(words) else vectors
            count = len(self.index)
            held = self.vectors
            if held is None or count + len(words) > len(held):
                # Doubling, but never past the cache's cap (a row is 1 KB: 50 MB at most).
                rows = max(1024, min(2 * (count + len(words)), _WORD_CACHE_MAX), count + len(words))
                grown = np.zeros((rows, vectors.shape[1]), dtype=np.float32)
                if held is not None:
                    grown[:count] = held[:count]
                held = grown
            held[count : count + len(words)] = vectors
            self.vectors = held  # published before the index names its new rows
            self.index.update(zip(words, range(count, count + len(words))))


class WordVectors:
    """Single-word vectors from the dense leg's encoder, cached per encoder (memories repeat
    their words), for ``signals``' word-level similarity and specificity."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self.specificity: Callable[[Sequence[str]], Sequence[float]] | None = getattr(embedder, "specificity", None)
        self._words = self._held()

    def _held(self, fresh: bool = False) -> _Words:
        with _background_lock:
            held = _word_cache.get(id(self.embedder))
            if fresh or held is None or held[0] is not self.embedder:
                if len(_word_cache) >= 8:
                    _word_cache.clear()
                held = _word_cache[id(self.embedder)] = (self.embedder, _Words())
        return held[1]

    def prefetch(self, words: Iterable[str]) -> None:
        """Embed the words not seen yet, in one batch (one tokenizer call a search)."""
        index = self._words.index
        missing = [w for w in dict.fromkeys(words) if w not in index]
        if missing:
            if len(index) + len(missing) > _WORD_CACHE_MAX:
                self._words = self._held(fresh=True)
            embed_words = getattr(self.embedder, "embed_words", None)
            if embed_words is not None:  # one tokenization for the vectors and specificity
                self._words.add(missing, embed_words(missing))
            else:
                self._words.add(missing, self.embedder.embed_batch(missing))
                if self.specificity is not None:
                    self.specificity(missing)  # fills the encoder's own cache

    def _matrix(self, words: Sequence[str]) -> Any:
        index = self._words.index
        rows = [index[w] for w in words]
        return self._words.vectors[rows]

    def table(self, query_words: Sequence[str], doc_words: Iterable[str]) -> None:
        """Every query word's cosine to every word of a search's candidates, in one product:
        ``near`` then only picks columns (one product a search instead of one a candidate)."""
        columns = list(dict.fromkeys(doc_words))
        rows = list(dict.fromkeys(query_words))
        self.prefetch([*rows, *columns])
        if not rows or not columns:
            return
        self._rows = {w: i for i, w in enumerate(rows)}
        self._columns = {w: i for i, w in enumerate(columns)}
        self._sims = _product(self._matrix(rows), self._matrix(columns))

    _rows: dict[str, int] = {}
    _columns: dict[str, int] = {}
    _sims: Any = None

    def near(self, query_words: Sequence[str], doc_words: Sequence[str]) -> list[float]:
        """Per query word, its best cosine to one of ``doc_words``."""
        np = arrays.np()

        if not query_words or not doc_words:
            return [0.0] * len(query_words)
        rows, columns = self._rows, self._columns
        try:
            sims = self._sims[np.ix_([rows[w] for w in query_words], [columns[w] for w in doc_words])]
        except (KeyError, TypeError):  # words outside the table (or none made): compare them now
            self.prefetch([*query_words, *doc_words])
            sims = _product(self._matrix(query_words), self._matrix(doc_words))
        return [float(v) for v in sims.max(axis=1)]
