"""verify, rebuild, export and import: the log is the truth, the rest follows (gc: ``retention``).

``verify`` replays the whole log into a scratch in-memory database and
compares it with the live projection, so it catches a broken chain, an
altered payload *and* tables that drifted from their history. It reads the
log and the tables inside one read transaction (one snapshot), so another
process appending meanwhile never looks like damage. ``rebuild``
is the same replay written over the live tables. ``import`` verifies the
incoming file's own chain first, then checks every event as every other
entrance does (``validate``: a re-hashed chain can still carry a forged kind
or a secret), then appends only events whose ``uid`` is new, so importing the
same export twice (or one's own export) adds nothing. An export names the
repository it came from (its root commit, which every clone shares, while project
ids are random per machine); importing one from another repository, or one that
cannot say, is refused unless asked for (``Origin``, ``other_project``), since it
merges another project's memory into this one. ``verify`` runs the same
checks over the database's own log, so an event that would be refused today
(edited by hand, or stored before a check existed) is named. ``export`` leaves
private events out (an export is made to be shared). In a repository that
shares its memory, ``Project`` routes rebuild and import through ``share`` and
adds the files' problems to ``verify``; ``gc`` there keeps the payloads of
shared events and its own event stays on this machine.

A stored event can be garbled (bytes damaged on disk, an edit by hand): a payload
that is not JSON any more, NULL or a number where a hash belongs. It is named,
"event 17: its payload is not JSON (garbled bytes)", never met as a driver or
JSON traceback: ``verify`` reports it and checks what comes before it, ``rebuild``
and ``export`` refuse naming it, and ``doctor`` rebuilds the project from the
verified events before it (``recovery``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from ..errors import CorruptLog, DatabaseDamaged, InvalidImport, JupymemError, OtherProjectImport
from ..intake import strictjson
from . import database, eventlog, validate
from .damage import translated
from .projection import Batch, apply, clear, copy_own_acts, snapshot

EXPORT_FORMAT = 1
MAX_EXPORT_LINE_BYTES = 1024 * 1024  # one event; a statement is at most 16 KB


@dataclass(frozen=True)
class VerifyReport:
    ok: bool
    events: int
    memories: int
    problems: tuple[str, ...] = ()
    shared_lines: int = 0  # lines read from .jupymem/ (a shared repository)
    # False when the log itself is damaged (a garbled event, a broken chain, an altered
    # payload): then only ``doctor`` can help, by rebuilding from the verified events.
    log_ok: bool = True


@dataclass(frozen=True)
class Origin:
    """The repository an import goes into: its root commits (the stored one and git's
    own now, which every clone of it shares), its project id here, and its name."""

    commits: frozenset[str]
    project_id: str | None
    name: str


@dataclass(frozen=True)
class ImportReport:
    events: int  # in the file
    added: int
    skipped: int


def verify(conn: database.Connection, *, shared: bool = False) -> VerifyReport:
    """``shared``: the log is a cache of a shared repository's files (see
    ``validate.problems``). Everything is read from one snapshot (``_one_snapshot``)."""
    if _on_postgres(conn):
        return _verify_team(conn)
    problems: list[str] = []
    log_ok = True
    with _one_snapshot(conn):
        evts, garbled, first_bad = _readable_prefix(conn)
        if garbled:
            log_ok = False
            problems += garbled
            problems.append(
                f"the log cannot be read from event {first_bad} on, so only the {len(evts)} events before it were "
                "checked; `jupymem doctor` rebuilds the project from them (the damaged file is kept aside)."
            )
        try:
            eventlog.check_chain(evts, source="memory log")
        except CorruptLog as exc:
            log_ok = False
            problems.append(exc.message)
        problems += validate.problems([ev.to_json() for ev in evts], references_by_replay=shared)
        if not garbled:  # the tables hold what the whole log made: compare only with all of it
            problems += _compare_with_replay(conn, evts)
        n = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        # FTS5 keeps the index's structure cached per connection and, inside quick_check,
        # does not notice that another process moved it on: read the index once in this
        # snapshot first, or quick_check calls a healthy index malformed.
        try:
            conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'jupymem' LIMIT 1")
        except DatabaseDamaged as exc:
            problems.append(f"the search index cannot be read ({exc.message}); `rebuild` recreates it.")
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
    if check != "ok":
        problems.append(f"SQLite quick_check: {check}")
    if not conn.readonly:  # FTS5's check is spelled as an INSERT, which a read-only file refuses
        try:
            # A write statement: not in the read snapshot, but whole in itself.
            conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
        except Exception as exc:  # the driver's DatabaseError: the index no longer matches its table
            # ... unless the file refused the write itself (opened writable, then made
            # read-only or immutable): that says nothing of the index, which stays unchecked.
            if "readonly" not in str(exc).replace("-", "").replace(" ", "").lower():
                problems.append(f"the search index is out of step ({exc}); `rebuild` recreates it.")
    return VerifyReport(ok=not problems, events=len(evts), memories=n, problems=tuple(problems), log_ok=log_ok)


def _on_postgres(conn: Any) -> bool:
    return getattr(conn, "module_name", None) == "postgresql"


def _verify_team(conn: Any) -> VerifyReport:
    """Verify on the team engine, for a member who may not see every event (others'
    private ones). The database checks the whole chain's links and hashes and names only
    the first bad event (``chain_check``, schema migration 5); this side checks every
    event it can see, payloads included, and that the tables it can see are what a replay
    of those events gives. A private event touches only private memories, so the visible
    events make exactly the visible rows."""
    problems: list[str] = []
    log_ok = True
    with database.transaction(conn):  # one snapshot (and the write lock: no writer moves it meanwhile)
        total, bad_seq, problem = conn.execute("SELECT events, bad_seq, problem FROM chain_check()").fetchone()
        evts = list(eventlog.events(conn))
        n = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        if problem:
            log_ok = False
            at = f"event {bad_seq} " if bad_seq is not None else ""
            problems.append(f"memory log: {at}{problem} (checked by the database, over every event).")
        try:
            eventlog.check_chain(evts, source="memory log", linked=len(evts) == total)
        except CorruptLog as exc:
            log_ok = False
            problems.append(exc.message)
        hidden = total != len(evts)
        problems += validate.problems([ev.to_json() for ev in evts], references_by_replay=hidden)
        problems += _compare_with_replay(conn, evts)
    return VerifyReport(ok=not problems, events=len(evts), memories=n, problems=tuple(problems), log_ok=log_ok)


def applicable(evts: list[eventlog.Event]) -> tuple[int, str | None]:
    """How many of ``evts``, from the first, apply cleanly (replayed into a scratch
    database), and why the next one does not."""
    scratch = database.memory_database()
    try:
        for i, ev in enumerate(evts):
            try:
                apply(scratch, ev)
            except _UNAPPLICABLE as exc:
                return i, f"event {ev.seq} ({ev.type}) cannot be applied ({_describe(exc)})"
    finally:
        scratch.close()
    return len(evts), None


def _compare_with_replay(conn: database.Connection, evts: list[eventlog.Event]) -> list[str]:
    problems = []
    scratch = database.memory_database(_driver_name(conn))
    try:
        copy_own_acts(conn, scratch)  # what this machine says it wrote decides a replay too
        for ev in evts:
            try:
                apply(scratch, ev)
            except _UNAPPLICABLE as exc:  # a payload of the wrong shape, hashed afresh by hand
                return [f"event {ev.seq} ({ev.type}) cannot be applied ({_describe(exc)}), so the tables were not "
                        "compared with the log."]
        live, replayed = snapshot(conn), snapshot(scratch)
    finally:
        scratch.close()
    if _on_postgres(conn):  # the database wrote its JSON columns itself: compare what they say
        live, replayed = _json_read(live), _json_read(replayed)
    for table in live:
        if live[table] != replayed[table]:
            problems.append(f"table {table} differs from a replay of the log; `rebuild` recreates it.")
    return problems


# Where the JSON columns are in ``snapshot``'s rows: memories' evidence, history's detail, cited data.
_JSON_COLUMNS = {"memories": 13, "history": 4, "cited_evidence": 2}


def _json_read(snap: dict[str, list[tuple[Any, ...]]]) -> dict[str, list[tuple[Any, ...]]]:
    """``snapshot`` with its JSON columns parsed and spelled one way, sorted again."""
    out = {}
    for table, rows in snap.items():
        i = _JSON_COLUMNS[table]
        spelled = []
        for row in rows:
            try:
                text = json.dumps(json.loads(row[i]), sort_keys=True, ensure_ascii=False)
            except (TypeError, ValueError):
                text = row[i]  # not JSON: compared as it is, and found different
            spelled.append((*row[:i], text, *row[i + 1:]))
        out[table] = sorted(spelled, key=repr)
    return out


@contextlib.contextmanager
def _one_snapshot(conn: database.Connection) -> Iterator[None]:
    """Every read inside sees the database as one moment: a deferred transaction in WAL
    mode keeps the snapshot its first read took, while other processes go on committing.
    Nothing is written inside it; it ends with a rollback. The connection's lock is held,
    so no thread of this process writes into it either."""
    with conn.lock:
        raw = conn.raw
        if raw.in_transaction:
            yield
            return
        with translated(conn.path):
            raw.execute("BEGIN")
        try:
            yield
        finally:
            with contextlib.suppress(Exception):  # a failed statement may have ended it already
                raw.execute("ROLLBACK")


# -- reading stored events, garbled or not ----------------------------------------------

_TEXT = ("uid", "type", "at", "payload", "payload_hash", "prev", "hash")
_OPTIONAL = ("writer", "source")  # text or NULL; absent from a database before migration 4


def event_columns(present: frozenset[str] | None = None) -> str:
    """The select list ``event_from_row`` reads. Each text column is read as its type and
    its bytes, decoded here: a value that is not UTF-8 any more is then named, instead of
    failing the driver's whole query. ``present``: the columns a (damaged, unmigrated)
    file has, when not every one."""
    return "seq, " + ", ".join(
        f"typeof({c}), CAST({c} AS BLOB)" if present is None or c in present else "'null', NULL"
        for c in _TEXT + _OPTIONAL
    )


EVENT_COLUMNS = event_columns()
# What applying an event of the wrong shape raises (a dict where a list belongs ...).
_UNAPPLICABLE = (KeyError, TypeError, ValueError, AttributeError, IndexError, JupymemError)


def event_from_row(row: Any) -> eventlog.Event:
    """One event read with ``EVENT_COLUMNS``; ``CorruptLog`` naming it, and what is wrong,
    when it is garbled: "event 17: its payload is not JSON (garbled bytes)"."""
    seq = row[0]
    values: dict[str, Any] = {}
    for i, name in enumerate(_TEXT):
        kind, data = row[1 + 2 * i], row[2 + 2 * i]
        if kind == "text":
            try:
                values[name] = bytes(data).decode("utf-8")
            except UnicodeDecodeError:
                raise CorruptLog(f"event {seq}: its {name} is not UTF-8 text (garbled bytes)") from None
        elif kind == "null" and name == "payload":
            values[name] = None  # purged by gc
        else:
            raise CorruptLog(f"event {seq}: its {name} is {_stored_as(kind, data)}, not text (garbled bytes)")
    base = 1 + 2 * len(_TEXT)
    for i, name in enumerate(_OPTIONAL):
        kind, data = (row[base + 2 * i], row[base + 2 * i + 1]) if len(row) > base + 2 * i else ("null", None)
        values[name] = None
        if kind == "text":
            try:
                values[name] = bytes(data or b"").decode("utf-8")
            except UnicodeDecodeError:
                raise CorruptLog(f"event {seq}: its {name} is not UTF-8 text (garbled bytes)") from None
        elif kind != "null":
            raise CorruptLog(f"event {seq}: its {name} is {_stored_as(kind, data)}, not text (garbled bytes)")
    body: dict[str, Any] | None = None
    if values["payload"] is not None:
        try:
            parsed = json.loads(values["payload"])
        except ValueError:
            raise CorruptLog(f"event {seq}: its payload is not JSON (garbled bytes)") from None
        if not isinstance(parsed, dict):
            raise CorruptLog(f"event {seq}: its payload is JSON but not an object (garbled bytes)")
        body = parsed
    return eventlog.Event(
        seq, values["uid"], values["type"], values["at"], body, values["payload_hash"], values["prev"], values["hash"],
        values["writer"], values["source"],
    )


def _stored_as(kind: str, data: Any) -> str:
    if kind == "null":
        return "missing (NULL)"
    if kind == "blob":
        return f"{len(data)} bytes of binary data"
    return f"a number ({kind})"


def _describe(exc: BaseException) -> str:
    return exc.message if isinstance(exc, JupymemError) else f"{type(exc).__name__}: {exc}"


def _rows(conn: database.Connection) -> list[Any]:
    if _on_postgres(conn):  # text is text there (no typeof): each value in the pairs SQLite's give
        return [(seq, *[x for v in rest for x in (("null", None) if v is None else ("text", v.encode()))])
                for seq, *rest in conn.execute(f"SELECT seq, {', '.join(_TEXT + _OPTIONAL)} FROM events ORDER BY seq")]
    return conn.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY seq").fetchall()


def garbled_error(conn: database.Connection, what: str) -> CorruptLog:
    """The error naming the first garbled event, for a caller that met one in its own
    reading (a shared cache's replay): ``what`` says what was not done."""
    found = _readable_prefix(conn)[1]
    first = found[0] if found else "an event of this machine's own cannot be read (garbled bytes)"
    return CorruptLog(
        f"{first}. {what} `jupymem doctor` rebuilds the project from .jupymem/log and the events that can be read "
        "(the damaged file is kept aside)."
    )


def _readable_prefix(conn: database.Connection) -> tuple[list[eventlog.Event], list[str], int | None]:
    """The events before the first garbled one, every garbled event named, and the
    number of the first (None when there is none)."""
    evts: list[eventlog.Event] = []
    garbled: list[str] = []
    first_bad = None
    for row in _rows(conn):
        try:
            ev = event_from_row(row)
        except CorruptLog as exc:
            garbled.append(exc.message)
            first_bad = row[0] if first_bad is None else first_bad
            continue
        if first_bad is None:
            evts.append(ev)
    return evts, garbled, first_bad


def read_log(conn: database.Connection, what: str) -> Iterator[eventlog.Event]:
    """Every event in order; ``CorruptLog`` at the first garbled one, saying that
    ``what`` was not done and what ``doctor`` does."""
    for row in _rows(conn):
        try:
            yield event_from_row(row)
        except CorruptLog as exc:
            raise CorruptLog(
                f"{exc.message}. {what} `jupymem doctor` rebuilds the project from the events before it "
                "(the damaged file is kept aside)."
            ) from None


def _driver_name(conn: database.Connection) -> str:
    if _on_postgres(conn):
        return "sqlite3"  # a replay for comparison runs in a scratch SQLite database
    return "sqlean" if conn.module.__name__.startswith("sqlean") else "sqlite3"


def rebuild(conn: database.Connection) -> int:
    """Recreate every derived table and the search index from the log."""
    with database.transaction(conn):
        clear(conn)
        n = 0
        for ev in read_log(conn, "Nothing was rebuilt."):
            try:
                apply(conn, ev)
            except _UNAPPLICABLE as exc:
                raise CorruptLog(
                    f"event {ev.seq} ({ev.type}) cannot be applied ({_describe(exc)}). Nothing was rebuilt. "
                    "`jupymem doctor` rebuilds the project from the events before it."
                ) from None
            n += 1
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
    return n


def export_log(conn: database.Connection, fp: IO[str], *, project_id: str, repository: str | None = None) -> int:
    """Write the log as JSONL: a header line, then one event per line.

    Private events (``remember --private`` and what touches those memories) are left
    out, since an export is made to be shared; the events written are chained afresh,
    so the file verifies on its own. The header says how many were left out, and which
    repository the export is of (``repository``: its root commit; None when it has none).
    """
    private = eventlog.private_seqs(conn)
    evts, prev = [], eventlog.GENESIS
    logged = read_log(conn, "Nothing was exported.")
    for n, ev in enumerate((ev for ev in logged if ev.seq not in private), 1):
        h = eventlog.event_hash(ev.uid, ev.type, ev.at, ev.payload_hash, prev)
        evts.append(eventlog.Event(n, ev.uid, ev.type, ev.at, ev.payload, ev.payload_hash, prev, h))
        prev = h
    header: dict[str, Any] = {
        "jupymem_export": EXPORT_FORMAT, "project": project_id, "repository": repository, "events": len(evts),
    }
    if private:
        header["private_left_out"] = len(private)
    fp.write(json.dumps(header, sort_keys=True) + "\n")
    for ev in evts:
        fp.write(json.dumps(ev.to_json(), sort_keys=True, ensure_ascii=False) + "\n")
    return len(evts)


def _read_export(fp: IO[str], source: str) -> tuple[dict[str, Any], list[tuple[int, eventlog.Event]]]:
    """The header and the events of an export file, each event with its line number."""
    evts: list[tuple[int, eventlog.Event]] = []
    header: dict[str, Any] | None = None
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
            header = obj
            continue
        try:
            evts.append((number, eventlog.parse_event(obj, source=source, line=number)))
        except CorruptLog as exc:
            raise InvalidImport(exc.message) from None
    if header is None:
        raise InvalidImport(f"{source} has no jupymem export header; is this a `jupymem export` file?")
    return header, evts


def read_import(
    conn: database.Connection, fp: IO[str], source: str = "import", *, origin: Origin | None = None
) -> list[eventlog.Event]:
    """The events of an export, verified (chain) and checked as every entrance checks an
    event (``validate``, against what ``conn`` holds); raises InvalidImport naming the line.
    With ``origin``, an export of another repository is refused (``check_origin``) once
    the file is known to be a sound export: what is wrong with a file is said first."""
    header, lines = _read_export(fp, source)
    evts = [ev for _, ev in lines]
    try:
        eventlog.check_chain(evts, source=source)
    except CorruptLog as exc:
        raise InvalidImport(f"{exc.message} Nothing was imported.") from None
    # A verified chain proves the file is intact, not that what it carries is clean:
    # every event is checked as the live API checks it, against what memory holds.
    validate.check_events(
        ((number, ev.to_json()) for number, ev in lines), validate.DatabaseKnown(conn), source=source
    )
    if origin is not None:
        check_origin(header, origin, source)
    return evts


_FLAG = (
    "If merging it is what you mean, import it again with --other-project (`jupymem import --other-project FILE`, "
    "`%memory import --other-project FILE`, or `import_(..., other_project=True)` in Python). Nothing was imported."
)


def check_origin(header: dict[str, Any], origin: Origin, source: str) -> None:
    """Refuse an export that is not of ``origin``'s repository, or cannot say it is.

    The same repository shares its root commit in every clone, so an export from a
    teammate's clone (or one's own) passes. An export that names no root commit (made
    before exports named one, or of a repository without commits) passes only into the
    project that made it (the same project id); anything else needs the flag."""
    theirs = header.get("repository")
    project = header.get("project")
    if isinstance(theirs, str) and theirs in origin.commits:
        return
    if not isinstance(theirs, str) and project is not None and project == origin.project_id:
        return
    mine = f"root commit {min(origin.commits)[:12]}" if origin.commits else "no commit yet"
    if isinstance(theirs, str):
        what = f"is an export of another repository (root commit {theirs[:12]}, project {project})"
    else:
        what = (f"does not say which repository it is an export of (it names none: an export made by an older "
                f"jupymem, or of a repository without commits), and its project ({project}) is not this one's")
    raise OtherProjectImport(
        f"{source} {what}, not of {origin.name} ({mine}). Importing it would merge another project's memory into "
        f"{origin.name}'s. {_FLAG}"
    )


def import_log(
    conn: database.Connection, fp: IO[str], *, source: str = "import", origin: Origin | None = None
) -> ImportReport:
    evts = read_import(conn, fp, source, origin=origin)
    memory_ids = [ev.payload["memory"]["id"] for ev in evts if ev.type == "record" and ev.payload]
    added = skipped = 0
    with database.transaction(conn), Batch(conn, memory_ids) as batch:
        known = set(eventlog.known(conn, [ev.uid for ev in evts]))  # one query per batch, not one per event
        prev = eventlog.last_hash(conn)
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
            new = eventlog.append(conn, ev.uid, ev.type, ev.at, ev.payload, prev=prev, writer=ev.writer)
            batch.apply(new)
            known.add(ev.uid)
            prev = new.hash
            added += 1
    return ImportReport(events=len(evts), added=added, skipped=skipped)

