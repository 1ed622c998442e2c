"""The dense leg on the team engine: vectors kept in PostgreSQL (migration 6), searched by
the same in-process index as SQLite's, so the rankings and confidences are the same; a
private memory's vector is as private as the memory; a second process (another connection)
finds its teammate's new memory at its next search.

The memories are written to a SQLite project through ``Project`` and replayed into the
team database through the same ``eventlog``/``projection`` code (``test_pg_engine.replay``),
so both engines hold the same rows and the bundled static model embeds both.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from jupymem.config import Settings
from jupymem.core.opening import init_project
from jupymem.errors import AccessDenied
from jupymem.retrieval import index
from jupymem.retrieval.engine import SearchEngine
from jupymem.storage import database, eventlog, projection
from jupymem.storage.postgres import PgStore, connect
from jupymem.storage.postgres.store import PgVectors

from pg_server import Team
from test_pg_engine import WORDS, replay


pytestmark = pytest.mark.postgres

QUERIES = [
    "which timezone does the churn dashboard use", "how are revenue figures reported", "weekly sales forecast",
    "where do I find the parquet partition for invoices", "who owns the customer model", "item7",
]


def _record(conn: Any, mid: str, statement: str, *, private: bool = False, uid: str | None = None) -> None:
    """One memory recorded through the log, as the write path does (another process's write)."""
    memory = {"id": mid, "kind": "note", "statement": statement, "standing": "unconfirmed", "private": private,
              "provenance": {"recorder": "person"}}
    scope = eventlog.PRIVATE if private else eventlog.LOCAL
    with database.transaction(conn):
        projection.apply(conn, eventlog.append(conn, uid or f"u-{mid}", "record", eventlog.next_at(conn),
                                               {"memory": memory}, scope=scope))


@pytest.fixture
def static_settings(real_encoder: str | None) -> Settings:
    return Settings.from_env()


def test_the_dense_leg_ranks_alike_over_postgres_and_sqlite(
    repo: Path, static_settings: Settings, team: Team
) -> None:
    proj = init_project(repo, static_settings)
    rng = random.Random(11)
    made = proj.remember_many(
        {"statement": " ".join(rng.choices(WORDS, k=rng.randint(3, 12))) + f" item{i}", "kind": "note"}
        for i in range(120)
    )
    proj.remember("Revenue figures are reported in Norwegian kroner.", kind="decision")
    for m in made[:4]:
        proj.retire(m.id, "old")
    url = team.person("ola")
    pg = connect(url, team.project("dense", "ola"))
    try:
        replay(proj.conn, pg)
        proj.prepare_dense()
        engine = SearchEngine(pg, static_settings, revision=lambda: eventlog.last_seq(pg))
        engine.prepare_dense()
        assert isinstance(engine.store, PgStore)
        model, stored = index.vector_counts(engine.store, index.STATIC)
        assert (model, stored) == index.vector_counts(proj.store, index.STATIC) and stored == 121
        for query in QUERIES:
            for mode in ("static", "hybrid"):
                got = engine.search(query, 10, include_inactive=False, kinds=None, mode=mode)
                want = proj.search(query, limit=10, mode=mode)
                assert "dense" in got.legs and got.legs == want.legs, (query, mode)
                assert (got.status, [h.memory.id for h in got.hits]) == (want.status, [h.memory.id for h in want.hits])
                assert [h.confidence for h in got.hits] == pytest.approx([h.confidence for h in want.hits], abs=1e-9)
        # The next process loads the stored vectors instead of embedding again: same copy, same answers.
        written = pg.execute("SELECT rid, xmin::text FROM memory_vectors ORDER BY rid").fetchall()
        again = SearchEngine(pg, static_settings, revision=lambda: eventlog.last_seq(pg))
        again.prepare_dense()
        dense = again.tiers.static_index()
        assert dense is not None and dense.size == 121
        assert pg.execute("SELECT rid, xmin::text FROM memory_vectors ORDER BY rid").fetchall() == written  # no rewrite
        hits = again.search(QUERIES[0], 10, include_inactive=False, kinds=None, mode="static").hits
        assert [h.memory.id for h in hits] == [h.memory.id for h in proj.search(QUERIES[0], mode="static").hits]
    finally:
        pg.close()


def test_each_members_vectors_are_their_own(static_settings: Settings, team: Team) -> None:
    """A stored vector is a cache its reader made (migration 8): no member can plant or
    change a vector that ranks a memory in a teammate's search, and a private memory's
    vector is its author's because only its author sees the memory to embed it."""
    ola_url, kari_url = team.person("ola"), team.person("kari")
    project = team.project("private-vectors", "ola", "kari")
    ola, kari = connect(ola_url, project), connect(kari_url, project)
    try:
        _record(ola, "m-shared", "The churn dashboard uses UTC.")
        _record(ola, "m-secret", "My scratch schema for churn is tmp_ola.", private=True)
        for conn in (ola, kari):
            SearchEngine(conn, static_settings, revision=lambda c=conn: eventlog.last_seq(c)).prepare_dense()
        assert ola.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 2
        assert kari.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 1
        assert {r[0] for r in ola.execute("SELECT author_role FROM memory_vectors").fetchall()} == {ola.role}
        shared_rid = ola.execute("SELECT rid FROM memories WHERE id = ?", ("m-shared",)).fetchone()[0]
        secret_rid = ola.execute("SELECT rid FROM memories WHERE id = ?", ("m-secret",)).fetchone()[0]
        before = ola.execute("SELECT vector FROM memory_vectors WHERE rid = ?", (shared_rid,), binary=True).fetchone()
        # Kari can write her own vectors only: not one in Ola's name, not over his.
        with pytest.raises(AccessDenied):
            kari.execute("INSERT INTO memory_vectors (rid, memory_id, model, vector, author_role) VALUES (?, ?, ?, ?, ?)",
                         (shared_rid, "m-shared", "x", b"\0" * 8, ola.role))
        # A row of her own for a memory she cannot see serves no search: hers joins the rows she sees.
        kari.execute("INSERT INTO memory_vectors (rid, memory_id, model, vector) VALUES (?, ?, ?, ?)",
                     (secret_rid, "m-secret", "x", b"\0" * 8))
        assert [rid for rid, _ in PgVectors(kari, "static").load("x")] == []
        kari.execute("UPDATE memory_vectors SET vector = ? WHERE rid = ?", (b"\1" * 8, shared_rid))
        kari.execute("DELETE FROM memory_vectors WHERE rid = ?", (secret_rid,))
        after = ola.execute("SELECT vector FROM memory_vectors WHERE rid = ?", (shared_rid,), binary=True).fetchone()
        assert bytes(after[0]) == bytes(before[0])
        assert ola.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 2
        # Said again where it is shared, the memory is Kari's to see, and her next search embeds it.
        _record(ola, "m-secret", "My scratch schema for churn is tmp_ola.", uid="u-shared-again")
        SearchEngine(kari, static_settings, revision=lambda: eventlog.last_seq(kari)).prepare_dense()
        assert kari.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 2
    finally:
        ola.close()
        kari.close()


def test_another_connections_new_memory_is_found_at_the_next_search(static_settings: Settings, team: Team) -> None:
    """A (a kernel) has built its in-process indexes; B (a teammate's process) records; A's
    next search finds it: the head row is read before every search (``Project.revision``)."""
    ola_url, kari_url = team.person("ola"), team.person("kari")
    project = team.project("fresh", "ola", "kari")
    a, b = connect(ola_url, project), connect(kari_url, project)
    try:
        for i in range(30):
            _record(b, f"m-old{i:03d}", f"Table t{i} is partitioned by day and owned by team {i % 4}.")
        engine = SearchEngine(a, static_settings, revision=lambda: eventlog.last_seq(a))
        engine.prepare_lexical()
        engine.prepare_dense()
        query = "where are the invoice parquet exports kept"
        for mode in ("lexical", "static"):
            assert "m-new" not in [h.memory.id for h in engine.search(query, 5, include_inactive=False, kinds=None,
                                                                      mode=mode).hits]
        _record(b, "m-new", "Invoice parquet exports are kept in s3://finance/invoices, one folder a month.")
        for mode in ("lexical", "static"):
            got = engine.search(query, 5, include_inactive=False, kinds=None, mode=mode)
            assert got.hits and got.hits[0].memory.id == "m-new", (mode, [h.memory.id for h in got.hits])
        # What noticing costs: the head row, read once a search (a round trip on a local socket).
        started = time.perf_counter()
        for _ in range(200):
            eventlog.last_seq(a)
        per_search = (time.perf_counter() - started) / 200
        assert per_search < 0.01
    finally:
        a.close()
        b.close()


def test_a_teammates_memory_shared_after_the_fact_joins_the_dense_copy(static_settings: Settings, team: Team) -> None:
    """Kari's private memory, recorded again where it is shared, becomes visible to Ola with
    the row id it always had: below the rows Ola's copy has synced, where ``behind`` does
    not look. Ola's next search adds it (``DenseIndex.catch_up_below``)."""
    ola_url, kari_url = team.person("ola"), team.person("kari")
    project = team.project("shared-later", "ola", "kari")
    ola, kari = connect(ola_url, project), connect(kari_url, project)
    statement = "Invoice parquet exports are kept in s3://finance/invoices, one folder a month."
    try:
        _record(kari, "m-later", statement, private=True)
        for i in range(20):
            _record(kari, f"m-t{i:03d}", f"Table t{i} is partitioned by day and owned by team {i % 4}.")
        engine = SearchEngine(ola, static_settings, revision=lambda: eventlog.last_seq(ola))
        engine.prepare_dense()
        dense = engine.tiers.static_index()
        assert dense is not None and dense.size == 20
        _record(kari, "m-later", statement, uid="u-m-later-shared")
        rid = ola.execute("SELECT rid FROM memories WHERE id = ?", ("m-later",)).fetchone()[0]
        assert not dense.behind()  # nothing above: the row appeared below
        query = "where are the invoice parquet exports kept"
        got = engine.search(query, 5, include_inactive=False, kinds=None, mode="static")
        assert got.hits[0].memory.id == "m-later"
        assert dense.size == 21
        vector = engine.tiers.static_encoder().embedder.embed_batch([query])[0]  # type: ignore[union-attr]
        assert rid in dense.cosines(vector, [rid])
    finally:
        ola.close()
        kari.close()


@pytest.mark.usefixtures("transformer_encoder")
def test_the_transformers_int8_vectors_rank_alike_over_postgres_and_sqlite(repo: Path, team: Team) -> None:
    """The transformer tier stores int8 vectors (a quarter of float32): the same bytes in
    PostgreSQL give the same copy, so its rankings (alone and in hybrid) are SQLite's."""
    settings = Settings.from_env()
    proj = init_project(repo, settings)
    rng = random.Random(5)
    proj.remember_many(
        {"statement": " ".join(rng.choices(WORDS, k=rng.randint(3, 12))) + f" item{i}", "kind": "note"}
        for i in range(60)
    )
    url = team.person("ola")
    pg = connect(url, team.project("transformer", "ola"))
    try:
        replay(proj.conn, pg)
        proj.prepare_dense()
        engine = SearchEngine(pg, settings, revision=lambda: eventlog.last_seq(pg))
        engine.prepare_dense()
        assert engine.status().tier == index.TRANSFORMER
        model, stored = index.vector_counts(engine.store, index.TRANSFORMER)
        assert (model, stored) == index.vector_counts(proj.store, index.TRANSFORMER) and stored == 60
        blob = pg.execute("SELECT vector FROM memory_vectors_transformer LIMIT 1").fetchone()[0]
        assert len(blob) == 384  # int8: one byte a dimension
        for query in QUERIES:
            for mode in ("transformer", "dense"):
                got = engine.search(query, 10, include_inactive=False, kinds=None, mode=mode)
                want = proj.search(query, limit=10, mode=mode)
                assert got.hits or mode == "transformer", (query, mode)  # a ranking alone never abstains
                assert [h.memory.id for h in got.hits] == [h.memory.id for h in want.hits], (query, mode)
                assert [h.confidence for h in got.hits] == pytest.approx([h.confidence for h in want.hits], abs=1e-9)
    finally:
        pg.close()
