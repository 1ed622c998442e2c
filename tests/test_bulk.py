"""Bulk writes: ``remember_many`` and ``import_`` write through ``projection.Batch``.

A batch writes the first record of each new memory with one ``executemany`` per
table and sends everything else through ``apply``. What it writes must be what
applying the events one at a time writes, row for row and rowid for rowid; these
tests compare the live tables with a rebuild (a one-at-a-time replay) on batches
that mix new memories, repeats, restatements, evidence and other events.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import jupymem
from conftest import make_repo
from jupymem.storage import eventlog
from jupymem.intake.capture import memory_id
from jupymem.errors import SecretRefused
from jupymem.models import Evidence, Provenance

ASSISTANT = Provenance(recorder="assistant")


def _evidence(handle: str) -> Evidence:
    return Evidence(
        handle=handle, session="s1", ename="KeyError", evalue="'customer_id'", diagnosis=("KeyError: 'customer_id'",),
        excerpt="df['customer_id']", created_at="2026-01-01T00:00:00.000000Z",
    )


def _tables(proj) -> dict[str, list[tuple]]:
    """Every derived row with its rowid, and the search index's own content.

    Read through the project's own connection: a second SQLite library in the
    same process (stdlib sqlite3 next to sqlean) can read a stale snapshot."""
    q = proj.conn.execute
    return {
        "memories": q("SELECT rid, * FROM memories ORDER BY rid").fetchall(),
        "history": q("SELECT rowid, * FROM history ORDER BY rowid").fetchall(),
        "cited_evidence": q("SELECT rowid, * FROM cited_evidence ORDER BY rowid").fetchall(),
        "fts": q("SELECT rowid, statement, topic, original FROM memories_fts ORDER BY rowid").fetchall(),
        "terms": q("SELECT term, doc, cnt FROM memories_vocab ORDER BY term").fetchall(),
    }


def _same_as_replay(proj) -> None:
    before = _tables(proj)
    report = proj.verify()
    assert report.ok, report.problems
    proj.rebuild()  # clears the tables and applies every event one at a time
    assert _tables(proj) == before


@pytest.fixture
def proj(repo: Path):
    return jupymem.init(repo)


def _mixed_items() -> list[dict]:
    return [
        {"statement": "Use customer_id as the join key", "kind": "decision"},
        {"statement": "Revenue excludes VAT", "kind": "constraint", "topic": "finance"},
        {"statement": "use customer_id as the join key.", "kind": "decision"},  # same memory, adds nothing
        {"statement": "The weekly job fails on holidays", "kind": "failure", "provenance": ASSISTANT},
        {"statement": "The weekly job fails on holidays", "kind": "failure"},  # a person confirms it
        {"statement": "Never impute tenure_days", "evidence": [_evidence("ev-0000000a")]},
        {"statement": "Never impute tenure_days", "evidence": [_evidence("ev-0000000b")]},  # new evidence
        {"statement": "Cast amount to cents before summing", "evidence": [_evidence("ev-0000000a")]},
        *({"statement": f"statement {i} about the orders table", "kind": "fact"} for i in range(30)),
    ]


def test_remember_many_writes_what_one_at_a_time_writes(proj) -> None:
    proj.remember("Revenue excludes VAT", kind="constraint")  # already there before the batch
    retired = proj.remember("Amounts are in euros")
    proj.retire(retired.id)
    items = _mixed_items() + [{"statement": "Amounts are in euros"}]  # reopens a retired memory
    before = proj.revision()
    got = proj.remember_many(items)
    assert proj.revision() - before == 37  # every item that changes something, and only those
    ids = list(dict.fromkeys(m.id for m in got))
    assert len(got) == len(ids) == 36
    assert got[0].statement == "Use customer_id as the join key"
    assert next(m for m in got if m.statement.startswith("The weekly")).standing == "supported"
    tenure = next(m for m in got if m.statement.startswith("Never impute"))
    assert [e.handle for e in tenure.evidence] == ["ev-0000000a", "ev-0000000b"]
    assert proj.get(retired.id).status == "active"
    assert [m.id for m in got] == [proj.get(i).id for i in ids]
    _same_as_replay(proj)


def test_remember_many_returns_each_memory_once_in_first_mention_order(proj) -> None:
    got = proj.remember_many([{"statement": "b first"}, {"statement": "a second"}, {"statement": "B first."}])
    assert [m.statement for m in got] == ["b first", "a second"]


def test_remember_many_records_nothing_when_one_item_is_refused(proj) -> None:
    before = proj.revision()
    with pytest.raises(SecretRefused):
        proj.remember_many([{"statement": "fine statement"}, {"statement": "password = 'hunter22'"}])
    assert proj.revision() == before and proj.list() == []


def test_import_writes_what_one_at_a_time_writes(proj, tmp_path: Path) -> None:
    source = jupymem.init(make_repo(tmp_path / "source"))
    source.remember_many(_mixed_items())
    old = source.remember("Dates are local time")
    source.supersede(old.id, "Dates are UTC", provenance=ASSISTANT)
    source.remember("Dates are UTC")  # a person confirms what the supersede introduced
    source.retire(source.remember("Drop the test accounts").id, reason="they were removed upstream")
    buf = io.StringIO()
    source.export(buf)
    proj.remember("Revenue excludes VAT", kind="constraint")  # the target already knows one of them
    report = proj.import_(io.StringIO(buf.getvalue()), other_project=True)
    assert report.added + report.skipped == report.events
    assert {m.id for m in proj.list()} == {m.id for m in source.list()}
    _same_as_replay(proj)
    again = proj.import_(io.StringIO(buf.getvalue()), other_project=True)
    assert again.added == 0 and again.skipped == again.events


def test_import_skips_a_uid_repeated_inside_the_file(proj, tmp_path: Path) -> None:
    source = jupymem.init(make_repo(tmp_path / "source"))
    kept = source.remember("Use customer_id as the join key")
    buf = io.StringIO()
    source.export(buf)
    header, line = buf.getvalue().splitlines()
    first = json.loads(line)
    # A second event, properly chained, that reuses the first one's uid: the log keeps the first.
    # (with an id derived from its words: import refuses one that is not)
    payload = {"memory": {**first["payload"]["memory"], "id": memory_id("Another one"), "statement": "Another one"}}
    payload_hash = eventlog.sha256(eventlog.canonical(payload))
    second = {
        **first, "seq": 2, "payload": payload, "payload_hash": payload_hash, "prev": first["hash"],
        "hash": eventlog.event_hash(first["uid"], "record", first["at"], payload_hash, first["hash"]),
    }
    report = proj.import_(io.StringIO("\n".join([header, line, json.dumps(second)]) + "\n"), other_project=True)
    assert (report.added, report.skipped) == (1, 1)
    assert [m.id for m in proj.list()] == [kept.id]
    _same_as_replay(proj)


def test_many_new_memories_in_one_call_are_searchable_and_verify(proj) -> None:
    items = [{"statement": f"column c{i} of table t{i % 7} is nullable", "kind": "fact"} for i in range(1200)]
    got = proj.remember_many(items)
    assert len(got) == 1200
    hit = proj.search("c1111 nullable", mode="lexical")
    assert hit.status == "ok" and hit.hits[0].memory.statement == "column c1111 of table t5 is nullable"
    _same_as_replay(proj)
