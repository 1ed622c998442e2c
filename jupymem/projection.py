"""Events -> the tables that answer questions.

``apply`` is the only code that writes ``memories``, ``history`` and
``cited_evidence``; it runs live (in the transaction that appends the event)
and in ``replay`` (rebuild and verify), so both paths agree by construction.
It must stay deterministic: it reads nothing but the event and the tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from .models import ACTIVE, RETIRED, SUPERSEDED, SUPPORTED, UNCONFIRMED, Evidence, HistoryEntry, Memory, Provenance
from .store import DERIVED_TABLES, Connection, Event

MEMORY_COLUMNS = (
    "id, kind, topic, statement, original, standing, status, recorder, notebook, cell_id, "
    "execution_count, session, quote, evidence, created_at, valid_from, valid_to, supersedes, "
    "superseded_by, retire_reason, confirmed_at"
)


def _history(conn: Connection, memory_id: str, ev: Event, action: str, **detail: Any) -> None:
    detail = {k: v for k, v in detail.items() if v is not None}
    conn.execute(
        "INSERT INTO history (memory_id, seq, at, action, detail) VALUES (?, ?, ?, ?, ?)",
        (memory_id, ev.seq, ev.at, action, json.dumps(detail, sort_keys=True, ensure_ascii=False)),
    )


def _cite(conn: Connection, memory_id: str, evidence: Iterable[dict[str, Any]]) -> None:
    for e in evidence:
        conn.execute(
            "INSERT OR IGNORE INTO cited_evidence (handle, memory_id, data) VALUES (?, ?, ?)",
            (e["handle"], memory_id, json.dumps(e, sort_keys=True, ensure_ascii=False)),
        )


def _upsert(conn: Connection, ev: Event, m: dict[str, Any], supersedes: str | None = None) -> None:
    prov = m.get("provenance") or {}
    evidence = m.get("evidence") or []
    row = conn.execute("SELECT status, standing, evidence FROM memories WHERE id = ?", (m["id"],)).fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO memories (id, kind, topic, statement, original, standing, status, recorder, notebook,"
            " cell_id, execution_count, session, quote, evidence, created_at, valid_from, supersedes, seq)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                m["id"], m["kind"], m.get("topic"), m["statement"], m.get("original"), m["standing"], ACTIVE,
                prov.get("recorder", "person"), prov.get("notebook"), prov.get("cell_id"),
                prov.get("execution_count"), prov.get("session"), prov.get("quote"),
                json.dumps(evidence, sort_keys=True, ensure_ascii=False), ev.at, ev.at, supersedes, ev.seq,
            ),
        )
        _history(conn, m["id"], ev, "recorded", recorder=prov.get("recorder", "person"), supersedes=supersedes)
        _cite(conn, m["id"], evidence)
        return
    status, standing, old_evidence = row
    merged = json.loads(old_evidence)
    known = {e["handle"] for e in merged}
    merged += [e for e in evidence if e["handle"] not in known]
    new_standing = SUPPORTED if SUPPORTED in (standing, m["standing"]) else UNCONFIRMED
    if status != ACTIVE:
        # Saying a retired or superseded statement again brings it back.
        conn.execute(
            "UPDATE memories SET status = ?, valid_from = ?, valid_to = NULL, superseded_by = NULL,"
            " retire_reason = NULL, standing = ?, kind = ?, topic = coalesce(?, topic), evidence = ?,"
            " supersedes = coalesce(?, supersedes), seq = ? WHERE id = ?",
            (ACTIVE, ev.at, new_standing, m["kind"], m.get("topic"),
             json.dumps(merged, sort_keys=True, ensure_ascii=False), supersedes, ev.seq, m["id"]),
        )
        _history(conn, m["id"], ev, "reopened", supersedes=supersedes)
    else:
        conn.execute(
            "UPDATE memories SET standing = ?, evidence = ?, seq = ? WHERE id = ?",
            (new_standing, json.dumps(merged, sort_keys=True, ensure_ascii=False), ev.seq, m["id"]),
        )
        if new_standing != standing:
            conn.execute("UPDATE memories SET confirmed_at = ? WHERE id = ?", (ev.at, m["id"]))
            _history(conn, m["id"], ev, "confirmed", by="restated by a person")
    _cite(conn, m["id"], evidence)


def adds_nothing(conn: Connection, m: dict[str, Any]) -> bool:
    """True when recording ``m`` again would change nothing: it is active, no more
    supported than before, and cites no new evidence. Such records are not logged."""
    row = conn.execute("SELECT status, standing, evidence FROM memories WHERE id = ?", (m["id"],)).fetchone()
    if row is None or row[0] != ACTIVE:
        return False
    if row[1] == UNCONFIRMED and m.get("standing") == SUPPORTED:
        return False
    known = {e["handle"] for e in json.loads(row[2])}
    return all(e["handle"] in known for e in m.get("evidence", ()))


def _record(conn: Connection, ev: Event, p: dict[str, Any]) -> None:
    _upsert(conn, ev, p["memory"])


def _supersede(conn: Connection, ev: Event, p: dict[str, Any]) -> None:
    old, new = p["old"], p["memory"]["id"]
    _upsert(conn, ev, p["memory"], supersedes=old)
    conn.execute(
        "UPDATE memories SET status = ?, valid_to = ?, superseded_by = ?, seq = ? WHERE id = ? AND status = ?",
        (SUPERSEDED, ev.at, new, ev.seq, old, ACTIVE),
    )
    _history(conn, old, ev, "superseded", by=new)


def _retire(conn: Connection, ev: Event, p: dict[str, Any]) -> None:
    conn.execute(
        "UPDATE memories SET status = ?, valid_to = ?, retire_reason = ?, seq = ? WHERE id = ? AND status = ?",
        (RETIRED, ev.at, p.get("reason"), ev.seq, p["id"], ACTIVE),
    )
    _history(conn, p["id"], ev, "retired", reason=p.get("reason"))


def _confirm(conn: Connection, ev: Event, p: dict[str, Any]) -> None:
    conn.execute(
        "UPDATE memories SET standing = ?, confirmed_at = ?, seq = ? WHERE id = ?",
        (SUPPORTED, ev.at, ev.seq, p["id"]),
    )
    _history(conn, p["id"], ev, "confirmed", by=p.get("by"))


def _gc(conn: Connection, ev: Event, p: dict[str, Any]) -> None:
    for memory_id in p.get("forgotten", ()):
        conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
        conn.execute("DELETE FROM history WHERE memory_id = ?", (memory_id,))
        conn.execute("DELETE FROM cited_evidence WHERE memory_id = ?", (memory_id,))


_HANDLERS: dict[str, Callable[[Connection, Event, dict[str, Any]], None]] = {
    "record": _record,
    "supersede": _supersede,
    "retire": _retire,
    "confirm": _confirm,
    "gc": _gc,
}
EVENT_TYPES = frozenset(_HANDLERS)


def apply(conn: Connection, ev: Event) -> None:
    if ev.payload is None:  # purged by gc: nothing left to project
        return
    _HANDLERS[ev.type](conn, ev, ev.payload)


def clear(conn: Connection) -> None:
    for table in DERIVED_TABLES:
        conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names


def snapshot(conn: Connection) -> dict[str, list[tuple[Any, ...]]]:
    """The derived tables as sorted rows, for comparing against a replay."""
    return {
        "memories": sorted(conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories").fetchall(), key=repr),
        "history": sorted(
            conn.execute("SELECT memory_id, seq, at, action, detail FROM history").fetchall(), key=repr
        ),
        "cited_evidence": sorted(conn.execute("SELECT handle, memory_id, data FROM cited_evidence").fetchall()),
    }


# -- rows -> records ----------------------------------------------------------


def evidence_from_json(d: dict[str, Any]) -> Evidence:
    return Evidence(
        handle=d["handle"],
        session=d.get("session", ""),
        ename=d.get("ename", ""),
        evalue=d.get("evalue", ""),
        diagnosis=tuple(d.get("diagnosis", ())),
        excerpt=d.get("excerpt", ""),
        created_at=d.get("created_at", ""),
        cell_id=d.get("cell_id"),
        execution_count=d.get("execution_count"),
        notebook=d.get("notebook"),
    )


def memory_from_row(row: Any) -> Memory:
    (id_, kind, topic, statement, original, standing, status, recorder, notebook, cell_id, execution_count,
     session, quote, evidence, created_at, valid_from, valid_to, supersedes, superseded_by, retire_reason,
     confirmed_at) = row
    return Memory(
        id=id_,
        kind=kind,
        statement=statement,
        standing=standing,
        status=status,
        created_at=created_at,
        valid_from=valid_from,
        valid_to=valid_to,
        topic=topic,
        original=original,
        provenance=Provenance(
            recorder=recorder, notebook=notebook, cell_id=cell_id, execution_count=execution_count,
            session=session, quote=quote,
        ),
        evidence=tuple(evidence_from_json(e) for e in json.loads(evidence)),
        supersedes=supersedes,
        superseded_by=superseded_by,
        retire_reason=retire_reason,
        confirmed_at=confirmed_at,
    )


def history_from_row(row: Any) -> HistoryEntry:
    memory_id, seq, at, action, detail = row
    return HistoryEntry(memory_id=memory_id, seq=seq, at=at, action=action, detail=json.loads(detail))
