"""``jupymem migrate``: a repository's SQLite memory moved to the team database and back,
through the real command line against a real PostgreSQL (``pg_server``).

What moves keeps its ids, statuses and history (a private memory is re-keyed to its
author's role there, and back to its words in a file); both sides verify; running it
again adds nothing; a teammate who recorded there first keeps their memories; what
cannot be done is one line.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import pg_server
from cli_run import jm
from conftest import make_repo
from jupymem.core.migrate import MOVED
from jupymem.intake import capture
from jupymem.storage import registry
from jupymem.storage.postgres import admin
from pg_server import Team


pytestmark = pytest.mark.postgres


class Person:
    """Someone with their own memory home, clone and database role, without JUPYMEM_DATABASE_URL:
    the repository's binding decides where its memory is."""

    def __init__(self, team: Team, name: str, clone: Path, home: Path) -> None:
        self.url = team.person(name)
        self.role = team.role(name)
        self.clone = clone
        self.home = home

    @property
    def owner(self) -> str:
        """What this person's private ids are salted with there: their role and its secret."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as raw:
            return f"{self.role}:{raw.execute('SELECT jupymem.private_salt()').fetchone()[0]}"

    def run(self, *args: str, code: int = 0) -> subprocess.CompletedProcess:
        done = jm(*args, cwd=self.clone, env={"JUPYMEM_HOME": str(self.home)})
        assert b"Traceback" not in done.stderr, done.stderr.decode()
        assert done.returncode == code, (args, done.stdout.decode(), done.stderr.decode())
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.run("--json", *args).stdout)

    def fails(self, *args: str, code: int = 2) -> str:
        """The one line a refused command says."""
        err = self.run(*args, code=code).stderr.decode()
        assert err.startswith("jupymem: ") and err.count("\n") == 1, err
        return err


@pytest.fixture
def pair(tmp_path: Path, team: Team) -> tuple[Person, Person]:
    return pg_server.admitted_pair(tmp_path, team, Person)


def _fill(person: Person) -> dict[str, Any]:
    """A SQLite memory with records, a supersede, a retire, a private memory and cited evidence."""
    a = person.json("remember", "--kind", "decision", "The churn dashboard uses UTC.")
    b = person.json("remember", "--kind", "correction", "Sales are keyed by region_id, not region.")
    new = person.json("supersede", a["id"], "The churn dashboard uses Europe/Oslo time.")
    person.run("retire", b["id"], "--reason", "renamed")
    private = person.json("remember", "--private", "My scratch schema is tmp_ola.")
    cited = _cite(person)
    return {"a": a, "b": b, "new": new, "private": private, "cited": cited}


def _project(person: Person) -> Any:
    """The person's project in this process (close it with ``close_all``)."""
    from jupymem.config import Settings
    from jupymem.core.opening import require_project

    return require_project(person.clone, Settings.from_env().with_(home=person.home))


def _cite(person: Person) -> dict[str, Any]:
    from jupymem.core.opening import close_all

    proj = _project(person)
    try:
        {"a": 1}["customer_id"]
    except KeyError as exc:
        ev = capture.evidence_from_exception(exc, session="s1", source="df['customer_id']", cell_id="c9",
                                             execution_count=7)
    proj.stage_failure(ev)
    close_all()
    return person.json("remember", "--kind", "correction", "customer_id is missing; use cust_id",
                       "--evidence", ev.handle)


def _listing(person: Person) -> dict[str, tuple[str, str | None]]:
    return {m["id"]: (m["status"], m["private"]) for m in person.json("list", "--all")}


def _history(person: Person, ids: list[str]) -> dict[str, list[str]]:
    return {i: [h["action"] for h in person.json("history", i)] for i in ids}


