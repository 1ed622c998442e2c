"""The verdict reads the question against the memory: is every part that carries its meaning there?

The fitted models (``answerable``) weigh signals; a weighed sum can still find "Ana Ruiz owns
the churn model" a likely answer to "who owns the *forecasting* model?" (two of three words,
a close cosine) or "Elodie Ibarrondo joined the lab in 2019" one to "in what year did
*Kasimir* Ibarrondo join the lab?". A person reading the two would say at once that the
memory is about something else: the part of the question that says *which* model, *who*,
is not in it. So apart from the models, each judged memory is read for the parts of the
question that carry its meaning (``signals.Reading``):

* a **name** whose other half the memory writes with another ("*Kasimir* Ibarrondo" where
  it writes Elodie Ibarrondo, "Lena *Marsh*" where Lena Park): a name has no synonym, and
  a memory about someone else is no answer about them. (A name the memory simply lacks is
  not enough: a prompt names much that its answer does not, "ChatGPT" is answered by
  "external chat tools".)
* a **name held in part**: the memory writes the name's first word alone, and its last
  word only stands in memory beside another name ("Ask *Tom* before changing region_type"
  for "which changes does Tom *Park* review?", memory knowing Lena Park): memory's Tom is
  not known to be that Tom Park. (A text that calls someone by the family name alone,
  "Daly is said to ...", is not read so.)
* a **rival**: the memory writes, where the question has a period, a weekday or a month,
  another one ("the *monthly* sales forecast" / "weekly sales forecasts"), whatever the
  word vectors say of the two and whether or not memory uses the question's word.
* a **swapped modifier**: the memory holds the word a question word qualifies, with a word
  of its own in its place ("the *forecasting* model" / "the churn model", "the *monthly*
  sales forecast" / "weekly sales forecasts"), the question's word is specific
  (``SPECIFIC``) and nothing in the memory comes close to it in meaning (the static
  encoder's word vectors, ``MEANING``: "legacy" accounts for "old", "attrition" for "churn").
* the **attribute** asked of a name the memory names ("Lena Park's *email*") that nothing
  in the memory matches or comes close to in meaning.
* the **person** a "who" question asks for, when the memory names no one and leaves a
  specific word of the question unmatched and unmeant ("who owns the *forecasting* model?"
  against "Model releases are announced ... with the owner's name"): it cannot say who.
* a **count of something else**: a "how many" question against a memory whose numbers count
  other things ("how many *stores* are there?" against "Stores with fewer than 52 *weeks* of
  history get ..."), nothing they count close to it in meaning.
* a **subject memory never mentions**: a specific question word no memory holds at all,
  that nothing in this one means either, while the encoder does not find the two close
  ("how do I request a new *laptop*?" against a note on API request limits). A note
  recorded later that shares "request" does not make it an answer.

(The noun a question asks for was read too, and dropped: "which *architecture* is the
classifier?" is answered by "ConvNeXt-Tiny", which names no architecture.)

A memory that leaves such a part unaccounted for is not an answer: its confidence is held
below ``answerable.ANSWER_AT`` (``bounded``), whatever the model said, so the label a person
sees and the abstention an assistant gets agree with the reading. It is shown to people as
one of the closest memories all the same.

Documents (``answerable.DOCUMENT_CHARS`` and longer) are not read so: a long text names much
that a claim about it does not, and a claim's names ("IL-6", "5%") are written otherwise
in the abstract that bears on it; their models already weigh these signals for documents.
In lexical mode (no word vectors) nothing can account for a part by meaning: a swapped
name and a missing attribute count as they are, and a swapped modifier only when memory
uses that word elsewhere (it names something else the project knows; a new word may be a
paraphrase).

The thresholds were chosen on our own suites and reported on the others
(``benchmarks/verdict_suites.py``, ``benchmarks/answerability.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import answerable
from .signals import HYBRID_FEATURES, Reading
from .wording import TIME_WORDS, rival

# The confidence a memory that leaves a part unaccounted for keeps at most, as a share of
# what the model said: "weak", below every threshold that answers, still in the model's order.
CEILING = 0.45
READ_BANDS = frozenset({"small", "large"})
# The settings, per mode, as ``benchmarks/verdict_suites.py`` chose them leave one family out
# (``answerable.READING``, from the data file); these defaults read nothing but names.
DEFAULTS: dict[str, Any] = {
    # A question word the memory lacks is accounted for by meaning when one of the memory's
    # words is at least this close to it (cosine of the static encoder's word vectors).
    "meaning": 0.35,
    # Below this specificity (``Model2VecEmbedder.specificity``: ~0.4 for the commonest words,
    # above 1 for rare ones) a swapped modifier says too little to decide on ("old", "huge").
    "specific": 0.6,
    # Which modifiers the memory lacks count: "slot", those where the memory writes a word of
    # its own in their place; "known", also those memory uses elsewhere; "any", every one.
    "modifiers": "slot",
    # Whether a name of two words or more of which the memory writes no part counts.
    "absent_names": True,
    # Whether a name held in part counts (``Reading.names_partial``). Not in the grid of
    # ``benchmarks/verdict_suites.py``: over every family's collected questions it changes no
    # verdict in any mode; it keeps the stability property test's swapped name below 0.5.
    "partial_names": True,
    # Whether what "who ..." asks of a person counts (hybrid modes: a verb has synonyms).
    "predicates": False,
    # Hybrid modes: the question's specific words (specificity at least ``unmet_specific``)
    # that the memory neither holds nor comes close to in meaning; when they weigh at least
    # ``unmet_share`` of the question (IDF), the memory is about something else ("the
    # *parental* leave policy" against a note on the pricing policy). 1.0: not read.
    "unmet_specific": 1.0,
    "unmet_share": 1.0,
    # Hybrid modes: a "who" question whose memory names no one, by name or by role ("the
    # *person* to ask", "the platform *team*": ``wording.names_someone``; ``Reading.wants_missed``)
    # and lacks one of its words at least this specific (``specificity``) that nothing in
    # the memory comes close to in meaning: "who owns the *forecasting* model?" against
    # "Model releases are announced ... with the owner's name", "who *organises* the summer
    # party?" against a note on who owns a table. Only "who": a conversation's turn answers
    # "when" without writing the date (LoCoMo's sessions carry it), so "when" and "how
    # many" questions read so abstained on 7% of LoCoMo's answerable ones held out. A memory
    # that names someone is left to the models ("who *approves* the forecast?" is answered
    # by "Ingrid Larsen *signs off* the forecast"). 9: not read.
    "untyped": 9.0,
    # A question that asks for a value ("how many ...", "how long ...", "what is the
    # precision of ...", "which version of ...": ``wording.wanted_type``) of a memory that
    # holds no number or version at all (``Reading.wants_missed``): "how many postcodes are
    # in the boundary files?" against "Tomasz Nowak maintains ... the postcode boundary files".
    "valued": False,
    # A "how many" question against a memory whose numbers count something else ("how many
    # *stores* are there?" against "Stores with fewer than 52 *weeks* of history ...": nothing
    # it counts comes ``meaning`` close to stores; ``Reading.counted``).
    "counted": False,
    # Hybrid modes: a question word at least this specific that no memory holds at all and
    # nothing in this one comes close to in meaning, while the dense cosine does not stand
    # ``margin_max`` above the query's background (not a paraphrase the encoder sees): the
    # question is about something memory never mentions ("how do I request a new *laptop*?"
    # against a note on request limits). Not for a query in another language, whose every
    # word is new to memory. 9: not read.
    "alien": 9.0,
    # Every mode: a modifier the memory writes another member of its closed class in place
    # of ("the *monthly* sales forecast" / "weekly sales forecasts", ``wording.rival``),
    # whether or not memory uses the word elsewhere and however close the vectors put them.
    "rivals": False,
    # A name of one word, written with a capital inside the question (not in capitals: an
    # acronym memory may spell out, or emphasis; not a month), that no memory holds and this
    # one lacks, as written, not as a typo fix read it ("the *Dublin* office" in a project
    # that knows Leeds and Dunlin): ``Reading.names_unknown``. The static tier does not read
    # it (benchmarks/verdict_suites.py, ``UNREAD``).
    "lone_names": False,
    # Which model judges a statement: "band", its project's size band's (``answerable.band``);
    # "large", the larger projects' at every size (no model boundary a growing project
    # crosses); "min", the stricter of the two in a larger project.
    "boundary": "band",
    # The share of the question (IDF) a memory must hold, by its words (lexical) or by words
    # or their meaning (``soft_coverage``, hybrid, unless the dense cosine stands at least
    # ``margin_max`` above the query's background: a paraphrase). 0: not read.
    "cover_min": 0.0,
    "margin_max": 0.2,
}
_VALUES = {"amount": "a number", "version": "a version"}
_COVERAGE = HYBRID_FEATURES.index("coverage")
_SOFT_COVERAGE = HYBRID_FEATURES.index("soft_coverage")
_MARGIN = HYBRID_FEATURES.index("margin")
_FOREIGN = HYBRID_FEATURES.index("foreign")


def settings(hybrid: bool, tier: str | None) -> dict[str, Any]:
    """The reading's settings for a search's mode (lexical, the static tier's or the transformer's)."""
    return {**DEFAULTS, **answerable.READING.get(answerable.mode_of(hybrid=hybrid, tier=tier), {})}


def unaccounted(
    reading: Reading | None, *, band: str, hybrid: bool, tier: str | None = None, setting: Mapping[str, Any] | None = None,
    signals: Sequence[float] | None = None,
) -> str | None:
    """The first part of the question ``reading`` leaves unaccounted for (a few words for
    ``explain``), or None when every part is there or the band is not read. ``setting``:
    the reading's settings (default: the mode's, ``settings``); ``signals``: the memory's
    (``signals.Signals``), for how much of the question it holds at all."""
    if reading is None or band not in READ_BANDS:
        return None
    got = settings(hybrid, tier) if setting is None else setting
    if signals is not None and got["cover_min"] > 0:
        # Little of the question in the memory, by its words or (hybrid) by their meaning,
        # and the dense leg not close either: a note that shares a word ("the parental
        # *leave* policy") or nothing at all ("which font do we use in slides?").
        held = signals[_SOFT_COVERAGE] if hybrid else signals[_COVERAGE]
        if held < got["cover_min"] and (not hybrid or signals[_MARGIN] < got["margin_max"]):
            return "little of the question is in the memory"
    meaning, specific = got["meaning"], got["specific"]
    if reading.names_swapped:
        return f"the name {reading.names_swapped[0]!r} is not the memory's"
    if got["rivals"]:
        for word, theirs in reading.slot_words:
            if rival(word, theirs):
                return f"{word!r} where the memory says {theirs!r}"
    if got["absent_names"]:
        for name in reading.names_absent:
            if _person_like(name):
                return f"no word of the name {name!r} is in the memory"
    if got["lone_names"]:
        for name in reading.names_unknown:
            if name not in TIME_WORDS:  # "in *June*": a conversation's turn does not write its date
                return f"no memory holds the name {name!r}"
    if got["partial_names"]:
        for name in reading.names_partial:
            return f"memory writes {name.split()[-1]!r} with another name, not {name!r}"
    if reading.echoed:
        return "it reports the question someone asked, and does not answer it"
    soft = {word: (near, spec) for word, _, near, spec, _ in reading.lacking}
    for word, known, slot in reading.modifiers:
        if not (slot or (got["modifiers"] == "known" and known) or got["modifiers"] == "any"):
            continue
        near, spec = soft.get(word, (0.0, None))
        # Only a word memory uses elsewhere: it names another thing the project knows (a new
        # word may be a paraphrase's, "polygon areas" for shapefiles' areas); and in the dense
        # modes only when nothing in the memory comes close to it in meaning.
        if known and (not hybrid or (near < meaning and (spec is None or spec >= specific))):
            return f"{word!r} where the memory says something else"
    for word in reading.attributes_missed:
        if not hybrid or soft.get(word, (0.0, None))[0] < meaning:
            return f"nothing in the memory is its {word!r}"
    if hybrid and got["predicates"]:
        for word in reading.predicates_missed:
            near, spec = soft.get(word, (0.0, None))
            if near < meaning and (spec is None or spec >= specific):
                return f"asks who {word!r}, which the memory does not say"
    if hybrid and reading.wants_missed == "name":
        for word, _, near, spec, _ in reading.lacking:
            if near < meaning and spec is not None and spec >= got["untyped"]:
                return f"nothing of what it asks for, and nothing means {word!r}"
    if got["valued"] and reading.wants_missed in _VALUES:
        return f"it asks for {_VALUES[reading.wants_missed]}, and the memory holds none"
    if got["counted"] and reading.counted is not None and reading.counted < meaning:
        return "it asks how many, and the memory's numbers count something else"
    if hybrid and signals is not None and signals[_MARGIN] < got["margin_max"] and not signals[_FOREIGN]:
        for word, _, near, spec, known in reading.lacking:
            if not known and near < meaning and spec is not None and spec >= got["alien"]:
                written = dict(reading.guessed).get(word, word)
                return f"no memory holds {written!r}, and nothing in this one means it"
    if hybrid and got["unmet_share"] < 1.0:
        unmet = [(word, weight) for word, weight, near, spec, _ in reading.lacking
                 if near < meaning and spec is not None and spec >= got["unmet_specific"]]
        if unmet and sum(w for _, w in unmet) >= got["unmet_share"]:
            return f"nothing in the memory means {unmet[0][0]!r}"
    return None


def _person_like(name: str) -> bool:
    """Words that name someone or something, not a date ("July 2023", "16 June 2023")."""
    words = name.split()
    return len(words) >= 2 and all(w.isalpha() and w not in TIME_WORDS for w in words)


def judged(
    signals: Sequence[float], reading: Reading | None, *, band: str, hybrid: bool, tier: str | None = None,
) -> float:
    """A memory's confidence: the fitted model's (of the band the mode's ``boundary`` says),
    held below the answer threshold when the reading finds a part of the question the memory
    leaves unaccounted for (``bounded``), on the labels' scale (``answerable.calibrated``)."""
    got = settings(hybrid, tier)
    confidence = answerable.confidence(signals, hybrid=hybrid, band=band, tier=tier)
    if got["boundary"] == "large" and band == "small":
        confidence = answerable.confidence(signals, hybrid=hybrid, band="large", tier=tier)
    elif got["boundary"] == "min" and band == "large":
        confidence = min(confidence, answerable.confidence(signals, hybrid=hybrid, band="small", tier=tier))
    confidence = bounded(confidence, reading, band=band, hybrid=hybrid, tier=tier, setting=got, signals=signals)
    return answerable.calibrated(confidence, mode=answerable.mode_of(hybrid=hybrid, tier=tier), band=band)


def bounded(
    confidence: float, reading: Reading | None, *, band: str, hybrid: bool, tier: str | None = None,
    setting: Mapping[str, Any] | None = None, signals: Sequence[float] | None = None,
) -> float:
    """``confidence``, held at most ``CEILING`` (times itself, to keep the order) when the
    memory leaves a part of the question unaccounted for (``unaccounted``)."""
    if unaccounted(reading, band=band, hybrid=hybrid, tier=tier, setting=setting, signals=signals) is None:
        return confidence
    return CEILING * confidence
