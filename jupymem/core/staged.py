"""Staged failures: the failed cells a kernel keeps so that a memory can cite them later.

Staged evidence is kept beside memory, not in the event log: a window of the newest
``EVIDENCE_WINDOW`` per kernel session, replaced in place when a failure gains its fix.
A failure becomes part of memory only when a memory cites it (``cited_evidence``).

On the team engine the same SQL runs, and row-level security decides who reads what
(schema migration 7): a staged failure is its author's alone, like a private memory, so
every read here (the list, a handle, the count) answers with the person's own; once a
memory cites it, the cited copy is as visible as that memory. A teammate's handle is
therefore unknown to you until it is kept as a shared lesson.
"""

from __future__ import annotations

from typing import Any

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from ..errors import UnknownEvidence
from ..models import Evidence
from ..storage import database
from ..storage.projection import evidence_from_json

EVIDENCE_WINDOW = 64
STAGED_REVISION = "staged_revision"  # meta key: a counter of writes to staged_evidence


def relative(notebook: str | None, root: Path) -> str | None:
    """A notebook's path relative to the repository ``root`` (kernels know their notebook
    by its absolute path; a path on this machine means nothing elsewhere)."""
    if not notebook:
        return None
    p = Path(notebook)
    if p.is_absolute():
        try:
            return p.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            return p.as_posix()
    return p.as_posix()


def stage(conn: database.Connection, root: Path, items: Sequence[Evidence]) -> None:
    """Keep ``items`` in one transaction, each session's window trimmed to its newest. A
    notebook is kept relative to the repository root, as a memory's is: kernels know their
    notebook by its absolute path."""
    items = [dataclasses.replace(ev, notebook=relative(ev.notebook, root)) if ev.notebook else ev for ev in items]
    with database.transaction(conn, chain=False):  # no event: never waits behind the project's writers
        for ev in items:
            data = json.dumps(ev.to_dict(), sort_keys=True, ensure_ascii=False)
            conn.execute(
                # One upsert both engines speak (PostgreSQL has no INSERT OR REPLACE).
                "INSERT INTO staged_evidence (handle, session, created_at, data) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(handle) DO UPDATE SET session = excluded.session, created_at = excluded.created_at,"
                " data = excluded.data",
                (ev.handle, ev.session, ev.created_at, data),
            )
        for session in dict.fromkeys(ev.session for ev in items):
            conn.execute(
                "DELETE FROM staged_evidence WHERE session = ? AND handle NOT IN (SELECT handle FROM"
                " staged_evidence WHERE session = ? ORDER BY created_at DESC, handle LIMIT ?)",
                (session, session, EVIDENCE_WINDOW),
            )
        # Counted up in the statement that writes it: one round trip, and two writers never count once.
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key)"
            " DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)",
            (STAGED_REVISION,),
        )


def staged_revision(conn: database.Connection) -> int:
    """The counter of writes to staged evidence."""
    value = database.get_meta(conn, STAGED_REVISION)
    return int(value) if value and value.isdigit() else 0


def staged(conn: database.Connection, session: str | None, limit: int) -> list[Evidence]:
    """Staged failures, newest first (optionally of one kernel session)."""
    sql = "SELECT data FROM staged_evidence"
    params: list[Any] = []
    if session:
        sql += " WHERE session = ?"
        params.append(session)
    sql += " ORDER BY created_at DESC, handle LIMIT ?"
    params.append(limit)
    return [evidence_from_json(json.loads(r[0])) for r in conn.execute(sql, params).fetchall()]


def citing(conn: database.Connection, handles: Sequence[str]) -> dict[str, str]:
    """The memory that cites each of ``handles``, for those some memory cites: a failure
    once kept as a lesson stays kept, whatever became of the lesson since."""
    if not handles:
        return {}
    marks = ", ".join("?" * len(handles))
    rows = conn.execute(f"SELECT handle, memory_id FROM cited_evidence WHERE handle IN ({marks})", list(handles))
    return {handle: memory_id for handle, memory_id in rows.fetchall()}


def evidence(conn: database.Connection, handle: str, name: str) -> Evidence:
    """A staged or cited failure by handle; ``UnknownEvidence`` naming project ``name``."""
    h = (handle or "").strip()
    for table in ("staged_evidence", "cited_evidence"):
        row = conn.execute(f"SELECT data FROM {table} WHERE handle = ?", (h,)).fetchone()
        if row:
            return evidence_from_json(json.loads(row[0]))
    raise UnknownEvidence(f"No staged failure {handle!r} in {name}; `%memory evidence` lists them.")
