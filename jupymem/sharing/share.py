"""Memory that travels with the repository: the ``.jupymem/`` folder and the cache that follows it.

``jupymem share`` turns sharing on for a repository: a committed ``.jupymem/`` folder holds
the event log as one append-only JSONL file per writer (``sharelog`` is the format). The
project database under ``$JUPYMEM_HOME`` becomes a cache of the union of those files plus
this machine's own events that never go there (private memories, and history recorded
before sharing was turned on until ``share`` writes it out). Three moving parts:

* ``Sharing.follow`` runs at the start of every read in every face (``opening.find_project``):
  it stats the log files and compares them with what the cache last applied. Unchanged:
  that is all (a scandir and one stat per file). A file that only gained events whose
  (time, uid) sort after everything applied: those events are applied. Anything else (a
  checkout, a rebase, a pull that interleaves with our own writes, a removed or damaged
  file): the cache is rebuilt from the files and the local events, in (time, uid) order,
  which every clone shares, so two clones holding the same files hold the same memory.
* ``Sharing.writing`` is how ``Project`` writes: under an exclusive lock on the writer's
  file it follows first, then the new events go to the file (appended, fsynced) just before
  the database transaction commits. A crash between the two leaves an event in the file
  only; the next read applies it (events are keyed by uid, so nothing is applied twice).
  New events take a time after every event applied (``eventlog.next_at``), so applying them at
  once gives what a replay gives.
* ``switch``: ``enable``/``disable``/``status``/``import_events``, the switch and what
  status shows; ``Sharing.verify_files`` is the file half of ``verify``.

The write side (who writes, the journal of one write, the file's tail) is ``journal``.
A writer is one clone of one person: its id is random, kept per clone in this database,
and names its file with the git ``user.name`` (``ana-3f9a2c1d4e.jsonl``), so nobody appends
to the same file from two places. The git identity (``user.name``/``user.email``) is written
into every line and into each memory's provenance (``author``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import threading
import time
from collections.abc import Callable, Container, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..intake import clock
from ..storage import database, eventlog, projection
from ..storage.damage import disk_full, os_reason
from ..errors import SharingError
from . import checkout, claims
from .folder import LinkRefused, opened
from .history import Kept, added_order
from .reading import read_one
from .listing import (
    CONFIG, NONE, OFF, ON, Applied, Signature, Stat, folder_problems, has_log, scan, signature,
    state, stats,
)
from .identity import Identity, identity
from .journal import ROTATE_AT, ROTATE_AT_BYTES, FileTail, Journal, fstat
from ..storage.projection import Batch, clear
from .sharelog import (
    FOLDER, LOG_DIR, SUFFIX, Entry, Reading, file_name, new_writer_id, who, writer_of,
)
from .together import combine
from ..storage.eventlog import SHARED

if TYPE_CHECKING:
    from ..reports import SharingState

__all__ = ["CONFIG", "NONE", "OFF", "ON", "SEEN", "Identity", "Journal", "Sharing", "folder_problems", "has_log",
           "identity", "signature", "state", "stats"]

_ROOT = "share_root"  # the clone the cache was last built for
MAX_SHOWN_PROBLEMS = 20  # per file, in status
_TAKEN = "share_taken"  # committed lines taken out of writer files, at a HEAD (JSON; ``history.kept``)
_CONFLICTS = "share_conflicts"  # the files that give a uid to two events (JSON list; together.combine)
# meta key: {shared file: the pull in which this clone first saw it}; this clone's own file is -1.
# Written here, read by the block (core.block), which orders its turns by it.
SEEN = "share_seen"


# -- the cache that follows the files ----------------------------------------------------------


class Sharing:
    """One project's view of its repository's ``.jupymem/`` (held by ``Project``)."""

    def __init__(self, conn: database.Connection, root: Path, on_rebuild: Callable[[], None]):
        self.conn = conn
        self.root = root
        self._on_rebuild = on_rebuild
        self._lock = threading.RLock()
        self._seen: Any = _UNSEEN  # the signature this process last found applied
        self._due: str | None = None  # the earliest time a waiting line comes due
        self._names: tuple[Any, frozenset[str]] | None = None  # (self._seen, its names)
        self._refused: tuple[float, list[str]] = (-1.0, [])  # (when, what follow's scan found refused)

    @property
    def folder(self) -> Path:
        return self.root / FOLDER

    def state(self) -> SharingState:
        return state(self.root)

    # -- reading ---------------------------------------------------------------------------

    def folder_problems(self) -> list[str]:
        """``folder_problems``, from the scan ``follow`` just made when it made one (a
        status follows first: one listing of the folder, not two)."""
        at, problems = self._refused
        if time.monotonic() - at < _RESCAN_AFTER:
            return list(problems)
        return folder_problems(self.root, self.known())

    def known(self) -> Container[str]:
        """The files this cache has read (their names were checked then)."""
        seen = self._seen
        if seen is _UNSEEN or seen is None:
            return {r[0] for r in self.conn.execute("SELECT name FROM shared_files")}
        if self._names is None or self._names[0] is not seen:
            self._names = (seen, frozenset(name for name, *_ in seen))
        return self._names[1]

    def follow(self) -> None:
        """Bring the cache in step with the files (see the module docstring). Cheap when
        nothing changed: a scandir and a stat per file, no query."""
        # A process's first read takes the cache's rows once: their names spare the
        # listing a scan of each name, and they are what the listing is compared with.
        stored = self._stored() if self._seen is _UNSEEN or self._seen is None else None
        sig, refused = scan(self.root, stored if stored is not None else self.known())
        self._refused = (time.monotonic(), refused)
        if sig == self._seen and (self._due is None or clock.now_at() < self._due):
            return
        with self._lock:
            # Read first: another process may already have applied this (or there is
            # nothing shared at all); only a real change takes the write lock.
            if not self._in_step(sig, stored):
                with database.transaction(self.conn):
                    self._sync(sig)
            self._seen = sig
            self._due = self._next_due()

    def _next_due(self) -> str | None:
        return self.conn.execute("SELECT min(due) FROM shared_files").fetchone()[0]

    def _stored(self) -> dict[str, Applied]:
        """What was applied of each file."""
        return {r[0]: Applied(tuple(r[1:5]), *r[5:]) for r in self.conn.execute(
            "SELECT name, size, mtime_ns, ctime_ns, ino, lines, applied, due, tail_ok FROM shared_files")}

    def _in_step(self, sig: Signature | None, stored: dict[str, Applied] | None = None) -> bool:
        stored = self._stored() if stored is None else stored
        current = stats(sig)
        if sig is None and not stored:
            return not self.has_shared_events()
        now = clock.now_at()
        return (
            {name: row.stat for name, row in stored.items()} == current
            and not any(row.due is not None and row.due <= now for row in stored.values())
            and database.get_meta(self.conn, _ROOT) in (None, str(self.root))
        )

    def _read(self, names: list[str], now: datetime, kept: Kept | None = None) -> dict[str, Reading]:
        """Each file of ``names``, with what history says of it (``kept``: the committed
        lines taken out of it, read first; the lines a rewrite put in, not applied)."""
        if not names:  # .jupymem may be gone, or a link (refused): there is nothing to open
            return {}
        kept = kept or Kept({}, {})
        try:
            with opened(self.root) as folder:
                return {name: read_one(folder, name, now, kept) for name in names}
        except LinkRefused:  # it became a link since it was listed: none of its files is read
            return {name: read_one(None, name, now, kept) for name in names}

    def _taken(self) -> Kept:
        """What history says of the writer files (``history.kept``): committed lines that a
        commit on this branch took out (a cut, a rewrite, a deleted file), which memory
        keeps, and the lines a rewriting commit put in, which it does not apply. What was
        found at the last HEAD is kept in the cache, and asked again of git only as far as
        the commits since; nothing without git."""
        from .history import as_kept, kept

        before = json.loads(database.get_meta(self.conn, _TAKEN) or "null")
        now = kept(self.root, before if isinstance(before, dict) and before.get("root") == str(self.root) else None)
        if now is None:
            return Kept({}, {})
        now = {**now, "root": str(self.root)}
        if now != before:
            database.set_meta(self.conn, _TAKEN, json.dumps(now, ensure_ascii=False))
        return as_kept(now)

    def _sync(self, sig: Signature | None) -> None:
        if self._in_step(sig):
            return  # applied by another process while we waited for the lock
        stored = self._stored()
        current = stats(sig)
        same_clone = database.get_meta(self.conn, _ROOT) in (None, str(self.root))
        # A first contact with the files replays everything in order too: events recorded
        # here before (an import, say) may not be in (time, uid) order yet.
        if not same_clone or not stored or set(stored) - set(current) or (not current and self.has_shared_events()):
            self.rebuild(sig)
            return
        now = clock.now()
        now_at = clock.format_at(now)
        changed = sorted(
            name for name in current
            if name not in stored or stored[name].stat != current[name] or (stored[name].due or "~") <= now_at
        )
        # A pull that took committed lines out of a file (or a whole file) replays with them.
        taken = self._taken().files
        if any(name in taken for name in changed) or taken - set(current):
            self.rebuild(sig)
            return
        readings = self._read(changed, now)
        new: dict[str, tuple[Entry, str]] = {}
        for name in changed:
            valid = {e.uid: (e.type, e.at, e.payload_hash) for e in readings[name].entries}
            applied = {r[0]: tuple(r[1:]) for r in self.conn.execute(
                "SELECT uid, type, at, payload_hash FROM events WHERE scope = ? AND source = ?", (SHARED, name))}
            # Something we applied is gone, no longer valid, in conflict, or now says something else.
            if any(valid.get(uid) != event for uid, event in applied.items()):
                self.rebuild(sig, readings)
                return
            for e in readings[name].entries:
                if e.uid in applied:
                    continue
                other = new.get(e.uid)
                if other is not None and not other[0].same_event(e):
                    self.rebuild(sig, readings)  # two files give one uid to two events
                    return
                new.setdefault(e.uid, (e, name))
        founding = {m["id"]: name for e, name in new.values() if (m := _founds(e)) is not None}
        if founding and any(
            row[1] is not None and row[1] != founding[row[0]]
            for row in _sources(self.conn, list(founding))
        ):
            self.rebuild(sig, readings)  # another file's memory: which file owns it is settled by a replay of all
            return
        known = eventlog.known(self.conn, list(new))
        if any(uid in known and known[uid] != (e.type, e.at, e.payload_hash) for uid, (e, _) in new.items()) or (
            new and database.get_meta(self.conn, _CONFLICTS) not in (None, "[]")
        ):
            self.rebuild(sig, readings)  # a uid another event already has: settled by a replay of all
            return
        todo = sorted((pair for uid, pair in new.items() if uid not in known), key=lambda p: p[0].key)
        if todo:
            # The last event is the latest in (time, uid) order: every write and every
            # rebuild keeps it so (eventlog.next_at).
            latest = self.conn.execute("SELECT at, uid FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            if latest is not None and todo[0][0].key <= tuple(latest):
                self.rebuild(sig, readings)  # they interleave with what is applied: replay in order
                return
            self._apply_new(todo)
        for name in changed:
            self._store_file(name, current[name], readings[name])
        self._note_seen(list(current))
        database.set_meta(self.conn, _ROOT, str(self.root))

    def _apply_new(self, todo: list[tuple[Entry, str]]) -> None:
        evts = eventlog.append_many(
            self.conn,
            [(e.uid, e.type, e.at, e.payload, e.body, e.payload_hash, SHARED, name, e.who) for e, name in todo],
        )
        self._replay(evts)

    def _replay(self, evts: list[eventlog.Event]) -> None:
        ids = [ev.payload["memory"]["id"] for ev in evts if ev.type == "record" and ev.payload]
        with Batch(self.conn, ids) as batch:
            for ev in evts:
                batch.apply(ev)

    def rebuild(self, sig: Signature | None = None, readings: dict[str, Reading] | None = None) -> int:
        """Recreate the cache: every valid event of every file plus this machine's local and
        private events, replayed in (time, uid) order. Returns the number of events."""
        with self._lock, database.transaction(self.conn):
            if sig is None:
                sig = signature(self.root)
            now = clock.now()
            readings = dict(readings or {})
            names = [name for name, *_ in sig or ()]
            # A file unchanged since it was applied in full (every line, from this clone, with
            # no uid in conflict) is taken from the cache: its lines were checked when applied.
            same_clone = database.get_meta(self.conn, _ROOT) in (None, str(self.root))
            stored = self._stored()
            conflicted = set(json.loads(database.get_meta(self.conn, _CONFLICTS) or "[]"))
            kept = self._taken()
            taken = kept.files
            for name in set(readings) & taken:
                del readings[name]  # read without what history took out of it: read again with it
            cached = {
                name for name, stat in stats(sig).items()
                if name not in readings and same_clone and name not in conflicted and name in stored
                and stored[name].stat == stat and stored[name].lines == stored[name].applied and name not in taken
            }
            from_cache: dict[str, list[eventlog.LogItem]] = {}
            for name in sorted(cached):
                from_cache[name] = [
                    (uid, type_, at, json.loads(body), body, payload_hash, SHARED, name, writer)
                    for uid, type_, at, body, payload_hash, writer in self.conn.execute(
                        "SELECT uid, type, at, payload, payload_hash, writer FROM events WHERE scope = ? AND source = ?",
                        (SHARED, name),
                    ).fetchall()
                ]
            # A file taken out whole (deleted) is read from its lines in history alone.
            todo = [name for name in [*names, *sorted(set(kept.lines) - set(names))]
                    if name not in cached and name not in readings]
            readings.update(self._read(todo, now, kept))
            # A uid that a file read now shares with a cached file's event: read that one too,
            # so that the conflict is settled with both lines in hand (together.combine).
            read_uids = {e.uid: e for r in readings.values() for e in r.entries}
            clashing = [name for name, items in from_cache.items()
                        if any(i[0] in read_uids and not _same(read_uids[i[0]], i) for i in items)]
            if clashing:
                readings.update(self._read(clashing, now, kept))
                for name in clashing:
                    del from_cache[name]
            # An id recorded in a cached file and in another: both read, to settle its owner with line numbers.
            founders: dict[str, set[str]] = {}
            for name, reading in readings.items():
                for e in reading.entries:
                    if (m := _founds(e)) is not None:
                        founders.setdefault(m["id"], set()).add(name)
            for name, cached_items in from_cache.items():
                for item in cached_items:
                    if (m := claims.memory_of(item[1], item[3])) is not None:
                        founders.setdefault(m["id"], set()).add(name)
            involved = {name for names_ in founders.values() if len(names_) > 1 for name in names_} & set(from_cache)
            if involved:
                readings.update(self._read(sorted(involved), now, kept))
                for name in involved:
                    del from_cache[name]
            combined, together = combine(readings)
            contested = claims.contested(readings)
            owned = claims.owners(contested, claims.git_order(self.root) if contested else None,
                                  projection.sources(self.conn, contested) if contested else None)
            together += claims.problems(contested, owned)
            items: dict[str, eventlog.LogItem] = {}
            for e, name, key in combined:
                items[key] = (key, e.type, e.at, e.payload, e.body, e.payload_hash, SHARED, name, e.who)
            for name in sorted(from_cache):
                for item in from_cache[name]:
                    items.setdefault(item[0], item)
            for uid, type_, at, body, payload_hash, scope, source, writer in self.conn.execute(
                "SELECT uid, type, at, payload, payload_hash, scope, source, writer FROM events WHERE scope != ?",
                (SHARED,),
            ).fetchall():
                payload = json.loads(body) if body is not None else None
                if uid in items:
                    if items[uid][2] == at and items[uid][5] == payload_hash:
                        continue  # this machine's event, in a file now (share wrote it out)
                    uid = f"{uid}:local"  # a file reuses the uid of this machine's own event
                items.setdefault(uid, (uid, type_, at, payload, body, payload_hash, scope, source, writer))
            evts = eventlog.replace_log(self.conn, sorted(items.values(), key=claims.replay_order(owned, items.values())))
            clear(self.conn)
            self._replay(evts)
            for p in together:
                if p.file in readings:
                    readings[p.file].problems.append(p)
            # Files in conflict are read again at every rebuild, and any new line rebuilds (``_sync``).
            conflicts = {p.file for p in together if "reuses the event id" in p.message}
            # So are files whose record of an id replays after its owner's though dated before it
            # (claims.replay_order): the last event applied is then not the latest in (time, uid).
            conflicts |= {f for mid, cs in contested.items() if any(c.entry.key < owned[mid].entry.key for c in cs)
                          for f in (owned[mid].file, *(c.file for c in cs))}
            database.set_meta(self.conn, _CONFLICTS, json.dumps(sorted(conflicts)))
            keep = sorted(from_cache)
            marks = ",".join("?" * len(keep))
            self.conn.execute(f"DELETE FROM shared_files WHERE name NOT IN ({marks})", keep)
            for name, stat in stats(sig).items():
                if name not in from_cache:
                    self._store_file(name, stat, readings[name])
            self._note_seen(names)
            database.set_meta(self.conn, _ROOT, str(self.root))
            self._seen = sig
            self._due = self._next_due()
        self._on_rebuild()
        return len(evts)

    def _note_seen(self, names: list[str], *, own: bool = False) -> None:
        """Remember when this clone first saw each file (its own file -1), which orders the
        block's turns and a pattern's copies in a way no line can claim (``SEEN``, read by
        ``core.block`` and ``retrieval.repeats``). Files one pull brings are numbered by
        how many of the others an ancestor of their commit added (``history.added_order``):
        a file committed on top of another comes after it, a branch cut from an old
        commit gains nothing by it, and files no commit added come last."""
        seen: dict[str, int] = json.loads(database.get_meta(self.conn, SEEN) or "{}")
        new = [name for name in names if name not in seen]
        if not new:
            return
        if own:
            seen.update((name, -1) for name in new)
        else:
            added = added_order(self.root, new) if len(new) > 1 else {}  # one git call, when files arrive
            last = max(added.values(), default=-1) + 1
            batch = max((v for v in seen.values()), default=0) + 1
            seen.update((name, batch + added.get(name, last)) for name in new)
        database.set_meta(self.conn, SEEN, json.dumps(seen, sort_keys=True))

    def _store_file(self, name: str, st: Stat, reading: Reading) -> None:
        applied = self.conn.execute(
            "SELECT count(*) FROM events WHERE scope = ? AND source = ?", (SHARED, name)
        ).fetchone()[0]
        # Status (and the sidebar, every few seconds) shows the first few; verify names all.
        problems = [str(p) for p in sorted(reading.problems, key=lambda p: p.line)]
        if len(problems) > MAX_SHOWN_PROBLEMS:
            more = len(problems) - MAX_SHOWN_PROBLEMS
            problems = [*problems[:MAX_SHOWN_PROBLEMS],
                        f"{FOLDER}/{LOG_DIR}/{name}: {more:,} more problems; `jupymem verify` names every one."]
        self.conn.execute(
            "INSERT OR REPLACE INTO shared_files (name, size, mtime_ns, ctime_ns, ino, lines, applied, problems,"
            " tail_ok, due) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, *st, reading.lines, applied, json.dumps(problems, ensure_ascii=False), int(reading.tail_ok),
             reading.due),
        )

    def has_shared_events(self) -> bool:
        return self.conn.execute("SELECT 1 FROM events WHERE scope = ? LIMIT 1", (SHARED,)).fetchone() is not None

    # -- writing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[Journal]:
        """One write: a ``Journal`` inside a database transaction, and, when sharing is on,
        an exclusive lock on this writer's file, to which the journal's lines are appended
        (and fsynced) just before the transaction commits. A file whose end is not a line
        this writer can follow (cut short, edited, full, replaced by a link) is left as it
        is, and the write goes to a new file."""
        if self.state() != ON or self.held_back() is not None:
            who_writes = identity(self.root)
            self.follow()
            with database.transaction(self.conn):
                yield Journal(self.conn, None, str(who_writes) if who_writes else None)
            return
        fh, tail = self._open_tail()
        with fh:
            try:
                with database.transaction(self.conn):
                    # Named as every reader of the file names it (sharelog.who).
                    journal = Journal(self.conn, tail, who(tail.writer))
                    yield journal
                    written = journal.flush()
                    if written and not journal.deferred:
                        # Our lines are in the database too: the file's record follows them,
                        # so the next read finds nothing to do (and reads no file).
                        self.conn.execute(
                            "UPDATE shared_files SET size = ?, mtime_ns = ?, ctime_ns = ?, ino = ?, lines = lines + ?,"
                            " applied = applied + ?, tail_ok = 1 WHERE name = ?",
                            (*fstat(fh), written, written, tail.name),
                        )
                with self._lock:
                    self._seen = self._seen_after_write(tail.name, fh) if written else self._seen
                    if written and journal.deferred:
                        self._seen = _UNSEEN  # the next read applies what was written
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def held_back(self) -> str | None:
        """Why new events stay on this machine though sharing is on: a git attribute
        under which git would rewrite what jupymem appends (``checkout.rewritten_on_commit``),
        or None."""
        name = self.writer_file() or file_name("0" * 10, None)
        try:
            with opened(self.root) as folder:
                if folder is None:
                    return None
                return checkout.rewritten_on_commit(self.root, folder, f"{FOLDER}/{LOG_DIR}/{name}")
        except (LinkRefused, OSError):
            return None  # the write itself says what is wrong with the folder

    def _open_tail(self) -> tuple[IO[bytes], FileTail]:
        """This writer's file, open and locked, in step with the cache, ready to append to."""
        for attempt in range(3):
            name, writer = self._writer_file(new=attempt > 0)
            where = f"{FOLDER}/{LOG_DIR}/{name}"
            try:
                with _filesystem(f"write {where}"), opened(self.root, create=True) as folder:
                    assert folder is not None
                    folder.log(create=True)  # a log folder that is a link: no file of ours can help
                    try:
                        fh = folder.append_log(name)
                    except LinkRefused:
                        # Our file is a link now (someone committed one in its place): like a
                        # damaged file, it is left alone (status names it) and we write a new one.
                        continue
            except LinkRefused as exc:
                raise SharingError(f"Nothing was recorded: {exc.message}") from None
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                self.follow()
                row = self.conn.execute("SELECT lines, tail_ok FROM shared_files WHERE name = ?", (name,)).fetchone()
                tail = FileTail(fh, name, writer, row[0] if row else 0)
                if tail.prev is not None and (row is None or row[1]) and not tail.full:
                    return fh, tail
            except BaseException:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
                fh.close()
                raise
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            fh.close()
        raise SharingError(f"Cannot start a new file in {FOLDER}/{LOG_DIR}; nothing was recorded.")

    def _seen_after_write(self, name: str, fh: IO[bytes]) -> Any:
        """The signature after our own append: the one just followed, with our file's new
        stats (a full scandir here could hide a file that changed meanwhile)."""
        if self._seen is _UNSEEN or self._seen is None:
            return _UNSEEN
        entries = {n: (n, *stat) for n, stat in stats(self._seen).items()}
        entries[name] = (name, *fstat(fh))
        return tuple(sorted(entries.values()))

    def _writer_file(self, *, new: bool = False) -> tuple[str, dict[str, Any]]:
        """This clone's file and the writer fields of its lines; a new one when asked, or
        when ours is damaged (lines appended after a damaged line would never be applied
        by anyone) or full."""
        key = f"writer:{self.root}"
        with database.transaction(self.conn):
            name = None if new else database.get_meta(self.conn, key)
            if name is not None:
                row = self.conn.execute(
                    "SELECT tail_ok, lines, size FROM shared_files WHERE name = ?", (name,)).fetchone()
                if row is not None and (not row[0] or row[1] >= ROTATE_AT or row[2] >= ROTATE_AT_BYTES):
                    name = None
            who_writes = identity(self.root)
            if name is None:
                name = file_name(new_writer_id(), who_writes.name if who_writes else None)
                database.set_meta(self.conn, key, name)
                self._note_seen([name], own=True)
        writer_id = writer_of(name) or name[: -len(SUFFIX)].rsplit("-", 1)[-1]
        fields = {"id": writer_id, "name": who_writes.name if who_writes else None,
                  "email": who_writes.email if who_writes else None}
        return name, fields

    def writer_file(self) -> str | None:
        """The name of this clone's log file, once it has one."""
        return database.get_meta(self.conn, f"writer:{self.root}")


    def verify_files(self) -> tuple[int, list[str]]:
        """(lines read, problems) of every log file, read afresh and together."""
        names = [name for name, *_ in signature(self.root) or ()]
        from .history import UNCHECKED, taken  # verify alone names what history took out

        found = taken(self.root)
        kept = Kept(found.lines, found.tainted, found.dropped) if found is not None else Kept({}, {})
        readings = self._read([*names, *sorted(set(kept.lines) - set(names))], clock.now(), kept)
        _, together = combine(readings)
        contested = claims.contested(readings)
        seen = projection.sources(self.conn, contested) if contested else None
        together += claims.problems(contested, claims.owners(contested, claims.git_order(self.root), seen))
        shallow = [claims.SHALLOW] if contested and claims.shallow(self.root) else []
        lines = sum(r.lines for r in readings.values())
        problems = [str(p) for r in readings.values() for p in r.problems] + [str(p) for p in together]
        attributes = checkout.attribute_problems(self.root, [f"{FOLDER}/{LOG_DIR}/{name}" for name in names])
        rewritten = [UNCHECKED] if found is None else [str(r) for r in found.removals]
        return lines, problems + folder_problems(self.root) + attributes + rewritten + shallow


