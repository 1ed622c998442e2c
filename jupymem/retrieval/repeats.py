"""Hits cut from one pattern give way, so copies cannot bury the memory that answers.

A teammate's pull (or a careless loop) can bring dozens of statements cut from one
pattern: "Someone asked when the churn model is retrained; topic 7 of the planning
thread." Each matches a question about the churn model closely, so the copies took every
place of the search and every match handed to assistants, and the memory that answers
("The churn model is retrained on the first day of every month.") fell out of both: 60
such notes put it 13th. Deleting them is a person's call (retire, supersede); ranking
only stops them crowding everything else out.

So a search keeps at most ``KEPT`` hits of one pattern where they rank and moves the
others after the distinct hits, in their order: nothing is dropped. Two stay in place,
not one: two statements one word apart are often a conflict a person must see side by
side (a superseded one is inactive and not searched; an unsuperseded pair is what
``similar`` warns about when it is recorded). Copies that fill the whole ranking send the
search deeper for the distinct hits below them (``verdict.search``): BM25 ranks sixty
copies that repeat the question's words above the answer, past the 40 candidates a
search usually looks at. Lessons chosen by meaning (``retrieve.nearest_of_kinds``) give
way the same.

Two statements are of one pattern when their content words (``lexical.doc_terms``, with
digits folded: ``t01`` and ``t07`` are one word) overlap by at least ``ALIKE`` (Jaccard).
"The churn model is retrained on the first day of every month" and "... of every week"
share 5 of 7 words and stay apart; the copies above share all theirs.

Which of a pattern keep their place is not the ranking's call alone: folding digits makes
"retrained on day 1" and two planted "retrained, retrained on day 3 / day 5" one pattern,
and the planted pair, ranked higher by their repeated word, took both places. So the
first-ranked keeps its place and the others go to the most trusted of the rest
(``origins``): memories of this machine, then those of the shared files this clone saw
first (``share.SEEN``: an order no line can claim; within one pull, git's graph), then
those whose writer gave the pattern fewer copies; the ranking breaks what ties remain.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from ..models import Memory
from .lexical import doc_terms

KEPT = 2  # hits of one pattern kept where they rank
ALIKE = 0.8  # Jaccard of folded content words from which two statements are one pattern

_DIGITS = re.compile(r"\d+")


# Where a memory came from, for choosing among copies: (when this clone first saw its
# shared file, -1 for this machine's own and for a team database's rows; the writer: the
# shared file's name or the author).
Origin = tuple[int, str]


class Ranked(Protocol):
    memory: Memory  # filled by the caller's ``read`` before it is compared


R = TypeVar("R", bound=Ranked)


@functools.lru_cache(maxsize=32768)
def pattern(statement: str) -> frozenset[str]:
    """A statement's content words with every run of digits folded to one ``0`` (cached by
    text, as ``doc_terms`` is: one search compares ten, and long abstracts cost 0.1 ms each)."""
    terms = doc_terms(statement)
    return frozenset(_DIGITS.sub("0", " ".join(terms)).split(" ")) if terms else frozenset()


def alike(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b:
        return a == b
    shared = len(a & b)
    return shared >= ALIKE * (len(a) + len(b) - shared)


def give_way(
    candidates: list[R], count: int, read: Callable[[Sequence[R]], None],
    origins: Callable[[Sequence[R]], Sequence[Origin]] | None = None,
) -> bool:
    """Reorder ``candidates`` in place so the first ``count`` hold at most ``KEPT`` of one
    pattern wherever the ranking has enough distinct ones. ``read`` fills the memories of
    the ones it compares (``retrieve.materialize``), a chunk at a time: usually only the
    first ``count``, which the verdict reads anyway. ``origins`` tells where each member
    of a pattern with more than ``KEPT`` came from (``MemoryReader.origins``, through
    ``retrieve.give_way``), to choose which keep their place (``_trusted``); without it,
    the first-ranked do.
    True when copies were moved and too few distinct candidates were left to fill
    ``count``: a deeper ranking may hold the ones they crowded out."""
    if count <= KEPT or len(candidates) <= KEPT:
        return False
    shapes: list[frozenset[str]] = []  # the patterns seen, in the order first met
    groups: list[list[R]] = []  # each pattern's members, in rank order
    placed = 0  # how many keep their place: KEPT at most of each pattern
    i = 0
    while i < len(candidates) and placed < count:
        chunk = candidates[i : i + max(count - placed, KEPT, i)]  # doubling past a flood's copies
        read(chunk)
        for c in chunk:
            shape = pattern(c.memory.statement)
            for j, seen in enumerate(shapes):
                if alike(shape, seen):
                    groups[j].append(c)
                    placed += len(groups[j]) <= KEPT
                    break
            else:
                shapes.append(shape)
                groups.append([c])
                placed += 1
        i += len(chunk)
    crowded = [g for g in groups if len(g) > KEPT]
    if not crowded:
        return False
    staying = {id(c) for g in groups for c in (_trusted(g, origins) if len(g) > KEPT else g)}
    examined = candidates[:i]
    candidates[:i] = [c for c in examined if id(c) in staying] + [c for c in examined if id(c) not in staying]
    return placed < count


def _trusted(group: list[R], origins: Callable[[Sequence[R]], Sequence[Origin]] | None) -> list[R]:
    """The ``KEPT`` of a crowded pattern that keep their place: the first-ranked, and the
    most trusted of the others (this machine's, then the shared file seen first, then the
    writer who gave the pattern fewer copies, then the ranking)."""
    if origins is None:
        return group[:KEPT]
    found = list(origins(group))
    copies = Counter(writer for _, writer in found)
    rest = sorted(range(1, len(group)), key=lambda k: (found[k][0], copies[found[k][1]], k))
    return [group[0], *(group[k] for k in rest[: KEPT - 1])]

