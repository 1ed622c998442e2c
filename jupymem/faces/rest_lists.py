"""What ``GET memories`` answers the sidebar beyond the core's own records: a search with
the words every face uses for its hits, and the list as every kind's first rows.

Kept apart from ``server``'s handlers (routing, paths, bodies, errors) as the one place
that shapes these two answers; both are plain JSON built from the core's results.
"""

from __future__ import annotations

from typing import Any

from ..core.project import Project
from ..models import KINDS, SearchResult, to_json
from .render_common import confidence_word


def search_answer(result: SearchResult, retrieval: dict[str, Any]) -> dict[str, Any]:
    """``result`` as JSON, each hit with ``level`` and the whole with ``retrieval``.

    ``level`` is the word every other face prints for a hit's confidence (strong / likely /
    weak, retrieval's calibrated thresholds; "weak" for every closest memory of an
    abstention, as the verdict says none answers), so the sidebar says the same.
    ``retrieval`` is what the search ran with and what is still loading: the first search
    of a process starts the encoders, and the sidebar shows their progress at once."""
    found = to_json(result)
    answered = not result.abstained
    for hit in [*found["hits"], *(found.get("closest") or [])]:
        hit["level"] = confidence_word(hit["confidence"], answered=answered)
    found["retrieval"] = retrieval
    return found


def by_kind(proj: Project, kind: str | None, include_inactive: bool, per_kind: int) -> dict[str, Any]:
    """The first ``per_kind`` memories of every kind (of ``kind`` only when given), in block
    order, with each kind's count in ``kinds``: a list of 2,500 memories paged in block
    order showed the first kinds only, and four kinds were missing until "Load more"."""
    counts = {k: proj.count(kind=k, include_inactive=include_inactive) for k in ([kind] if kind else KINDS)}
    memories = [m for k, n in counts.items() if n
                for m in proj.list(kind=k, include_inactive=include_inactive, limit=per_kind)]
    return {
        "memories": to_json(memories),
        "total": sum(counts.values()),
        "offset": 0,
        "kinds": {k: n for k, n in counts.items() if n},
        "revision": proj.revision(),
    }
