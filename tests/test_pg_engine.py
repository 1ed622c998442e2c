"""The PostgreSQL engine against a real PostgreSQL: the same log, projection and ranking as
SQLite; projects and private memories kept apart by the database itself; one chain per
project however many processes write; a dropped connection is one clear error.

The contract is checked by replay: a SQLite project is written through ``Project`` (the
real events, with their real payloads), and its events are appended to PostgreSQL through
the same ``eventlog``/``projection`` code, which must give the same rows and hashes.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupymem.config import Settings
from jupymem.core.opening import init_project
from jupymem.core.project import Project
from jupymem.errors import AccessDenied, StorageError
from jupymem.models import Evidence
from jupymem.retrieval import verdict
from jupymem.retrieval.postings import Postings
from jupymem.storage import database, eventlog, projection
from jupymem.storage.postgres import PgConnection, PgStore, connect, dialect
from jupymem.storage.postgres.schema import PROJECT_TABLES

from pg_server import Team
import pg_workers
from pg_workers import append_worker

pytestmark = pytest.mark.postgres


# -- helpers ------------------------------------------------------------------------------


def replay(source: Any, target: PgConnection, *, bulk: bool = False) -> list[eventlog.Event]:
    """Append every event of the SQLite log ``source`` to ``target``, and project it, as
    the live write path does (``bulk``: through ``projection.Batch``, as remember_many does)."""
    scopes = dict(source.execute("SELECT uid, scope FROM events").fetchall())
    out = []
    with database.transaction(target):
        evs = list(eventlog.events(source))
        batch = projection.Batch(target, [e.payload["memory"]["id"] for e in evs if e.type == "record"]) if bulk else None
        for ev in evs:
            new = eventlog.append(target, ev.uid, ev.type, ev.at, ev.payload, scope=scopes[ev.uid], writer=ev.writer)
            (batch.apply if batch else lambda e: projection.apply(target, e))(new)
            out.append(new)
        if batch:
            batch.flush()
    return out


def failure(handle: str) -> Evidence:
    return Evidence(handle=handle, session="s1", ename="KeyError", evalue="'region'", diagnosis=("missing column",),
                    excerpt="KeyError: 'region'", created_at="2026-01-02T03:04:05.000000Z", cell_id="c1")


@pytest.fixture
def written(repo: Path, settings: Settings) -> Project:
    """A SQLite project whose log holds every kind of event: records (one citing evidence,
    one private, many in one transaction), a supersede, a retire, a confirm, a restatement."""
    proj = init_project(repo, settings)
    proj.stage_failure(failure("ev-0000beef"))
    a = proj.remember("Sales are keyed by region_id, not region.", kind="correction", evidence=["ev-0000beef"])
    b = proj.remember("The churn dashboard uses UTC.", kind="decision", topic="dashboards")
    proj.remember("My scratch schema is tmp_ola.", private=True)
    proj.remember_many({"statement": f"Table t{i} is partitioned by day.", "kind": "note"} for i in range(5))
    c = proj.supersede(b.id, "The churn dashboard uses Europe/Oslo time.")
    proj.retire(a.id, "region_id was renamed")
    proj.confirm(c.id, by="ola")
    proj.remember("Sales are keyed by region_id, not region.", kind="correction")  # reopens a
    return proj


# -- the dialect, without a server ----------------------------------------------------------


def test_the_dialect_bridges_what_differs_and_refuses_what_only_sqlite_has() -> None:
    assert dialect.translate("INSERT OR IGNORE INTO cited_evidence (handle) VALUES (?)") == (
        "INSERT INTO cited_evidence (handle) VALUES (%s) ON CONFLICT DO NOTHING", False)
    assert dialect.translate("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = 1")[0] \
        == "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (project, key) DO UPDATE SET value = 1"
    assert dialect.translate("INSERT INTO memories (id) VALUES (?)") == (
        "INSERT INTO memories (id) VALUES (%s) RETURNING rid", True)
    assert dialect.translate("INSERT INTO events (seq, uid) VALUES (?, ?)") == (  # the writer numbered it
        "INSERT INTO events (seq, uid) VALUES (%s, %s)", False)
    assert dialect.translate("SELECT id FROM memories WHERE x IS NULL AND +status = ?")[0].endswith("AND status = %s")
    assert dialect.translate("SELECT 1 FROM t WHERE a LIKE 'x%' AND b = ?")[0] == "SELECT 1 FROM t WHERE a LIKE 'x%%' AND b = %s"
    for sqlite_only in ("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", "PRAGMA user_version",
                        "SELECT 1 FROM sqlite_master", "INSERT OR REPLACE INTO staged_evidence (handle) VALUES (?)",
                        "SELECT 1 FROM t WHERE a = 'why?'"):
        with pytest.raises(dialect.Unsupported):
            dialect.translate(sqlite_only)


def test_sqlite_use_never_imports_psycopg(repo: Path, jupymem_home: Path) -> None:
    code = (
        "import sys, jupymem, jupymem.storage.postgres\n"
        "from jupymem.config import Settings\n"
        "from jupymem.core.opening import init_project\n"
        f"p = init_project(__import__('pathlib').Path({str(repo)!r}), Settings.from_env())\n"
        "p.remember('The churn dashboard uses UTC.')\n"
        "assert p.search('churn dashboard').hits\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().run_line_magic('load_ext', 'jupymem')\n"
        "assert 'jupymem.faces.magics' in sys.modules\n"
        "assert 'psycopg' not in sys.modules and 'psycopg_pool' not in sys.modules, 'psycopg was imported'\n"
    )
    env = {"JUPYMEM_HOME": str(jupymem_home), "JUPYMEM_ENCODER": "none", "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd=repo)
    assert done.returncode == 0, done.stderr


# -- the contract: same rows, same hashes -----------------------------------------------------


@pytest.mark.parametrize("bulk", [False, True], ids=["apply", "batch"])
def test_the_same_events_give_the_same_projection_and_chain(written: Project, team: Team, bulk: bool) -> None:
    url = team.person("ola")
    pg = connect(url, team.project("contract", "ola"))
    try:
        appended = replay(written.conn, pg, bulk=bulk)
        sqlite_events = list(eventlog.events(written.conn))
        pg_events = list(eventlog.events(pg))
        assert len(pg_events) == len(sqlite_events) == len(appended) >= 10
        assert [e.hash for e in pg_events] == [e.hash for e in sqlite_events]
        assert [e.seq for e in pg_events] == [e.seq for e in sqlite_events]
        assert eventlog.check_chain(pg_events, source="postgres") == eventlog.check_chain(sqlite_events, source="sqlite")
        # The database derived its rows itself (``guard.project_event``): the rows Python's
        # projection makes of the same events, to the byte. The writer is the database's
        # word (the connecting role), so the rows are compared with a replay of its events.
        scratch = database.memory_database()
        for ev in pg_events:
            projection.apply(scratch, ev)
        assert {ev.writer for ev in pg_events} == {pg.role}
        assert projection.snapshot(pg) == projection.snapshot(scratch)
        scratch.close()
        assert eventlog.head(pg) == eventlog.head(written.conn)
        got, want = PgStore(pg), written.store
        assert (got.count(), got.active_count(), len(got.closed_rids())) == (want.count(), want.active_count(),
                                                                              len(want.closed_rids()))
        assert sorted(row[0] for row in got.changed_since(3)) == sorted(row[0] for row in want.changed_since(3))
    finally:
        pg.close()


def test_a_retried_event_id_adds_nothing(team: Team) -> None:
    url = team.person("ola")
    pg = connect(url, team.project("retry", "ola"))
    payload = {"id": "m-000000000001", "reason": "gone"}
    try:
        for _ in range(2):
            with database.transaction(pg):
                eventlog.append_once(pg, "uid-1", "retire", eventlog.next_at(pg), payload)
        assert eventlog.count(pg) == 1
        with database.transaction(pg):
            assert eventlog.append_once(pg, "uid-1", "retire", eventlog.next_at(pg), payload) is None
        assert eventlog.count(pg) == 1 and eventlog.check_chain(eventlog.events(pg), source="postgres") == 1
    finally:
        pg.close()


def test_the_database_refuses_a_fork_and_a_deleted_event(team: Team) -> None:
    url = team.person("ola")
    pg = connect(url, team.project("guard", "ola"))
    try:
        with database.transaction(pg):
            eventlog.append(pg, "u1", "retire", eventlog.next_at(pg), {"id": "m-1"})
        with pytest.raises(StorageError, match="another writer"), database.transaction(pg):
            eventlog.append(pg, "u2", "retire", eventlog.next_at(pg), {"id": "m-2"}, prev=eventlog.GENESIS)
        with pytest.raises(AccessDenied, match="permission denied for table events"):  # members only append
            pg.execute("DELETE FROM events")
        assert eventlog.count(pg) == 1
    finally:
        pg.close()


def test_a_pipelined_write_is_whole_or_absent_even_when_nothing_read_its_failure(team: Team) -> None:
    """Inside a write transaction statements are queued and their answers read only when
    asked for: a refused event nobody read still fails the transaction, at COMMIT, and
    takes the statements queued beside it along."""
    url = team.person("ola")
    pg = connect(url, team.project("pipelined", "ola"))
    try:
        with database.transaction(pg):  # two events, the second chained on a head read after the first
            first = eventlog.append(pg, "u1", "retire", eventlog.next_at(pg), {"id": "m-1"})
            second = eventlog.append(pg, "u2", "retire", eventlog.next_at(pg), {"id": "m-2"})
        assert (first.seq, second.seq, second.prev) == (1, 2, first.hash)
        with pytest.raises(StorageError, match="another writer"), database.transaction(pg):
            database.set_meta(pg, "note", "queued, never read")
            assert eventlog.numbers_events(pg)
            eventlog.append(pg, "u3", "retire", eventlog.next_at(pg), {"id": "m-3"}, prev=eventlog.GENESIS, seq=3)
        assert database.get_meta(pg, "note") is None
        assert pg.chain_head() == (2, second.hash, second.at) and not eventlog.numbers_events(pg)
        assert eventlog.check_chain(eventlog.events(pg), source="postgres") == 2
    finally:
        pg.close()


# -- search ---------------------------------------------------------------------------------

WORDS = ("churn cohort dashboard timezone utc revenue invoice region partition parquet sales forecast "
         "customer account session report weekly monthly table column notebook model owner").split()


def test_search_ranks_alike_over_postgres_and_sqlite(repo: Path, settings: Settings, team: Team) -> None:
    proj = init_project(repo, settings)
    rng = random.Random(7)
    made = proj.remember_many(
        {"statement": " ".join(rng.choices(WORDS, k=rng.randint(3, 12))) + f" item{i}", "kind": "note"}
        for i in range(80)
    )
    proj.remember("Revenue figures are in Norwegian kroner.", kind="decision")
    for m in made[:5]:
        proj.retire(m.id, "old")
    proj.supersede(made[5].id, "Weekly sales forecast by region lives in the forecast notebook.")
    url = team.person("ola")
    pg = connect(url, team.project("search", "ola"))
    try:
        replay(proj.conn, pg)
        store = PgStore(pg)
        n = store.count()
        assert n == proj.store.count() == 82
        queries = ["which timezone does the churn dashboard use", "item7", "weekly sales forecast by region",
                   "are revenue figures in norwegian kroner?", "forecst notebok"]
        queries += [" ".join(rng.choices(WORDS, k=rng.randint(1, 6))) for _ in range(25)]
        for query in queries:
            for include_inactive in (False, True):
                got = verdict.search(store, query, n_docs=n, mode="lexical", postings=Postings(after_searches=0),
                                     include_inactive=include_inactive, limit=10)
                # SQLite through FTS5's own bm25(): the in-process index must reproduce it.
                want = verdict.search(proj.store, query, n_docs=n, mode="lexical", postings=None,
                                      include_inactive=include_inactive, limit=10)
                assert (got.status, [h.memory.id for h in got.hits]) == (want.status, [h.memory.id for h in want.hits])
                assert [h.confidence for h in got.hits] == pytest.approx([h.confidence for h in want.hits], abs=1e-9)
        answer = verdict.search(store, "are revenue figures in norwegian kroner?", n_docs=n, mode="lexical",
                                postings=Postings(after_searches=0))
        assert answer.status == "ok" and answer.hits[0].memory.statement == "Revenue figures are in Norwegian kroner."
    finally:
        pg.close()


def test_copies_give_way_alike_over_postgres_and_sqlite(repo: Path, settings: Settings, team: Team) -> None:
    # ``repeats.give_way`` asks the store where each copy came from (``origins``): the
    # same SQL on both engines, and the same order.
    proj = init_project(repo, settings)
    proj.remember("The churn model is retrained on day 1 of every month.", kind="fact")
    proj.remember_many({"statement": f"The churn model is retrained, retrained on day {d} of every month.",
                        "kind": "note"} for d in range(2, 30))
    proj.remember_many({"statement": f"The churn notebook {w} lives in notebooks/churn.", "kind": "note"}
                       for w in ("plots", "features", "labels", "scores"))
    pg = connect(team.person("ola"), team.project("copies", "ola"))
    try:
        replay(proj.conn, pg)
        store = PgStore(pg)
        # A team database's rows: each by its role, as the database enforces it.
        origins = set(store.origins(store.rids()).values())
        assert len(origins) == 1 and next(iter(origins))[0] == -1, origins
        assert next(iter(origins))[1].startswith("author:ola"), origins
        query = "when is the churn model retrained?"
        got = verdict.search(store, query, n_docs=store.count(), mode="lexical", postings=Postings(after_searches=0))
        want = verdict.search(proj.store, query, n_docs=proj.store.count(), mode="lexical", postings=None)
        ids = [h.memory.id for h in got.hits]
        assert ids == [h.memory.id for h in want.hits]
        copies = [i for i, h in enumerate(got.hits) if "retrained, retrained" in h.memory.statement]
        assert copies[:2] == [0, 1] and copies[2] > 2, [h.memory.statement for h in got.hits]
    finally:
        pg.close()


def test_the_search_engine_answers_its_first_search_and_finds_near_duplicates_over_postgres(
    written: Project, settings: Settings, team: Team
) -> None:
    from jupymem.retrieval.engine import SearchEngine

    url = team.person("ola")
    pg = connect(url, team.project("engine", "ola"))
    try:
        replay(written.conn, pg)
        engine = SearchEngine(pg, settings, revision=lambda: 1)  # handed the connection, as Project does
        assert isinstance(engine.store, PgStore) and engine.native_bm25 is False
        for query in ("which time does the churn dashboard use", "how is sales keyed", "partitioned by day"):
            got = engine.search(query, 5, include_inactive=False, kinds=None, mode="hybrid")
            want = written.search(query, limit=5)
            assert got.hits and [h.memory.id for h in got.hits] == [h.memory.id for h in want.hits], query
        near = "Table t3 is partitioned by the day."
        assert [(s.id, s.score) for s in engine.similar(near)] == [(s.id, s.score) for s in written.similar(near)] != []
    finally:
        pg.close()


# -- isolation, enforced by the database ---------------------------------------------------------


def _fill(conn: PgConnection, author: str, *, private: bool = False) -> None:
    """A row in every table of ``conn``'s project, written through the shared SQL."""
    mid = f"m-{author}{'p' if private else ''}"
    scope = eventlog.PRIVATE if private else eventlog.LOCAL
    memory = {"id": mid, "kind": "note", "statement": f"{author} wrote this", "standing": "unconfirmed",
              "private": private, "evidence": [{"handle": f"ev-{mid}", "ename": "E"}]}
    with database.transaction(conn):
        ev = eventlog.append(conn, f"u-{mid}", "record", eventlog.next_at(conn), {"memory": memory}, scope=scope)
        projection.apply(conn, ev)
        if private:
            return
        database.set_meta(conn, "k", author)
        conn.execute("INSERT INTO staged_evidence (handle, session, created_at, data) VALUES (?, ?, ?, ?)",
                     (f"ev-s-{author}", "s", "t", "{}"))
        conn.execute("INSERT INTO conversation (notebook, role, content, created_at) VALUES (?, ?, ?, ?)",
                     ("n.ipynb", "user", "hi", "t"))
        conn.execute("INSERT INTO conversation_summary (notebook, summary, folded, updated_at) VALUES (?, ?, ?, ?)",
                     ("n.ipynb", "s", 1, "t"))
        conn.execute("INSERT INTO shared_files (name, size, mtime_ns, ino, lines, applied) VALUES (?, ?, ?, ?, ?, ?)",
                     (f"{author}.jsonl", 1, 1, 1, 1, 1))


