"""Fault injection on the event log itself: one stored event garbled (bytes edited in the
real database file, or an UPDATE through a raw sqlite3 connection), and a `verify` that
runs while another process keeps writing.

A garbled event is named ("event 17: its payload is not JSON (garbled bytes)"), never a
traceback: `verify` reports it and checks what comes before it, `rebuild` and `export`
refuse naming it, `list` and `search` go on answering from the tables, and `doctor`
rebuilds the project from the verified events before it. `verify` reads one snapshot,
so a concurrent writer never looks like damage.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from pathlib import Path

import pytest

import jupymem
from faults import WRITING_LOOP, jm, ok, overwrite, quiesce, refused, spawn

N = 30
BAD = 17  # the event garbled in each case
ROOT = Path(__file__).resolve().parents[1]


def statement(i: int) -> str:
    return f"Column c{i} of table t{i % 7} is nullable after the 2024 migration"


@pytest.fixture
def filled(repo: Path) -> tuple[Path, Path]:
    """A repository with 30 memories, one event each; returns (repo, its database)."""
    proj = jupymem.init(repo)
    for i in range(N):
        proj.remember(statement(i), kind="fact")
    db = proj.database
    quiesce()
    return repo, db


def _update(db: Path, sql: str, *params: object) -> None:
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as raw:
        raw.execute(sql, params)


def _cut_payload(db: Path) -> None:
    _update(db, "UPDATE events SET payload = substr(payload, 1, 40) WHERE seq = ?", BAD)


def _not_utf8_in_the_file(db: Path) -> None:
    # The bytes of event 17's payload, edited where they lie in the file: its statement,
    # as the JSON of the payload spells it (the memories table holds it without the key).
    data = db.read_bytes()
    needle = b'"statement":"' + statement(BAD - 1).encode()
    assert data.count(needle) == 1
    overwrite(db, data.index(needle) + len(b'"statement":"') + 7, b"\xff\xfe\xfd")


def _blob_hash(db: Path) -> None:
    _update(db, "UPDATE events SET hash = x'00ff13' WHERE seq = ?", BAD)


def _payload_a_number(db: Path) -> None:
    _update(db, "UPDATE events SET payload = '42' WHERE seq = ?", BAD)


GARBLED = [
    ("payload cut short", _cut_payload, "event 17: its payload is not JSON (garbled bytes)"),
    ("payload bytes edited in the file", _not_utf8_in_the_file,
     "event 17: its payload is not UTF-8 text (garbled bytes)"),
    ("binary data where a hash belongs", _blob_hash, "event 17: its hash is 3 bytes of binary data, not text"),
    ("a number where the payload belongs", _payload_a_number, "event 17: its payload is JSON but not an object"),
]


@pytest.mark.parametrize(("case", "garble", "named"), GARBLED, ids=[c for c, _, _ in GARBLED])
def test_a_garbled_event_is_named_by_every_command_and_doctor_recovers_the_events_before_it(
    filled, case, garble, named
):
    repo, db = filled
    garble(db)
    # verify names it, and says what it checked instead (exit 1, no traceback).
    proc = jm("verify", "--json", cwd=repo)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr.decode()
    report = json.loads(proc.stdout)
    assert report["ok"] is False and report["log_ok"] is False
    assert any(named in p for p in report["problems"]), report["problems"]
    assert any("cannot be read from event 17 on" in p for p in report["problems"])
    # rebuild and export refuse, naming it and what doctor does.
    for args in (["rebuild"], ["export"]):
        err = refused(jm(*args, cwd=repo), 1)
        assert named in err and "jupymem doctor" in err, err
    # The tables are whole: list and search go on answering.
    assert len(ok(jm("list", "--json", cwd=repo))) == N
    assert ok(jm("search", "c16 nullable", "--json", cwd=repo))["status"] == "ok"
    # doctor rebuilds the project from the 16 events before it and says what it could not.
    doctor = jm("doctor", "--json", cwd=repo)
    assert doctor.returncode == 1 and b"Traceback" not in doctor.stderr
    (entry,) = json.loads(doctor.stdout)["databases"]
    assert (entry["state"], entry["events"]) == ("partly recovered", BAD - 1), entry
    assert named in entry["message"] and "events 17..30 could not be recovered" in entry["message"]
    assert list(db.parent.glob("memory.sqlite.damaged-*"))
    assert ok(jm("verify", "--json", cwd=repo))["ok"] is True
    assert {m["statement"] for m in ok(jm("list", "--json", cwd=repo))} == {statement(i) for i in range(BAD - 1)}
    ok(jm("remember", "A new statement after the repair", cwd=repo))


def test_a_null_where_a_hash_belongs_is_damage_that_doctor_names_and_recovers(filled):
    # NOT NULL is part of the table's schema, so the UPDATE is made the way damaged bytes
    # would make it: with the constraint's text edited out of the schema, then put back.
    repo, db = filled
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as raw:
        sql = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
        raw.execute("PRAGMA writable_schema = ON")
        raw.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'events'",
                    (sql.replace("hash TEXT NOT NULL UNIQUE", "hash TEXT UNIQUE"),))
    _update(db, "UPDATE events SET hash = NULL WHERE seq = ?", BAD)
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as raw:
        raw.execute("PRAGMA writable_schema = ON")
        raw.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'events'", (sql,))
    # SQLite's own check finds it: every face names the file and doctor.
    err = refused(jm("list", cwd=repo), 1)
    assert "NULL value in events.hash" in err and "jupymem doctor" in err
    doctor = jm("doctor", "--json", cwd=repo)
    assert b"Traceback" not in doctor.stderr
    (entry,) = json.loads(doctor.stdout)["databases"]
    assert (entry["state"], entry["events"]) == ("partly recovered", BAD - 1), entry
    assert "event 17: its hash is missing (NULL)" in entry["message"]
    assert ok(jm("verify", "--json", cwd=repo))["ok"] is True


def test_a_payload_that_verifies_but_cannot_be_applied_is_named(filled):
    # Someone edits an event by hand and hashes it afresh (the mark beside the database too):
    # the chain verifies, the shape is wrong.
    repo, db = filled
    from jupymem.storage import eventlog, marks

    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as raw:
        rows = raw.execute("SELECT seq, uid, type, at, payload FROM events ORDER BY seq").fetchall()
        prev = eventlog.GENESIS
        for seq, uid, type_, at, payload in rows:
            body = json.loads(payload)
            if seq == BAD:
                body["memory"]["evidence"] = 7
            ph = eventlog.sha256(eventlog.canonical(body))
            h = eventlog.event_hash(uid, type_, at, ph, prev)
            raw.execute("UPDATE events SET payload = ?, payload_hash = ?, prev = ?, hash = ? WHERE seq = ?",
                        (eventlog.canonical(body).decode(), ph, prev, h, seq))
            prev = h
    marks.write(db, N, prev)
    proc = jm("verify", "--json", cwd=repo)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr and proc.stdout, proc.stderr.decode()[-3000:]
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    assert any("event 17: memory.evidence must be a list" in p for p in report["problems"]), report["problems"]
    assert any("event 17 (record) cannot be applied" in p for p in report["problems"]), report["problems"]
    err = refused(jm("rebuild", cwd=repo), 1)
    assert "event 17 (record) cannot be applied" in err
    doctor = jm("doctor", "--json", cwd=repo)
    assert b"Traceback" not in doctor.stderr
    report = json.loads(doctor.stdout)
    # The log verifies, so doctor has nothing to rebuild it from: the event is reported.
    (entry,) = report["databases"]
    assert entry["state"] == "warning" and "event 17" in entry["message"], entry


# -- verify reads one snapshot ---------------------------------------------------------------

def test_verify_while_another_process_writes_never_reports_false_damage(repo: Path):
    proj = jupymem.init(repo)
    proj.remember_many({"statement": f"statement {i} about the orders table", "kind": "fact"} for i in range(200))
    writer = spawn(WRITING_LOOP, str(repo), "concurrent statement", "0.002")
    try:
        assert writer.stdout.readline().strip() == "ready", writer.stderr.read()
        # Until four verifies ran while the writer wrote, however slowly a busy machine runs either side.
        overlapped, deadline = 0, time.monotonic() + 120
        while overlapped < 4 and time.monotonic() < deadline:
            before = proj.revision()
            report = proj.verify()
            assert report.ok, report.problems
            overlapped += proj.revision() > before
    finally:
        writer.kill()
        writer.wait(timeout=30)
    assert overlapped >= 4, "the writer did not write while verify ran; the test proved nothing"
    assert proj.verify().ok


def test_a_garbled_event_of_this_machines_own_in_a_shared_cache_is_named_and_doctor_rebuilds(repo: Path):
    from jupymem.storage import eventlog
    from team import git
    from test_share_log import Writer, memory_payload

    git(repo, "config", "user.name", "Ana")
    git(repo, "config", "user.email", "ana@example.com")
    proj = jupymem.init(repo)
    proj.remember("Join sales to customers on customer_id", kind="decision")
    proj.share()
    private = proj.remember("My own doubt about the churn definition", private=True)
    proj.remember("Weekly numbers are in EUR", kind="fact")
    first_at = eventlog.events(proj.conn).__next__().at
    db = proj.database
    quiesce()
    _update(db, "UPDATE events SET payload = substr(payload, 1, 30) WHERE scope = 'private'")
    with contextlib.closing(sqlite3.connect(db)) as raw:
        (seq,) = raw.execute("SELECT seq FROM events WHERE scope = 'private'").fetchone()
    named = f"event {seq}: its payload is not JSON (garbled bytes)"
    # Before: both were a JSONDecodeError traceback.
    err = refused(jm("rebuild", cwd=repo), 1)
    assert named in err and "jupymem doctor" in err, err
    # A teammate's line that sorts among ours (a pull): the cache must replay, and says why it cannot.
    teammate = {"memory": memory_payload("Teammate statement about the orders table")}
    Writer(repo).append("record", teammate, first_at[:-2] + "9Z")
    err = refused(jm("list", cwd=repo), 1)
    assert named in err and "cannot follow .jupymem/log" in err, err
    doctor = jm("doctor", "--json", cwd=repo)
    (entry,) = json.loads(doctor.stdout)["databases"]
    assert entry["state"] == "partly recovered" and named in entry["message"], entry
    listed = {m["statement"] for m in ok(jm("list", "--json", cwd=repo))}
    assert "Teammate statement about the orders table" in listed and private.statement not in listed
