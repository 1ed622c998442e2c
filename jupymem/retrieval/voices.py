"""One teammate's file cannot hold every place a search shows (played as the insider).

Mallory pushes sixty lines that each claim a wrong answer, each worded differently
("The churn model is retrained every Friday evening.", "Our churn predictor gets
retrained every Monday morning."): they are not one pattern (``repeats``), every reading
takes them for answers, and they ranked above Alice's answer, which was 15th of 61.

So when one shared file holds every place of a search's head (the first ``count``), the
best-ranked hit of each other source among the first ``DEPTH`` takes one of the head's
last places: at most ``PLACES`` (and half the head), the source this clone saw first
first (``MemoryReader.origins``). Nothing is dropped and no score changes: the verdict
still judges each hit, so a weak hit moved up is shown as weak and is not handed to
assistants. A head held by this machine's own memories, or a project with one source
(every unshared project), is left as ranked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from .repeats import Origin

__all__ = ["DEPTH", "PLACES", "share_head"]

DEPTH = 50  # how far down another source's best hit may come from
PLACES = 2  # at most this many of a head held by one file go to other sources

R = TypeVar("R")


def share_head(candidates: list[R], count: int, origins: Callable[[Sequence[R]], Sequence[Origin]]) -> bool:
    """Reorder ``candidates`` in place as above; True when a hit was moved."""
    if count < 2 or len(candidates) <= count:
        return False
    window = candidates[:DEPTH]
    found = list(origins(window))
    held = {writer for _, writer in found[:count]}
    # A shared file, not this clone's own (its own file is -1 on a clone that replayed it).
    if len(held) != 1 or not next(iter(held)).startswith("file:") or found[0][0] == -1:
        return False
    (file,) = held
    best: dict[str, int] = {}  # each other source -> its best-ranked hit in the window
    for i in range(count, len(window)):
        writer = found[i][1]
        if writer != file and writer not in best:
            best[writer] = i
    places = min(PLACES, count // 2, len(best))
    if not places:
        return False
    chosen = sorted(sorted(best.values(), key=lambda i: (found[i][0], i))[:places])
    taken = set(chosen)
    rest = [c for i, c in enumerate(window) if i not in taken]
    candidates[: len(window)] = [*rest[: count - places], *(window[i] for i in chosen), *rest[count - places:]]
    return True
