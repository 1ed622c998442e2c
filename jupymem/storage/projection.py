"""Events -> the tables that answer questions.

``apply`` is the only code that writes ``memories``, ``history`` and
``cited_evidence``; it runs live (in the transaction that appends the event)
and in ``replay`` (rebuild and verify), so both paths agree by construction.
It must stay deterministic: it reads nothing but the event and the tables.
``Batch`` is its bulk form (remember_many, import): it writes the first record
of a new memory from the same row builders, many rows per statement, and hands
every other event to ``apply``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from typing import Any

from ..models import (
    ACTIVE,
    RETIRED,
    SUPERSEDED,
    SUPPORTED,
    UNCONFIRMED,
    Evidence,
    Fix,
    HistoryEntry,
    Memory,
    Provenance,
)
from .database import DERIVED_TABLES, Connection, in_batches
from .eventlog import Event

MEMORY_COLUMNS = (
    "id, kind, topic, statement, original, standing, status, recorder, notebook, cell_id, "
    "execution_count, session, quote, evidence, created_at, valid_from, valid_to, supersedes, "
    "superseded_by, retire_reason, confirmed_at, author, private"
)


_INSERT_HISTORY = "INSERT INTO history (memory_id, seq, at, action, detail) VALUES (?, ?, ?, ?, ?)"
_INSERT_CITED = "INSERT OR IGNORE INTO cited_evidence (handle, memory_id, data) VALUES (?, ?, ?)"
_INSERT_MEMORY = (
    "INSERT INTO memories (id, kind, topic, statement, original, standing, status, recorder, notebook,"
    " cell_id, execution_count, session, quote, evidence, created_at, valid_from, supersedes, seq, author,"
    " private, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _history_row(memory_id: str, ev: Event, action: str, **detail: Any) -> tuple[Any, ...]:
    # "who": the event's writer, whoever's memory it acts on (a retire names who retired).
    detail = {k: v for k, v in {**detail, "who": ev.writer}.items() if v is not None}
    return (memory_id, ev.seq, ev.at, action, json.dumps(detail, sort_keys=True, ensure_ascii=False))


def _history(conn: Connection, memory_id: str, ev: Event, action: str, **detail: Any) -> None:
    conn.execute(_INSERT_HISTORY, _history_row(memory_id, ev, action, **detail))


def _cited_rows(memory_id: str, evidence: Iterable[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(e["handle"], memory_id, json.dumps(e, sort_keys=True, ensure_ascii=False)) for e in evidence]


def _cite(conn: Connection, memory_id: str, evidence: Iterable[dict[str, Any]]) -> None:
    for row in _cited_rows(memory_id, evidence):
        conn.execute(_INSERT_CITED, row)


def _new_memory_rows(
    ev: Event, m: dict[str, Any], supersedes: str | None = None
) -> tuple[tuple[Any, ...], tuple[Any, ...], list[tuple[str, str, str]]]:
    """The memories, history and cited_evidence rows that a memory's first event writes."""
    prov = m.get("provenance") or {}
    evidence = m.get("evidence") or []
    memory = (
        m["id"], m["kind"], m.get("topic"), m["statement"], m.get("original"), m["standing"], ACTIVE,
        prov.get("recorder", "person"), prov.get("notebook"), prov.get("cell_id"),
        prov.get("execution_count"), prov.get("session"), prov.get("quote"),
        json.dumps(evidence, sort_keys=True, ensure_ascii=False) if evidence else "[]", ev.at, ev.at, supersedes,
        # Who recorded it is who wrote the event: a shared line's claim in its provenance
        # is only a claim (an export imported by someone else keeps its author there).
        ev.seq, ev.writer or prov.get("author"), 1 if m.get("private") else 0, ev.source,
    )
    history = _history_row(m["id"], ev, "recorded", recorder=prov.get("recorder", "person"), supersedes=supersedes)
    return memory, history, _cited_rows(m["id"], evidence)


