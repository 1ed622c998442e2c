"""A person's working set on the team engine: staged failures, ``%%ask`` conversations,
and who the author is, against a real PostgreSQL (``pg_server``), as two roles.

Who reads what (schema migration 7): a staged failure is its author's alone, like a
private memory, until a memory cites it; the cited copy is then as visible as that
memory. A person's ``%%ask`` messages and summaries are theirs, per notebook. Each rule
is checked from the other person's connection, where the database itself must refuse.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

import pg_server
from conftest import loaded_shell
from jupymem.assistants.assistant import ask_turn, conversation_for
from jupymem.assistants.conversation import COMPACT_ABOVE, KEEP_AFTER_COMPACTION
from jupymem.config import Settings
from jupymem.core.opening import init_project
from jupymem.errors import UnknownEvidence
from jupymem.faces import kernel
from jupymem.intake.capture import evidence_from_exception
from jupymem.models import Evidence
from jupymem.storage import registry
from pg_server import Team
from test_pg_faces import Person


pytestmark = pytest.mark.postgres

MODEL = "openai/fake"


@pytest.fixture
def pair(tmp_path: Path, team: Team) -> tuple[Person, Person]:
    return pg_server.admitted_pair(tmp_path, team, Person)


def open_as(person: Person, **more: Any) -> Any:
    """``person``'s project in this process, through their own role."""
    settings = Settings.from_env().with_(home=person.home, database_url=person.url, **more)
    return init_project(person.clone, settings)


def failure(session: str = "s1", column: str = "region") -> Evidence:
    try:
        {"region_id": 1}[column]
    except KeyError as exc:
        ev = evidence_from_exception(exc, session=session, source=f"sales[{column!r}]", execution_count=3)
        assert ev is not None
        return ev
    raise AssertionError("unreachable")


def staged_rows(admin_url: str, project: str) -> list[tuple[str, str, str]]:
    """(handle, author_role, data) of every staged failure of ``project``, as the administrator sees them."""
    with psycopg.connect(admin_url, autocommit=True) as root:
        return root.execute(
            "SELECT handle, author_role, data FROM jupymem.staged_evidence WHERE project = %s ORDER BY handle",
            (project,),
        ).fetchall()


def backend_state(admin_url: str, pid: int) -> tuple[Any, ...]:
    """What the server says a backend last did: its last statement and when its state changed."""
    with psycopg.connect(admin_url, autocommit=True) as root:
        return root.execute(
            "SELECT query, state_change, xact_start FROM pg_stat_activity WHERE pid = %s", (pid,)
        ).fetchone()


# -- staged failures ------------------------------------------------------------------------


def test_a_kernel_stages_failures_in_the_team_database_and_a_success_asks_nothing(
    pair: tuple[Person, Person], team: Team, monkeypatch: pytest.MonkeyPatch,
) -> None:
    ola, kari = pair
    ola.run("init")
    monkeypatch.setenv("JUPYMEM_HOME", str(ola.home))
    monkeypatch.setenv("JUPYMEM_DATABASE_URL", ola.url)
    monkeypatch.setenv("JUPYMEM_QUIET", "1")
    monkeypatch.chdir(ola.clone)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    key = registry.root_commit(ola.clone)
    with loaded_shell() as ip:
        token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
        failed = ip.run_cell(f"token = {token!r}\nraise ValueError('login with ' + token + ' refused')")
        assert isinstance(failed.error_in_exec, ValueError)
        first = kernel.session_evidence(ip)[0]
        rows = staged_rows(team.admin_url, key)
        assert [(h, role) for h, role, _ in rows] == [(first.handle, ola.role)]
        assert token not in rows[0][2] and "ValueError" in rows[0][2]  # redacted at intake, as on SQLite

        # A successful cell asks the database nothing: the kernel's connection stays as it was,
        # whether or not a failure waits for its fix (one does now).
        proj = kernel.state(ip).project()
        assert proj.team
        pid = proj.conn.raw.info.backend_pid
        before = backend_state(team.admin_url, pid)
        for i in range(20):
            assert ip.run_cell(f"unrelated_{i} = {i} * 2").success
        assert backend_state(team.admin_url, pid) == before

        ip.run_cell("sales = {'region_id': 1}")
        assert isinstance(ip.run_cell("sales['region']").error_in_exec, KeyError)
        ip.run_cell("%memory evidence")
        second = kernel.session_evidence(ip)[0]
        assert ip.run_cell(f"%%remember --kind correction --evidence {second.handle}\n"
                           "Sales are keyed by region_id, not region.").success

    # The command line: each person lists their own staged failures, never a teammate's.
    listed = [e["handle"] for e in ola.json("evidence")]
    assert set(listed) == {first.handle, second.handle}
    assert kari.json("evidence") == [] and "No staged failures." in kari.run("evidence").stdout.decode()

    # Kept as a shared lesson, the failure it cites is the team's, with the lesson.
    lesson = kari.json("list")[0]
    assert [e["handle"] for e in lesson["evidence"]] == [second.handle]
    shown = kari.run("show", lesson["id"]).stdout.decode()
    assert second.handle in shown and "KeyError" in shown
    assert ola.json("status")["staged"] == 2 and kari.json("status")["staged"] == 0


