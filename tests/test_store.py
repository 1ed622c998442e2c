"""The hash-chained log and its projection: verify, rebuild, temporal changes, gc, export/import."""

from __future__ import annotations

import io
import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import jupymem
from conftest import make_repo
from jupymem.intake import capture
from jupymem.errors import InvalidImport, InvalidTransition
from jupymem.models import Provenance

ASSISTANT = Provenance(recorder="assistant")


@pytest.fixture
def proj(repo: Path):
    return jupymem.init(repo)


def raw(proj) -> sqlite3.Connection:
    """A second, independent connection, as a person with the sqlite3 shell would have."""
    return sqlite3.connect(proj.database, isolation_level=None)


def test_verify_is_ok_after_every_kind_of_change(proj) -> None:
    a = proj.remember("Use customer_id as the join key", kind="decision")
    b = proj.remember("Revenue excludes VAT", kind="constraint", topic="finance")
    proj.supersede(a.id, "Use customer_id as the join key after trimming")
    proj.retire(b.id, reason="VAT is now included upstream")
    c = proj.remember("The weekly job fails on holidays", kind="failure", provenance=ASSISTANT)
    proj.confirm(c.id)
    report = proj.verify()
    assert report.ok, report.problems
    assert report.events == 6 and report.memories == 4


def test_every_event_links_to_the_one_before(proj) -> None:
    for i in range(5):
        proj.remember(f"statement {i} about the orders table")
    with raw(proj) as con:
        rows = con.execute("SELECT prev, hash FROM events ORDER BY seq").fetchall()
    assert rows[0][0] == "0" * 64
    assert all(rows[i][0] == rows[i - 1][1] for i in range(1, len(rows)))


def test_tampered_payload_is_reported(proj) -> None:
    proj.remember("Drop the test accounts before aggregating", kind="procedure")
    proj.remember("Amounts are in cents")
    with raw(proj) as con:
        con.execute("UPDATE events SET payload = replace(payload, 'test accounts', 'real accounts') WHERE seq = 1")
    report = proj.verify()
    assert not report.ok
    assert any("payload of event 1" in p and "altered" in p for p in report.problems)


def test_tampered_header_and_broken_link_are_reported(proj) -> None:
    for i in range(3):
        proj.remember(f"fact number {i} about the events table")
    with raw(proj) as con:
        con.execute("UPDATE events SET at = '2001-01-01T00:00:00.000000Z' WHERE seq = 2")
    assert any("event 2" in p and "fails its hash" in p for p in proj.verify().problems)
    with raw(proj) as con:
        con.execute("DELETE FROM events WHERE seq = 2")
    assert any("event 3" in p and "broken chain" in p for p in proj.verify().problems)


def test_drift_is_reported_and_rebuild_fixes_it(proj) -> None:
    keep = proj.remember("Dates are UTC in every extract", kind="constraint")
    lost = proj.remember("Weekly reports start on Monday", kind="decision")
    proj.retire(keep.id, reason="checked")
    with raw(proj) as con:
        con.execute("DELETE FROM memories WHERE id = ?", (lost.id,))
        con.execute("UPDATE memories SET statement = 'forged' WHERE id = ?", (keep.id,))
    report = proj.verify()
    assert not report.ok and any("memories" in p and "rebuild" in p for p in report.problems)
    assert proj.rebuild() == 3
    assert proj.verify().ok
    assert proj.get(lost.id).statement == "Weekly reports start on Monday"
    assert proj.get(keep.id).statement == "Dates are UTC in every extract"
    assert proj.search("weekly reports monday").hits[0].memory.id == lost.id  # the index follows


def test_supersede_closes_validity_and_keeps_history(proj) -> None:
    old = proj.remember("Train on 12 months of data", kind="decision", topic="training")
    new = proj.supersede(old.id, "Train on 18 months of data")
    old_now = proj.get(old.id)
    assert old_now.status == "superseded" and old_now.superseded_by == new.id
    assert old_now.valid_to == new.valid_from and old_now.valid_from < old_now.valid_to
    assert new.supersedes == old.id and new.kind == "decision" and new.topic == "training"
    assert new.valid_to is None and new.status == "active"
    assert [m.id for m in proj.list()] == [new.id]
    assert "12 months" not in proj.block().text and "18 months" in proj.block().text
    assert old.id not in {h.memory.id for h in proj.search("train on 12 months of data").hits}  # hidden
    assert proj.search("train on 12 months of data", include_inactive=True).hits[0].memory.id == old.id
    assert [h.action for h in proj.history(old.id)] == ["recorded", "superseded"]
    who = str(jupymem.sharing.share.identity(proj.root))  # whoever writes here, as git names them
    assert proj.history(old.id)[1].detail == {"by": new.id, "who": who}
    assert proj.history(new.id)[0].detail == {"recorder": "person", "supersedes": old.id, "who": who}
    with pytest.raises(InvalidTransition):
        proj.supersede(old.id, "Train on 24 months")
    with pytest.raises(InvalidTransition, match="same"):
        proj.supersede(new.id, "train on 18 months of data.")


