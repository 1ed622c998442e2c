"""Getting a project back from a damaged database: whatever its event log still holds.

The tables that answer questions are a projection of the event log (``eventlog``),
so a database whose pages are damaged can be recovered completely as long as its
``events`` table can still be read, and partly when only its first events can:
the longest prefix that still verifies (each event's hash links it to the one
before, so nothing after a gap can be trusted). ``read_log`` reads that prefix
from the damaged file without writing to it; ``rebuild_database`` writes a new
database from it beside the damaged one and swaps them, keeping the damaged file
(and its WAL) renamed, never deleted. A garbled event (a payload that is not JSON
any more, a NULL where a hash belongs) ends the prefix and is named; so does one
whose payload, though it verifies, cannot be applied.

A shared repository's database is a cache: its shared events come back from the
``.jupymem/log`` files, and only this machine's own events (private memories, history
not yet shared) need the damaged file. ``read_own`` reads those, each checked against
its own hashes (the cache's order and chain are re-derived on replay anyway), and
``rebuild_cache`` writes a new cache from the files plus them.

Used by ``core.doctor``; nothing else writes over a database.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CorruptLog
from . import database, eventlog, registry
from .maintenance import applicable, event_columns, event_from_row, rebuild

_COLUMNS = "seq, uid, type, at, payload, payload_hash, prev, hash, writer, source"
_CHUNK = 500


@dataclass
class Salvage:
    """What could be read from a database file."""

    events: list[eventlog.Event] = field(default_factory=list)  # the verified prefix
    meta: dict[str, str] = field(default_factory=dict)
    total: int | None = None  # the highest seq the file claims, when readable
    stopped: str | None = None  # why reading stopped before the end


def read_log(path: Path) -> Salvage:
    """The verified prefix of the event log in ``path``, read-only, never raising for damage."""
    out = Salvage()
    try:
        raw = _open_readonly(path)
    except Exception as exc:  # the driver's error for a file that is not a database
        out.stopped = f"the file cannot be opened as a database ({exc})"
        return out
    try:
        with contextlib.suppress(Exception):
            out.meta = {k: v for k, v in raw.execute("SELECT key, value FROM meta").fetchall()}
        with contextlib.suppress(Exception):
            out.total = raw.execute("SELECT max(seq) FROM events").fetchone()[0] or 0
        rows = _rows(raw, out, _columns(raw))
    finally:
        raw.close()
    prev = eventlog.GENESIS
    for row in rows:
        try:
            ev = event_from_row(row)
        except CorruptLog as exc:  # a payload that is not JSON any more, a NULL hash ...
            out.stopped = exc.message
            break
        if ev.prev != prev or eventlog.event_hash(ev.uid, ev.type, ev.at, ev.payload_hash, ev.prev) != ev.hash:
            out.stopped = f"event {ev.seq} does not verify"
            break
        if ev.payload is not None and eventlog.sha256(eventlog.canonical(ev.payload)) != ev.payload_hash:
            out.stopped = f"the payload of event {ev.seq} does not verify"
            break
        out.events.append(ev)
        prev = ev.hash
    return out


def _open_readonly(path: Path) -> Any:
    mod = database.driver()
    last: Exception | None = None
    for suffix in ("", "&immutable=1"):
        try:
            raw = mod.connect(f"file:{path}?mode=ro{suffix}", uri=True, isolation_level=None)
            # SQLite refuses a file shorter than its header says unless the schema is
            # "writable"; on a read-only connection that only lets it read what is there.
            raw.execute("PRAGMA writable_schema = ON")
            raw.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return raw
        except Exception as exc:
            last = exc
            with contextlib.suppress(Exception):
                raw.close()
    assert last is not None
    raise last


def _columns(raw: Any) -> str:
    """The select list for this file's events table, whatever schema it was left at."""
    try:
        present = frozenset(r[1] for r in raw.execute("PRAGMA table_info(events)").fetchall())
    except Exception:  # a damaged schema page: ask for every column, and let reading say what fails
        return event_columns()
    return event_columns(present or None)


