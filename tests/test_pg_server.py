"""The REST face on the team engine: a real jupyter_server (pytest-jupyter's ``jp_fetch``)
configured with ``c.JupymemApp.database_url``, against a real PostgreSQL (``pg_server``).

The server works as Ola's role. It records, searches, lists, reads and reports status over
REST; what Kari records (through her own connection, another process's as far as the
server knows) reaches it at its next request, except Kari's private memory, which Ola's
server never returns, however it is asked.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import make_repo
from jupymem.config import Settings
from jupymem.core.opening import init_project
from jupymem.storage import registry
from jupymem.storage.postgres import admin

from pg_server import Team


pytest_plugins = ["pytest_jupyter.jupyter_server"]
pytestmark = pytest.mark.postgres

API = ("jupymem", "api")


@pytest.fixture
def people(team: Team) -> dict[str, str]:
    """Ola and Kari's database URLs (their roles exist; they join the project below)."""
    return {"ola": team.person("ola"), "kari": team.person("kari")}


@pytest.fixture
def jp_server_config(people: dict[str, str]) -> dict[str, Any]:
    return {"ServerApp": {"jpserver_extensions": {"jupymem": True}}, "JupymemApp": {"database_url": people["ola"]}}


@pytest.fixture
def fetch(jp_fetch: Any) -> Any:
    async def call(*route: str, method: str = "GET", body: Any = None, **kw: Any) -> tuple[int, Any]:
        raw = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
        resp = await jp_fetch(*API, *route, method=method, body=raw, raise_error=False, **kw)
        text = resp.body.decode() if resp.body else ""
        return resp.code, json.loads(text) if text else None

    return call


def _admitted_repo(jp_root_dir: Path, team: Team) -> tuple[Path, str]:
    """A repository under the server's root, Ola and Kari admitted to its project, and
    its notebook's path as the server names it."""
    repo = make_repo(Path(jp_root_dir).resolve() / "proj")
    key = registry.root_commit(repo)
    assert key
    for name in ("ola", "kari"):
        admin.add_member(team.admin_url, key, team.role(name))
    (repo / "analysis.ipynb").write_text("{}")
    return repo, "proj/analysis.ipynb"


async def test_the_rest_face_on_the_team_engine(
    fetch: Any, jp_root_dir: Path, team: Team, people: dict[str, str], tmp_path: Path
) -> None:
    repo, nb = _admitted_repo(jp_root_dir, team)

    code, status = await fetch("init", method="POST", body={"path": nb})
    assert code == 200 and status["memory"] is True
    assert status["engine"]["name"] == "postgresql"

    code, shared = await fetch("memories", method="POST", body={
        "path": nb, "statement": "Revenue is reported in EUR, never USD.", "kind": "constraint"})
    assert code == 201, shared
    code, mine = await fetch("memories", method="POST", body={
        "path": nb, "statement": "My scratch schema for revenue checks is tmp_ola.", "private": True})
    assert code == 201 and mine["private"] is True

    # Kari, in her own clone with her own role and home (to the server, another process).
    kari_clone = tmp_path / "kari" / "proj"
    subprocess.run(["git", "clone", "-q", str(repo), str(kari_clone)], check=True, capture_output=True)
    kari = init_project(kari_clone, Settings.from_env().with_(home=tmp_path / "kari-home", database_url=people["kari"]))
    assert kari.id == registry.root_commit(repo)
    from_kari = kari.remember("Revenue dashboards refresh at 06:00 UTC.", kind="fact")
    secret = kari.remember("Kari's revenue scratch notes live in tmp_kari_revenue.", private=True)

    code, found = await fetch("memories", params={"path": nb, "q": "where are the revenue scratch notes"})
    assert code == 200
    ids = [h["memory"]["id"] for h in found["hits"]]
    assert secret.id not in ids and mine["id"] in ids
    code, found = await fetch("memories", params={"path": nb, "q": "when do revenue dashboards refresh"})
    assert code == 200 and found["hits"][0]["memory"]["id"] == from_kari.id  # a teammate's write, seen at once
    code, found = await fetch("memories", params={"path": nb, "q": "tmp_kari_revenue"})
    assert code == 200 and secret.id not in [h["memory"]["id"] for h in found["hits"]]

    code, listing = await fetch("memories", params={"path": nb, "all": "1"})
    assert code == 200
    listed = {m["id"] for m in listing["memories"]}
    assert listed == {shared["id"], mine["id"], from_kari.id} and listing["total"] == 3

    code, detail = await fetch("memories", shared["id"], params={"path": nb})
    assert code == 200 and detail["memory"]["statement"] == "Revenue is reported in EUR, never USD."
    assert [h["action"] for h in detail["history"]] == ["recorded"]
    code, err = await fetch("memories", secret.id, params={"path": nb})
    assert code == 404 and err["error"] == "unknown_memory"

    code, status = await fetch("status", params={"path": nb})
    assert code == 200 and status["engine"]["name"] == "postgresql"
    assert status["counts"]["constraint"] == 1 and status["counts"]["fact"] == 1
    assert "tmp_kari" not in json.dumps(status) and "pw-" not in json.dumps(status)
    kari.conn.close()


async def test_the_evidence_routes_on_the_team_engine(
    fetch: Any, jp_root_dir: Path, team: Team, people: dict[str, str], tmp_path: Path
) -> None:
    from jupymem.errors import UnknownEvidence
    from jupymem.intake.capture import evidence_from_exception

    def failure(session: str, column: str) -> Any:
        try:
            {"region_id": 1}[column]
        except KeyError as exc:
            return evidence_from_exception(exc, session=session, source=f"sales[{column!r}]", execution_count=2)

    repo, nb = _admitted_repo(jp_root_dir, team)
    # Ola's kernel (his role, as the server's) and Kari's, in her own clone, each stage a failure.
    ola = init_project(repo, Settings.from_env().with_(home=tmp_path / "ola-kernel", database_url=people["ola"]))
    kari_clone = tmp_path / "kari" / "proj"
    subprocess.run(["git", "clone", "-q", str(repo), str(kari_clone)], check=True, capture_output=True)
    kari = init_project(kari_clone, Settings.from_env().with_(home=tmp_path / "kari-home", database_url=people["kari"]))
    his, hers = failure("ola-kernel", "region"), failure("kari-kernel", "area")
    ola.stage_failure(his)
    kari.stage_failure(hers)

    code, listed = await fetch("evidence", params={"path": nb})
    assert code == 200 and [e["handle"] for e in listed["evidence"]] == [his.handle]
    assert listed["evidence"][0]["kept_by"] is None
    code, err = await fetch("evidence", hers.handle, "keep", method="POST",
                            body={"path": nb, "statement": "Area is not a column of sales."})
    assert code == 404 and err["error"] == "unknown_evidence"  # hers is not his to keep

    code, kept = await fetch("evidence", his.handle, "keep", method="POST",
                             body={"path": nb, "statement": "Sales are keyed by region_id, not region."})
    assert code == 201 and [e["handle"] for e in kept["evidence"]] == [his.handle]
    code, listed = await fetch("evidence", params={"path": nb})
    assert listed["evidence"][0]["kept_by"] == kept["id"]
    # The lesson is the team's, and so is the failure it cites; her staged one stays hers.
    assert kari.evidence(his.handle).handle == his.handle
    assert [e.handle for e in kari.get(kept["id"]).evidence] == [his.handle]
    assert [e.handle for e in kari.staged_evidence()] == [hers.handle]
    with pytest.raises(UnknownEvidence):
        ola.evidence(hers.handle)
    ola.conn.close()
    kari.conn.close()