def test_a_staged_failure_is_its_authors_until_a_memory_cites_it(pair: tuple[Person, Person], team: Team) -> None:
    ola, kari = pair
    mine, hers = open_as(ola), open_as(kari)
    ev, other, hidden = failure("ola-1"), failure("ola-1", "area"), failure("ola-1", "zone")
    mine.stage_failure(ev, other, hidden)
    kari_ev = failure("kari-1", "customer")
    hers.stage_failure(kari_ev)

    assert {e.handle for e in mine.staged_evidence()} == {ev.handle, other.handle, hidden.handle}
    assert [e.handle for e in hers.staged_evidence()] == [kari_ev.handle]
    with pytest.raises(UnknownEvidence):
        hers.evidence(ev.handle)  # not hers to read, nor to cite
    with pytest.raises(UnknownEvidence):
        hers.remember("Sales are keyed by region_id.", evidence=[ev.handle])
    # Her connection can neither change nor drop his rows: the database shows her none.
    assert hers.conn.execute("UPDATE staged_evidence SET data = '{}' WHERE handle = ?", (ev.handle,)).fetchall() == []
    hers.conn.execute("DELETE FROM staged_evidence WHERE handle <> ''")
    assert {h for h, _, _ in staged_rows(team.admin_url, mine.id)} == {ev.handle, other.handle, hidden.handle}
    # Nor write a row in his name.
    with pytest.raises(Exception, match="row-level security|refused"):
        hers.conn.execute(
            "INSERT INTO staged_evidence (handle, session, created_at, data, author_role) VALUES (?, ?, ?, ?, ?)",
            ("ev-ffffffff", "x", ev.created_at, "{}", ola.role),
        )

    shared = mine.remember("Sales are keyed by region_id, not region.", kind="correction", evidence=[ev.handle])
    private = mine.remember("My area checks are in tmp_ola.", evidence=[other.handle], private=True)
    assert hers.evidence(ev.handle).ename == "KeyError"  # the cited copy, with the shared lesson
    assert hers.kept_as([ev.handle, other.handle, hidden.handle]) == {ev.handle: shared.id}
    with pytest.raises(UnknownEvidence):
        hers.evidence(other.handle)  # cited by a private memory: as private as it
    with pytest.raises(UnknownEvidence):
        hers.evidence(hidden.handle)
    assert [e.handle for e in hers.get(shared.id).evidence] == [ev.handle]
    assert mine.kept_as([ev.handle, other.handle]) == {ev.handle: shared.id, other.handle: private.id}
    # She may cite what the team can see: a second lesson from the same failure.
    again = hers.remember("Region columns are ids everywhere in the mart.", evidence=[ev.handle])
    assert [e.handle for e in again.evidence] == [ev.handle]
    assert hers.verify().ok and mine.verify().ok


def test_the_window_and_a_fix_replace_only_ones_own(pair: tuple[Person, Person], team: Team) -> None:
    import dataclasses

    ola, kari = pair
    mine, hers = open_as(ola), open_as(kari)
    evs = [failure("same-session", f"c{i}") for i in range(70)]
    mine.stage_failure(*evs[:3])
    hers.stage_failure(*evs[3:])  # the same session name, her own window
    assert len(hers.staged_evidence()) == 64 and len(mine.staged_evidence()) == 3
    fixed = dataclasses.replace(evs[0], suggestion="Sales are keyed by region_id.", suggested_by="pair")
    mine.stage_failure(fixed)
    assert mine.evidence(evs[0].handle).suggestion == "Sales are keyed by region_id."
    assert len(staged_rows(team.admin_url, mine.id)) == 67
    revision = mine.staged_revision()
    hers.stage_failure(failure("another"))
    assert mine.staged_revision() == revision + 1  # a front end watching it refreshes; it sees only its own rows


def test_staging_never_waits_behind_a_teammates_write(pair: tuple[Person, Person]) -> None:
    import threading

    from jupymem.storage import database

    ola, kari = pair
    mine, hers = open_as(ola), open_as(kari)
    ev = failure("ola-s")
    staged = threading.Event()
    with database.transaction(hers.conn):  # her long write holds the project's write lock
        worker = threading.Thread(target=lambda: (mine.stage_failure(ev), staged.set()), daemon=True)
        worker.start()
        worker.join(120)
        assert staged.is_set(), "a failed cell waited for a teammate's transaction"
    assert [e.handle for e in mine.staged_evidence()] == [ev.handle]