@pytest.fixture
def two_projects(team: Team) -> Iterator[dict[str, Any]]:
    """Ola in P1, Kari in P2, both in P3 (where Kari keeps a private memory)."""
    ola, kari = team.person("ola"), team.person("kari")
    p1, p2, p3 = team.project("p1", "ola"), team.project("p2", "kari"), team.project("p3", "ola", "kari")
    for url, project, private in ((ola, p1, False), (kari, p2, False), (kari, p3, False), (kari, p3, True)):
        conn = connect(url, project)
        _fill(conn, project.split("-")[0] + ("k" if url == kari else "o"), private=private)
        conn.close()
    yield {"ola": ola, "kari": kari, "p1": p1, "p2": p2, "p3": p3, "team": team}


def _counts(cur: Any, project: str) -> dict[str, int]:
    return {t: cur.execute(f"SELECT count(*) FROM jupymem.{t} WHERE project = %s", (project,)).fetchone()[0]
            for t in PROJECT_TABLES}


def test_another_project_is_invisible_and_unwritable_with_raw_sql(two_projects: dict[str, Any]) -> None:
    import psycopg

    p1, p2 = two_projects["p1"], two_projects["p2"]
    with psycopg.connect(two_projects["team"].admin_url, autocommit=True) as root:  # bypasses RLS: the truth
        there = _counts(root.cursor(), p2)
    assert all(n > 0 for n in there.values()), there  # every table holds a P2 row to hide
    with psycopg.connect(two_projects["ola"], autocommit=True) as raw:
        cur = raw.cursor()
        assert _counts(cur, p2) == dict.fromkeys(PROJECT_TABLES, 0)  # no project chosen
        for chosen in (p1, p2):
            cur.execute("SELECT set_config('jupymem.project', %s, false)", (chosen,))
            assert _counts(cur, p2) == dict.fromkeys(PROJECT_TABLES, 0), chosen
        assert cur.execute("SELECT count(*) FROM jupymem.members WHERE project = %s", (p2,)).fetchone()[0] == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # no member writes a derived row
            cur.execute("UPDATE jupymem.memories SET statement = 'x' WHERE project = %s", (p2,))
        assert cur.execute("DELETE FROM jupymem.meta WHERE project = %s", (p2,)).rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            cur.execute("INSERT INTO jupymem.meta (key, value) VALUES ('k2', 'v')")  # jupymem.project is P2
        cur.execute("SELECT set_config('jupymem.project', %s, false)", (p1,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            cur.execute("INSERT INTO jupymem.meta (project, key, value) VALUES (%s, 'k2', 'v')", (p2,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            cur.execute("INSERT INTO jupymem.members (project, role) VALUES (%s, current_user)", (p2,))
        assert _counts(cur, p1)["memories"] == 1  # the own project is there
    with psycopg.connect(two_projects["team"].admin_url, autocommit=True) as root:
        assert _counts(root.cursor(), p2) == there
    with pytest.raises(AccessDenied, match="not a member"):
        connect(two_projects["ola"], p2)


def test_a_private_memory_is_its_authors_alone(two_projects: dict[str, Any]) -> None:
    p3 = two_projects["p3"]
    ola, kari = connect(two_projects["ola"], p3), connect(two_projects["kari"], p3)
    try:
        def seen(conn: PgConnection) -> dict[str, list[Any]]:
            return {
                "memories": [r[0] for r in conn.execute("SELECT id FROM memories ORDER BY id").fetchall()],
                "history": [r[0] for r in conn.execute("SELECT memory_id FROM history ORDER BY 1").fetchall()],
                "cited": [r[0] for r in conn.execute("SELECT memory_id FROM cited_evidence ORDER BY 1").fetchall()],
                "events": [r[0] for r in conn.execute("SELECT scope FROM events ORDER BY seq").fetchall()],
            }

        assert seen(kari) == {"memories": ["m-p3k", "m-p3kp"], "history": ["m-p3k", "m-p3kp"],
                              "cited": ["m-p3k", "m-p3kp"], "events": ["local", "private"]}
        assert seen(ola) == {"memories": ["m-p3k"], "history": ["m-p3k"], "cited": ["m-p3k"], "events": ["local"]}
        assert PgStore(ola).count() == 1 and PgStore(kari).count() == 2
        # Ola may retire Kari's shared memory, and his event chains after her private one.
        with database.transaction(ola):
            ev = eventlog.append(ola, "u-retire", "retire", eventlog.next_at(ola), {"id": "m-p3k", "reason": "old"})
            projection.apply(ola, ev)
        assert ev.seq == 3 and ev.prev == list(eventlog.events(kari))[1].hash  # her private event's
        assert eventlog.check_chain(eventlog.events(kari), source="kari") == 3
        # ... but not make a row hers, nor touch her private one.
        with pytest.raises(AccessDenied):
            ola.execute("UPDATE memories SET author_role = 'x' WHERE id = 'm-p3k'")
        assert kari.execute("SELECT author_role FROM memories WHERE id = 'm-p3k'").fetchone()[0] == \
            two_projects["team"].role("kari")
        assert ola.execute("SELECT count(*) FROM memories WHERE id = 'm-p3kp'").fetchone()[0] == 0
        with pytest.raises(AccessDenied):
            ola.execute("INSERT INTO memories (id, kind, statement, standing, status, recorder, created_at,"
                        " valid_from, seq, author_role) VALUES ('m-x', 'note', 's', 'u', 'active', 'p', 't', 't', 1, ?)",
                        (two_projects["team"].role("kari"),))
    finally:
        ola.close()
        kari.close()


# -- concurrency and failures ------------------------------------------------------------------


def test_many_processes_appending_to_one_project_never_fork_the_chain(team: Team) -> None:
    workers, each = 8, 50
    url = team.person("ola")
    project = team.project("busy", "ola")
    with pg_workers.pool(workers) as pool:  # a process per writer, its own connection
        results = pool.starmap(append_worker, [(url, project, w, each) for w in range(workers)])
    uids = [u for got in results for u in got]
    pg = connect(url, project)
    try:
        evs = list(eventlog.events(pg))
        assert len(uids) == len(set(uids)) == workers * each
        assert sorted(e.uid for e in evs) == sorted(uids)  # none lost, none twice
        assert [e.seq for e in evs] == list(range(1, workers * each + 1))
        assert eventlog.check_chain(evs, source="postgres") == workers * each
        assert PgStore(pg).count() == workers * each
        assert PgStore(pg).rids() == sorted(PgStore(pg).rids())
        # rids ascend in the order of the events that made them (writers are serialized).
        order = [r[0] for r in pg.execute("SELECT id FROM memories ORDER BY rid").fetchall()]
        assert order == [r[0] for r in pg.execute("SELECT id FROM memories ORDER BY seq").fetchall()]
    finally:
        pg.close()


def test_a_dropped_connection_is_one_clear_error_and_the_next_call_reconnects(team: Team) -> None:
    import psycopg

    url = team.person("ola")
    pg = connect(url, team.project("drop", "ola"))
    try:
        pid = pg.execute("SELECT pg_backend_pid()").fetchone()[0]
        with psycopg.connect(team.admin_url, autocommit=True) as root:
            root.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(StorageError, match="cannot be reached") as info:
            pg.execute("SELECT 1")
        assert "pw-" not in str(info.value)  # the password never reaches a message
        with database.transaction(pg):  # made again
            eventlog.append_once(pg, "u1", "retire", eventlog.next_at(pg), {"id": "m-1"})
        # Dropped inside a write: nothing of it stays, and the retry with the same event id lands once.
        with pytest.raises(StorageError, match="cannot be reached"), database.transaction(pg):
            eventlog.append_once(pg, "u2", "retire", eventlog.next_at(pg), {"id": "m-2"})
            with psycopg.connect(team.admin_url, autocommit=True) as root:
                root.execute("SELECT pg_terminate_backend(%s)", (pg.execute("SELECT pg_backend_pid()").fetchone()[0],))
            pg.execute("SELECT 1")
        assert eventlog.count(pg) == 1
        for _ in range(2):
            with database.transaction(pg):
                eventlog.append_once(pg, "u2", "retire", eventlog.next_at(pg), {"id": "m-2"})
        assert eventlog.count(pg) == 2
    finally:
        pg.close()


def test_a_pooled_connection_serves_threads(team: Team) -> None:
    import threading

    url = team.person("ola")
    project = team.project("pool", "ola")
    pg = connect(url, project, pool_size=4)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(10):
                with database.transaction(pg):
                    eventlog.append(pg, f"t{n}-{i}", "retire", eventlog.next_at(pg), {"id": f"m-{n}-{i}"})
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert eventlog.check_chain(eventlog.events(pg), source="postgres") == 60
    finally:
        pg.close()
