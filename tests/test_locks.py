"""Another process holding a lock: jupymem waits a while, then says so in one line and
changes nothing. The holder is a real second process (``flock`` on the registry's lock
file, or a SQLite write transaction), never a stand-in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import cli_run
from jupymem.errors import StorageError
from jupymem.storage import damage, registry

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _hold(path: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_registry_lock_held_briefly_is_waited_for_and_nothing_is_lost(repo: Path, tmp_path: Path) -> None:
    from conftest import make_repo

    home = tmp_path / "home"
    env = {"JUPYMEM_HOME": str(home), "JUPYMEM_ENCODER": "none"}
    assert cli_run.jm("init", cwd=repo, env=env).returncode == 0
    other = make_repo(tmp_path / "other")
    holder = _hold(home / "registry.lock", 1.5)
    try:
        proc = cli_run.jm("init", cwd=other, env=env)  # binding a repository changes the registry
        waited = holder.poll() is not None  # the holder had let go before init could finish
    finally:
        holder.wait(timeout=30)
    assert proc.returncode == 0 and waited, proc.stderr.decode()
    for where in (repo, other):
        assert cli_run.jm("remember", f"Timestamps in {where.name} are UTC", cwd=where, env=env).returncode == 0
        assert f"Timestamps in {where.name} are UTC" in cli_run.jm("list", cwd=where, env=env).stdout.decode()


def test_a_registry_lock_held_past_the_wait_is_named_and_changes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    before = registry.read_registry(home) if (home / "registry.json").exists() else None
    holder = _hold(home / "registry.lock", 30)
    try:
        with pytest.raises(StorageError, match=r"stayed locked by another process for 0.3 s \(registry.lock\); "
                                               r"nothing was changed"), registry.locked(home, wait=0.3):
            raise AssertionError("the lock was taken while another process held it")
    finally:
        holder.kill()
        holder.wait()
    assert before is None and not (home / "registry.json").exists()
    with registry.locked(home, wait=5):  # free again once its holder is gone
        pass


def test_sqlite_locking_protocol_and_busy_are_named_not_raised(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "memory.sqlite"
    a = sqlite3.connect(db, isolation_level=None, timeout=0)
    a.execute("PRAGMA journal_mode=WAL")
    a.execute("CREATE TABLE t (x)")
    a.execute("BEGIN IMMEDIATE")
    b = sqlite3.connect(db, isolation_level=None, timeout=0)
    with pytest.raises(sqlite3.OperationalError) as busy:
        b.execute("BEGIN IMMEDIATE")
    a.execute("ROLLBACK")
    err = damage.storage_error(busy.value, db)
    assert isinstance(err, StorageError) and "stayed locked by another process" in str(err), err
    # SQLITE_PROTOCOL cannot be made on demand (a foreign lock on the -shm file at the
    # wrong moment); the driver's own exception with its own message is what arrives.
    err = damage.storage_error(sqlite3.OperationalError("locking protocol"), db)
    assert isinstance(err, StorageError) and "cannot wait out" in str(err) and str(db) in str(err), err