# -- %%ask conversations -------------------------------------------------------------------


def turn(proj_settings: Settings, clone: Path, prompt: str, answer: str = "An answer.") -> Any:
    done = ask_turn(prompt, model=MODEL, path=clone, settings=proj_settings, mock_response=answer)
    if done.compaction is not None:
        done.compaction.join(60)
    return done


def test_ask_keeps_each_persons_conversation_in_the_team_database(pair: tuple[Person, Person], team: Team) -> None:
    ola, kari = pair
    mine, hers = open_as(ola), open_as(kari)
    nb_ola, nb_kari = ola.clone / "churn.ipynb", kari.clone / "churn.ipynb"  # the same notebook, two clones
    nb_ola.write_text("{}")
    nb_kari.write_text("{}")
    s_ola, s_kari = mine.settings, hers.settings

    turn(s_ola, nb_ola, "The churn table lives in warehouse.analytics.churn_monthly", "Noted.")
    for i in range(5):
        turn(s_ola, nb_ola, f"filler question {i}", f"filler answer {i}")
    third = turn(s_ola, nb_ola, "where is the churn table again?")
    system = third.messages[0]["content"]
    assert "Earlier messages that match this request:\n[user] The churn table lives" in system

    turn(s_kari, nb_kari, "Is the churn table monthly?", "Yes.")
    ola_conv, kari_conv = conversation_for(mine, nb_ola), conversation_for(hers, nb_kari)
    assert ola_conv.notebook == kari_conv.notebook == "churn.ipynb"
    assert kari_conv.count() == 2 and ola_conv.count() == 14
    assert "warehouse.analytics" not in turn(s_kari, nb_kari, "where is the churn table?").messages[0]["content"]

    # Folding past 25 messages keeps the 5 newest and a summary, each person's own.
    for i in range(5):
        turn(s_ola, nb_ola, f"more {i}", f"reply {i}")
    assert ola_conv.count() == COMPACT_ABOVE - 1 and ola_conv.summary() is None
    turn(s_ola, nb_ola, "one more", "## Objective\nOla's summary")
    assert ola_conv.count() == KEEP_AFTER_COMPACTION and ola_conv.summary() == "## Objective\nOla's summary"
    assert kari_conv.summary() is None and kari_conv.count() == 4
    for i in range(11):
        turn(s_kari, nb_kari, f"kari {i}", "## Objective\nKari's summary" if i == 10 else f"ok {i}")
    assert kari_conv.summary() == "## Objective\nKari's summary" and ola_conv.summary() == "## Objective\nOla's summary"

    # Clearing hers leaves his; and the database shows neither to the other.
    kari_conv.clear()
    assert kari_conv.count() == 0 and ola_conv.count() == KEEP_AFTER_COMPACTION
    assert hers.conn.execute("SELECT count(*) FROM conversation_summary").fetchone()[0] == 0
    with psycopg.connect(team.admin_url, autocommit=True) as root:
        roles = root.execute("SELECT DISTINCT author_role FROM jupymem.conversation WHERE project = %s",
                             (mine.id,)).fetchall()
    assert roles == [(ola.role,)]
    assert "churn_monthly" not in json.dumps(hers.conn.execute("SELECT content FROM conversation").fetchall())


# -- the author ----------------------------------------------------------------------------


def test_who_did_it_is_the_databases_word_not_the_processs(pair: tuple[Person, Person], team: Team) -> None:
    """The writer of an event is the connecting role, with the label the administrator bound
    to it (``guard.event_author``): a process that sets JUPYTERHUB_USER (or git's identity)
    to someone else's name names no one but its own role."""
    from jupymem.storage.postgres import admin

    ola, kari = pair
    admin.set_label(team.admin_url, ola.role, "Ola Nordmann <ola@example.com>")
    as_ola = f"{ola.role} (Ola Nordmann <ola@example.com>)"
    forged = kari.env(JUPYTERHUB_USER="Ola Nordmann <ola@example.com>")  # Kari's process, claiming to be Ola
    m = kari.json_with(forged, "remember", "The churn model retrains on Mondays.")
    assert kari.json("show", m["id"])["provenance"]["author"] == kari.role
    assert ola.json("history", m["id"])[0]["detail"]["who"] == kari.role
    # Ola's own events carry his label, whatever his process says.
    ola.run("retire", m["id"], env=ola.env(JUPYTERHUB_USER="kari.hansen"))
    assert kari.json("history", m["id"])[-1]["detail"]["who"] == as_ola
    n = ola.json("remember", "Mondays means 06:00 Oslo time.")
    assert kari.json("show", n["id"])["provenance"]["author"] == as_ola


# -- gc ------------------------------------------------------------------------------------