def _rows(raw: Any, out: Salvage, columns: str) -> list[tuple[Any, ...]]:
    """Rows in seq order from 1, in chunks, then one by one past a damaged page, up to
    the first row that cannot be read or is missing."""
    rows: list[tuple[Any, ...]] = []
    after = 0
    while True:
        try:
            chunk = raw.execute(
                f"SELECT {columns} FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (after, _CHUNK)
            ).fetchall()
        except Exception:
            break
        if not chunk:
            return rows
        for row in chunk:
            if row[0] != after + 1:
                out.stopped = f"event {after + 1} is missing"
                return rows
            rows.append(row)
            after = row[0]
    # A damaged page somewhere after `after`: single rows, until one cannot be read.
    while True:
        try:
            row = raw.execute(f"SELECT {columns} FROM events WHERE seq = ?", (after + 1,)).fetchone()
        except Exception as exc:
            out.stopped = f"event {after + 1} is in a damaged part of the file ({exc})"
            return rows
        if row is None:
            if out.total is not None and after < out.total:
                out.stopped = f"event {after + 1} is missing"
            return rows
        rows.append(row)
        after += 1


def rebuild_database(path: Path, salvage: Salvage, identity: dict[str, str]) -> Path | None:
    """Write a new database at ``path`` from ``salvage`` and return where the old file
    went (None when there was none). ``identity``: meta values to keep (project id,
    root commit, created_at, roots) where the damaged file's own are unreadable."""
    tmp = _fresh(path)
    n, why = applicable(salvage.events)
    if n < len(salvage.events):  # rebuilt up to the first event that cannot be applied
        salvage.events, salvage.stopped = salvage.events[:n], why
    conn = database.open_database(tmp, create=True, check=False)
    try:
        with database.transaction(conn):
            for key, value in {**identity, **salvage.meta}.items():
                database.set_meta(conn, key, value)
            conn.executemany(
                f"INSERT INTO events ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (ev.seq, ev.uid, ev.type, ev.at,
                     None if ev.payload is None else eventlog.canonical(ev.payload).decode("utf-8"),
                     ev.payload_hash, ev.prev, ev.hash, ev.writer, ev.source)
                    for ev in salvage.events
                ],
            )
        rebuild(conn)
    finally:
        conn.close()
    return _swap(path, tmp)


def _fresh(path: Path) -> Path:
    """An empty place beside ``path`` to build its replacement in."""
    tmp = path.with_name(path.name + ".recovering")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
    return tmp


def _swap(path: Path, tmp: Path) -> Path | None:
    """Put the database built at ``tmp`` in place of ``path``, setting the old one aside."""
    moved = registry.set_aside(path) if path.exists() else None
    for suffix in ("-wal", "-shm"):  # the old WAL must never be replayed onto the new file
        side = Path(f"{path}{suffix}")
        if side.exists():
            registry.set_aside(side)
    os.replace(tmp, path)
    return moved


def identity_of(record: registry.ProjectRecord | None, roots: list[str]) -> dict[str, str]:
    """The meta rows a recreated database needs, from what the registry knows."""
    if record is None:
        return {"roots": json.dumps(roots)}
    return {
        "project_id": record.project_id,
        "root_commit": record.root_commit or "",
        "created_at": record.created_at,
        "roots": json.dumps(roots),
    }


def identity_in(path: Path) -> dict[str, str]:
    """A database's own meta rows, read without migrating or writing it ({} when it cannot
    be read): what ``doctor`` needs of a file it must not touch (one from a newer jupymem)."""
    try:
        raw = _open_readonly(path)
    except Exception:  # the driver's error for a file that is not a database: nothing to read
        return {}
    try:
        return {k: v for k, v in raw.execute("SELECT key, value FROM meta").fetchall()}
    except Exception:  # no meta table, or a damaged page: nothing to read
        return {}
    finally:
        raw.close()


def roots_in(path: Path) -> list[str]:
    """The checkouts a database names in its own meta ([] when it cannot be read)."""
    try:
        roots = json.loads(identity_in(path).get("roots") or "[]")
    except ValueError:
        return []
    return [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []


# -- a shared repository's cache ----------------------------------------------------------


@dataclass
class Own:
    """This machine's own events (scope local or private) read from a damaged cache."""

    events: list[eventlog.LogItem] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)
    lost: int | None = 0  # rows that could not be read or failed their hashes; None: not even counted
    stopped: str | None = None


