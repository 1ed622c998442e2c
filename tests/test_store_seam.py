"""Retrieval reads memory through ``storage.reads.MemoryReader`` only, so an engine that is
not SQLite can serve a search (the seam the PostgreSQL engine plugs into).

``ListStore`` is such an engine in a few lines: memory held in a dict, no SQL, no
``execute`` (any raw query left in retrieval would fail on it). It has no BM25 of its own
(``bm25`` answers nothing, as the reads protocol allows), so retrieval's in-memory index
(``postings.py``) scores, as it does for SQLite once built: both engines must rank alike.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from jupymem.config import Settings
from jupymem.core.opening import init_project
from jupymem.core.project import Project
from jupymem.models import Memory
from jupymem.retrieval import fuzzy, verdict
from jupymem.retrieval.postings import Postings
from jupymem.storage.reads import MemoryReader, SqliteStore, TextRow, store_for


class ListStore:
    """A second engine: the memories of a project, copied into a dict by row id."""

    def __init__(self, rows: dict[int, Memory]) -> None:
        self.rows = dict(sorted(rows.items()))

    def top_rid(self) -> int:
        return max(self.rows, default=0)

    def count(self) -> int:
        return len(self.rows)

    def has_after(self, rid: int) -> bool:
        return any(r > rid for r in self.rows)

    def count_after(self, rid: int) -> int:
        return sum(r > rid for r in self.rows)

    def rids(self) -> list[int]:
        return list(self.rows)

    def closed_rids(self) -> list[int]:
        return [r for r, m in self.rows.items() if not m.active]

    def memories(self, rids: Sequence[int]) -> dict[int, Memory]:
        return {r: self.rows[r] for r in rids if r in self.rows}

    def origins(self, rids: Sequence[int]) -> dict[int, tuple[int, str]]:
        return {r: (-1, f"author:{self.rows[r].provenance.author or ''}") for r in rids if r in self.rows}

    def meta(self, key: str) -> str | None:
        return None  # nothing shared: one source

    def admitted(self, rids: Sequence[int], *, include_inactive: bool, kinds: Sequence[str] | None) -> set[int]:
        return {r for r in rids if r in self.rows and (include_inactive or self.rows[r].active)
                and (not kinds or self.rows[r].kind in kinds)}

    def texts(self, after: int, upto: int | None = None, limit: int | None = None) -> list[TextRow]:
        rows = [(r, m.statement, m.topic, m.original) for r, m in self.rows.items()
                if r > after and (upto is None or r <= upto)]
        return rows if limit is None else rows[:limit]

    def bm25(self, terms: Sequence[tuple[str, bool]], weights: Sequence[float], depth: int) -> list[tuple[int, float]]:
        return []  # this engine leaves BM25 to retrieval's in-memory index

    def word_counts(self, words: Sequence[str]) -> dict[str, int]:
        return {}

    def prefix_count(self, prefix: str) -> int:
        return 0


WORDS = ("churn cohort dashboard timezone utc revenue invoice region partition parquet sales forecast "
         "customer account session report weekly monthly table column notebook model owner").split()


@pytest.fixture
def project(repo, settings: Settings) -> Project:
    proj = init_project(repo, settings)
    rng = random.Random(7)
    proj.remember_many(
        {"statement": " ".join(rng.choices(WORDS, k=rng.randint(3, 12))) + f" item{i}", "kind": "note"}
        for i in range(60)
    )
    proj.remember("Revenue figures are in Norwegian kroner.", kind="decision")
    return proj


def _copy(project: Project) -> ListStore:
    store = project.store
    return ListStore(store.memories(store.rids()))


def test_the_project_reads_through_one_sqlite_store(project: Project) -> None:
    assert isinstance(project.store, SqliteStore)
    assert store_for(project.conn) is project.store  # one store per connection: caches keyed by it hold
    assert store_for(project.store) is project.store
    reader: MemoryReader = _copy(project)  # mypy checks that ListStore is one
    assert reader.count() == project.store.count() == 61


def test_a_store_that_is_not_sqlite_serves_search_and_ranks_alike(project: Project) -> None:
    other = _copy(project)
    assert not hasattr(other, "execute")
    n = project.store.count()
    rng = random.Random(11)
    queries = ["which timezone does the churn dashboard use", "item7", "weekly sales forecast by region"]
    queries += [" ".join(rng.choices(WORDS, k=rng.randint(1, 6))) for _ in range(20)]
    for query in queries:
        got = verdict.search(other, query, n_docs=n, mode="lexical", postings=Postings(after_searches=0), limit=10)
        want = verdict.search(project.store, query, n_docs=n, mode="lexical", postings=Postings(after_searches=0),
                               limit=10)
        assert (got.status, [h.memory.id for h in got.hits]) == (want.status, [h.memory.id for h in want.hits]), query
        assert [h.confidence for h in got.hits] == pytest.approx([h.confidence for h in want.hits]), query
    answer = verdict.search(other, "are revenue figures in norwegian kroner?", n_docs=n, mode="lexical",
                             postings=Postings(after_searches=0))
    assert answer.status == "ok" and answer.hits[0].memory.statement == "Revenue figures are in Norwegian kroner."


def test_typo_correction_reads_names_from_any_store(project: Project) -> None:
    vocab = fuzzy.Vocabulary()
    assert vocab.refresh(_copy(project)) is True
    assert vocab.correct_word("dashbaord") == "dashboard"
