"""Which repository a path belongs to, and the bindings that survive moves and damage (SPEC 1)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import jupymem
from conftest import make_repo
from jupymem.storage import registry
from jupymem.errors import NotAGitRepository, RegistryCorrupt
from jupymem.core.doctor import doctor
from jupymem.core.opening import close_all


def test_git_root_from_a_notebook_path_a_directory_and_a_missing_file(repo: Path) -> None:
    nb = repo / "analysis" / "deep" / "explore.ipynb"
    nb.parent.mkdir(parents=True)
    nb.write_text("{}")
    assert registry.find_git_root(nb) == repo
    assert registry.find_git_root(nb.parent) == repo
    assert registry.find_git_root(repo) == repo
    assert registry.find_git_root(repo / "analysis" / "not-yet-saved.ipynb") == repo


def test_nested_repository_is_its_own_project(repo: Path) -> None:
    inner = make_repo(repo / "vendor" / "inner")
    assert registry.find_git_root(inner / "x.ipynb") == inner
    a = jupymem.init(repo)
    b = jupymem.init(inner / "x.ipynb")
    assert a.id != b.id


def test_outside_git_nothing_is_created_and_recording_is_refused(tmp_path: Path, jupymem_home: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert registry.find_git_root(plain) is None
    assert jupymem.project(plain) is None
    status = jupymem.status(plain)
    assert status.git is False and "not inside a git repository" in status.message
    with pytest.raises(NotAGitRepository, match="git init"):
        jupymem.init(plain)
    assert list(jupymem_home.iterdir()) == []


def test_reading_never_creates_anything(repo: Path, tmp_path: Path) -> None:
    settings = jupymem.Settings(home=tmp_path / "home")
    assert jupymem.project(repo, settings=settings) is None
    assert jupymem.status(repo, settings=settings).memory is False
    assert not (tmp_path / "home").exists()


def test_init_twice_is_one_project_and_the_registry_is_checksummed(repo: Path, jupymem_home: Path) -> None:
    a = jupymem.init(repo)
    b = jupymem.init(repo / "sub")
    assert a.id == b.id
    doc = json.loads((jupymem_home / "registry.json").read_text())
    assert doc["bindings"] == [{"root": str(repo), "project_id": a.id}]
    assert len(doc["checksum"]) == 64
    assert not list(jupymem_home.glob(".registry-*"))  # no temp file left behind


def test_moved_checkout_matches_before_init_and_adopts_on_init(repo: Path, tmp_path: Path) -> None:
    proj = jupymem.init(repo)
    proj.remember("Use the 2023 fiscal calendar for all revenue cuts", kind="decision")
    moved = tmp_path / "moved"
    subprocess.run(["cp", "-a", str(repo), str(moved)], check=True)
    moved = moved.resolve()
    status = jupymem.status(moved)
    assert status.memory is False
    assert status.matches == jupymem.ProjectMatch(project_id=proj.id, roots=(str(repo),))
    assert status.to_dict()["matches"] == {"project_id": proj.id, "roots": [str(repo)]}  # as faces show it
    assert "jupymem init" in status.message
    assert jupymem.project(moved) is None  # matching is not binding
    adopted = jupymem.init(moved)
    assert adopted.id == proj.id
    assert [m.statement for m in adopted.list()] == ["Use the 2023 fiscal calendar for all revenue cuts"]


def test_reclone_adopts_by_root_commit(repo: Path, tmp_path: Path) -> None:
    proj = jupymem.init(repo)
    proj.remember("Never impute the target column")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    assert jupymem.status(clone).matches.project_id == proj.id
    assert jupymem.init(clone).id == proj.id


def test_unrelated_repository_does_not_match(repo: Path, tmp_path: Path) -> None:
    jupymem.init(repo).remember("Something about this repository only")
    other = make_repo(tmp_path / "other")
    assert jupymem.status(other).matches is None
    assert jupymem.init(other).list() == []


def test_repository_without_commits_still_gets_memory(tmp_path: Path) -> None:
    empty = make_repo(tmp_path / "empty", commit=False)
    assert registry.root_commit(empty) is None
    assert jupymem.init(empty).remember("works before the first commit").status == "active"


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-20],  # truncated
        lambda b: b.replace(b'"project_id": "p-', b'"project_id": "q-', 1),  # edited, checksum stale
        lambda b: b"\xff\xfe" + b,  # not UTF-8
        lambda b: b"[]",  # JSON, wrong shape
    ],
)
def test_corrupt_registry_is_reported_never_guessed(repo: Path, jupymem_home: Path, damage) -> None:
    proj = jupymem.init(repo)
    proj.remember("The holdout set is the last 8 weeks")
    reg = jupymem_home / "registry.json"
    reg.write_bytes(damage(reg.read_bytes()))
    close_all()
    with pytest.raises(RegistryCorrupt, match="jupymem doctor"):
        jupymem.project(repo)
    status = jupymem.status(repo)
    assert status.registry == "corrupt" and "jupymem doctor" in status.message
    report = doctor(jupymem.Settings.from_env())
    assert report.registry == "corrupt" and report.repaired is True
    assert report.to_dict()["repaired"] is True and "databases" not in report.to_dict()  # all databases ok
    again = jupymem.project(repo)
    assert again is not None and again.id == proj.id and len(again.list()) == 1


def test_missing_registry_beside_databases_is_reported_and_init_repairs(repo: Path, jupymem_home: Path) -> None:
    proj = jupymem.init(repo)
    proj.remember("Revenue is reported net of refunds", kind="constraint")
    (jupymem_home / "registry.json").unlink()
    close_all()
    with pytest.raises(RegistryCorrupt, match="missing"):
        jupymem.project(repo)
    assert jupymem.status(repo).registry == "corrupt"
    repaired = jupymem.init(repo)  # an explicit repair: rebinds the existing database, no new project
    assert repaired.id == proj.id and len(repaired.list()) == 1
    assert len(list((jupymem_home / "projects").iterdir())) == 1


def test_doctor_binds_a_root_to_the_database_with_most_history(repo: Path, jupymem_home: Path, tmp_path: Path) -> None:
    proj = jupymem.init(repo)
    proj.remember_many({"statement": f"statement number {i} about the sales table"} for i in range(5))
    # A second database that also claims the root (e.g. a copied home): it holds less.
    other = make_repo(tmp_path / "other")
    stray = jupymem.init(other)
    close_all()
    import sqlite3

    with sqlite3.connect(stray.database) as raw:
        raw.execute("UPDATE meta SET value = ? WHERE key = 'roots'", (json.dumps([str(other), str(repo)]),))
    (jupymem_home / "registry.json").write_text("garbage")
    report = doctor(jupymem.Settings.from_env())
    assert report.bindings == 2 and report.projects == 2
    assert jupymem.project(repo).id == proj.id
    assert jupymem.project(other).id == stray.id


def test_public_functions_survive_importing_every_module(repo: Path) -> None:
    # A submodule named like a public function would replace it on import
    # (``jupymem.project`` once did): the core lives in core.py, the request
    # context in inject.py.
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(jupymem.__path__, "jupymem."):
        if info.name.rsplit(".", 1)[-1] not in ("server", "jupyter_ai_persona", "mcp_tools"):
            importlib.import_module(info.name)
    assert callable(jupymem.project) and callable(jupymem.context) and callable(jupymem.status)
    jupymem.init(repo)
    assert jupymem.project(repo) is not None
    assert jupymem.project(repo / "README.md").root == repo


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a .git to another user needs root (CI runs as root)")
def test_a_git_folder_another_user_owns_is_no_repository_of_ours(
    tmp_path: Path, jupymem_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another user plants .git and .jupymem/ in a shared parent (a stand-in for /tmp).
    shared = make_repo(tmp_path / "shared")
    for path in (shared / ".git", *(shared / ".git").rglob("*")):
        os.lchown(path, 1000, 1000)
    scratch = shared / "victim-scratch"
    scratch.mkdir()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    assert registry.find_git_root(scratch) is None
    with pytest.raises(NotAGitRepository) as info:
        jupymem.init(scratch)
    assert "another user owns" in info.value.message and "safe.directory" in info.value.message
    # As git: root through sudo works in the repository of the user who ran sudo.
    monkeypatch.setenv("SUDO_UID", "1000")
    assert registry.find_git_root(scratch) == shared
    monkeypatch.delenv("SUDO_UID")
    assert not (shared / ".jupymem").exists()
    # As git does: named safe in the person's own git config, it is theirs to use.
    (tmp_path / "gitconfig").write_text(f"[safe]\n\tdirectory = {shared}\n")
    assert registry.find_git_root(scratch) == shared
    (tmp_path / "gitconfig").write_text(f"[safe]\n\tdirectory = {shared}\n\tdirectory =\n")
    assert registry.find_git_root(scratch) is None
