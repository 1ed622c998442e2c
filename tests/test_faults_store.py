"""Fault injection on the store: real database files emptied, cut, overwritten, deleted,
rolled back; a registry replaced by a directory; a home that cannot be written. Through
the real CLI (subprocesses) and a real IPython shell. Damage is named (the file and
``jupymem doctor``), never hidden behind "no memory" or a fresh empty start; writes are
refused; ``doctor`` reports every database and recovers what the event log holds.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from IPython.core.error import UsageError

import jupymem
from conftest import loaded_shell, make_repo
from faults import jm, ok, overwrite, page_size, quiesce, read_only, refused, root_page

N = 300


@pytest.fixture
def filled(repo: Path) -> tuple[Path, Path, list[str]]:
    """A repository with 300 memories; returns (repo, its database, the statements)."""
    proj = jupymem.init(repo)
    statements = [f"Column c{i} of table t{i % 7} is nullable after the 2024 migration" for i in range(N)]
    proj.remember_many({"statement": s, "kind": "fact"} for s in statements)
    db = proj.database
    quiesce()
    return repo, db, statements


def _set_aside(db: Path) -> list[Path]:
    return sorted(db.parent.glob("memory.sqlite.damaged-*"))


def _sqlite_says_ok(db: Path) -> bool:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as raw:
            return raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    except sqlite3.DatabaseError:
        return False


# -- lost ----------------------------------------------------------------------------------


def test_a_zero_byte_database_is_lost_never_a_fresh_empty_project(filled):
    repo, db, _ = filled
    db.write_bytes(b"")
    status = jm("status", "--json", cwd=repo)
    assert status.returncode == 1 and b"Traceback" not in status.stderr
    assert "is empty (0 bytes)" in status.stdout.decode() and "300 events" in status.stdout.decode()
    for args in (["list"], ["search", "nullable"], ["block"], ["verify"], ["remember", "A new statement"]):
        err = refused(jm(*args, cwd=repo), 1)
        assert str(db) in err and "jupymem doctor" in err
    assert db.stat().st_size == 0  # nothing was recreated in its place
    err = refused(jm("init", cwd=repo), 1)
    assert "Nothing was recreated" in err and db.stat().st_size == 0
    doctor = jm("doctor", "--json", cwd=repo)
    assert doctor.returncode == 1
    report = ok(jm("doctor", "--json", "--accept-loss", cwd=repo))
    (entry,) = report["databases"]
    assert entry["state"] == "started afresh" and _set_aside(db)
    assert ok(jm("list", "--json", cwd=repo)) == []
    assert ok(jm("verify", "--json", cwd=repo))["ok"] is True


def test_a_deleted_database_is_reported_lost_and_not_recreated_under_the_same_id(filled):
    repo, db, _ = filled
    db.unlink()
    status = jm("status", "--json", cwd=repo)
    assert status.returncode == 1 and "is missing" in status.stdout.decode()
    err = refused(jm("remember", "A new statement", cwd=repo), 1)
    assert "is missing" in err and "300 events" in err
    assert not db.exists()
    assert jm("doctor", cwd=repo).returncode == 1
    assert not db.exists()
    ok(jm("doctor", "--accept-loss", cwd=repo))
    assert ok(jm("remember", "A new statement", "--json", cwd=repo))["statement"] == "A new statement"


def test_a_rolled_back_database_is_reported_lost(repo):
    proj = jupymem.init(repo)
    proj.remember_many({"statement": f"first batch statement {i}"} for i in range(100))
    db = proj.database
    quiesce()
    old = db.read_bytes()
    jupymem.init(repo).remember_many({"statement": f"second batch statement {i}"} for i in range(200))
    quiesce()
    db.write_bytes(old)  # a backup restored over newer history
    err = refused(jm("list", cwd=repo), 1)
    assert "holds 100 events" in err and "300 events" in err


# -- damaged -------------------------------------------------------------------------------


def test_a_truncated_database_is_named_and_doctor_recovers_what_its_log_holds(filled):
    repo, db, statements = filled
    size = page_size(db)
    data = db.read_bytes()
    db.write_bytes(data[: (len(data) // size // 2) * size])
    err = refused(jm("list", cwd=repo), 1)
    assert "is cut short" in err and str(db) in err and "jupymem doctor" in err
    refused(jm("remember", "A new statement", cwd=repo), 1)
    doctor = jm("doctor", "--json", cwd=repo)
    assert b"Traceback" not in doctor.stderr
    entry = json.loads(doctor.stdout)["databases"][0]
    # The events of the first half of the file are read back; those beyond the cut are named as lost.
    assert entry["state"] == "partly recovered" and 0 < entry["events"] < N, entry
    assert "could not be recovered" in entry["message"] and "kept at" in entry["message"]
    assert doctor.returncode == 1  # a partial recovery still needs a person to know
    assert _set_aside(db)
    verified = ok(jm("verify", "--json", cwd=repo))
    assert verified["ok"] is True and verified["events"] == entry["events"]
    listed = ok(jm("list", "--json", cwd=repo))
    assert len(listed) == entry["events"] and {m["statement"] for m in listed} <= set(statements)


def test_a_zeroed_header_is_named_and_left_to_a_person(filled):
    repo, db, _ = filled
    overwrite(db, 0, b"\x00" * 100)
    for args in (["list"], ["remember", "A new statement"]):
        err = refused(jm(*args, cwd=repo), 1)
        assert "is not a SQLite database any more" in err
    status = jm("status", cwd=repo)
    assert status.returncode == 1 and b"jupymem doctor" in status.stdout
    doctor = jm("doctor", cwd=repo)
    assert doctor.returncode == 1 and b"damaged" in doctor.stdout and b"Traceback" not in doctor.stderr
    assert not _set_aside(db)  # untouched until a person decides
    ok(jm("doctor", "--accept-loss", cwd=repo))
    assert _set_aside(db) and ok(jm("list", "--json", cwd=repo)) == []


def test_garbage_on_a_table_page_refuses_writes_and_doctor_rebuilds_everything(filled):
    repo, db, statements = filled
    size = page_size(db)
    page = root_page(db, "memories")
    overwrite(db, (page - 1) * size, bytes(range(256)) * (size // 256))
    assert not _sqlite_says_ok(db)
    err = refused(jm("list", cwd=repo), 1)
    assert "fails SQLite's integrity check" in err and "jupymem doctor" in err
    refused(jm("remember", "A new statement", cwd=repo), 1)  # before: writes kept being accepted
    report = ok(jm("doctor", "--json", cwd=repo))
    (entry,) = report["databases"]
    assert (entry["state"], entry["events"]) == ("recovered", N)
    assert {m["statement"] for m in ok(jm("list", "--json", cwd=repo))} == set(statements)
    assert ok(jm("verify", "--json", cwd=repo))["ok"] is True
    ok(jm("remember", "A new statement", cwd=repo))


def test_garbage_after_a_passed_check_is_found_even_with_its_times_set_back(filled):
    """A file that passed quick_check and has not changed since is not read again
    (``damage.checked_since``): any change must make the next open check it, even one
    that puts the modification time back (ctime cannot be put back) or a file swapped in
    with the same size and times (another inode)."""
    import os
    import shutil

    repo, db, _ = filled
    ok(jm("list", cwd=repo))  # checked now: the stamp is written
    stamp = db.with_name(db.name + ".checked")
    assert stamp.exists()
    ok(jm("list", cwd=repo))  # unchanged: answered again
    before = db.stat()
    size = page_size(db)
    overwrite(db, (root_page(db, "memories") - 1) * size, bytes(range(256)) * (size // 256))
    os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert db.stat().st_mtime_ns == before.st_mtime_ns and db.stat().st_size == before.st_size
    assert "fails SQLite's integrity check" in refused(jm("list", cwd=repo), 1)
    # A damaged copy swapped in for a checked file, with the checked file's times.
    damaged = db.read_bytes()
    ok(jm("doctor", "--json", cwd=repo))
    ok(jm("list", cwd=repo))
    good = db.stat()
    swapped = db.with_name("swapped")
    swapped.write_bytes(damaged)
    os.utime(swapped, ns=(good.st_atime_ns, good.st_mtime_ns))
    shutil.move(swapped, db)
    assert "fails SQLite's integrity check" in refused(jm("list", cwd=repo), 1)


def test_four_kilobytes_of_garbage_mid_file_answer_as_sqlite_judges_the_file(filled):
    repo, db, _ = filled
    middle = (db.stat().st_size // 2 // 4096) * 4096
    overwrite(db, middle, b"\xde\xad\xbe\xef" * 1024)
    damaged = not _sqlite_says_ok(db)
    proc = jm("remember", "A new statement", cwd=repo)
    if damaged:  # before: this write was accepted
        assert "jupymem doctor" in refused(proc, 1)
        doctor = jm("doctor", "--json", cwd=repo)
        assert b"Traceback" not in doctor.stderr
        assert ok(jm("verify", "--json", cwd=repo))["ok"] is True
    else:  # the garbage fell on a free page: nothing was damaged
        ok(proc)


def test_doctor_checks_every_database_and_one_bad_one_does_not_stop_it(filled, tmp_path, jupymem_home):
    repo, db, _ = filled
    other = make_repo(tmp_path / "other")
    jupymem.init(other).remember("The other project is healthy.")
    quiesce()
    overwrite(db, 0, b"\x00" * 100)
    (jupymem_home / "registry.json").write_text("{broken")
    doctor = jm("doctor", "--json", cwd=other)
    assert doctor.returncode == 1 and b"Traceback" not in doctor.stderr
    report = json.loads(doctor.stdout)
    states = sorted(d["state"] for d in report["databases"])
    assert states == ["damaged", "ok"]
    assert report["registry"] == "corrupt" and report["repaired"] is True
    assert ok(jm("list", "--json", cwd=other))[0]["statement"] == "The other project is healthy."


def test_a_registry_that_is_a_directory_is_reported_and_doctor_sets_it_aside(filled, jupymem_home):
    repo, _, statements = filled
    reg = jupymem_home / "registry.json"
    reg.unlink()
    reg.mkdir()
    status = jm("status", cwd=repo)
    assert status.returncode == 1 and b"Traceback" not in status.stderr and b"jupymem doctor" in status.stdout
    for args in (["list"], ["remember", "A new statement"]):
        assert "jupymem doctor" in refused(jm(*args, cwd=repo), 2)
    ok(jm("doctor", cwd=repo))
    assert reg.is_file() and list(jupymem_home.glob("registry.json.damaged-*"))
    assert len(ok(jm("list", "--json", cwd=repo))) == len(statements)


def test_ipython_names_a_damaged_database_and_a_failing_cell_still_runs(filled, monkeypatch):
    repo, db, _ = filled
    overwrite(db, 0, b"\x00" * 100)
    monkeypatch.chdir(repo)
    with loaded_shell() as ip:
        with pytest.raises(UsageError, match="is not a SQLite database any more.*jupymem doctor"):
            ip.run_line_magic("memory", "list")
        with pytest.raises(UsageError, match="jupymem doctor"):
            ip.run_cell_magic("remember", "", "A new statement.")
        res = ip.run_cell("{}['missing']")
        assert isinstance(res.error_in_exec, KeyError)  # the hook logged, the cell's own error stands


# -- read-only ------------------------------------------------------------------------------


def test_a_read_only_home_answers_reads_and_refuses_writes_through_the_cli(filled, jupymem_home, tmp_path):
    repo, db, statements = filled
    unbound = make_repo(tmp_path / "unbound")
    with read_only(jupymem_home):
        status = ok(jm("status", "--json", cwd=repo))
        assert status["total"] == N and status["read_only"] is True
        assert len(ok(jm("list", "--json", cwd=repo))) == N
        assert ok(jm("search", "c17 nullable", "--json", cwd=repo))["status"] == "ok"
        assert ok(jm("block", cwd=repo)).endswith("</project_memory>")
        assert ok(jm("verify", "--json", cwd=repo))["ok"] is True
        for args, where in (
            (["remember", "A new statement"], repo), (["retire", "m-0"], repo), (["init"], unbound),
            (["rebuild"], repo),
        ):
            err = refused(jm(*args, cwd=where), 2)
            assert "read-only" in err, err
        # no WAL, no -shm: untouched (memory.mark and the quick_check stamp were left by the
        # writes before: jupymem/storage/marks.py, damage.checked_since)
        assert sorted(p.name for p in db.parent.iterdir()) == ["memory.mark", "memory.sqlite", "memory.sqlite.checked"]
    assert len(ok(jm("list", "--json", cwd=repo))) == N


def test_a_read_only_home_answers_reads_in_ipython(filled, jupymem_home, monkeypatch):
    repo, _, _ = filled
    monkeypatch.chdir(repo)
    with read_only(jupymem_home):
        try:
            with loaded_shell() as ip:
                assert ip.run_cell("%memory list").success
                assert ip.run_cell("%memory search c17 nullable").success
                with pytest.raises(UsageError, match="read-only"):
                    ip.run_cell_magic("remember", "", "A new statement.")
                res = ip.run_cell("{}['missing']")
                assert isinstance(res.error_in_exec, KeyError)
                from jupymem.faces.magics import session_evidence

                assert session_evidence(ip)[0].ename == "KeyError"  # kept in the kernel, not on disk
        finally:
            quiesce()
    assert len(jupymem.project(repo).list()) == N and jupymem.project(repo).staged_evidence() == []


# -- settings that cannot be used -----------------------------------------------------------


@pytest.mark.parametrize("url", ["postgresql//alice:S3cretPassw0rd@db.example.com/team", "sqlite:///tmp/x.db",
                                 "postgres//host/db"])
def test_a_database_address_that_cannot_be_read_is_named_without_its_password(repo, url):
    """psycopg's own error quotes the whole address, password and all, in a traceback."""
    import subprocess

    from cli_run import jm

    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "first"], cwd=repo, check=True)
    for args in (["remember", "Revenue is reported in EUR."], ["search", "revenue"]):
        err = refused(jm(*args, cwd=repo, env={"JUPYMEM_DATABASE_URL": url}), 1)
        assert "could not be read" in err and "S3cretPassw0rd" not in err
    status = jm("status", cwd=repo, env={"JUPYMEM_DATABASE_URL": url})  # says what it can, and why not
    shown = (status.stdout + status.stderr).decode()
    assert status.returncode == 1 and "could not be read" in shown
    assert "S3cretPassw0rd" not in shown and "Traceback" not in shown


def test_a_home_that_names_no_user_is_a_clear_error(repo):
    from cli_run import jm

    err = refused(jm("status", cwd=repo, env={"JUPYMEM_HOME": "~nobody-by-this-name/jm"}), 2)
    assert "JUPYMEM_HOME='~nobody-by-this-name/jm' cannot be found" in err


def test_verify_of_a_healthy_database_that_refuses_writes_is_ok(repo):
    """Opened writable, then made read-only under it (an immutable file, a remount): FTS5's
    integrity check is written as an INSERT, whose refusal said nothing of the index but
    was reported as "the search index is out of step"."""
    proj = jupymem.init(repo)
    proj.remember("Revenue is reported in EUR.", kind="constraint")
    assert not proj.conn.readonly
    raw = getattr(proj.conn, "raw", proj.conn)
    raw.execute("PRAGMA query_only = 1")  # every write now fails as a read-only file's would
    try:
        report = proj.verify()
        assert report.ok, report.problems
    finally:
        raw.execute("PRAGMA query_only = 0")
