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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from ..models import Memory
from .lexical import doc_terms

KEPT = 2  # hits of one pattern kept where they rank
ALIKE = 0.8  # Jaccard of folded content words from which two statements are one pattern

_DIGITS = re.compile(r"\d+")


class Ranked(Protocol):
    memory: Memory  # filled by the caller's ``read`` before it is compared


R = TypeVar("R", bound=Ranked)


def pattern(statement: str) -> frozenset[str]:
    """A statement's content words with every run of digits folded to one ``0``."""
    return frozenset(_DIGITS.sub("0", w) for w in doc_terms(statement))


def alike(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b:
        return a == b
    shared = len(a & b)
    return shared >= ALIKE * (len(a) + len(b) - shared)


def give_way(candidates: list[R], count: int, read: Callable[[Sequence[R]], None]) -> bool:
    """Reorder ``candidates`` in place so the first ``count`` hold at most ``KEPT`` of one
    pattern wherever the ranking has enough distinct ones. ``read`` fills the memories of
    the ones it compares (``retrieve.materialize``), a chunk at a time: usually only the
    first ``count``, which the verdict reads anyway.
    True when copies were moved and too few distinct candidates were left to fill
    ``count``: a deeper ranking may hold the ones they crowded out."""
    if count <= KEPT or len(candidates) <= KEPT:
        return False
    kept: list[R] = []
    moved: list[R] = []
    shapes: list[tuple[frozenset[str], int]] = []  # a pattern seen, and how many kept of it
    i = 0
    while i < len(candidates) and len(kept) < count:
        chunk = candidates[i : i + max(count - len(kept), KEPT, i)]  # doubling past a flood's copies
        read(chunk)
        for c in chunk:
            shape = pattern(c.memory.statement)
            for j, (seen, n) in enumerate(shapes):
                if alike(shape, seen):
                    if n >= KEPT:
                        moved.append(c)
                    else:
                        kept.append(c)
                        shapes[j] = (seen, n + 1)
                    break
            else:
                kept.append(c)
                shapes.append((shape, 1))
        i += len(chunk)
    if moved:
        candidates[:i] = kept + moved
    return bool(moved) and len(kept) < count