def test_retire_and_confirm(proj) -> None:
    m = proj.remember("Outliers above 3 sigma are removed", kind="procedure")
    retired = proj.retire(m.id, reason="we winsorize instead")
    assert retired.status == "retired" and retired.retire_reason == "we winsorize instead" and retired.valid_to
    with pytest.raises(InvalidTransition, match="already retired"):
        proj.retire(m.id)
    a = proj.remember("The API paginates at 100 rows", kind="fact", provenance=ASSISTANT)
    assert a.standing == "unconfirmed" and "(unconfirmed)" in proj.block().text
    confirmed = proj.confirm(a.id)
    assert confirmed.standing == "supported" and confirmed.confirmed_at
    assert "(unconfirmed)" not in proj.block().text
    rev = proj.revision()
    assert proj.confirm(a.id).standing == "supported" and proj.revision() == rev  # nothing to do
    assert [h.action for h in proj.history(a.id)] == ["recorded", "confirmed"]


def test_a_person_restating_an_assistant_memory_supports_it(proj) -> None:
    a = proj.remember("Nulls in region mean 'unknown'", kind="fact", provenance=ASSISTANT)
    again = proj.remember("Nulls in region mean 'unknown'", kind="fact")
    assert again.id == a.id and again.standing == "supported"
    assert proj.history(a.id)[-1].action == "confirmed"


@pytest.mark.parametrize(
    "variant",
    [
        "use customer_id as the join key",
        "USE CUSTOMER_ID AS THE JOIN KEY",
        "  Use   customer_id\tas the\njoin key  ",
        "Use customer_id as the join key.",
    ],
)
def test_dedup_by_normalized_text(proj, variant: str) -> None:
    first = proj.remember("Use customer_id as the join key", kind="decision")
    rev = proj.revision()
    again = proj.remember(variant, kind="decision")
    assert again.id == first.id and proj.revision() == rev and len(proj.list()) == 1


def test_dedup_folds_curly_quotes_and_dashes(proj) -> None:
    a = proj.remember("Don't use the \"legacy\" table - it's stale")
    b = proj.remember("Don\u2019t use the \u201clegacy\u201d table \u2013 it\u2019s stale")
    assert a.id == b.id and len(proj.list()) == 1


def test_rerecording_a_retired_statement_reopens_it(proj) -> None:
    m = proj.remember("Cache the raw pulls in data/raw", kind="procedure")
    proj.retire(m.id, reason="moved to S3")
    back = proj.remember("cache the raw pulls in data/raw")
    assert back.id == m.id and back.status == "active" and back.valid_to is None and back.retire_reason is None
    assert [h.action for h in proj.history(m.id)] == ["recorded", "retired", "reopened"]
    assert proj.verify().ok