def read_own(path: Path) -> Own:
    """The local and private events of a damaged cache, each verified on its own (its
    payload against its payload hash, its header against its hash), read-only."""
    out = Own()
    try:
        raw = _open_readonly(path)
    except Exception as exc:  # the driver's error for a file that is not a database
        out.lost, out.stopped = None, f"the file cannot be opened as a database ({exc})"
        return out
    try:
        with contextlib.suppress(Exception):
            out.meta = {k: v for k, v in raw.execute("SELECT key, value FROM meta").fetchall()}
        rows = _own_rows(raw, out)
    finally:
        raw.close()
    for row in rows:
        try:
            out.events.append(_verified_item(row))
        except CorruptLog as exc:
            out.lost = (out.lost or 0) + 1
            out.stopped = out.stopped or exc.message
    return out


def _own_rows(raw: Any, out: Own) -> list[tuple[Any, ...]]:
    own = f"{_columns(raw)}, scope, source"
    try:
        return raw.execute(f"SELECT {own} FROM events WHERE scope != 'shared' ORDER BY seq").fetchall()
    except Exception as exc:  # a damaged page: row by row, counting what cannot be read
        first = exc
    try:
        lo, hi = raw.execute("SELECT min(seq), max(seq) FROM events").fetchone()
    except Exception:
        out.lost, out.stopped = None, f"its events cannot be read ({first})"
        return []
    rows = []
    for seq in range(lo or 1, (hi or 0) + 1):
        try:
            row = raw.execute(f"SELECT {own} FROM events WHERE seq = ?", (seq,)).fetchone()
        except Exception as exc:
            out.lost = (out.lost or 0) + 1
            out.stopped = out.stopped or f"event {seq} is in a damaged part of the file ({exc})"
            continue
        if row is not None and row[-2] != eventlog.SHARED:
            rows.append(row)
    return rows


def _verified_item(row: tuple[Any, ...]) -> eventlog.LogItem:
    """One of this machine's own events, as a log item; CorruptLog when it is garbled or
    fails its own hashes."""
    ev = event_from_row(row[:-2])
    scope, source = row[-2], row[-1]
    if scope not in (eventlog.LOCAL, eventlog.PRIVATE) or (source is not None and not isinstance(source, str)):
        raise CorruptLog(f"event {ev.seq}: its scope is not one this machine writes (garbled bytes)")
    body = None if ev.payload is None else eventlog.canonical(ev.payload).decode("utf-8")
    if eventlog.event_hash(ev.uid, ev.type, ev.at, ev.payload_hash, ev.prev) != ev.hash or (
        body is not None and eventlog.sha256(body.encode("utf-8")) != ev.payload_hash
    ):
        raise CorruptLog(f"event {ev.seq} ({ev.type}) fails its own hashes")
    return (ev.uid, ev.type, ev.at, ev.payload, body, ev.payload_hash, scope, source, ev.writer)


def rebuild_cache(
    path: Path, own: Own | None, identity: dict[str, str], replay_shared: Callable[[database.Connection], int]
) -> tuple[Path | None, int]:
    """Write a new cache at ``path``: ``own`` (None: the old file is gone) and then the
    shared log, which ``replay_shared`` replays into the new database in (time, uid) order
    as every read does, returning how many events the cache then holds. The shared log is
    sharing's business, a room above this one, so the caller (``core.opening``) passes its
    replay in. Returns where the old file went and how many events the new cache holds."""
    tmp = _fresh(path)
    conn = database.open_database(tmp, create=True, check=False)
    try:
        with database.transaction(conn):
            for key, value in {**identity, **(own.meta if own else {})}.items():
                database.set_meta(conn, key, value)
            if own and own.events:
                eventlog.append_many(conn, sorted(own.events, key=lambda i: (i[2], i[0])), prev=eventlog.GENESIS)
        n = replay_shared(conn)
    finally:
        conn.close()
    return _swap(path, tmp), n
