"""A full disk is said to be full, never "read-only".

Real full disks: a small tmpfs mounted for the test and filled to the last byte (needs
root, as the read-only tests need root's `chattr`; skipped elsewhere, saying why), and
SQLite's own limit on a database's size (``PRAGMA max_page_count``), which makes SQLite
refuse a write with SQLITE_FULL exactly as a full disk does, on any machine. The memory
home and the repository's shared folder each get their turn on the full disk, through
the real command line and the Python API.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import jupymem
from conftest import loaded_shell, make_repo
from faults import jm, ok, quiesce, refused
from jupymem.errors import SharingError, StorageError


@contextlib.contextmanager
def small_disk(where: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` for the duration."""
    where.mkdir(parents=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; the max_page_count test covers SQLite's part")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield where
    finally:
        quiesce()
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path) -> Path:
    """Write a file until the disk refuses even one more byte; returns it (delete it to free)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    chunk = 1 << 20
    try:
        while chunk:
            try:
                os.write(fd, b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                chunk //= 2
    finally:
        os.close(fd)
    return filler


def test_a_home_on_a_full_disk_says_disk_full_and_reads_still_work(tmp_path: Path, monkeypatch) -> None:
    repo = make_repo(tmp_path / "repo")
    other = make_repo(tmp_path / "other")
    with small_disk(tmp_path / "disk") as disk:
        monkeypatch.setenv("JUPYMEM_HOME", str(disk / "home"))
        for i in range(3):
            ok(jm("remember", f"Statement number {i} recorded before the disk filled up", cwd=repo))
        filler = fill(disk)
        # Before: SQLite could not grow its shared-memory file, the database was opened
        # read-only, and recording said "read-only here (disk I/O error)".
        for args, where in ((["remember", "A statement on a full disk"], repo), (["init"], other)):
            err = refused(jm(*args, cwd=where), 1)
            assert "full" in err and "Free some space" in err and "read-only" not in err, (args, err)
        assert len(list((disk / "home" / "projects").iterdir())) == 1  # no half-made project left for `init`
        status = ok(jm("status", "--json", cwd=repo))
        assert status["disk_full"] is True and "disk holding the memory home is full" in status["message"]
        assert "read-only" not in status["message"]
        assert len(ok(jm("list", "--json", cwd=repo))) == 3
        assert ok(jm("search", "statement recorded before", "--json", cwd=repo))["status"] == "ok"
        filler.unlink()
        ok(jm("remember", "A statement after space was freed", cwd=repo))
        assert len(ok(jm("list", "--json", cwd=repo))) == 4
        assert ok(jm("verify", "--json", cwd=repo))["ok"] is True


def test_a_write_that_fills_the_disk_under_an_open_project_is_disk_full_and_leaves_nothing(
    tmp_path: Path, monkeypatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    with small_disk(tmp_path / "disk") as disk:
        monkeypatch.setenv("JUPYMEM_HOME", str(disk / "home"))
        proj = jupymem.init(repo)
        proj.remember("Recorded while there was room", kind="fact")
        before = proj.revision()
        filler = fill(disk)
        with pytest.raises(StorageError, match="the disk is full") as info:
            proj.remember_many({"statement": f"bulk statement number {i} about table t{i}"} for i in range(300))
        assert "read-only" not in info.value.message
        assert proj.revision() == before
        filler.unlink()
        proj.remember("Recorded after space was freed", kind="fact")
        assert proj.verify().ok and len(proj.list()) == 2


def test_sqlite_refusing_a_write_for_size_is_disk_full_on_any_machine(repo: Path) -> None:
    proj = jupymem.init(repo)
    proj.remember("Recorded while there was room", kind="fact")
    before = proj.revision()
    pages = proj.conn.execute("PRAGMA page_count").fetchone()[0]
    proj.conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL at the next page, as a full disk
    with pytest.raises(StorageError, match="the disk is full") as info:
        proj.remember_many({"statement": f"bulk statement number {i} about table t{i}"} for i in range(300))
    assert "read-only" not in info.value.message and "Free some space" in info.value.message
    assert proj.revision() == before
    proj.conn.execute(f"PRAGMA max_page_count = {pages * 1000}")
    proj.remember("Recorded after the limit was lifted", kind="fact")
    assert proj.verify().ok


def test_a_shared_folder_on_a_full_disk_says_disk_full_not_permissions(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        repo = make_repo(disk / "repo")
        ok(jm("remember", "Recorded before sharing", cwd=repo))
        filler = fill(disk)
        err = refused(jm("share", cwd=repo), 2)
        assert "the disk is full" in err and "permissions" not in err, err
        filler.unlink()
        ok(jm("share", cwd=repo))  # the folder the refused attempt began is completed
        assert json.loads(jm("status", "--json", cwd=repo).stdout)["sharing"]["state"] == "on"


def _long(n: int) -> str:
    # Longer than a page: the append needs a block the full disk no longer has, so the
    # disk takes part of it (what was left of the file's last page) and refuses the rest.
    return f"Statement {n}: " + " ".join(f"the warehouse export column{i} is nullable" for i in range(150))


def test_a_shared_append_the_disk_refuses_is_taken_back_and_said_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    from IPython.core.error import UsageError

    with small_disk(tmp_path / "disk") as disk:
        repo = make_repo(disk / "repo")
        ok(jm("remember", "Recorded before sharing", cwd=repo))
        ok(jm("share", cwd=repo))
        (log,) = (repo / ".jupymem" / "log").glob("*.jsonl")
        before = log.read_bytes()
        filler = fill(disk)
        # The command line: one line, exit 2, the file as it was, no new file.
        err = refused(jm("remember", _long(1), cwd=repo), 2)
        assert "the disk is full" in err and "nothing was recorded" in err, err
        assert log.read_bytes() == before
        assert [p.name for p in log.parent.glob("*.jsonl")] == [log.name]
        # The Python API and a notebook: the same, and the file still as it was.
        proj = jupymem.project(repo)
        assert proj is not None
        with pytest.raises(SharingError, match="the disk is full"):
            proj.remember(_long(2))
        monkeypatch.chdir(repo)
        with loaded_shell() as ip:
            capsys.readouterr()
            result = ip.run_cell(f"%%remember\n{_long(3)}")
            out = capsys.readouterr()
        assert isinstance(result.error_in_exec, UsageError) and "the disk is full" in str(result.error_in_exec)
        assert "Traceback" not in out.out + out.err and "OSError" not in out.out + out.err
        assert log.read_bytes() == before
        assert not [m for m in proj.list() if m.statement.startswith("Statement ")]
        # Room again: the next record lands in the same file, and every clone verifies it.
        filler.unlink()
        ok(jm("remember", _long(4), cwd=repo))
        assert log.read_bytes().startswith(before) and [p.name for p in log.parent.glob("*.jsonl")] == [log.name]
        assert "verify: ok" in ok(jm("verify", cwd=repo))


def test_the_registry_on_a_full_disk_is_disk_full(tmp_path: Path) -> None:
    from jupymem.storage import registry

    with small_disk(tmp_path / "disk") as disk:
        home = disk / "home"
        home.mkdir()
        fill(disk)
        with pytest.raises(StorageError, match="is on a full disk") as info, registry.locked(home):
            registry.write_registry(home, registry.Registry())
        assert "read-only" not in info.value.message
        assert not list(home.glob(".registry-*"))  # the half-written temporary file is gone
