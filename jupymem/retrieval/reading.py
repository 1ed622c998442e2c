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
* a **swapped modifier**: the memory holds the word a question word qualifies, with a word
  of its own in its place ("the *forecasting* model" / "the churn model", "the *monthly*
  sales forecast" / "weekly sales forecasts"), the question's word is specific
  (``SPECIFIC``) and nothing in the memory comes close to it in meaning (the static
  encoder's word vectors, ``MEANING``: "legacy" accounts for "old", "attrition" for "churn").
* the **attribute** asked of a name the memory names ("Lena Park's *email*") that nothing
  in the memory matches or comes close to in meaning.

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

from .signals import Reading

# A question word the memory lacks is accounted for by meaning when one of the memory's
# words is at least this close to it (cosine of the static encoder's word vectors).
MEANING = 0.45
# Below this specificity (``Model2VecEmbedder.specificity``: ~0.4 for the commonest words,
# above 1 for rare ones) a swapped modifier says too little to decide on ("old", "huge").
SPECIFIC = 0.8
# The confidence a memory that leaves a part unaccounted for keeps at most: "weak", below
# every threshold that answers, and still ordered by what the model said.
CEILING = 0.45
READ_BANDS = frozenset({"small", "large"})


def unaccounted(reading: Reading | None, *, band: str, hybrid: bool) -> str | None:
    """The first part of the question ``reading`` leaves unaccounted for (a few words for
    ``explain``), or None when every part is there or the band is not read."""
    if reading is None or band not in READ_BANDS:
        return None
    if reading.names_swapped:
        return f"the name {reading.names_swapped[0]!r} is not the memory's"
    soft = {word: (near, spec) for word, _, near, spec in reading.lacking}
    for word, known in reading.modifiers_swapped:
        near, spec = soft.get(word, (0.0, None))
        if (near < MEANING and (spec is None or spec >= SPECIFIC)) if hybrid else known:
            return f"{word!r} where the memory says something else"
    for word in reading.attributes_missed:
        if not hybrid or soft.get(word, (0.0, None))[0] < MEANING:
            return f"nothing in the memory is its {word!r}"
    return None


def bounded(confidence: float, reading: Reading | None, *, band: str, hybrid: bool) -> float:
    """``confidence``, held at most ``CEILING`` (times itself, to keep the order) when the
    memory leaves a part of the question unaccounted for (``unaccounted``)."""
    if unaccounted(reading, band=band, hybrid=hybrid) is None:
        return confidence
    return CEILING * confidence
