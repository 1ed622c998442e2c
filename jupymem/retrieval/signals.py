"""The signals of one (query, memory) pair: what the answerability models read.

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

``signals`` returns them as ``Signals``, named, in ``HYBRID_FEATURES`` order (the lexical
models read the first ``len(LEXICAL_FEATURES)``). The query's side (``QuerySide``) is
computed once a search, the memory's side once per candidate.
"""

from __future__ import annotations

import bisect
import re
import dataclasses
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from . import lexical
from .unaccounted import Reading
from .wording import (
    _POSSESSIVE_ANY,
    attribute_words,
    capitalised,
    counted_closeness,
    counted_words,
    focus_words,
    has_type,
    names,
    names_someone,
    not_asking,
    salient_words,
    wanted_type,
)

if TYPE_CHECKING:
    from .wordvec import WordVectors

LEXICAL_FEATURES = (
    "coverage", "words", "missed_known", "self_match", "salient_missed", "salient_unknown", "type_missed",
    "attribute_missed", "only_names", "neighbour_swapped", "unknown", "foreign", "focus_missed",
)
HYBRID_FEATURES = LEXICAL_FEATURES + ("cosine", "margin", "soft_coverage", "soft_min", "specific_missed")
LANGUAGE_CHARS = 600  # enough of a prompt to tell its language


class Signals(NamedTuple):
    """One memory's signals for one query (the module's docstring says what each means)."""

    coverage: float
    words: float
    missed_known: float
    self_match: float
    salient_missed: float
    salient_unknown: float
    type_missed: float
    attribute_missed: float
    only_names: float
    neighbour_swapped: float
    unknown: float
    foreign: float
    focus_missed: float
    cosine: float
    margin: float
    soft_coverage: float
    soft_min: float
    specific_missed: float


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
    predicate_terms: frozenset[int] = frozenset()  # what "who ..." asks of a person (_WHO_DOES)
    # The attributes asked of a name, capitalised ones too ("Priya Raman's *Slack* handle"),
    # for the reading (``Reading.attributes_missed``); ``attribute_terms`` leaves those out.
    possessed: frozenset[int] = frozenset()
    background: float | None = None
    # Per salient word, the index of the very term that searches it (its matches are that
    # term's), or None: a memory's signals then read them off its spans.
    salient_at: tuple[int | None, ...] = ()
    # The question's name words that the first candidates write only after names the
    # question does not hold ("Park" of "Tom Park", where memory writes Lena Park): a family
    # name memory knows as someone else's (``with_names``, ``Reading.names_partial``).
    names_elsewhere: frozenset[int] = frozenset()
    counted: tuple[str, ...] = ()  # what "how many ..." counts (``wording.counted_words``)
    # Terms a typo fix put in place of a word no memory holds ("Dublin" -> "dunlin"): known
    # to memory, but not what the question wrote. A memory that lacks them lacks a word no
    # memory holds (``Reading.lacking``'s last field), so the reading may call it alien.
    guessed: tuple[tuple[int, str], ...] = ()  # (index into terms, the word written)
    capitalised: frozenset[str] = frozenset()  # ``wording.capitalised``
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
    possessed = frozenset(
        index[t.key] for t in (term_of(fixed.get(w, w)) for w in ([] if foreign else attribute_words(text)))
        if t is not None
    )
    attribute_terms = possessed - salient_terms
    pairs: dict[tuple[int, int], None] = {}
    previous: lexical.Term | None = None
    for word in lexical.tokens(text[:LANGUAGE_CHARS]):
        term = None if word in lexical.STOPWORDS else term_of(fixed.get(word, word))
        if term is not None and previous is not None and term.key != previous.key:
            pairs.setdefault((index[previous.key], index[term.key]), None)
        previous = term
    unknown = sum(1 for df in dfs if df == 0) / len(dfs) if dfs else 1.0
    wants = None if foreign else wanted_type(text)
    counted = () if foreign else counted_words(text[:LANGUAGE_CHARS])
    known_terms = tuple(df > 0 for df in dfs)
    written = set(lexical.content_terms(text))  # a fix to a word the question also writes guessed nothing
    guessed = {index[t.key]: typed for typed, word in fixed.items() if word not in written and (t := term_of(word))}
    focus = frozenset(
        index[t.key] for t in (term_of(fixed.get(w, w)) for w in ([] if foreign else focus_words(text)))
        if t is not None
    ) | attribute_terms
    m = None if foreign else _WHO_DOES.match(text)
    asked = term_of(fixed.get(m.group(1).lower(), m.group(1).lower())) if m else None
    return QuerySide(
        terms, weights, known_terms, tuple(salient), unknown, foreign, wants,
        salient_terms, attribute_terms, tuple(pairs), focus,
        predicate_terms=frozenset({index[asked.key]} - salient_terms) if asked is not None else frozenset(),
        counted=counted,
        possessed=possessed,
        guessed=tuple(sorted(guessed.items())),
        capitalised=frozenset() if foreign else capitalised(text[:LANGUAGE_CHARS]),
    )