def test_gc_follows_retention_and_never_drops_protected_memories(proj) -> None:
    note = proj.remember("Tried a 5-fold split once", kind="note")
    proj.retire(note.id, reason="irrelevant now")
    decision = proj.remember("Use the median, not the mean, for basket size", kind="decision")
    proj.retire(decision.id, reason="revisited")
    constraint = proj.remember("Never join on email", kind="constraint")
    proj.supersede(constraint.id, "Never join on email or phone")
    guess = proj.remember("The spike in March is a data error", kind="fact", provenance=ASSISTANT)
    guessed_decision = proj.remember("Use log revenue", kind="decision", provenance=ASSISTANT)
    kept = proj.remember("Sessions time out after 30 minutes", kind="fact")
    old_failure = capture.evidence_from_exception(ValueError("bad"), session="s")
    proj.stage_failure(old_failure)
    proj.conn.execute("UPDATE staged_evidence SET created_at = '2000-01-01T00:00:00Z'")
    now = datetime.now(timezone.utc)

    dry = proj.gc(dry_run=True, now=now + timedelta(days=100))
    assert dry.forgotten == (note.id,) and dry.dry_run and dry.evidence_dropped == 1
    assert proj.get(note.id) and proj.staged_evidence()  # nothing dropped
    report = proj.gc(now=now + timedelta(days=100))
    assert report.forgotten == (note.id,) and report.purged_events == 2 and report.evidence_dropped == 1
    assert proj.staged_evidence() == []
    with pytest.raises(jupymem.errors.UnknownMemory):
        proj.get(note.id)
    assert proj.get(decision.id).status == "retired"  # supported decision: never
    assert proj.get(constraint.id).status == "superseded"  # supported constraint: never
    assert proj.verify().ok

    later = proj.gc(now=now + timedelta(days=200))
    assert set(later.forgotten) == {guess.id, guessed_decision.id}  # unconfirmed: past 180 days
    assert proj.get(kept.id).status == "active" and proj.get(decision.id)
    report = proj.verify()
    assert report.ok, report.problems
    with raw(proj) as con:
        purged = con.execute("SELECT count(*) FROM events WHERE payload IS NULL").fetchone()[0]
    assert purged == 2 + 2
    assert proj.rebuild() and proj.verify().ok and proj.get(kept.id)


def _export(proj) -> str:
    buf = io.StringIO()
    proj.export(buf)
    return buf.getvalue()


def test_export_import_round_trip_without_duplicates(proj, tmp_path: Path) -> None:
    a = proj.remember("Join on customer_id", kind="decision")
    proj.remember("Revenue is net of refunds", kind="constraint", topic="finance")
    proj.supersede(a.id, "Join on customer_id, trimmed")
    proj.retire(proj.remember("A passing note").id, reason="done")
    text = _export(proj)
    header = json.loads(text.splitlines()[0])
    assert header["jupymem_export"] == 1 and header["events"] == 5
    other = jupymem.init(make_repo(tmp_path / "other"))
    report = other.import_(io.StringIO(text), other_project=True)  # another repository: merged on purpose
    assert (report.events, report.added, report.skipped) == (5, 5, 0)
    strip = lambda ms: sorted((m.id, m.kind, m.statement, m.status, m.topic, m.standing) for m in ms)  # noqa: E731
    assert strip(other.list(include_inactive=True)) == strip(proj.list(include_inactive=True))
    assert other.verify().ok
    rev = other.revision()
    assert other.import_(io.StringIO(text), other_project=True).added == 0 and other.revision() == rev
    assert proj.import_(io.StringIO(text)).added == 0
    # The other side changes, exports, and the first imports only what is new.
    other.remember("Refunds arrive with a 2-day lag", kind="fact")
    back = proj.import_(io.StringIO(_export(other)), other_project=True)
    assert back.added == 1 and proj.verify().ok
    assert "Refunds arrive with a 2-day lag" in {m.statement for m in proj.list()}


def test_import_of_a_tampered_or_truncated_file_imports_nothing(proj, tmp_path: Path) -> None:
    proj.remember("Holdout is the last 8 weeks", kind="decision")
    proj.remember("Features are standardized per store", kind="procedure")
    text = _export(proj)
    other = jupymem.init(make_repo(tmp_path / "other"))
    tampered = text.replace("last 8 weeks", "last 2 weeks")
    with pytest.raises(InvalidImport, match="altered.*Nothing was imported"):
        other.import_(io.StringIO(tampered))
    lines = text.splitlines(keepends=True)
    with pytest.raises(InvalidImport, match="broken chain"):
        other.import_(io.StringIO(lines[0] + lines[2]))
    forged = json.loads(lines[1])
    forged["payload"]["memory"]["statement"] = "token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'"
    from jupymem.storage import eventlog

    forged["payload_hash"] = eventlog.sha256(eventlog.canonical(forged["payload"]))
    forged["hash"] = eventlog.event_hash(
        forged["uid"], forged["type"], forged["at"], forged["payload_hash"], forged["prev"]
    )
    with pytest.raises(InvalidImport, match="GitHub token"):  # a re-hashed file still passes the secret check
        other.import_(io.StringIO(lines[0] + json.dumps(forged) + "\n"))
    assert other.revision() == 0 and other.list() == []