def _upsert(conn: Connection, ev: Event, m: dict[str, Any], supersedes: str | None = None) -> None:
    evidence = m.get("evidence") or []
    row = conn.execute("SELECT status, standing, evidence, source, private FROM memories WHERE id = ?",
                       (m["id"],)).fetchone()
    if row is None:
        memory, history, cited = _new_memory_rows(ev, m, supersedes)
        conn.execute(_INSERT_MEMORY, memory)
        conn.execute(_INSERT_HISTORY, history)
        for c in cited:
            conn.execute(_INSERT_CITED, c)
        return
    status, standing, old_evidence, source, private = row
    if foreign(source, ev.source) or not_theirs(private, ev, conn):
        # A line speaks only for its writer: another writer's file recording this id (the
        # same words said too, or a claim on them) changes nothing of the memory: not its
        # words, kind, author, standing or evidence, nor its status. History keeps it.
        # (Which file owns an id that two files record is settled before replay: sharing.claims.)
        _history(conn, m["id"], ev, "restated", file=ev.source, statement=m.get("statement"), kind=m.get("kind"),
                 cites=len(evidence) or None, supersedes=supersedes)
        return
    if not m.get("private"):
        # Said again where it is shared: no longer this machine's alone (order-free: AND).
        conn.execute("UPDATE memories SET private = 0 WHERE id = ? AND private = 1", (m["id"],))
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
        if supersedes is not None:
            # "Supersede instead" of a record just made: the active statement now replaces
            # the old one, as if it had been recorded with --supersedes in the first place.
            conn.execute("UPDATE memories SET supersedes = ? WHERE id = ?", (supersedes, m["id"]))
            _history(conn, m["id"], ev, "supersedes", old=supersedes)
    _cite(conn, m["id"], evidence)


def sources(conn: Connection, ids: Iterable[str]) -> dict[str, str | None]:
    """Memory id -> the shared file its row came from (None: this machine's), for ``ids``
    that have a row (``sharing.claims.owners``: which file owned an id before a rebuild)."""
    wanted = sorted(set(ids))
    out: dict[str, str | None] = {}
    for i in range(0, len(wanted), 500):
        chunk = wanted[i:i + 500]
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT id, source FROM memories WHERE id IN ({marks})", chunk).fetchall())
    return out


def foreign(owner: str | None, source: str | None) -> bool:
    """Whether an event read from shared file ``source`` records a memory that another
    writer's file (``owner``) recorded first. This machine's own events (no file) are its own."""
    return owner is not None and source is not None and owner != source


def not_theirs(private: int, ev: Event, conn: Connection) -> bool:
    """Whether a shared file's event would act on a private memory. A private memory
    lives on this machine only and has no file, so ``foreign`` cannot see its owner; a
    teammate who guesses its words must not re-kind, reopen, retire, confirm or attach
    evidence to it, nor clear its private flag (after which its next supersede would be
    written to the files), whatever writer the line names: a name is a claim anyone can
    write. Only a line this machine wrote may (``own_act``): saying a private memory
    again where it is shared is how its author shares it."""
    return bool(private) and ev.source is not None and ev.uid not in _own_acts(conn)


# The uids of the shared events this machine wrote that act on one of its private
# memories (a private memory said again, shared): kept in ``meta``, which a rebuild keeps.
OWN_ACTS = "own-acts-on-private"


def own_act(conn: Connection, uid: str) -> None:
    """Say that this machine wrote the shared event ``uid`` that acts on a private memory."""
    from .database import set_meta

    set_meta(conn, OWN_ACTS, json.dumps(sorted({*_own_acts(conn), uid})))


def copy_own_acts(source: Connection, target: Connection) -> None:
    """Give a scratch database the ``own_act`` marks of ``source``, before it replays."""
    acts = _own_acts(source)
    if acts:
        from .database import set_meta

        set_meta(target, OWN_ACTS, json.dumps(sorted(acts)))


def is_private(conn: Connection, memory_id: str) -> bool:
    row = conn.execute("SELECT private FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return bool(row and row[0])


def _own_acts(conn: Connection) -> set[str]:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (OWN_ACTS,)).fetchone()
    return set(json.loads(row[0])) if row else set()


def adds_nothing(conn: Connection, m: dict[str, Any]) -> bool:
    """True when recording ``m`` again would change nothing: it is active, no more
    supported than before, and cites no new evidence. Such records are not logged."""
    row = conn.execute("SELECT status, standing, evidence, private FROM memories WHERE id = ?", (m["id"],)).fetchone()
    if row is None or row[0] != ACTIVE:
        return False
    if row[1] == UNCONFIRMED and m.get("standing") == SUPPORTED:
        return False
    if row[3] and not m.get("private"):
        return False  # a private memory said again without --private: it is shared now
    known = {e["handle"] for e in json.loads(row[2])}
    return all(e["handle"] in known for e in m.get("evidence", ()))


