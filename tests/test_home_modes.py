"""Another user on the same machine reads nothing of the memory home, and cannot hold
its registry lock: private memories and failed cells' source live in the project's
database, which SQLite creates with the process's umask (0644 by default)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import jupymem
from jupymem.core.opening import close_all


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def open_umask() -> object:
    old = os.umask(0o022)  # the usual default: files 0644, folders 0755
    yield
    os.umask(old)


def test_a_new_home_and_its_projects_are_closed_to_other_users(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_umask: object
) -> None:
    home = tmp_path / "new" / "home"
    monkeypatch.setenv("JUPYMEM_HOME", str(home))
    p = jupymem.init(repo)
    p.remember("My private doubt: the churn label leaks the target", kind="note", private=True)
    assert mode(home) == 0o700
    assert mode(home / "registry.lock") == 0o600
    databases = list(home.rglob("*.sqlite"))
    assert databases
    for db in databases:
        # The folder keeps others out of every file in it, whatever SQLite made them.
        assert mode(db.parent) == 0o700, db.parent
        for parent in db.parents:
            if parent == home:
                break
            assert mode(parent) & 0o077 == 0, parent


def test_a_project_folder_an_earlier_version_left_open_is_closed_at_open(
    repo: Path, jupymem_home: Path, open_umask: object
) -> None:
    os.chmod(jupymem_home, 0o755)  # a home someone chose and made is theirs to set
    p = jupymem.init(repo)
    p.remember("Revenue is reported in EUR", kind="constraint")
    (db,) = list(jupymem_home.rglob("*.sqlite"))
    close_all()
    os.chmod(db.parent, 0o755)
    os.chmod(jupymem_home / "registry.lock", 0o644)
    jupymem.init(repo).remember("Timestamps are UTC", kind="fact")
    assert mode(db.parent) == 0o700
    assert mode(jupymem_home / "registry.lock") == 0o600
    assert mode(jupymem_home) == 0o755