_UNSEEN = object()
# Seconds: a scan older than this is not reused for what status says (a status follows
# first, so it normally finds one made a moment ago; verify always lists afresh).
_RESCAN_AFTER = 5.0


def _founds(e: Entry) -> dict[str, Any] | None:
    return claims.memory_of(e.type, e.payload)


def _sources(conn: database.Connection, ids: list[str]) -> list[tuple[str, str | None]]:
    """(id, the file that recorded it first) of the memories among ``ids``."""
    out: list[tuple[str, str | None]] = []
    for batch, marks in database.in_batches(ids):
        out += conn.execute(f"SELECT id, source FROM memories WHERE id IN ({marks})", batch).fetchall()
    return out


def _same(e: Entry, item: eventlog.LogItem) -> bool:
    return (e.type, e.at, e.payload_hash) == (item[1], item[2], item[5])


@contextlib.contextmanager
def _filesystem(what: str) -> Iterator[None]:
    """OSError -> SharingError: a permission or a full disk is said plainly, never a traceback."""
    try:
        yield
    except OSError as exc:
        if disk_full(exc):  # said as what it is, never as a permission
            raise SharingError(f"Cannot {what}: {os_reason(exc)}. Free some space, or keep memory on this machine "
                               "with `jupymem share --off`.") from None
        raise SharingError(
            f"Cannot {what} ({exc.strerror or exc}). Check the folder's permissions and free space, "
            "or keep memory on this machine with `jupymem share --off`."
        ) from None