def _record(conn: Connection, ev: Event, p: dict[str, Any]) -> None:
    _upsert(conn, ev, p["memory"])


def _supersede(conn: Connection, ev: Event, p: dict[str, Any]) -> None:
    old, new = p["old"], p["memory"]["id"]
    guarded = _guarded(conn, old, ev)
    _upsert(conn, ev, p["memory"], supersedes=None if guarded else old)
    if guarded:
        return
    conn.execute(
        "UPDATE memories SET status = ?, valid_to = ?, superseded_by = ?, seq = ? WHERE id = ? AND status = ?",
        (SUPERSEDED, ev.at, new, ev.seq, old, ACTIVE),
    )
    _history(conn, old, ev, "superseded", by=new)


def _retire(conn: Connection, ev: Event, p: dict[str, Any]) -> None:
    if _guarded(conn, p["id"], ev):
        return
    conn.execute(
        "UPDATE memories SET status = ?, valid_to = ?, retire_reason = ?, seq = ? WHERE id = ? AND status = ?",
        (RETIRED, ev.at, p.get("reason"), ev.seq, p["id"], ACTIVE),
    )
    _history(conn, p["id"], ev, "retired", reason=p.get("reason"))


def _confirm(conn: Connection, ev: Event, p: dict[str, Any]) -> None:
    if _guarded(conn, p["id"], ev):
        return
    conn.execute(
        "UPDATE memories SET standing = ?, confirmed_at = ?, seq = ? WHERE id = ?",
        (SUPPORTED, ev.at, ev.seq, p["id"]),
    )
    _history(conn, p["id"], ev, "confirmed", by=p.get("by"))


def _guarded(conn: Connection, memory_id: str, ev: Event) -> bool:
    """Whether ``not_theirs`` kept ``ev`` off the memory: nothing of it is written to the
    memory or its history (neither ever leaves this machine)."""
    row = conn.execute("SELECT private FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return row is not None and not_theirs(row[0], ev, conn)


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


def derived_by_database(conn: Connection) -> bool:
    """Whether the database derives the tables from each event itself (the team engine:
    ``postgres/guard.py``, where members may not write them), so nothing is written here."""
    return bool(getattr(conn, "derives_projection", False))


def apply(conn: Connection, ev: Event) -> None:
    if ev.payload is None or derived_by_database(conn):  # purged by gc: nothing left to project
        return
    _HANDLERS[ev.type](conn, ev, ev.payload)


def existing_ids(conn: Connection, ids: Iterable[str]) -> set[str]:
    """Which of ``ids`` have a row in ``memories``, in one query per 500 ids."""
    wanted = list(dict.fromkeys(ids))
    found: set[str] = set()
    for batch, marks in in_batches(wanted):
        found.update(r[0] for r in conn.execute(f"SELECT id FROM memories WHERE id IN ({marks})", batch))
    return found


def memories_by_id(conn: Connection, ids: Iterable[str]) -> dict[str, Memory]:
    """The memories with these exact ids (absent ones are left out), one query per 500 ids."""
    wanted = list(dict.fromkeys(ids))
    out: dict[str, Memory] = {}
    for batch, marks in in_batches(wanted):
        rows = conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", batch).fetchall()
        out.update((row[0], memory_from_row(row)) for row in rows)
    return out


def disputes(conn: Connection) -> dict[str, tuple[str, ...]]:
    """Replaced memory id -> its active replacements, where there is more than one (two
    people superseded it differently; ``Memory.replacements``)."""
    # Few memories supersede another: walk the partial supersedes index (the unary + keeps
    # the planner off the status index, which would visit every active memory).
    rows = conn.execute(
        "SELECT supersedes, id FROM memories WHERE supersedes IS NOT NULL AND +status = ? ORDER BY supersedes, id",
        (ACTIVE,),
    ).fetchall()
    found: dict[str, list[str]] = {}
    for old, new in rows:
        found.setdefault(old, []).append(new)
    return {old: tuple(ids) for old, ids in found.items() if len(ids) > 1}


class Batch:
    """Many events applied in one transaction, as ``apply`` would, with less SQL.

    The record events of memories that have no row yet (most of a bulk record or
    an import) are written together, one ``executemany`` per table, and need no
    lookup first; every other event flushes them and goes through ``apply``, so
    the order of writes per table, and therefore every row and rowid, is the same
    as applying the events one by one. ``ids`` are the memory ids the caller is
    about to record; one query finds which of them already exist.

    Use it inside the transaction that appends the events, as a context manager
    (leaving it flushes), and call ``adds_nothing``/``apply`` through it.
    """

    def __init__(self, conn: Connection, ids: Iterable[str]):
        self.conn = conn
        wanted = set(ids)
        # Ids with no row for sure: only _upsert inserts rows, and it runs for
        # events applied through this object, which take their ids out of the set.
        self._absent = wanted - existing_ids(conn, wanted)
        self._pending: list[Event] = []

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.flush()

    def has_no_row(self, memory_id: str) -> bool:
        """True when ``memory_id`` has no row for sure (known without a query)."""
        return memory_id in self._absent

    def adds_nothing(self, m: dict[str, Any]) -> bool:
        """``adds_nothing``, without a query for a memory that has no row yet."""
        if m["id"] in self._absent:
            return False
        self.flush()
        return adds_nothing(self.conn, m)

    def apply(self, ev: Event) -> None:
        memory = (ev.payload or {}).get("memory")
        if ev.type == "record" and memory is not None and memory["id"] in self._absent:
            self._absent.discard(memory["id"])
            self._pending.append(ev)
            return
        self.flush()
        if memory is not None:
            self._absent.discard(memory["id"])
        apply(self.conn, ev)

    def flush(self) -> None:
        if not self._pending:
            return
        if derived_by_database(self.conn):
            self._pending = []
            return
        rows = [_new_memory_rows(ev, ev.payload["memory"]) for ev in self._pending if ev.payload]
        self._pending = []
        self.conn.executemany(_INSERT_MEMORY, [memory for memory, _, _ in rows])
        self.conn.executemany(_INSERT_HISTORY, [history for _, history, _ in rows])
        cited = [c for _, _, rows_ in rows for c in rows_]
        if cited:
            self.conn.executemany(_INSERT_CITED, cited)


def clear(conn: Connection) -> None:
    """Empty the derived tables, before a replay writes them again. Row ids may come back
    for other memories, so the generation in ``meta`` moves on: every process holding
    something computed from rows (``Project``'s caches, the in-memory indexes) sees it
    and drops them, including a process that did not replay (``Project.revision``)."""
    for table in DERIVED_TABLES:
        conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (GENERATION,),
    )


