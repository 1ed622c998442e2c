"""An export names its repository; importing another repository's export needs a flag.

Project ids are random per machine, so two clones of one repository have different
ones; the repository's identity is its root commit, which every clone shares. An export
carries it (``"repository"`` in its header). Importing one's own export or a teammate's
export of the same repository needs nothing; another repository's, or one that cannot
say which it is of (an export made before exports named it), is refused naming both and
``--other-project``, and imports nothing. Through the real CLI (two clones of one
remote, and an unrelated repository), IPython and the Python API.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError

import jupymem
from conftest import loaded_shell, make_repo
from faults import jm, ok, refused
from jupymem.errors import OtherProjectImport
from jupymem.storage.registry import root_commit
from team import Clone, make_team


@pytest.fixture
def team(tmp_path: Path) -> tuple[Clone, Clone]:
    ana, ben = make_team(tmp_path / "team", ("Ana", "ana@example.com"), ("Ben", "ben@example.com"))
    ana.remember("Join sales to customers on customer_id", "--kind", "decision")
    ana.remember("Revenue is reported net of refunds", "--kind", "constraint")
    ben.remember("Timestamps are UTC", "--kind", "constraint")
    return ana, ben


def export_of(clone: Clone, out: Path) -> Path:
    clone.ok("export", "--out", str(out))
    return out


def test_an_export_names_its_repository_and_a_teammates_clone_imports_it_without_a_flag(team, tmp_path) -> None:
    ana, ben = team
    out = export_of(ana, tmp_path / "ana.jsonl")
    header = json.loads(out.read_text().splitlines()[0])
    assert header["repository"] == root_commit(ana.path) == root_commit(ben.path)
    assert header["project"] != ben.json("status")["project_id"]  # the ids differ; the repository does not
    assert ben.json("import", str(out))["added"] == 2
    assert len(ben.listed()) == 3
    assert ana.json("import", str(out))["added"] == 0  # one's own export, too


def test_another_repositorys_export_is_refused_naming_both_and_the_flag(team, tmp_path, jupymem_home) -> None:
    ana, _ = team
    out = export_of(ana, tmp_path / "ana.jsonl")
    other = make_repo(tmp_path / "other")
    ok(jm("remember", "The other repository keeps its own memory", cwd=other))
    before = sorted(m["id"] for m in ok(jm("list", "--json", cwd=other)))
    # Before: merged without a word.
    err = refused(jm("import", str(out), cwd=other), 2)
    assert f"is an export of another repository (root commit {root_commit(ana.path)[:12]}" in err, err
    assert f"not of other (root commit {root_commit(other)[:12]})" in err and "--other-project" in err, err
    assert "Nothing was imported" in err
    assert sorted(m["id"] for m in ok(jm("list", "--json", cwd=other))) == before
    # Into a repository without memory: refused before anything is created.
    fresh = make_repo(tmp_path / "fresh")
    listing = sorted(p.name for p in jupymem_home.rglob("*"))
    assert "--other-project" in refused(jm("import", str(out), cwd=fresh), 2)
    assert jupymem.project(fresh) is None and sorted(p.name for p in jupymem_home.rglob("*")) == listing
    # Asked for, it merges.
    assert ok(jm("import", str(out), "--other-project", "--json", cwd=other))["added"] == 2
    assert len(ok(jm("list", "--json", cwd=other))) == 3


def test_an_export_that_names_no_repository_imports_only_into_its_own_project(team, tmp_path) -> None:
    ana, ben = team
    out = export_of(ana, tmp_path / "ana.jsonl")
    lines = out.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    del header["repository"]  # as exports were written before they named it
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    assert ana.json("import", str(old))["added"] == 0  # the project that made it: its id says so
    proc = ben.jm("import", str(old))
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "does not say which repository it is an export of" in err, err
    assert "--other-project" in err and len(ben.listed()) == 1
    assert ben.json("import", str(old), "--other-project")["added"] == 2


def test_ipython_and_python_need_the_flag_too(repo: Path, tmp_path: Path, monkeypatch) -> None:
    source = jupymem.init(make_repo(tmp_path / "source"))
    source.remember("Use the 2023 fiscal calendar", kind="decision")
    out = tmp_path / "source.jsonl"
    source.export_to(out)
    target = jupymem.init(repo)
    with pytest.raises(OtherProjectImport, match="another repository.*other_project=True"):
        target.import_(io.StringIO(out.read_text()))
    assert target.list() == []
    monkeypatch.chdir(repo)
    with loaded_shell() as ip:
        with pytest.raises(UsageError, match="--other-project"):
            ip.run_line_magic("memory", f"import {out}")
        assert jupymem.project(repo).list() == []
        assert ip.run_cell(f"%memory import --other-project {out}").success
    assert [m.statement for m in jupymem.project(repo).list()] == ["Use the 2023 fiscal calendar"]
