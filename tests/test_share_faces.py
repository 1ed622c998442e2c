"""Sharing through the other faces: a real IPython shell (``%memory share``,
``%%remember --private``, a failed cell cited by a lesson) and a real Jupyter server
(``POST share``, ``private`` records, and a hand-edited line reaching no route)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import jupymem
from conftest import make_repo, shell_in
from jupymem.sharing import sharelog

from team import git
from test_share_log import Writer, at, memory_payload

pytest_plugins = ["pytest_jupyter.jupyter_server"]

API = ("jupymem", "api")
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def shared_text(repo: Path) -> str:
    folder = repo / ".jupymem"
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file())


def identify(repo: Path, name: str = "Ana") -> None:
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", f"{name.lower()}@example.com")


# -- IPython ---------------------------------------------------------------------------


@pytest.fixture
def shell(repo: Path, monkeypatch: pytest.MonkeyPatch):
    identify(repo)
    yield from shell_in(repo, monkeypatch)


def test_magics_share_and_keep_private_things_private(shell, repo: Path, capsys) -> None:
    assert shell.run_cell("%%remember --kind decision\nJoin on customer_id.").success
    capsys.readouterr()
    assert shell.run_cell("%memory share").success
    said = capsys.readouterr().out
    assert "Sharing is on" in said and ".jupymem/log/ana-" in said and "git add .jupymem" in said
    assert "customer_id" in shared_text(repo)

    assert shell.run_cell("%%remember --private\nMy doubts about the churn label.").success
    assert shell.run_cell("%memory remember --private Another private note").success
    assert "churn label" not in shared_text(repo) and "Another private" not in shared_text(repo)
    private = [m for m in jupymem.project(repo).list() if m.private]
    assert len(private) == 2

    # A failure stays on this machine until a lesson cites it; then only its redacted excerpt travels.
    before = shared_text(repo)
    failed = shell.run_cell(f"token = '{SECRET}'\nsales = {{'customer_id': [1]}}\nsales['custid']")
    assert not failed.success
    assert shared_text(repo) == before
    assert shell.run_cell("%%remember --kind failure --evidence last\nThe sales key is customer_id, not custid.").success
    text = shared_text(repo)
    assert "not custid" in text and "KeyError" in text and SECRET not in text
    lesson = [json.loads(x) for x in text.splitlines() if "not custid" in x and x.startswith("{")][-1]
    (cited,) = lesson["payload"]["memory"]["evidence"]
    assert len(cited["excerpt"].encode()) <= 2048 and "custid" in cited["excerpt"]
    assert cited.get("notebook") is None or not Path(cited["notebook"]).is_absolute()

    capsys.readouterr()
    assert shell.run_cell("%memory status").success
    assert "sharing" in capsys.readouterr().out


def test_magics_show_marks_a_memory_two_people_replaced(shell, repo: Path, capsys) -> None:
    assert shell.run_cell("%%remember --kind decision\nJoin on customer_id.").success
    assert shell.run_cell("%memory share").success
    proj = jupymem.project(repo)
    (old,) = proj.list()
    ours = proj.supersede(old.id, "Join on customer_id after trimming it")
    # Ben, on his clone, replaced the same memory differently; his file arrives with a pull.
    ben = Writer(repo)
    theirs = memory_payload("Join on customer_id after lower-casing it", kind="decision")
    ben.append("supersede", {"old": old.id, "memory": theirs}, at(1))
    capsys.readouterr()
    assert shell.run_cell(f"%memory show {old.id}").success
    out = capsys.readouterr().out
    assert "replaced 2 ways" in out and ours.id in out and theirs["id"] in out
    assert shell.run_cell(f"%memory show {ours.id}").success
    assert "1 of 2 replacements" in capsys.readouterr().out
    assert shell.run_cell("%memory search customer_id after trimming it").success
    assert "1 of 2 replacements" in capsys.readouterr().out  # search results carry the mark too
    assert shell.run_cell(f"%memory retire {theirs['id']} --reason we trim").success
    capsys.readouterr()
    assert shell.run_cell(f"%memory show {old.id}").success
    assert "replaced 2 ways" not in capsys.readouterr().out


# -- REST ------------------------------------------------------------------------------


@pytest.fixture
def served(jp_root_dir: Path) -> Path:
    repo = make_repo(Path(jp_root_dir).resolve() / "proj")
    identify(repo)
    return repo


@pytest.fixture
def fetch(jp_fetch: Any) -> Any:
    async def call(*route: str, method: str = "GET", body: Any = None, **kw: Any):
        raw = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
        resp = await jp_fetch(*API, *route, method=method, body=raw, raise_error=False, **kw)
        return resp.code, json.loads(resp.body.decode()) if resp.body else None

    return call


async def test_rest_share_switch_private_records_and_author(fetch: Any, served: Path) -> None:
    code, made = await fetch("memories", method="POST", body={"path": "proj", "statement": "Revenue excludes VAT"})
    assert code == 201 and made["provenance"]["author"] == "Ana <ana@example.com>"
    code, report = await fetch("share", method="POST", body={"path": "proj"})
    assert code == 200 and report["state"] == "on" and report["written"] == 1
    assert ".jupymem/README.md" in report["created"] and "git add .jupymem" in report["message"]
    assert report["status"]["sharing"]["state"] == "on"
    assert report["status"]["sharing"]["identity"] == "Ana <ana@example.com>"
    code, private = await fetch("memories", method="POST",
                                body={"path": "proj", "statement": "My private doubt", "private": True})
    assert code == 201 and private["private"] is True
    assert "private doubt" not in shared_text(served)
    code, bad = await fetch("memories", method="POST", body={"path": "proj", "statement": "x", "private": "yes"})
    assert code == 400 and bad["error"] == "bad_request"
    code, report = await fetch("share", method="POST", body={"path": "proj", "on": False})
    assert code == 200 and report["state"] == "off" and "Sharing is off" in report["message"]
    code, status = await fetch("status", params={"path": "proj"})
    assert status["sharing"]["state"] == "off"


async def test_rest_a_hand_edited_line_reaches_no_route(fetch: Any, served: Path) -> None:
    proj = jupymem.init(served)
    proj.remember("Join on customer_id", kind="decision")
    proj.share()
    proj.remember("The weekly export runs on Mondays", kind="procedure")
    (path,) = sharelog.log_dir(served).glob("*.jsonl")
    path.write_text(path.read_text().replace("on Mondays", "on Fridays"))
    for route, params in (("memories", {"path": "proj", "all": "1"}), ("block", {"path": "proj"}),
                          ("memories", {"path": "proj", "q": "which day does the weekly export run"})):
        code, data = await fetch(route, params=params)
        assert code == 200
        text = json.dumps(data)
        assert "Fridays" not in text and "Mondays" not in text, route
    code, status = await fetch("status", params={"path": "proj"})
    (problem,) = status["sharing"]["problems"]
    assert f"{path.name} line 2: fails its hash" in problem
    assert "not applied" in status["message"]