def test_a_file_moves_to_the_team_database_and_back(pair: tuple[Person, Person]) -> None:
    ola, _ = pair
    made = _fill(ola)
    before = _listing(ola)
    ids = [made[k]["id"] for k in ("a", "b", "new", "cited")]
    history = _history(ola, ids)
    assert ola.json("verify")["ok"] is True
    sqlite_file = Path(ola.json("status")["database"])

    report = ola.json("migrate", "--to", ola.url)
    assert report["to"] == "postgresql" and report["added"] == 6 and report["skipped"] == 0
    assert report["verified"] is True and report["private"] == 1
    mine = capture.memory_id("My scratch schema is tmp_ola.", ola.owner)  # keyed by the role and its secret
    assert report["rekeyed"] == {made["private"]["id"]: mine}
    assert not sqlite_file.exists() and Path(report["kept"]) == sqlite_file.with_name(MOVED)
    assert "pw-" not in (ola.home / registry.REGISTRY_FILE).read_text()  # remembered without its password

    st = ola.json("status")
    assert st["engine"]["name"] == "postgresql"
    moved = _listing(ola)
    assert moved == {(mine if k == made["private"]["id"] else k): v for k, v in before.items()}
    assert _history(ola, ids) == history
    assert ola.json("show", made["cited"]["id"])["evidence"][0]["handle"] == made["cited"]["evidence"][0]["handle"]
    assert ola.json("verify")["ok"] is True
    assert "lost" not in ola.run("doctor").stdout.decode()  # the file set aside is no lost project

    again = ola.json("migrate", "--to", ola.url)  # re-reads the kept file: nothing is new
    assert again["added"] == 0 and again["skipped"] == 6 and again["verified"] is True
    assert "nothing new" in ola.run("migrate", "--to", ola.url).stdout.decode()
    assert _listing(ola) == moved

    back = ola.json("migrate", "--to", "sqlite")
    assert back["to"] == "sqlite" and back["added"] == 6 and back["verified"] is True
    assert back["rekeyed"] == {mine: made["private"]["id"]}  # a round trip gives the ids it started with
    assert ola.json("status")["engine"]["name"] == "sqlite"
    assert _listing(ola) == before and _history(ola, ids) == history
    assert ola.json("verify")["ok"] is True
    assert sqlite_file.with_name(MOVED).exists()  # nothing was deleted on the way


def test_a_teammate_who_recorded_there_first_keeps_their_memories(pair: tuple[Person, Person]) -> None:
    ola, kari = pair
    kari.run("init", "--database", kari.url)
    hers = kari.json("remember", "Nightly loads start at 02:00.")
    secret = kari.json("remember", "--private", "My scratch schema is tmp_kari.")
    same = kari.json("remember", "The churn dashboard uses UTC.")  # the same words Ola keeps in his file

    made = _fill(ola)
    report = ola.json("migrate", "--to", ola.url)
    # His record of the words she recorded already adds nothing: skipped, as an import skips it.
    assert report["verified"] is True and (report["added"], report["skipped"]) == (5, 1)
    ola_sees = _listing(ola)
    kari_sees = _listing(kari)
    assert hers["id"] in ola_sees and secret["id"] not in ola_sees  # her private memory stays hers
    assert secret["id"] in kari_sees and hers["id"] in kari_sees
    mine = capture.memory_id("My scratch schema is tmp_ola.", ola.owner)
    assert mine in ola_sees and mine not in kari_sees and made["private"]["id"] not in kari_sees
    assert same["id"] == made["a"]["id"] and kari_sees[same["id"]][0] == "superseded"  # one memory, his supersede
    assert kari.json("verify")["ok"] is True and ola.json("verify")["ok"] is True

    back = ola.json("migrate", "--to", "sqlite")  # her private memory cannot come along, by design
    assert back["verified"] is True
    local = _listing(ola)
    assert secret["id"] not in local and hers["id"] in local and made["private"]["id"] in local
    assert kari.json("verify")["ok"] is True


def test_refusals_are_one_line(pair: tuple[Person, Person], team: Team, tmp_path: Path) -> None:
    ola, kari = pair
    assert "has no memory of its own" in ola.fails("migrate", "--to", ola.url)
    assert "needs --to" in ola.fails("migrate")
    assert "PostgreSQL URL" in ola.fails("migrate", "--to", "mysql")
    assert "not on a team database" in ola.fails("migrate", "--to", "sqlite")
    ola.run("remember", "Invoices are monthly.")
    dead = "postgresql://ola@127.0.0.1:9/nowhere?connect_timeout=2"
    assert "cannot be reached" in ola.fails("migrate", "--to", dead, code=1)
    stranger = Person(team, "nils", ola.clone, ola.home)  # his own role, Ola's clone and file
    assert "not a member" in ola.fails("migrate", "--to", stranger.url)
    assert "already in a file of its own" in ola.fails("migrate", "--to", "sqlite")
    assert ola.json("list")[0]["statement"] == "Invoices are monthly."  # nothing moved meanwhile
    assert "jupymem migrate --to URL" in ola.fails("init", "--database", ola.url)  # init points at migrate
    kari.run("init", "--database", kari.url)
    assert "already in the team database" in kari.fails("migrate", "--to", kari.url)


