"""gc: what retention allows to be forgotten (SPEC 8), on either engine.

Memories retired or superseded long ago, assistant memories nobody confirmed, and staged
failures nothing cites leave the tables; the payloads of the events that concern only the
forgotten memories are purged (their hashes stay, so the chain still verifies). A
supported decision, correction, constraint or preference is never forgotten. Retention is
the deciding machine's: the gc event is private, and never leaves it.

On the team engine (PostgreSQL) one member's gc is not the team's retention: it forgets
what is the member's own (their private memories, their staged failures) and counts the
shared memories retention would allow, leaving them. Row-level security shows a member no
one else's private rows, so no query here could reach them; the queries ask only for the
member's own besides.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..config import CLOSED_DAYS, EVIDENCE_DAYS, UNCONFIRMED_DAYS
from ..intake import clock
from ..models import ACTIVE, PROTECTED_KINDS, SUPPORTED, UNCONFIRMED
from . import database, eventlog
from .projection import apply


@dataclass(frozen=True)
class GcReport:
    forgotten: tuple[str, ...]
    purged_events: int
    evidence_dropped: int
    dry_run: bool
    # On the team engine: shared memories retention would allow, left alone (``gc``).
    kept_for_team: int = 0


def _cutoff(now: datetime, days: int) -> str:
    return clock.format_at(now - timedelta(days=days))


def gc(
    conn: database.Connection,
    *,
    dry_run: bool = False,
    closed_days: int = CLOSED_DAYS,
    unconfirmed_days: int = UNCONFIRMED_DAYS,
    evidence_days: int = EVIDENCE_DAYS,
    now: datetime | None = None,
) -> GcReport:
    """Drop what retention allows (SPEC 8):

    * memories retired or superseded more than ``closed_days`` ago,
    * assistant memories nobody confirmed in ``unconfirmed_days``,
    * staged failures older than ``evidence_days`` that nothing cites,

    and never a supported decision, correction, constraint or preference.
    Forgotten memories leave the tables; the payloads of the events that only
    concern them are purged (their hashes stay, so the chain still verifies).

    On the team engine a member's gc forgets only what is theirs: their own private
    memories and their own staged failures (row-level security shows them no one
    else's, and the queries below ask for nothing else besides). Shared memories are the
    team's: retention of those is not one member's decision, so they are counted
    (``kept_for_team``) and left as they are.
    """
    now = now or clock.now()
    closed_cut, unconfirmed_cut = _cutoff(now, closed_days), _cutoff(now, unconfirmed_days)
    evidence_cut = _cutoff(now, evidence_days)
    team = getattr(conn, "module_name", None) == "postgresql"
    rows = conn.execute(
        "SELECT id, kind, standing, private FROM memories WHERE (status != ? AND valid_to < ?)"
        " OR (status = ? AND standing = ? AND created_at < ?)",
        (ACTIVE, closed_cut, ACTIVE, UNCONFIRMED, unconfirmed_cut),
    ).fetchall()
    allowed = [(mid, private) for mid, kind, standing, private in rows
               if not (kind in PROTECTED_KINDS and standing == SUPPORTED)]
    forgotten = sorted(mid for mid, private in allowed if private or not team)
    kept_for_team = sum(1 for _, private in allowed if team and not private)
    stale_evidence = conn.execute(
        "SELECT count(*) FROM staged_evidence WHERE created_at < ?", (evidence_cut,)
    ).fetchone()[0]
    purged = _purgeable(conn, forgotten, team) if forgotten else []
    if dry_run or not (forgotten or stale_evidence):
        return GcReport(tuple(forgotten), len(purged), stale_evidence, dry_run, kept_for_team)
    with database.transaction(conn):
        conn.execute("DELETE FROM staged_evidence WHERE created_at < ?", (evidence_cut,))
        if forgotten:
            payload = {
                "forgotten": forgotten,
                "purged_uids": purged,
                "rules": {"closed_days": closed_days, "unconfirmed_days": unconfirmed_days},
            }
            # Retention is this machine's decision: the gc event never leaves it (scope private).
            ev = eventlog.append(conn, uuid.uuid4().hex, "gc", eventlog.next_at(conn), payload, scope=eventlog.PRIVATE)
            apply(conn, ev)
            if team:  # members may not change events: the database's own narrow purge (``guard``)
                conn.execute("SELECT purge_payloads(?)", (purged,))
            else:
                conn.executemany("UPDATE events SET payload = NULL WHERE uid = ?", [(u,) for u in purged])
    if not team:
        database.checkpoint(conn)
    return GcReport(tuple(forgotten), len(purged), stale_evidence, False, kept_for_team)


def _purgeable(conn: database.Connection, forgotten: list[str], team: bool) -> list[str]:
    """The uids of the events whose payloads concern only ``forgotten`` memories: their
    records, retirements and confirmations."""
    if not team:
        marks = ",".join("?" * len(forgotten))
        return [
            r[0]
            for r in conn.execute(
                # Events that live in shared files keep their payloads: the files hold them anyway.
                "SELECT uid FROM events WHERE payload IS NOT NULL AND scope != 'shared' AND ("
                f"(type = 'record' AND json_extract(payload, '$.memory.id') IN ({marks}))"
                f" OR (type IN ('retire', 'confirm') AND json_extract(payload, '$.id') IN ({marks})))",
                [*forgotten, *forgotten],
            ).fetchall()
        ]
    # The team engine: only this member's private events, read and matched here (a
    # member's private events are few; no JSON functions are asked of PostgreSQL).
    wanted, out = set(forgotten), []
    for uid, type_, payload in conn.execute(
        "SELECT uid, type, payload FROM events WHERE payload IS NOT NULL AND scope = ?"
        " AND type IN ('record', 'retire', 'confirm') AND author_role = current_user",
        (eventlog.PRIVATE,),
    ).fetchall():
        try:
            body = json.loads(payload)
        except ValueError:
            continue  # a garbled payload is verify's to name, not gc's to purge
        memory = body.get("memory") if type_ == "record" else body
        if isinstance(memory, dict) and memory.get("id") in wanted:
            out.append(uid)
    return out


