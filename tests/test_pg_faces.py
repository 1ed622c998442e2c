"""The team engine through the real command line: two people, two clones of one repository,
one PostgreSQL (``pg_server``), each logged in as their own role.

What a person does every day works the same as on SQLite (init, remember, search, list, show,
history, supersede, retire, confirm, block, status, verify, export); what the engine does not
do (rebuild, share) is refused in one line (staged failures, %%ask and gc: test_pg_working_set); the database keeps each person's private memories theirs, even
when the same words are recorded privately by one and shared by the other; verify holds for a
member who cannot see a teammate's private events; an unreachable database is one line.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import pg_server
from cli_run import jm
from jupymem.storage import registry
from pg_server import Team


pytestmark = pytest.mark.postgres


class Person:
    """Someone with their own memory home, their own clone and their own database role."""

    def __init__(self, team: Team, name: str, clone: Path, home: Path) -> None:
        self.name = name
        self.url = team.person(name)
        self.role = team.role(name)
        self.clone = clone
        self.home = home

    def env(self, **more: str) -> dict[str, str]:
        return {"JUPYMEM_HOME": str(self.home), "JUPYMEM_DATABASE_URL": self.url, **more}

    def run(self, *args: str, ok: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        done = jm(*args, cwd=self.clone, env=self.env() if env is None else env)
        if ok:
            assert done.returncode == 0, (args, done.stdout.decode(), done.stderr.decode())
        assert b"Traceback" not in done.stderr, done.stderr.decode()
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.run("--json", *args).stdout)

    def json_with(self, env: dict[str, str], *args: str) -> Any:
        return json.loads(self.run("--json", *args, env=env).stdout)


@pytest.fixture
def pair(tmp_path: Path, team: Team) -> tuple[Person, Person]:
    """Ola and Kari, members of the project of one repository, each in a clone of it."""
    return pg_server.admitted_pair(tmp_path, team, Person)


def test_the_everyday_commands_on_the_team_engine(pair: tuple[Person, Person]) -> None:
    ola, kari = pair
    st = ola.json("status")
    assert st["engine"]["name"] == "postgresql" and st["memory"] is True
    assert "pw-" not in json.dumps(st)  # the password never shows
    assert ola.run("init").stdout.decode().startswith("analysis's memory is in the team database at ")

    a = ola.json("remember", "--kind", "decision", "The churn dashboard uses UTC.")
    b = ola.json("remember", "--kind", "correction", "Sales are keyed by region_id, not region.")
    hits = kari.json("search", "which timezone does the churn dashboard use")["hits"]
    assert hits and hits[0]["memory"]["id"] == a["id"]
    assert [m["id"] for m in kari.json("list")] == sorted([a["id"], b["id"]], key=lambda i: i != b["id"])
    assert "The churn dashboard uses UTC." in kari.run("show", a["id"][:8]).stdout.decode()

    new = kari.json("supersede", a["id"], "The churn dashboard uses Europe/Oslo time.")
    assert new["supersedes"] == a["id"]
    assert ola.json("show", a["id"])["status"] == "superseded"
    assert ola.json("retire", b["id"], "--reason", "renamed")["status"] == "retired"
    note = kari.json("remember", "Nightly loads start at 02:00.")
    ola.run("confirm", note["id"])
    assert [h["action"] for h in kari.json("history", a["id"])] == ["recorded", "superseded"]
    block = kari.run("block").stdout.decode()
    assert "Europe/Oslo" in block and "region_id" not in block

    assert kari.json("verify")["ok"] is True
    lines = ola.run("export").stdout.decode().splitlines()
    header = json.loads(lines[0])
    assert header["events"] == len(lines) - 1 == 5 and header["repository"] == registry.root_commit(ola.clone)

    st = kari.json("status")
    assert st["total"] == 2 and st["engine"]["where"].endswith("/postgres") and st["project_id"] == header["project"]
    text = kari.run("status").stdout.decode()
    assert "team database" in text and "engine" in text and "postgresql at" in text


def test_what_the_team_engine_cannot_do_yet_is_refused_in_one_line(pair: tuple[Person, Person], tmp_path: Path) -> None:
    ola, _ = pair
    ola.run("remember", "Invoices are monthly.")
    export = tmp_path / "e.jsonl"
    export.write_text(ola.run("export").stdout.decode())
    for args in (("rebuild",), ("share",)):
        done = ola.run(*args, ok=False)
        err = done.stderr.decode()
        assert done.returncode != 0 and err.count("\n") == 1 and "not yet on the team engine" in err, (args, err)


def test_two_people_share_memory_and_keep_their_private_memories_their_own(pair: tuple[Person, Person]) -> None:
    ola, kari = pair
    shared = ola.json("remember", "The forecast notebook reads from the warehouse.")
    mine = ola.json("remember", "--private", "My scratch schema is tmp_ola.")
    hers = kari.json("remember", "--private", "My scratch schema is tmp_kari.")
    assert mine["private"] is True
    assert {m["id"] for m in ola.json("list")} == {shared["id"], mine["id"]}
    assert {m["id"] for m in kari.json("list")} == {shared["id"], hers["id"]}
    assert kari.json("search", "scratch schema tmp_ola")["hits"] == [] or all(
        h["memory"]["id"] != mine["id"] for h in kari.json("search", "scratch schema tmp_ola")["hits"])
    refused = kari.run("show", mine["id"], ok=False)
    assert refused.returncode == 2 and b"No memory" in refused.stderr
    assert kari.run("retire", mine["id"], ok=False).returncode == 2
    assert "tmp_ola" not in kari.run("export").stdout.decode()
    # A shared memory is never replaced by one only its author can see.
    done = kari.run("remember", "--private", "--supersedes", shared["id"], "It reads from the lake.", ok=False)
    assert done.returncode == 2 and b"superseded openly" in done.stderr
    assert kari.json("verify")["ok"] is True and ola.json("verify")["ok"] is True


def test_the_same_words_kept_privately_by_one_and_shared_by_another(pair: tuple[Person, Person]) -> None:
    ola, kari = pair
    words = "Customer ids are strings, never integers."
    private = ola.json("remember", "--private", words)
    shared = kari.json("remember", words)  # no collision, and nothing tells her Ola's exists
    assert private["id"] != shared["id"] and shared["private"] is False
    assert [m["id"] for m in kari.json("list")] == [shared["id"]]
    assert {m["id"] for m in ola.json("list")} == {private["id"], shared["id"]}  # his copy and the team's
    revision = ola.json("status")["revision"]
    assert ola.json("remember", "--private", words)["id"] == private["id"]  # his own still dedups
    assert ola.json("status")["revision"] == revision
    assert kari.json("verify")["ok"] is True and ola.json("verify")["ok"] is True


def test_verify_holds_for_a_member_who_cannot_see_a_teammates_private_events(pair: tuple[Person, Person]) -> None:
    ola, kari = pair
    ola.run("remember", "The churn model retrains weekly.")
    hidden = ola.json("remember", "--private", "I keep a copy of the churn features in tmp_ola.")
    ola.run("retire", hidden["id"])
    kari.run("remember", "Weekly means Monday 06:00 Oslo time.")
    report = kari.json("verify")
    assert report["ok"] is True, report
    assert report["events"] == 2 and ola.json("verify")["events"] == 4


def test_verify_names_an_event_altered_in_the_database(pair: tuple[Person, Person], team: Team) -> None:
    import psycopg

    ola, kari = pair
    ola.run("remember", "--private", "Hidden from Kari.")
    kari.run("remember", "Seen by both.")
    with psycopg.connect(team.admin_url, autocommit=True) as root:  # an administrator's hand edit
        root.execute("ALTER TABLE jupymem.events DISABLE TRIGGER USER")
        try:
            root.execute("UPDATE jupymem.events SET at = '2020-01-01T00:00:00.000000Z' WHERE project = %s AND seq = 1",
                         (registry.root_commit(kari.clone),))
        finally:
            root.execute("ALTER TABLE jupymem.events ENABLE TRIGGER USER")
    done = kari.run("--json", "verify", ok=False)
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["ok"] is False
    assert any("event 1" in p and "by the database" in p for p in report["problems"]), report


def test_init_database_remembers_the_url_without_its_password(pair: tuple[Person, Person]) -> None:
    ola, kari = pair
    assert "password=" in ola.url or ":pw-" in ola.url  # the URL given holds one
    plain = {"JUPYMEM_HOME": str(ola.home)}  # no JUPYMEM_DATABASE_URL: the repository's binding decides
    done = ola.run("--json", "init", "--database", ola.url, env=plain)
    assert json.loads(done.stdout)["engine"]["name"] == "postgresql"
    text = (ola.home / registry.REGISTRY_FILE).read_text()
    assert "pw-" not in text and "database" in text
    m = ola.json_with(plain, "remember", "Reports go out on Fridays.")
    assert kari.json("list")[0]["id"] == m["id"]
    assert ola.json_with(plain, "status")["engine"]["name"] == "postgresql"
    assert ola.run("doctor", env=plain).returncode == 0  # no file here is a team project, never "lost"


def test_someone_not_admitted_and_an_unreachable_database_are_one_line(pair: tuple[Person, Person], team: Team) -> None:
    ola, _ = pair
    stranger = Person(team, "nils", ola.clone, ola.home.parent / "nils-home")
    done = stranger.run("search", "anything", ok=False)
    err = done.stderr.decode()
    assert done.returncode != 0 and err.count("\n") == 1 and "not a member" in err, err
    dead = "postgresql://ola@127.0.0.1:9/nowhere?connect_timeout=2"  # nothing listens on port 9
    for args in (("status",), ("search", "churn"), ("remember", "x is y")):
        done = ola.run(*args, ok=False, env=ola.env(JUPYMEM_DATABASE_URL=dead))
        err = done.stderr.decode()
        out = done.stdout.decode()
        said = err or out
        assert "cannot be reached" in said and "Traceback" not in said, (args, said)
        if err:
            assert err.count("\n") == 1, err


def test_a_kernel_keeps_working_when_the_team_database_is_unreachable(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from IPython.core.error import UsageError

    from conftest import shell_in

    monkeypatch.setenv("JUPYMEM_DATABASE_URL", "postgresql://ola@127.0.0.1:9/nowhere?connect_timeout=2")
    for ip in shell_in(repo, monkeypatch):
        assert ip.run_cell("x = 1 + 1").success and ip.user_ns["x"] == 2  # the hooks never break a cell
        failed = ip.run_cell("{}['region']")
        assert isinstance(failed.error_in_exec, KeyError)  # the user's own error, nothing of ours
        capsys.readouterr()
        status = ip.run_cell("%memory status")
        said = capsys.readouterr().out
        assert status.success and "cannot be reached" in said and "Traceback" not in said, said
        search = ip.run_cell("%memory search churn")
        assert isinstance(search.error_in_exec, UsageError) and "cannot be reached" in str(search.error_in_exec)
        assert "\n" not in str(search.error_in_exec).strip()
