"""What of the question a memory leaves unaccounted for: the ``Reading`` that ``signals``
fills for the first candidates and the verdict's reading (``reading.py``) reads, apart
from the fitted models. Kept apart from ``signals`` (which re-exports it) so that module
keeps to computing, and this one to saying what each part means."""

from __future__ import annotations

from typing import NamedTuple


class Reading(NamedTuple):
    """What of the question a memory leaves unaccounted for (``signals(reading=...)``), for
    the verdict's own reading (``reading.py``), apart from the fitted models:

    * ``lacking``: per query term the memory lacks, its weight share, how close the memory's
      nearest word comes in meaning (0 without word vectors), how specific it is (None
      without the encoder) and whether memory uses it elsewhere (not a typo fix's guess);
    * ``names_swapped``: halves of the question's names the memory writes with another
      ("*Kasimir* Ibarrondo" where it writes Elodie Ibarrondo);
    * ``names_absent``: names of two words or more of which the memory writes no part;
    * ``modifiers``: the question's words it lacks that stand just before a word it holds
      ("the *forecasting* model" against "the churn model"), each with whether memory uses
      it elsewhere and whether the memory writes a word of its own in that place;
    * ``attributes_missed``: the attributes asked of a name it names that it lacks ("Lena
      Park's *email*"); ``predicates_missed``: what "who *maintains* ...?" asks of someone."""

    lacking: tuple[tuple[str, float, float, float | None, bool], ...]  # (word, weight, soft, specificity, known)
    names_swapped: tuple[str, ...]
    names_absent: tuple[str, ...]
    modifiers: tuple[tuple[str, bool, bool], ...]  # (word, known to memory, the memory's own word in its place)
    attributes_missed: tuple[str, ...]
    predicates_missed: tuple[str, ...] = ()
    # What the question asks for ("name", "time", "amount", "version": ``wording.wanted_type``)
    # when the memory holds nothing of that type, else None.
    wants_missed: str | None = None
    # The modifiers the memory writes its own word in place of ("monthly", "weekly").
    slot_words: tuple[tuple[str, str], ...] = ()
    # Names of which the memory writes the first word and not the last, a last word memory
    # writes only beside another name ("Tom Park" against "Ask Tom ...", memory knowing Lena
    # Park): ``QuerySide.names_elsewhere``.
    names_partial: tuple[str, ...] = ()
    # A "how many" question's count against a memory that holds numbers: how close what they
    # count comes to what it asks to count (1.0: the same word; "52 *weeks*" for "how many
    # *stores*" far less); None when not read (``wording.counted_words``).
    counted: float | None = None
    # The words the memory lacks that a typo fix put in place of what the question wrote
    # ("dunlin", "Dublin"): (the term, the word written). ``lacking`` holds them as unknown.
    guessed: tuple[tuple[str, str], ...] = ()
    # A name of one word no memory holds, written with a capital ("How many people work in
    # the *Dublin* office?"): about something memory never mentions, however close the rest.
    names_unknown: tuple[str, ...] = ()
    # The memory reports the question instead of answering it: each of the question's words
    # it holds stands inside a question someone asked ("Someone *asked when the churn model
    # is retrained*, in planning thread 7"; ``wording.not_asking``) or a question sentence.
    echoed: bool = False
