"""A read-only home in a shared repository: its cache cannot follow the files, so what
teammates added since it was built is not shown, and every face's status says so.

Two clones of one remote, each with its own home (``team.py``); Ben's home is made
read-only for real (``faults.read_only``: ``chattr +i`` as root, else ``chmod``) after
he pulls Ana's new lines. Through the real command line, a real IPython shell and a
real Jupyter server (``GET status``, which the sidebar shows).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import jupymem
from conftest import loaded_shell, make_repo
from faults import quiesce, read_only
from jupymem.sharing import sharelog
from team import Clone, git, make_team
from test_share_log import Writer, at, memory_payload

pytest_plugins = ["pytest_jupyter.jupyter_server"]

SAID = "2 new lines in .jupymem/log are not shown: the memory home is read-only here"


@pytest.fixture
def team(tmp_path: Path) -> tuple[Clone, Clone]:
    ana, ben = make_team(tmp_path, ("Ana", "ana@example.com"), ("Ben", "ben@example.com"))
    ana.remember("Join sales to customers on customer_id", "--kind", "decision")
    ana.ok("share")
    ana.commit("share memory")
    ana.push()
    ben.pull()
    assert len(ben.listed()) == 1  # Ben's cache is built
    ana.remember("Weekly revenue is reported in EUR", "--kind", "constraint")
    ana.remember("Dashboards refresh at 06:00 UTC", "--kind", "decision")
    ana.commit("two more")
    ana.push()
    ben.pull()
    return ana, ben


def test_status_says_that_new_shared_lines_are_not_shown_in_a_read_only_home(team) -> None:
    ana, ben = team
    with read_only(ben.home):
        status = ben.json("status")
        # Before: nothing said; the two memories were simply missing.
        assert SAID in status["message"], status["message"]
        assert (status["sharing"]["unseen_lines"], status["sharing"]["unseen_files"]) == (2, 1)
        assert any(SAID in p for p in status["sharing"]["problems"])
        assert SAID in ben.ok("status")
        assert len(ben.listed()) == 1  # what the cache holds is what is shown, and said to be so
    # Writable again: the next read follows the files, and there is nothing left to say.
    assert len(ben.listed()) == 3
    with read_only(ben.home):
        status = ben.json("status")
        assert status["sharing"]["unseen_lines"] == 0 and "not shown" not in status["message"]


def test_magic_status_says_it_too(team, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    ana, ben = team
    monkeypatch.setenv("JUPYMEM_HOME", str(ben.home))
    monkeypatch.chdir(ben.path)
    with read_only(ben.home):
        try:
            with loaded_shell() as ip:
                capsys.readouterr()
                assert ip.run_cell("%memory status").success
                assert SAID in capsys.readouterr().out
        finally:
            quiesce()


# -- REST: what the sidebar shows -----------------------------------------------------------


async def test_rest_status_says_it_for_the_sidebar(jp_fetch: Any, jp_root_dir: Path, jupymem_home: Path) -> None:
    repo = make_repo(Path(jp_root_dir).resolve() / "proj")
    git(repo, "config", "user.name", "Ana")
    git(repo, "config", "user.email", "ana@example.com")
    proj = jupymem.init(repo)
    proj.remember("Join sales to customers on customer_id", kind="decision")
    proj.share()
    quiesce()
    ben = Writer(repo)  # a teammate's file, as a pull brings it
    for i in range(2):
        ben.append("record", {"memory": memory_payload(f"Teammate statement number {i} about the orders table")},
                   at(i + 1))
    assert len(list(sharelog.log_dir(repo).glob("*.jsonl"))) == 2
    with read_only(jupymem_home):
        resp = await jp_fetch("jupymem", "api", "status", params={"path": "proj"}, raise_error=False)
        status = json.loads(resp.body.decode())
        assert resp.code == 200 and SAID in status["message"], status
        assert any(SAID in p for p in status["sharing"]["problems"])  # the sidebar lists these
        resp = await jp_fetch("jupymem", "api", "memories", params={"path": "proj"}, raise_error=False)
        assert json.loads(resp.body.decode())["total"] == 1
        quiesce()
    assert len(jupymem.project(repo).list()) == 3  # writable again: the lines were valid, and now shown
