"""The team database enforces the log against its own members (migration 8, ``guard.py``).

Each test plays the insider: a member (or a role of another project) with raw psycopg,
doing what jupymem's own queries never would, against a real PostgreSQL. What the
database must give: a refusal, or no effect that any reader sees and a ``verify`` that
fails loudly; a lock no outsider can take; a key a merge does not move; and a writer that
is the connecting role, whatever the process says.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cli_run import jm
from conftest import GIT_ENV, make_repo
from jupymem.intake import capture
from jupymem.sharing.journal import Journal
from jupymem.storage import database, eventlog, maintenance, projection, registry
from jupymem.storage.postgres import admin, connect
from jupymem.storage.postgres.connection import LOCKED
from jupymem.storage.postgres.schema import PROJECT_TABLES, VECTOR_TABLES
from pg_server import Team

pytestmark = pytest.mark.postgres

ALICE_WORDS = "Revenue is reported in EUR."
BOB_UID = uuid.uuid4().hex


def _record(conn: Any, statement: str, *, kind: str = "constraint", private: bool = False) -> str:
    owner = conn.private_owner if private else None
    memory = {"id": capture.memory_id(statement, owner), "kind": kind, "statement": statement,
              "standing": "supported", "private": private, "provenance": {"recorder": "person"}}
    if owner is not None:
        memory["owner"] = owner  # as ``payload`` writes a private memory's
    with database.transaction(conn):
        Journal(conn, None, "whoever the process says").append("record", {"memory": memory}, private=private)
    return str(memory["id"])


def _seen(conn: Any) -> list[tuple[Any, ...]]:
    return conn.execute("SELECT id, kind, statement, status, author, author_role FROM memories ORDER BY id").fetchall()


@pytest.fixture
def alice_and_bob(team: Team) -> dict[str, Any]:
    alice_url, bob_url = team.person("alice"), team.person("bob")
    project = team.project("guarded", "alice", "bob")
    alice = connect(alice_url, project)
    mid = _record(alice, ALICE_WORDS)
    secret = _record(alice, "My scratch schema is tmp_alice.", kind="note", private=True)
    return {"alice": alice, "bob_url": bob_url, "project": project, "id": mid, "secret": secret, "team": team}


def _raw(url: str, project: str) -> Any:
    raw = psycopg.connect(url, autocommit=True)
    raw.execute("SET search_path = jupymem")
    raw.execute("SELECT set_config('jupymem.project', %s, false)", (project,))
    return raw


def _refused(raw: Any, sql: str, params: tuple[Any, ...] = ()) -> bool:
    """True when the database refuses ``sql``, False when it ran (its effect is checked apart)."""
    try:
        raw.execute(sql, params)
    except psycopg.Error:
        return True
    return False


def test_a_member_cannot_change_a_row_of_the_log_or_of_what_is_derived_from_it(alice_and_bob: dict[str, Any]) -> None:
    alice, mid = alice_and_bob["alice"], alice_and_bob["id"]
    before = _seen(alice)
    head = alice.chain_head()
    with _raw(alice_and_bob["bob_url"], alice_and_bob["project"]) as bob:
        derived = ("events", "memories", "history", "cited_evidence", "chain_heads", "members", "people",
                   "private_salts")
        for table in derived:
            assert _refused(bob, f"UPDATE {table} SET project = project"), table
            assert _refused(bob, f"DELETE FROM {table}"), table
            assert _refused(bob, f"TRUNCATE {table}"), table
        for table in ("memories", "history", "cited_evidence", "chain_heads", "members", "people", "private_salts"):
            assert _refused(bob, f"INSERT INTO {table} DEFAULT VALUES"), table
        for table in (*PROJECT_TABLES, *VECTOR_TABLES):  # what a member may write is their own rows only
            assert _refused(bob, f"TRUNCATE {table}"), table
        # The reviewer's rewrite, step by step: each step is refused.
        assert _refused(bob, "UPDATE events SET payload = replace(payload, 'EUR', 'USD')")
        assert _refused(bob, "UPDATE memories SET statement = 'Revenue is reported in USD.' WHERE id = %s", (mid,))
        assert _refused(bob, "UPDATE chain_heads SET hash = repeat('1', 64)")
        assert _refused(bob, "DELETE FROM chain_heads")
        assert _refused(bob, "INSERT INTO history (memory_id, seq, at, action, detail) VALUES (%s, 9, 't', 'retired',"
                             " '{\"who\": \"Alice\"}')", (mid,))
        assert _refused(bob, "SELECT pg_advisory_unlock_all(); SELECT * FROM chain_heads FOR UPDATE")
        assert _refused(bob, "SELECT jupymem.rebuild_project(%s)", (alice_and_bob["project"],))
        assert _refused(bob, "SELECT jupymem.project_event(e) FROM events e")
        # An event whose hash is not its own, that does not follow the head, or is huge: refused.
        payload = json.dumps({"id": mid, "reason": "bob says so"}, sort_keys=True, separators=(",", ":"))
        ph = eventlog.sha256(payload.encode())
        good = eventlog.event_hash(BOB_UID, "retire", "2026-01-01T00:00:00.000000Z", ph, head[1])
        insert = "INSERT INTO events (uid, type, at, payload, payload_hash, prev, hash) VALUES (%s, %s, %s, %s, %s, %s, %s)"
        assert _refused(bob, insert, (BOB_UID, "retire", "2026-01-01T00:00:00.000000Z", payload, ph, head[1], "0" * 64))
        assert _refused(bob, insert, (BOB_UID, "retire", "2026-01-01T00:00:00.000000Z", payload, ph, "0" * 64,
                                      eventlog.event_hash(BOB_UID, "retire", "2026-01-01T00:00:00.000000Z", ph, "0" * 64)))
        huge = json.dumps({"id": mid, "reason": "x" * (2 * 1024 * 1024)})
        hh = eventlog.sha256(huge.encode())
        big = uuid.uuid4().hex  # hashed right: refused for its size alone
        assert _refused(bob, insert, (big, "retire", "2026-01-01T00:00:00.000000Z", huge, hh, head[1],
                                      eventlog.event_hash(big, "retire", "2026-01-01T00:00:00.000000Z", hh, head[1])))
        assert _refused(bob, insert.replace("(uid,", "(author_role, writer, uid,").replace("VALUES (", "VALUES (%s, %s, "),
                        ("nobody", "Alice", uuid.uuid4().hex, "frobnicate", "2026-01-01T00:00:00.000000Z", payload, ph, head[1], good))
        # Bob's private guess at Alice's private words cannot even be written as an id of hers:
        # her ids are salted with her secret, which he cannot read.
        assert bob.execute("SELECT count(*) FROM private_salts").fetchone()[0] == 0
        guess = capture.memory_id("My scratch schema is tmp_alice.", alice.role)
        assert guess != alice_and_bob["secret"]
        # A hidden (private) event that acts on her shared memory, and a time far ahead: refused.
        hidden = uuid.uuid4().hex
        assert _refused(bob, insert.replace("(uid,", "(scope, uid,").replace("VALUES (", "VALUES ('private', "),
                        (hidden, "retire", "2026-01-01T00:00:00.000000Z", payload, ph, head[1],
                         eventlog.event_hash(hidden, "retire", "2026-01-01T00:00:00.000000Z", ph, head[1])))
        ahead = uuid.uuid4().hex
        assert _refused(bob, insert, (ahead, "retire", "2999-01-01T00:00:00.000000Z", payload, ph, head[1],
                                      eventlog.event_hash(ahead, "retire", "2999-01-01T00:00:00.000000Z", ph, head[1])))
        # What he may do is append an attributed event in his own name: the database writes who.
        forged = (BOB_UID, "retire", "2026-01-01T00:00:00.000000Z", payload, ph, head[1], good)
        bob.execute(insert.replace("(uid,", "(author_role, writer, uid,").replace("VALUES (", "VALUES (%s, %s, "),
                    (alice.role, "Alice <alice@example.com>", *forged))
    after = {r[0]: r for r in _seen(alice)}
    assert after[mid][2] == ALICE_WORDS and after[mid][3] == "retired"  # her words; retired by bob, as history says
    assert [r for r in before if r[0] != mid] == [r for r in _seen(alice) if r[0] != mid]
    history = alice.execute("SELECT action, detail FROM history WHERE memory_id = ? ORDER BY seq", (mid,)).fetchall()
    assert history[-1][0] == "retired" and json.loads(history[-1][1])["who"] == pg_server_role(alice_and_bob, "bob")
    writer, role = alice.execute("SELECT writer, author_role FROM events WHERE uid = ?", (BOB_UID,)).fetchone()
    assert (writer, role) == (pg_server_role(alice_and_bob, "bob"),) * 2
    report = maintenance.verify(alice)
    assert report.ok, report.problems
    alice.close()


def pg_server_role(ctx: dict[str, Any], name: str) -> str:
    return str(ctx["team"].role(name))


def test_an_administrators_edit_is_found_by_verify_and_repaired_from_the_log(alice_and_bob: dict[str, Any]) -> None:
    alice, mid, team = alice_and_bob["alice"], alice_and_bob["id"], alice_and_bob["team"]
    with psycopg.connect(team.admin_url, autocommit=True) as root:  # a superuser: above every rule
        root.execute("UPDATE jupymem.memories SET statement = 'Revenue is reported in USD.' WHERE id = %s", (mid,))
        root.execute("DELETE FROM jupymem.chain_heads WHERE project = %s", (alice_and_bob["project"],))
    report = maintenance.verify(alice)
    assert not report.ok and any("differs from a replay" in p for p in report.problems), report.problems
    assert admin.rebuild(team.admin_url, alice_and_bob["project"]) == 2
    assert maintenance.verify(alice).ok
    assert alice.execute("SELECT statement FROM memories WHERE id = ?", (mid,)).fetchone()[0] == ALICE_WORDS
    _record(alice, "Costs are reported in EUR too.")  # the head was repaired: writes go on
    with psycopg.connect(team.admin_url, autocommit=True) as root:  # an edit of the log itself
        root.execute("UPDATE jupymem.events SET payload = replace(payload, 'EUR', 'USD') WHERE project = %s AND seq = 1",
                     (alice_and_bob["project"],))
    report = maintenance.verify(alice)
    assert not report.ok and any("payload that was altered" in p for p in report.problems), report.problems
    alice.close()


def test_no_one_outside_a_project_can_block_its_writes_and_a_stuck_lock_is_one_line(team: Team) -> None:
    member_url, outsider_url = team.person("ola"), team.person("eve")
    project = team.project("unblockable", "ola")
    team.project("elsewhere", "eve")  # eve is a member of another project, with its table privileges
    ola = connect(member_url, project)
    _record(ola, "The first memory.")
    eve = psycopg.connect(outsider_url, autocommit=False, options=f"-c search_path=jupymem -c jupymem.project={project}")
    # Every lock eve can take, held while ola records.
    eve.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (project,))
    eve.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (project,))
    for table in ("events", "conversation", "staged_evidence", "meta", "memory_vectors"):
        eve.execute(f"LOCK TABLE {table} IN ROW EXCLUSIVE MODE")
    for table in PROJECT_TABLES:
        eve.execute(f"LOCK TABLE {table} IN ACCESS SHARE MODE")
    assert eve.execute("SELECT count(*) FROM chain_heads").fetchone()[0] == 0  # she sees no head to lock
    for sql in ("SELECT * FROM write_lock()", "SELECT * FROM chain_heads FOR UPDATE"):
        with pytest.raises(psycopg.Error):
            eve.execute(sql)
        eve.rollback()
        eve.execute("LOCK TABLE events IN ROW EXCLUSIVE MODE")
    done: list[float] = []
    worker = threading.Thread(target=lambda: (_record(ola, "Recorded while eve holds her locks."),
                                              done.append(time.monotonic())))
    start = time.monotonic()
    worker.start()
    worker.join(60)
    assert done and done[0] - start < 15, "the record waited on a lock an outsider holds"
    eve.rollback()
    eve.close()
    # A member can hold the lock (they can write): a teammate waiting behind it is told so, in time.
    kari_url = team.person("kari")
    admin.add_member(team.admin_url, project, team.role("kari"))
    holder = psycopg.connect(kari_url, autocommit=False, options=f"-c jupymem.project={project}")
    holder.execute("SELECT * FROM jupymem.write_lock()")
    start = time.monotonic()
    with pytest.raises(Exception) as info:
        _record(ola, "Waits behind kari.")
    assert time.monotonic() - start < 15
    assert LOCKED in str(info.value) and "\n" not in str(info.value)
    holder.rollback()
    holder.close()
    _record(ola, "Goes through once she lets go.")
    ola.close()


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _lower_root(tmp_path: Path, than: str) -> Path:
    """A repository whose root commit sorts lower than ``than``."""
    for i in range(200):
        other = tmp_path / f"other{i}"
        other.mkdir()
        _git(other, "init", "-q", "-b", "main")
        (other / "README").write_text(f"other history {i}\n")
        _git(other, "add", "README")
        _git(other, "commit", "-q", "-m", f"unrelated {i}")
        if _git(other, "rev-parse", "HEAD") < than:
            return other
    raise AssertionError("no lower root in 200 tries")


def test_a_merge_of_an_unrelated_history_with_a_lower_root_keeps_the_project(tmp_path: Path, team: Team) -> None:
    repo = make_repo(tmp_path / "analysis")
    key = registry.root_commit(repo)
    assert key
    url = team.person("ola")
    admin.add_member(team.admin_url, key, team.role("ola"))
    env = {"JUPYMEM_HOME": str(tmp_path / "home"), "JUPYMEM_DATABASE_URL": url, "JUPYMEM_ENCODER": "none"}
    made = json.loads(jm("--json", "remember", "--kind", "decision", "The churn dashboard uses UTC.", cwd=repo,
                         env=env).stdout)
    other = _lower_root(tmp_path, key)
    _git(repo, "pull", "-q", "--no-rebase", "--no-edit", "--allow-unrelated-histories", str(other), "main")
    roots = registry.root_commits(repo)
    assert len(roots) == 2 and roots[0] < key  # git now says the lowest root is another
    listed = jm("--json", "list", cwd=repo, env=env)
    assert listed.returncode == 0, listed.stderr.decode()
    assert [m["id"] for m in json.loads(listed.stdout)] == [made["id"]]
    status = json.loads(jm("--json", "status", cwd=repo, env=env).stdout)
    assert status["project_id"] == key and "roots changed" in status["message"] and key[:12] in status["message"]
    # The administrator's next admit finds the same project, not a new one at the lower root.
    assert admin.project_for(team.admin_url, roots) == key
    admitted = jm("team", "admit", team.role("ola"), "--database", team.admin_url, cwd=repo, env=env)
    assert admitted.returncode == 0 and key[:12].encode() in admitted.stdout, admitted.stderr.decode()


def test_the_administrators_commands_run_by_a_member_say_whose_they_are(tmp_path: Path, team: Team) -> None:
    repo = make_repo(tmp_path / "analysis")
    url = team.person("ola")
    env = {"JUPYMEM_HOME": str(tmp_path / "home")}
    for args in (("setup",), ("user", "mallory"), ("admit", team.role("ola")), ("rebuild",)):
        done = jm("team", *args, "--database", url, cwd=repo, env=env)
        err = done.stderr.decode()
        assert done.returncode != 0 and "Traceback" not in err and err.count("\n") == 1, (args, err)
        assert "administrator" in err, (args, err)


def test_the_database_and_python_derive_the_same_rows_from_a_hostile_mix(team: Team) -> None:
    """What the database derives (``project_event``) is what ``projection.apply`` makes of
    the same events: evidence merged, reopened memories, supersedes, confirmations, text
    that needs escaping (quotes, backslashes, control characters, non-ASCII)."""
    url = team.person("ola")
    pg = connect(url, team.project("mix", "ola"))
    odd = 'Quotes "here", a back\\slash, a tab\there, ümlauts, 日本語 and 🙂.'
    ev1 = {"handle": "ev-1", "ename": "KeyError", "evalue": "'a\"b'", "excerpt": "x\ny", "fix": None, "n": 1}
    ev2 = {"handle": "ev-2", "ename": "E", "diagnosis": ["a", "b"], "nested": {"z": 1, "a": [True, None]}}
    m1 = {"id": "m-1", "kind": "decision", "statement": odd, "standing": "unconfirmed", "private": False,
          "provenance": {"recorder": "person", "notebook": "a.ipynb", "execution_count": 3}, "evidence": [ev1]}
    steps = [
        ("record", {"memory": m1}),
        ("record", {"memory": {**m1, "standing": "supported", "evidence": [ev1, ev2]}}),
        ("retire", {"id": "m-1", "reason": "a \"reason\""}),
        ("record", {"memory": {**m1, "topic": "t"}}),
        ("supersede", {"old": "m-1", "memory": {"id": "m-2", "kind": "note", "statement": "new", "standing": "supported",
                                               "provenance": None, "evidence": None}}),
        ("confirm", {"id": "m-2", "by": "Ola"}),
        ("retire", {"id": "m-missing"}),
    ]
    try:
        with database.transaction(pg):
            journal = Journal(pg, None, None)
            for type_, payload in steps:
                journal.append(type_, payload)
        scratch = database.memory_database()
        for ev in eventlog.events(pg):
            projection.apply(scratch, ev)
        assert projection.snapshot(pg) == projection.snapshot(scratch)
        scratch.close()
        assert eventlog.check_chain(eventlog.events(pg), source="postgres") == len(steps)
    finally:
        pg.close()


def test_the_database_holds_the_validators_sizes_whatever_a_client_skips(alice_and_bob: dict[str, Any]) -> None:
    from jupymem.storage.postgres import guard

    assert guard.MAX_STATEMENT_BYTES == capture.MAX_STATEMENT_BYTES
    alice = alice_and_bob["alice"]
    head = alice.chain_head()
    statement = "Revenue " * (capture.MAX_STATEMENT_BYTES // 8 + 1)
    memory = {"id": capture.memory_id(statement), "kind": "note", "statement": statement, "standing": "unconfirmed"}
    payload = json.dumps({"memory": memory}, sort_keys=True, separators=(",", ":"))
    uid, at = uuid.uuid4().hex, "2026-01-01T00:00:00.000000Z"
    ph = eventlog.sha256(payload.encode())
    with _raw(alice_and_bob["bob_url"], alice_and_bob["project"]) as bob:
        assert _refused(bob, "INSERT INTO events (uid, type, at, payload, payload_hash, prev, hash) VALUES "
                             "(%s, 'record', %s, %s, %s, %s, %s)",
                        (uid, at, payload, ph, head[1], eventlog.event_hash(uid, "record", at, ph, head[1])))
        assert _refused(bob, "INSERT INTO conversation (notebook, role, content, created_at) VALUES ('n', 'user', %s, 't')",
                        ("x" * (guard.MAX_ROW_BYTES + 1),))
    assert alice.chain_head() == head
    alice.close()
