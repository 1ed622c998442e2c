"""Honest recovery: what `doctor` and every face say about a database that lost its WAL,
one written by a newer jupymem, and a shared repository's cache, healthy or damaged.

Real parts throughout: database files under a real JUPYMEM_HOME, a writer process killed
with SIGKILL, the WAL deleted as a tidy-up or a backup tool would, clones of one bare
remote with their own homes (``team.py``), and the real command line in a subprocess.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from IPython.core.error import UsageError

import jupymem
from faults import WRITING_LOOP, jm, ok, overwrite, page_size, quiesce, refused, root_page, spawn
from jupymem.storage import eventlog, marks
from conftest import loaded_shell
from team import Clone, make_team

ROOT = Path(__file__).resolve().parents[1]


# -- a lost WAL -------------------------------------------------------------------------------

KILLED_AFTER_THREE = """
import os, signal, sys, jupymem
proj = jupymem.project(sys.argv[1])
for i in range(3):
    proj.remember(f"written after the last checkpoint, number {i}", kind="fact")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_deleting_the_wal_of_a_killed_writer_is_reported_as_lost_never_silently(repo: Path) -> None:
    proj = jupymem.init(repo)
    for i in range(4):  # the registry's mark reaches 4 (it is written at 1, 2, 4, 8 ...)
        proj.remember(f"checkpointed statement number {i}", kind="fact")
    db = proj.database
    quiesce()  # closed: the four events are in memory.sqlite itself
    child = spawn(KILLED_AFTER_THREE, str(repo))
    child.wait(timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr.read()
    wal = Path(f"{db}-wal")
    assert wal.stat().st_size > 0  # events 5..7 live only there
    wal.unlink()
    Path(f"{db}-shm").unlink(missing_ok=True)
    # Before: the database held 4 events, the registry's mark said 4, and 3 memories vanished silently.
    for args in (["list"], ["search", "checkpoint"], ["remember", "A new statement"]):
        err = refused(jm(*args, cwd=repo), 1)
        assert "holds 4 events" in err and "7 events were recorded" in err and "jupymem doctor" in err, err
    status = jm("status", "--json", cwd=repo)
    assert status.returncode == 1 and json.loads(status.stdout)["damage"] == "database_lost"
    doctor = jm("doctor", "--json", cwd=repo)
    assert doctor.returncode == 1
    (entry,) = json.loads(doctor.stdout)["databases"]
    assert entry["state"] == "lost" and "7 events" in entry["message"], entry
    (entry,) = ok(jm("doctor", "--json", "--accept-loss", cwd=repo))["databases"]
    assert (entry["state"], entry["events"]) == ("started afresh", 4)
    assert len(ok(jm("list", "--json", cwd=repo))) == 4
    ok(jm("remember", "A new statement after accepting the loss", cwd=repo))
    assert marks.read(db).events == 5  # the mark follows the accepted history


def test_the_mark_beside_the_database_follows_every_kind_of_write(repo: Path) -> None:
    proj = jupymem.init(repo)

    def marked() -> tuple[int, str]:
        mark = marks.read(proj.database)
        assert mark is not None
        return mark.events, mark.last_hash

    def now() -> tuple[int, str]:
        return eventlog.last_seq(proj.conn), eventlog.last_hash(proj.conn)

    a = proj.remember("Use customer_id as the join key", kind="decision")
    assert marked() == now() == (1, now()[1])
    b = proj.supersede(a.id, "Use customer_id as the join key, trimmed")
    assert marked() == now()
    proj.retire(b.id, "the key changed")
    assert marked() == now()
    proj.remember_many({"statement": f"bulk statement number {i} about orders"} for i in range(5))
    assert marked() == now() == (8, now()[1])
    # A mark that cannot be read is no mark (a power cut can leave one so): nothing is called lost.
    marks.mark_path(proj.database).write_bytes(b"\x00" * 40)
    quiesce()
    assert len(jupymem.project(repo).list()) == 5


def test_opening_while_another_process_writes_never_calls_the_project_lost(repo: Path) -> None:
    # The mark is written after each commit and read before the database is asked: a writer
    # in another process can make it lag, never run ahead of what an opening sees.
    from jupymem.core.opening import close_all

    jupymem.init(repo).remember("The first statement", kind="fact")
    quiesce()
    writer = spawn(WRITING_LOOP, str(repo), "racing statement", "0", stdin=subprocess.DEVNULL)
    try:
        assert writer.stdout.readline().strip() == "ready", writer.stderr.read()
        # Until ten revisions were seen opening, however slowly a busy machine runs either side.
        seen: set[int] = set()
        deadline = time.monotonic() + 120
        while len(seen) < 10 and time.monotonic() < deadline:
            proj = jupymem.project(repo)  # opens, checks both marks
            seen.add(proj.revision())
            close_all()
    finally:
        writer.kill()
        writer.wait(timeout=30)
    assert len(seen) >= 10, "the writer did not write while the project was opened; the test proved nothing"


# -- a newer schema ---------------------------------------------------------------------------


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_database_from_a_newer_jupymem_is_refused_everywhere_and_doctor_never_downgrades_it(
    repo: Path, jupymem_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = jupymem.init(repo)
    for i in range(3):
        proj.remember(f"statement {i} kept by a newer jupymem", kind="fact")
    db = proj.database
    quiesce()
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as raw:
        raw.execute("PRAGMA user_version = 99")
    before, files = _digest(db), sorted(p.name for p in db.parent.iterdir())
    export = tmp_path / "export.jsonl"
    export.write_text('{"jupymem_export": 1, "project": "p-x", "events": 0}\n')
    for args in (["list"], ["search", "kept"], ["block"], ["verify"], ["rebuild"], ["export"], ["gc"],
                 ["remember", "A new statement"], ["import", str(export)], ["init"]):
        err = refused(jm(*args, cwd=repo), 2)
        assert "written by a newer jupymem (schema 99" in err and "Upgrade jupymem" in err, (args, err)
    status = jm("status", "--json", cwd=repo)
    assert status.returncode == 1 and json.loads(status.stdout)["damage"] == "schema_too_new"
    # Before: doctor took it for damage and rebuilt it at the old schema.
    for flags in ([], ["--accept-loss"]):
        doctor = jm("doctor", "--json", *flags, cwd=repo)
        assert doctor.returncode == 1 and b"Traceback" not in doctor.stderr
        (entry,) = json.loads(doctor.stdout)["databases"]
        assert entry["state"] == "too new" and "upgrade jupymem" in entry["message"], entry
    # A lost registry is rebuilt with the binding kept: never "no memory here", never a second project.
    (jupymem_home / "registry.json").write_text("{broken")
    report = json.loads(jm("doctor", "--json", cwd=repo).stdout)
    assert report["registry"] == "corrupt" and report["bindings"] == 1, report
    assert json.loads(jm("status", "--json", cwd=repo).stdout)["damage"] == "schema_too_new"
    refused(jm("remember", "A new statement", cwd=repo), 2)
    assert len(list((jupymem_home / "projects").iterdir())) == 1
    assert _digest(db) == before and sorted(p.name for p in db.parent.iterdir()) == files
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 99
    monkeypatch.chdir(repo)
    with loaded_shell() as ip:
        with pytest.raises(UsageError, match="written by a newer jupymem"):
            ip.run_line_magic("memory", "list")


# -- doctor and a shared repository -------------------------------------------------------------


@pytest.fixture
def team(tmp_path: Path) -> tuple[Clone, Clone]:
    ana, ben = make_team(tmp_path, ("Ana", "ana@example.com"), ("Ben", "ben@example.com"))
    return ana, ben


def shared(ana: Clone, ben: Clone) -> None:
    """Ana records before sharing (so her cache was once a plain database with marks), shares,
    keeps a private memory; Ben pulls and records; both read."""
    ana.remember("Join sales to customers on customer_id, never on email", "--kind", "decision")
    ana.remember("Revenue is reported net of refunds", "--kind", "constraint")
    ana.ok("share")
    ana.commit("share memory")
    ana.push()
    ana.remember("My own doubt about the churn definition", "--private")
    ana.remember("Weekly numbers are in EUR", "--kind", "fact")
    ben.pull()
    ben.remember("Timestamps are UTC", "--kind", "constraint")
    ana.listed()


def database_of(clone: Clone) -> Path:
    (db,) = clone.home.glob("projects/*/memory.sqlite")
    return db


def test_doctor_says_a_healthy_shared_project_is_ok(team) -> None:
    ana, ben = team
    shared(ana, ben)
    for who in (ana, ben):
        proc = who.jm("doctor", "--json")
        # Before: Ana's cache (replayed, so renumbered) was reported lost against her old marks.
        assert proc.returncode == 0, (who.name, proc.stdout.decode(), proc.stderr.decode())
        report = json.loads(proc.stdout)
        assert all(d["state"] == "ok" for d in report.get("databases", ())), report


def test_doctor_rebuilds_a_damaged_shared_cache_from_the_files_and_keeps_this_machines_own_events(team) -> None:
    ana, ben = team
    shared(ana, ben)
    before = sorted((m["id"], m["statement"], m["private"]) for m in ana.listed())
    db = database_of(ana)
    size = page_size(db)
    overwrite(db, (root_page(db, "memories") - 1) * size, bytes(range(256)) * (size // 256))
    assert "jupymem doctor" in refused(ana.jm("list"), 1)
    doctor = ana.jm("doctor", "--json")
    assert doctor.returncode == 0 and b"Traceback" not in doctor.stderr, doctor.stdout.decode()
    (entry,) = json.loads(doctor.stdout)["databases"]
    assert entry["state"] == "recovered" and entry["shared"] is True, entry
    assert "rebuilt from .jupymem/log and 1 of this machine's own events" in entry["message"], entry
    assert list(db.parent.glob("memory.sqlite.damaged-*"))
    assert sorted((m["id"], m["statement"], m["private"]) for m in ana.listed()) == before
    assert ana.ok("verify").startswith("verify: ok")
    assert ana.jm("doctor").returncode == 0


def test_doctor_rebuilds_an_unreadable_or_missing_shared_cache_and_says_what_only_this_machine_held(team) -> None:
    ana, ben = team
    shared(ana, ben)
    shared_only = sorted(m["statement"] for m in ana.listed() if not m["private"])
    db = database_of(ana)
    overwrite(db, 0, b"\x00" * 100)  # not a database any more: nothing of it can be read
    assert "is not a SQLite database any more" in refused(ana.jm("list"), 1)
    doctor = ana.jm("doctor", "--json")
    assert doctor.returncode == 1 and b"Traceback" not in doctor.stderr  # something may be gone: a person knows
    (entry,) = json.loads(doctor.stdout)["databases"]
    assert entry["state"] == "partly recovered", entry
    assert "could not be read from it at all" in entry["message"] and "kept at" in entry["message"], entry
    assert sorted(m["statement"] for m in ana.listed()) == shared_only
    # A missing cache: rebuilt as well, and said.
    for p in db.parent.glob("memory.sqlite*"):
        if "damaged" not in p.name:
            p.unlink()
    doctor = ana.jm("doctor", "--json")
    assert doctor.returncode == 0, doctor.stdout.decode()
    (entry,) = json.loads(doctor.stdout)["databases"]
    assert entry["state"] == "recovered" and "was in the missing file" in entry["message"], entry
    assert sorted(m["statement"] for m in ana.listed()) == shared_only
