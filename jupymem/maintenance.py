"""verify, rebuild, gc, export and import: the log is the truth, the rest follows.

``verify`` replays the whole log into a scratch in-memory database and
compares it with the live projection, so it catches a broken chain, an
altered payload *and* tables that drifted from their history. ``rebuild``
is the same replay written over the live tables. ``import`` verifies the
incoming file's own chain first, then checks every event as every other
entrance does (``validate``: a re-hashed chain can still carry a forged kind
or a secret), then appends only events whose ``uid`` is new, so importing the
same export twice (or one's own export) adds nothing. ``verify`` runs the same
checks over the database's own log, so an event that would be refused today
(edited by hand, or stored before a check existed) is named. ``export`` leaves
private events out (an export is made to be shared). In a repository that
shares its memory, ``Project`` routes rebuild and import through ``share`` and
adds the files' problems to ``verify``; ``gc`` there keeps the payloads of
shared events and its own event stays on this machine.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import IO, Any

from . import store, strictjson, validate
from .errors import CorruptLog, InvalidImport
from .models import ACTIVE, PROTECTED_KINDS, SUPPORTED, UNCONFIRMED
from .projection import Batch, apply, clear, snapshot

EXPORT_FORMAT = 1
MAX_EXPORT_LINE_BYTES = 1024 * 1024  # one event; a statement is at most 16 KB


@dataclass(frozen=True)
class VerifyReport:
    ok: bool
    events: int
    memories: int
    problems: tuple[str, ...] = ()
    shared_lines: int = 0  # lines read from .jupymem/ (a shared repository)


@dataclass(frozen=True)
class GcReport:
    forgotten: tuple[str, ...]
    purged_events: int
    evidence_dropped: int
    dry_run: bool


@dataclass(frozen=True)
class ImportReport:
    events: int  # in the file
    added: int
    skipped: int


def verify(conn: store.Connection, *, shared: bool = False) -> VerifyReport:
    """``shared``: the log is a cache of a shared repository's files (see
    ``validate.problems``)."""
    problems: list[str] = []
    evts = list(store.events(conn))
    try:
        store.check_chain(evts, source="memory log")
    except CorruptLog as exc:
        problems.append(exc.message)
    problems += validate.problems([ev.to_json() for ev in evts], references_by_replay=shared)
    scratch = store.memory_database(_driver_name(conn))
    try:
        for ev in evts:
            apply(scratch, ev)
        live, replayed = snapshot(conn), snapshot(scratch)
    finally:
        scratch.close()
    for table in live:
        if live[table] != replayed[table]:
            problems.append(f"table {table} differs from a replay of the log; `rebuild` recreates it.")
    if not conn.readonly:  # FTS5's check is spelled as an INSERT, which a read-only file refuses
        try:
            conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
        except Exception as exc:  # the driver's DatabaseError: the index no longer matches its table
            problems.append(f"the search index is out of step ({exc}); `rebuild` recreates it.")
    check = conn.execute("PRAGMA quick_check").fetchone()[0]
    if check != "ok":
        problems.append(f"SQLite quick_check: {check}")
    n = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    return VerifyReport(ok=not problems, events=len(evts), memories=n, problems=tuple(problems))


def _driver_name(conn: store.Connection) -> str:
    return "sqlean" if conn.module.__name__.startswith("sqlean") else "sqlite3"


def rebuild(conn: store.Connection) -> int:
    """Recreate every derived table and the search index from the log."""
    with store.transaction(conn):
        clear(conn)
        n = 0
        for ev in store.events(conn):
            apply(conn, ev)
            n += 1
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
    return n


def _cutoff(now: datetime, days: int) -> str:
    return (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def gc(
    conn: store.Connection,
    *,
    dry_run: bool = False,
    closed_days: int = 90,
    unconfirmed_days: int = 180,
    evidence_days: int = 14,
    now: datetime | None = None,
) -> GcReport:
    """Drop what retention allows (SPEC 8):

    * memories retired or superseded more than ``closed_days`` ago,
    * assistant memories nobody confirmed in ``unconfirmed_days``,
    * staged failures older than ``evidence_days`` that nothing cites,

    and never a supported decision, correction, constraint or preference.
    Forgotten memories leave the tables; the payloads of the events that only
    concern them are purged (their hashes stay, so the chain still verifies).
    """
    now = now or datetime.now(timezone.utc)
    closed_cut, unconfirmed_cut = _cutoff(now, closed_days), _cutoff(now, unconfirmed_days)
    evidence_cut = _cutoff(now, evidence_days)
    rows = conn.execute(
        "SELECT id, kind, standing FROM memories WHERE (status != ? AND valid_to < ?)"
        " OR (status = ? AND standing = ? AND created_at < ?)",
        (ACTIVE, closed_cut, ACTIVE, UNCONFIRMED, unconfirmed_cut),
    ).fetchall()
    forgotten = sorted(mid for mid, kind, standing in rows if not (kind in PROTECTED_KINDS and standing == SUPPORTED))
    stale_evidence = conn.execute(
        "SELECT count(*) FROM staged_evidence WHERE created_at < ?", (evidence_cut,)
    ).fetchone()[0]
    purged: list[str] = []
    if forgotten:
        marks = ",".join("?" * len(forgotten))
        purged = [
            r[0]
            for r in conn.execute(
                # Events that live in shared files keep their payloads: the files hold them anyway.
                "SELECT uid FROM events WHERE payload IS NOT NULL AND scope != 'shared' AND ("
                f"(type = 'record' AND json_extract(payload, '$.memory.id') IN ({marks}))"
                f" OR (type IN ('retire', 'confirm') AND json_extract(payload, '$.id') IN ({marks})))",
                [*forgotten, *forgotten],
            ).fetchall()
        ]
    if dry_run or not (forgotten or stale_evidence):
        return GcReport(tuple(forgotten), len(purged), stale_evidence, dry_run)
    with store.transaction(conn):
        conn.execute("DELETE FROM staged_evidence WHERE created_at < ?", (evidence_cut,))
        if forgotten:
            payload = {
                "forgotten": forgotten,
                "purged_uids": purged,
                "rules": {"closed_days": closed_days, "unconfirmed_days": unconfirmed_days},
            }
            # Retention is this machine's decision: the gc event never leaves it (scope private).
            ev = store.append(conn, uuid.uuid4().hex, "gc", store.next_at(conn), payload, scope=store.PRIVATE)
            apply(conn, ev)
            conn.executemany("UPDATE events SET payload = NULL WHERE uid = ?", [(u,) for u in purged])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return GcReport(tuple(forgotten), len(purged), stale_evidence, False)


def export_log(conn: store.Connection, fp: IO[str], *, project_id: str) -> int:
    """Write the log as JSONL: a header line, then one event per line.

    Private events (``remember --private`` and what touches those memories) are left
    out, since an export is made to be shared; the events written are chained afresh,
    so the file verifies on its own. The header says how many were left out.
    """
    private = {r[0] for r in conn.execute("SELECT seq FROM events WHERE scope = ?", (store.PRIVATE,))}
    evts, prev = [], store.GENESIS
    for n, ev in enumerate((ev for ev in store.events(conn) if ev.seq not in private), 1):
        h = store.event_hash(ev.uid, ev.type, ev.at, ev.payload_hash, prev)
        evts.append(store.Event(n, ev.uid, ev.type, ev.at, ev.payload, ev.payload_hash, prev, h))
        prev = h
    header: dict[str, Any] = {"jupymem_export": EXPORT_FORMAT, "project": project_id, "events": len(evts)}
    if private:
        header["private_left_out"] = len(private)
    fp.write(json.dumps(header, sort_keys=True) + "\n")
    for ev in evts:
        fp.write(json.dumps(ev.to_json(), sort_keys=True, ensure_ascii=False) + "\n")
    return len(evts)


def _read_export(fp: IO[str], source: str) -> list[tuple[int, store.Event]]:
    """The events of an export file, each with its line number."""
    evts: list[tuple[int, store.Event]] = []
    header_seen = False
    try:
        lines = list(fp)
    except UnicodeDecodeError:
        raise InvalidImport(f"{source} is not UTF-8 text; it is not a jupymem export.") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:  # strictly, as a shared line is read: an export is as untrusted as a pull
            obj = strictjson.loads(line, max_bytes=MAX_EXPORT_LINE_BYTES)
        except strictjson.StrictJSONError as exc:
            raise InvalidImport(f"{source}: line {number} {exc}; is this a `jupymem export` file? "
                                "Nothing was imported.") from None
        if isinstance(obj, dict) and "jupymem_export" in obj:
            if obj["jupymem_export"] != EXPORT_FORMAT:
                raise InvalidImport(f"{source} was written by a newer jupymem (format {obj['jupymem_export']}).")
            header_seen = True
            continue
        try:
            evts.append((number, store.parse_event(obj, source=source, line=number)))
        except CorruptLog as exc:
            raise InvalidImport(exc.message) from None
    if not header_seen:
        raise InvalidImport(f"{source} has no jupymem export header; is this a `jupymem export` file?")
    return evts


def read_import(conn: store.Connection, fp: IO[str], source: str = "import") -> list[store.Event]:
    """The events of an export, verified (chain) and checked as every entrance checks an
    event (``validate``, against what ``conn`` holds); raises InvalidImport naming the line."""
    lines = _read_export(fp, source)
    evts = [ev for _, ev in lines]
    try:
        store.check_chain(evts, source=source)
    except CorruptLog as exc:
        raise InvalidImport(f"{exc.message} Nothing was imported.") from None
    # A verified chain proves the file is intact, not that what it carries is clean:
    # every event is checked as the live API checks it, against what memory holds.
    validate.check_events(
        ((number, ev.to_json()) for number, ev in lines), validate.DatabaseKnown(conn), source=source
    )
    return evts


def import_log(conn: store.Connection, fp: IO[str], *, source: str = "import") -> ImportReport:
    evts = read_import(conn, fp, source)
    memory_ids = [ev.payload["memory"]["id"] for ev in evts if ev.type == "record" and ev.payload]
    added = skipped = 0
    with store.transaction(conn), Batch(conn, memory_ids) as batch:
        known = _known_uids(conn, [ev.uid for ev in evts])  # one query per 500, not one per event
        prev = store.last_hash(conn)
        for ev in evts:
            if (
                ev.payload is None
                or ev.uid in known
                # Retention is the deciding machine's business (its gc events are private and
                # stay out of exports): another project's gc must not delete memories here.
                or ev.type == "gc"
                or (ev.type == "record" and batch.adds_nothing(ev.payload["memory"]))
            ):
                skipped += 1
                continue
            new = store.append(conn, ev.uid, ev.type, ev.at, ev.payload, prev=prev, writer=ev.writer)
            batch.apply(new)
            known.add(ev.uid)
            prev = new.hash
            added += 1
    return ImportReport(events=len(evts), added=added, skipped=skipped)


def _known_uids(conn: store.Connection, uids: list[str]) -> set[str]:
    """Which of ``uids`` the log already holds, one query per 500."""
    known: set[str] = set()
    for i in range(0, len(uids), 500):
        chunk = uids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        known.update(r[0] for r in conn.execute(f"SELECT uid FROM events WHERE uid IN ({marks})", chunk))
    return known
