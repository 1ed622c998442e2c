"""Honest recovery: what `doctor` and every face say about a database that lost its WAL,
and one written by a newer jupymem.

Real parts throughout: database files under a real JUPYMEM_HOME, a writer process killed
with SIGKILL, the WAL deleted as a tidy-up or a backup tool would, and the real command
line in a subprocess.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import jupymem
from faults import jm, ok, quiesce, refused
from jupymem import marks, store

ROOT = Path(__file__).resolve().parents[1]


def spawn(code: str, *args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)


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
        return store.last_seq(proj.conn), store.last_hash(proj.conn)

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


READER_RACE = """
import sys, jupymem
proj = jupymem.project(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    proj.remember(f"racing statement number {i} about the orders table", kind="note")
    i += 1
"""


def test_opening_while_another_process_writes_never_calls_the_project_lost(repo: Path) -> None:
    # The mark is written after each commit and read before the database is asked: a writer
    # in another process can make it lag, never run ahead of what an opening sees.
    from jupymem.opening import close_all

    jupymem.init(repo).remember("The first statement", kind="fact")
    quiesce()
    writer = spawn(READER_RACE, str(repo), stdin=subprocess.DEVNULL)
    try:
        assert writer.stdout.readline().strip() == "ready", writer.stderr.read()
        seen = set()
        for _ in range(60):
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
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "jupymem")
    try:
        with pytest.raises(UsageError, match="written by a newer jupymem"):
            ip.run_line_magic("memory", "list")
    finally:
        ip.run_line_magic("unload_ext", "jupymem")
        InteractiveShell.clear_instance()
