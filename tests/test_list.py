"""Project.list pages in SQL, in block order, and count() agrees with it."""

from __future__ import annotations

import jupymem
from jupymem.models import KINDS


def test_pages_concatenate_to_the_whole_list_in_block_order(repo):
    proj = jupymem.init(repo)
    items = [{"statement": f"Statement number {i} about table_{i}.", "kind": KINDS[i % len(KINDS)]} for i in range(53)]
    proj.remember_many(items)
    whole = proj.list()
    assert [KINDS.index(m.kind) for m in whole] == sorted(KINDS.index(m.kind) for m in whole)
    pages = [proj.list(limit=10, offset=o) for o in range(0, 60, 10)]
    assert [m.id for page in pages for m in page] == [m.id for m in whole]
    assert proj.count() == 53
    assert proj.count(kind="fact") == len(proj.list(kind="fact")) == len([i for i in range(53) if i % 8 == 6])
    proj.retire(whole[0].id)
    assert proj.count() == 52 and proj.count(include_inactive=True) == 53
    assert proj.list(limit=0) == []