def test_what_the_team_engine_refuses_and_what_gc_forgot_are_said(pair: tuple[Person, Person]) -> None:
    from datetime import timedelta

    from jupymem.core.opening import close_all
    from jupymem.intake import clock

    ola, kari = pair
    kept = ola.json("remember", "Reports go out on Fridays.")
    shared = ola.json("remember", "The forecast reads from the warehouse.")
    mine = ola.json("remember", "--private", "--supersedes", shared["id"], "The forecast reads from my lake copy.")
    old = ola.json("remember", "Exports are CSV.")
    ola.run("retire", old["id"])
    proj = _project(ola)
    gone = proj.gc(now=clock.now() + timedelta(days=400))  # forgets the superseded and the retired one
    close_all()
    assert set(gone.forgotten) == {shared["id"], old["id"]}

    report = ola.json("migrate", "--to", ola.url)
    assert report["verified"] is True
    new = capture.memory_id("The forecast reads from my lake copy.", ola.owner)
    assert report["opened"] == [new]  # a private supersede of a shared memory: a private record there
    assert report["left_behind"] == 4  # gc's event, and the payloads it purged (two records, a retirement)
    assert "stayed behind" in ola.run("migrate", "--to", ola.url).stdout.decode()
    assert {m["id"]: m["status"] for m in ola.json("list", "--all")} == {kept["id"]: "active", new: "active"}
    kari.run("init", "--database", kari.url)
    assert [m["id"] for m in kari.json("list", "--all")] == [kept["id"]]  # his private version is his
    assert kari.json("verify")["ok"] is True
    assert ola.json("verify")["ok"] is True and mine["private"] is True


def test_an_export_imports_into_the_team_database_once(pair: tuple[Person, Person], tmp_path: Path) -> None:
    ola, kari = pair
    kari.run("remember", "Invoices are monthly.")  # in her own file
    kari.run("remember", "--private", "My invoices copy is tmp_kari.")
    export = tmp_path / "kari.jsonl"
    kari.run("export", "--out", str(export))
    ola.run("init", "--database", ola.url)
    first = ola.json("import", str(export))
    assert (first["events"], first["added"]) == (1, 1)  # her private memory was never in the export
    again = ola.json("import", str(export))
    assert (again["added"], again["skipped"]) == (0, 1)
    assert [m["statement"] for m in ola.json("list")] == ["Invoices are monthly."]
    assert ola.json("verify")["ok"] is True
    other = tmp_path / "other.jsonl"
    stranger = make_repo(tmp_path / "elsewhere")
    jm("remember", "Unrelated.", cwd=stranger, env={"JUPYMEM_HOME": str(kari.home)})
    jm("export", "--out", str(other), cwd=stranger, env={"JUPYMEM_HOME": str(kari.home)})
    assert "another repository" in ola.fails("import", str(other))


def test_a_notebook_moves_its_memory_with_the_magic(
    repo: Path, team: Team, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from IPython.core.error import UsageError

    from conftest import shell_in

    url = team.person("eva")
    key = registry.root_commit(repo)
    assert key
    admin.add_member(team.admin_url, key, team.role("eva"))
    for ip in shell_in(repo, monkeypatch):
        assert ip.run_cell("%memory remember Invoices are monthly.").success
        capsys.readouterr()
        assert ip.run_cell(f"%memory migrate --to '{url}'").success
        said = capsys.readouterr().out
        assert "1 of 1 events added to the team database" in said and "pw-" not in said, said
        assert ip.run_cell("%memory list").success  # the kernel reads the team database now
        assert "Invoices are monthly." in capsys.readouterr().out
        assert ip.run_cell(f"%memory migrate --to '{url}'").success  # the kept file again: nothing new
        assert "nothing new" in capsys.readouterr().out
        assert ip.run_cell("%memory migrate --to sqlite").success
        assert "1 of 1 events added to" in capsys.readouterr().out
        refused = ip.run_cell("%memory migrate --to sqlite")
        assert isinstance(refused.error_in_exec, UsageError) and "already in a file of its own" in str(
            refused.error_in_exec)