def test_a_members_gc_forgets_only_what_is_their_own(pair: tuple[Person, Person], team: Team) -> None:
    from datetime import timedelta

    from jupymem.intake import clock
    from jupymem.models import Provenance

    ola, kari = pair
    mine, hers = open_as(ola), open_as(kari)
    old_private = mine.remember("My scratch schema was tmp_ola_2025.", private=True)
    mine.retire(old_private.id, "dropped")
    kept_private = mine.remember("My scratch schema is tmp_ola.", private=True)  # active, supported: kept
    guess = mine.remember("The mart may be rebuilt nightly.", provenance=Provenance(recorder="assistant"))
    assert guess.standing == "unconfirmed" and not guess.private
    hers_old = hers.remember("My scratch schema was tmp_kari_2025.", private=True)
    hers.retire(hers_old.id, "dropped")
    mine.stage_failure(failure("ola-s"))
    hers.stage_failure(failure("kari-s"))
    later = clock.now() + timedelta(days=400)

    dry = mine.gc(dry_run=True, now=later)
    assert dry.forgotten == (old_private.id,) and dry.evidence_dropped == 1 and dry.kept_for_team == 1
    assert mine.get(old_private.id).status == "retired"  # a dry run changes nothing

    report = mine.gc(now=later)
    assert report.forgotten == (old_private.id,) and report.purged_events == 2 and report.kept_for_team == 1
    assert {m.id for m in mine.list(include_inactive=True)} == {kept_private.id, guess.id}
    assert mine.staged_evidence() == [] and len(hers.staged_evidence()) == 1
    # Hers and the team's are as they were, as the database holds them.
    assert hers.get(hers_old.id).status == "retired" and hers.get(guess.id).id == guess.id
    with psycopg.connect(team.admin_url, autocommit=True) as root:
        purged = root.execute(
            "SELECT author_role, count(*) FROM jupymem.events WHERE project = %s AND payload IS NULL GROUP BY 1",
            (mine.id,),
        ).fetchall()
        gc_events = root.execute(
            "SELECT scope, author_role FROM jupymem.events WHERE project = %s AND type = 'gc'", (mine.id,),
        ).fetchall()
    assert purged == [(ola.role, 2)] and gc_events == [("private", ola.role)]
    assert all(h.memory.id != old_private.id for h in mine.search("scratch schema tmp_ola_2025").hits)
    assert mine.verify().ok and hers.verify().ok

    # Hers, by her own gc; the shared guess stays for the team whoever runs it.
    assert hers.gc(now=later).forgotten == (hers_old.id,)
    assert hers.verify().ok and mine.verify().ok
    said = ola.run("gc").stdout.decode()
    assert "forgot 0 memories" in said


def test_the_administrator_drops_every_members_old_staged_failures(
    pair: tuple[Person, Person], team: Team, tmp_path: Path
) -> None:
    import dataclasses

    from cli_run import jm
    from conftest import make_repo
    from jupymem.storage.postgres import admin

    ola, kari = pair
    mine, hers = open_as(ola), open_as(kari)
    long_ago = "2020-01-01T00:00:00.000000Z"
    old_his, old_hers = (dataclasses.replace(failure(s), created_at=long_ago) for s in ("ola-s", "kari-s"))
    fresh = failure("ola-s", "area")
    mine.stage_failure(old_his, fresh)
    hers.stage_failure(old_hers)
    lesson = mine.remember("Sales are keyed by region_id, not region.", evidence=[old_his.handle])
    elsewhere = make_repo(tmp_path / "elsewhere")  # another project in the same database keeps its own
    other_key = registry.root_commit(elsewhere)
    assert other_key
    admin.add_member(team.admin_url, other_key, ola.role)
    other = init_project(elsewhere, mine.settings)
    other.stage_failure(dataclasses.replace(failure("ola-s", "zone"), created_at=long_ago))

    refused = ola.run("team", "gc", "--database", ola.url, ok=False)  # a member is not the administrator
    assert refused.returncode != 0 and b"administrator's" in refused.stderr and refused.stderr.count(b"\n") == 1
    assert len(staged_rows(team.admin_url, mine.id)) == 3

    done = jm("team", "gc", "--database", team.admin_url, cwd=ola.clone, env={"JUPYMEM_HOME": str(ola.home)})
    assert done.returncode == 0, done.stderr.decode()
    assert "Dropped 2 staged failures" in done.stdout.decode()
    assert [h for h, _, _ in staged_rows(team.admin_url, mine.id)] == [fresh.handle]
    assert len(staged_rows(team.admin_url, other.id)) == 1
    assert hers.evidence(old_his.handle).handle == old_his.handle  # the cited copy stays with its lesson
    assert [e.handle for e in hers.get(lesson.id).evidence] == [old_his.handle]
    assert mine.verify().ok and hers.verify().ok