GENERATION = "generation"


def snapshot(conn: Connection) -> dict[str, list[tuple[Any, ...]]]:
    """The derived tables as sorted rows, for comparing against a replay."""
    return {
        "memories": sorted(conn.execute(f"SELECT {MEMORY_COLUMNS}, source FROM memories").fetchall(), key=repr),
        "history": sorted(
            conn.execute("SELECT memory_id, seq, at, action, detail FROM history").fetchall(), key=repr
        ),
        "cited_evidence": sorted(conn.execute("SELECT handle, memory_id, data FROM cited_evidence").fetchall()),
    }


# -- rows -> records ----------------------------------------------------------


def fix_from_json(d: Any) -> Fix | None:
    """A staged or cited failure's fix; None for failures kept before pairing existed."""
    if not isinstance(d, dict):
        return None
    return Fix(
        source=d.get("source", ""),
        diff=d.get("diff", ""),
        at=d.get("at", ""),
        execution_count=d.get("execution_count"),
        cell_id=d.get("cell_id"),
        paired_by=d.get("paired_by", "cell id"),
        after=d.get("after"),
    )


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
        fix=fix_from_json(d.get("fix")),
        suggestion=d.get("suggestion"),
        suggested_by=d.get("suggested_by"),
        next_failure=d.get("next_failure"),
    )


# A row of MEMORY_COLUMNS: its names, and which of them a memory keeps in its provenance.
_MEMORY_NAMES = tuple(name.strip() for name in MEMORY_COLUMNS.split(","))
_PROVENANCE_NAMES = frozenset(f.name for f in dataclasses.fields(Provenance))


def memory_from_row(row: Any) -> Memory:
    fields = dict(zip(_MEMORY_NAMES, row))
    provenance = Provenance(**{name: fields.pop(name) for name in _PROVENANCE_NAMES})
    evidence = tuple(evidence_from_json(e) for e in json.loads(fields.pop("evidence")))
    private = bool(fields.pop("private"))
    return Memory(**fields, provenance=provenance, evidence=evidence, private=private)


def history_from_row(row: Any) -> HistoryEntry:
    memory_id, seq, at, action, detail = row
    return HistoryEntry(memory_id=memory_id, seq=seq, at=at, action=action, detail=json.loads(detail))