# "who *owns* the forecasting model?", "who *maintains* the dashboard?": what a question about
# a person asks of them (``Reading.predicates_missed``).
_WORD = re.compile(r"[^\W\d_]+")
_WHO_DOES = re.compile(r"^\W*who\s+([^\W\d_]{3,})\b", re.IGNORECASE)


def with_names(q: QuerySide, text: str, statements: Iterable[str]) -> QuerySide:
    """``q`` with the names the first candidates' ``statements`` write (``names``) salient
    in the query however it spells them: "what is lena park's email?" and "Lena's email?"
    (a sentence's first word) name Lena as "what is Lena Park's email?" does; the word
    after such a name's possessive is the attribute asked."""
    if q.foreign or not q.terms:
        return q
    sequence = lexical.tokens(text[:LANGUAGE_CHARS])
    wanted = {w for w in sequence if w.isalpha() and w not in lexical.STOPWORDS}
    # A question written with case ("Which project exists ...?") that writes a word in lower
    # case does not name it, though memory writes "Project Linnet"; one written all in one
    # case ("what does lena marsh review?") may name anything.
    letters = [c for c in text[:LANGUAGE_CHARS] if c.isalpha()]
    if any(c.isupper() for c in letters) and any(c.islower() for c in letters):
        written = {lexical.fold(w) for w in _WORD.findall(text[:LANGUAGE_CHARS]) if w[0].isupper()}
        wanted &= written | {lexical.stem(w) for w in written}
    known_names: dict[str, set[int]] = {}
    partners: dict[str, set[str]] = {}
    for statement in statements:
        for word, sides in names(statement, wanted, partners).items():
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
    possessed = set(q.possessed)
    for m in _POSSESSIVE_ANY.finditer(text[:LANGUAGE_CHARS]):
        attribute = lexical.fold(m.group(2))
        if lexical.fold(m.group(1)) in known_names and attribute not in lexical.STOPWORDS:
            if (i := index_of(attribute)) is not None:
                possessed.add(i)
                if i not in salient_terms:
                    attribute_terms.add(i)
    possessed = {i for i in possessed if q.terms[i].word not in known_names}  # "Lena's *Park*": a name
    asked = set(sequence)
    elsewhere = frozenset(
        i for word, beside in partners.items() if beside and not beside & asked and (i := index_of(word)) is not None
    )
    if (len(salient) == len(q.salient) and attribute_terms == q.attribute_terms and possessed == q.possessed
            and elsewhere == q.names_elsewhere):
        return q
    return dataclasses.replace(
        q, salient=tuple(salient), salient_at=(), salient_terms=frozenset(salient_terms),
        attribute_terms=frozenset(attribute_terms - salient_terms),
        focus_terms=q.focus_terms | frozenset(attribute_terms - salient_terms), possessed=frozenset(possessed),
        names_elsewhere=elsewhere,
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


def _swapped(
    q: QuerySide, hits: Sequence[bool], sequence: Sequence[str], lost: list[tuple[int, bool]] | None = None,
    slots: list[tuple[int, str]] | None = None,
) -> bool:
    """Does the memory hold one of two adjacent query words next to another word of its own?
    ``lost``, when given, receives every query term the memory lacks in such a place, with
    whether it stands before the shared word (a modifier: "the *forecasting* model" where
    the memory writes "the churn model"; there a memory word ending in -ing counts too,
    "the *staffing* model"); ``slots``, every such modifier with the memory's word in its
    place ("forecasting", "churn")."""
    distinct = set(sequence)
    kept_at: dict[int, list[int]] = {}  # query term -> where the memory has it
    foreign = q.foreign_words  # a memory word -> matches no query term
    found = False
    for a, b in q.pairs:
        if hits[a] == hits[b]:
            continue
        kept, missing = (b, a) if hits[b] else (a, b)
        if q.terms[missing].word.endswith(_PARTICIPLE) and not q.known[missing]:
            continue  # "missing ages": a participle; "billing API": a word memory knows
        if found and lost is None:
            return True
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
            theirs = other.endswith(_PARTICIPLE)  # counts only for the reading, as a modifier
            if other in lexical.STOPWORDS or other.isdigit() or (theirs and (lost is None or step != -1)):
                continue
            if other not in foreign:
                foreign[other] = not any(_token_matches(other, t) for t in q.terms)
            if foreign[other]:
                if lost is not None and all(m != missing for m, _ in lost):
                    lost.append((missing, step == -1))
                if slots is not None and step == -1:
                    slots.append((missing, other))
                if not theirs:
                    found = True
                    break
    return found


_DOCUMENT_CHARS = 400  # answerable.DOCUMENT_CHARS (tests/test_answerability.py holds them equal)
_QUESTION_SENTENCE = re.compile(r"[^.?!\n]*\?")


def _echoes(q: QuerySide, hits: Sequence[bool], statement: str, said: str) -> bool:
    """Whether every query word ``statement`` holds stands inside a question it reports
    (``said``: the statement without them, ``wording.not_asking``) or a question sentence
    of its own. Only a statement that reports someone asking: a conversation's own
    question ("What got you into running?") is evidence of what came next."""
    if said == statement or not any(hits):
        return False
    rest = lexical.doc_terms(_QUESTION_SENTENCE.sub(" ", said))
    return not any(_matches(rest, q.terms[i]) for i, hit in enumerate(hits) if hit)


def _reading(
    q: QuerySide, hits: Sequence[bool], soft: Sequence[float], spec: Mapping[int, float], total: float,
    lost: Sequence[tuple[int, bool]], type_missed: bool, slots: Sequence[tuple[int, str]] = (),
    counted: float | None = None, echoed: bool = False,
) -> Reading:
    named = any(hits[i] for i in q.salient_terms)
    guessed = dict(q.guessed)
    swapped_before = {i for i, before in lost if before}
    modifiers = {}
    for a, b in q.pairs:
        if not hits[a] and hits[b] and a not in q.salient_terms and a not in modifiers:
            if not (q.terms[a].word.endswith(_PARTICIPLE) and not q.known[a]):  # "missing ages"
                modifiers[a] = (q.terms[a].word, q.known[a], a in swapped_before)
    absent: list[str] = []
    partial: list[str] = []
    run: list[int] = []
    for i in [*sorted(q.salient_terms), -2]:  # runs of adjacent salient terms, in query order
        if run and (i != run[-1] + 1):
            if len(run) >= 2 and not any(hits[j] for j in run):
                absent.append(" ".join(q.terms[j].word for j in run))
            # The name's first word alone ("Ask Tom ..." for "Tom Park"), its last one written
            # by memory only beside another name (Lena Park): someone else's name. Not the last
            # word alone: a text calls a person by the family name ("Daly is said to ...").
            elif (len(run) >= 2 and hits[run[0]] and not hits[run[-1]]
                  and all(hits[j] or j in q.names_elsewhere for j in run)):
                partial.append(" ".join(q.terms[j].word for j in run))
            run = []
        if i >= 0:
            run.append(i)
    return Reading(
        tuple((q.terms[i].word, q.weights[i] / total if total else 0.0, soft[i], spec.get(i),
               q.known[i] and i not in guessed)
              for i, hit in enumerate(hits) if not hit),
        tuple(q.terms[i].word for i, _ in lost if i in q.salient_terms),
        tuple(absent),
        tuple(modifiers.values()),
        tuple(q.terms[i].word for i in sorted(q.possessed | q.attribute_terms) if named and not hits[i]),
        tuple(q.terms[i].word for i in sorted(q.predicate_terms) if not hits[i]),
        q.wants if type_missed else None,
        tuple(dict.fromkeys((q.terms[i].word, other) for i, other in slots)),
        tuple(partial),
        counted,
        tuple((q.terms[i].word, guessed[i]) for i, hit in enumerate(hits) if not hit and i in guessed),
        tuple(guessed.get(i, q.terms[i].word) for i in sorted(q.salient_terms) if not hits[i]
              and (not q.known[i] or i in guessed) and guessed.get(i, q.terms[i].word) in q.capitalised),
        echoed,
    )


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
    reading: list[Reading] | None = None,
) -> Signals:
    """The signals of one memory (``Signals``, in ``HYBRID_FEATURES`` order: the lexical
    models read the first ``len(LEXICAL_FEATURES)``). ``doc`` is the memory's sorted content words,
    ``statement`` its text; ``idf`` holds the weight of (at least) its words the query
    matches, ``own`` their sum over all its words (computed from ``idf`` when None); ``vectors``
    (hybrid mode) gives, per query word, its best cosine to a word of the memory (the
    dense leg's word vectors) and how specific each word is (1 for a typical word), over
    ``compared``, the memory's words it compares (default: all of ``doc``); ``found`` its
    ``spans`` when the caller has them; ``reading``, when given, receives the memory's
    ``Reading``."""
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
    # What it says, not what it reports someone asked: "Someone asked when the churn model is
    # retrained, in planning thread 7" holds a number, but not the time asked for. Not in a
    # document (``answerable.DOCUMENT_CHARS``), which the reading leaves alone: an abstract
    # that asks "we wondered whether ..." answers it further on, and reading it costs most.
    said = not_asking(statement) if len(statement) < _DOCUMENT_CHARS else statement
    type_missed = 1.0 if q.wants and not has_type(said, q.wants) else 0.0
    others = [hits[i] for i in range(len(q.terms)) if i not in q.salient_terms]
    named = any(hits[i] for i in q.salient_terms)
    attribute_missed = 1.0 if named and any(not hits[i] for i in q.attribute_terms) else 0.0
    only_names = 1.0 if named and others and not any(others) else 0.0
    focus_missed = 1.0 if any(not hits[i] for i in q.focus_terms) else 0.0
    split = any(hits[a] != hits[b] for a, b in q.pairs)  # reading the statement's words only then
    lost: list[tuple[int, bool]] = []
    slots: list[tuple[int, str]] = []
    swapped = 1.0 if split and _swapped(q, hits, lexical.tokens(statement), lost, slots) else 0.0
    cos = cosine if cosine is not None else 0.0
    margin = cos - q.background if (cosine is not None and q.background is not None) else 0.0
    soft_coverage = soft_min = coverage
    specific_missed = 0.0
    soft = [1.0 if hit else 0.0 for hit in hits]
    spec_of: dict[int, float] = {}
    if vectors is not None and q.terms:
        lacking = [i for i, hit in enumerate(hits) if not hit]
        compared = doc if compared is None else compared
        near = dict(zip(lacking, vectors.near([q.terms[i].word for i in lacking], compared))) if lacking and compared else {}
        soft = [1.0 if hit else max(0.0, near.get(i, 0.0)) for i, hit in enumerate(hits)]
        soft_coverage = sum(w * v for w, v in zip(q.weights, soft)) / total if total else 0.0
        soft_min = min(soft)
        if lacking and vectors.specificity is not None:
            spec = vectors.specificity([q.terms[i].word for i in lacking])
            spec_of = dict(zip(lacking, spec))
            specific_missed = max(s * (1.0 - soft[i]) for s, i in zip(spec, lacking))
    if reading is not None:
        counted = (
            counted_closeness(q.counted, statement, vectors.near if vectors else None, vectors.specificity if vectors else None)
            if q.counted and q.wants == "amount" and not type_missed else None
        )
        # For the reading, a role says who as well as a name does ("the *person* to ask").
        untyped = type_missed > 0 and not (q.wants == "name" and names_someone(said))
        reading.append(_reading(q, hits, soft, spec_of, total, lost, untyped, slots, counted,
                                _echoes(q, hits, statement, said)))
    return Signals(
        coverage=coverage,
        words=words,
        missed_known=missed_known,
        self_match=self_match,
        salient_missed=1.0 if missed else 0.0,
        salient_unknown=1.0 if unknown else 0.0,
        type_missed=type_missed,
        attribute_missed=attribute_missed,
        only_names=only_names,
        neighbour_swapped=swapped,
        unknown=q.unknown,
        foreign=1.0 if q.foreign else 0.0,
        focus_missed=focus_missed,
        cosine=cos,
        margin=margin,
        soft_coverage=soft_coverage,
        soft_min=soft_min,
        specific_missed=specific_missed,
    )


# The models read signals by position: the names above must be HYBRID_FEATURES, in order.
assert Signals._fields == HYBRID_FEATURES, "Signals and HYBRID_FEATURES disagree"
