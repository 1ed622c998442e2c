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
  New events take a time after every event applied (``store.next_at``), so applying them at
  once gives what a replay gives.
* ``enable``/``disable``/``status``/``verify_files``: the switch, what status shows, and the
  file half of ``verify``.

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
import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from . import store
from .damage import disk_full, os_reason
from .errors import InvalidImport, JupymemError, SharingError
from .journal import FileTail, Identity, Journal, fstat, identity
from .projection import Batch, clear
from .sharelog import FOLDER, SUFFIX, Entry, Reading, file_name, log_dir, new_writer_id, read_file
from .store import LOCAL, PRIVATE, SHARED

__all__ = ["CONFIG", "NONE", "OFF", "ON", "Identity", "Journal", "Sharing", "has_log", "identity", "signature",
           "state"]

CONFIG = "config.json"
ON, OFF, NONE = "on", "off", "none"
_ROOT = "share_root"  # the clone the cache was last built for


# -- the folder ----------------------------------------------------------------------------


def state(root: Path) -> str:
    """"on" (write to the files), "off" (files stay as history, writes stay local) or "none"."""
    folder = root / FOLDER
    try:
        config = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ON if log_dir(root).is_dir() else NONE
    except (OSError, ValueError):
        return ON  # a damaged config: the folder is there, so keep the team's history flowing
    return OFF if isinstance(config, dict) and config.get("sharing") == OFF else ON


def has_log(root: Path) -> bool:
    """Whether the repository holds a shared log (then reading it builds a local cache)."""
    try:
        with os.scandir(log_dir(root)) as it:
            return any(e.name.endswith(SUFFIX) for e in it)
    except (FileNotFoundError, NotADirectoryError):
        return False


Signature = tuple[tuple[str, int, int, int], ...]


def signature(root: Path) -> Signature | None:
    """(name, size, mtime_ns, inode) of every log file, or None without a log folder."""
    items = []
    try:
        with os.scandir(log_dir(root)) as it:
            for e in it:
                # Regular files only: a symlink could point anywhere on this machine.
                if not e.name.endswith(SUFFIX) or e.is_symlink():
                    continue
                st = e.stat()
                if stat.S_ISREG(st.st_mode):
                    items.append((e.name, st.st_size, st.st_mtime_ns, st.st_ino))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise SharingError(f"Cannot read {FOLDER}/log ({exc.strerror or exc}); check its permissions.") from None
    return tuple(sorted(items))


README = """\
# .jupymem: this repository's shared memory

This folder is jupymem's memory of this repository, shared through git: the decisions,
constraints, corrections and lessons its people and their notebook assistants recorded.
Commit it like any other file; after a pull, merge or checkout every jupymem face
(`%memory`, the JupyterLab sidebar, the `jupymem` command) reads it with no command to run.

- `log/<name>-<writer>.jsonl`: one append-only file per writer (one clone of one person).
  Each line is one event (record, supersede, retire, confirm) with its time, a unique id,
  the writer's git identity and a hash chaining it to the line before it. Two people
  recording at once write different files, so merges never conflict.
- `.gitattributes` marks these files `merge=union`, in case one writer's file was appended
  to on two branches.
- `config.json` says whether sharing is on (`jupymem share`) or off (`jupymem share --off`:
  the files stay as history, new memories stay on each machine).

Never committed: private memories (`remember --private`), failed cells that no lesson
cites, conversations with assistants, and anything that looks like a secret (refused when
recorded). A lesson that cites a failure carries only its redacted, capped excerpt.

Do not edit these files by hand: `jupymem verify` names any line that fails its hash, and
such a line (and the lines after it in that writer's file) is not applied. To undo a
memory, retire or supersede it (`jupymem retire ID`). To repair a damaged file, restore it
from git history (`git checkout <commit> -- .jupymem/log/<file>`).
"""

GITATTRIBUTES = "*.jsonl merge=union\n"


# -- the cache that follows the files ----------------------------------------------------------


class Sharing:
    """One project's view of its repository's ``.jupymem/`` (held by ``Project``)."""

    def __init__(self, conn: store.Connection, root: Path, on_rebuild: Callable[[], None]):
        self.conn = conn
        self.root = root
        self._on_rebuild = on_rebuild
        self._lock = threading.RLock()
        self._seen: Any = _UNSEEN  # the signature this process last found applied

    @property
    def folder(self) -> Path:
        return self.root / FOLDER

    def state(self) -> str:
        return state(self.root)

    # -- reading ---------------------------------------------------------------------------

    def follow(self) -> None:
        """Bring the cache in step with the files (see the module docstring). Cheap when
        nothing changed: a scandir and a stat per file, no query."""
        sig = signature(self.root)
        if sig == self._seen:
            return
        with self._lock:
            # Read first: another process may already have applied this (or there is
            # nothing shared at all); only a real change takes the write lock.
            if not self._in_step(sig):
                with store.transaction(self.conn):
                    self._sync(sig)
            self._seen = sig

    def _in_step(self, sig: Signature | None) -> bool:
        stored = {r[0]: tuple(r[1:]) for r in self.conn.execute("SELECT name, size, mtime_ns, ino FROM shared_files")}
        current = {name: (size, mtime, ino) for name, size, mtime, ino in sig or ()}
        if sig is None and not stored:
            return not self.has_shared_events()
        return stored == current and store.get_meta(self.conn, _ROOT) in (None, str(self.root))

    def _sync(self, sig: Signature | None) -> None:
        if self._in_step(sig):
            return  # applied by another process while we waited for the lock
        stored = {r[0]: tuple(r[1:]) for r in self.conn.execute("SELECT name, size, mtime_ns, ino FROM shared_files")}
        current = {name: (size, mtime, ino) for name, size, mtime, ino in sig or ()}
        same_clone = store.get_meta(self.conn, _ROOT) in (None, str(self.root))
        # A first contact with the files replays everything in order too: events recorded
        # here before (an import, say) may not be in (time, uid) order yet.
        if not same_clone or not stored or set(stored) - set(current) or (not current and self.has_shared_events()):
            self.rebuild(sig)
            return
        changed = sorted(name for name in current if stored.get(name) != current[name])
        readings = {name: read_file(log_dir(self.root) / name) for name in changed}
        new: dict[str, tuple[Entry, str]] = {}
        for name in changed:
            valid = {e.uid for e in readings[name].entries}
            applied = {r[0] for r in self.conn.execute(
                "SELECT uid FROM events WHERE scope = ? AND source = ?", (SHARED, name))}
            if not applied <= valid:  # something we applied is gone or no longer valid
                self.rebuild(sig, readings)
                return
            for e in readings[name].entries:
                if e.uid not in applied:
                    new.setdefault(e.uid, (e, name))
        known = _known_uids(self.conn, list(new))
        todo = sorted((pair for uid, pair in new.items() if uid not in known), key=lambda p: p[0].key)
        if todo:
            # The last event is the latest in (time, uid) order: every write and every
            # rebuild keeps it so (store.next_at).
            latest = self.conn.execute("SELECT at, uid FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            if latest is not None and todo[0][0].key <= tuple(latest):
                self.rebuild(sig, readings)  # they interleave with what is applied: replay in order
                return
            self._apply_new(todo)
        for name in changed:
            self._store_file(name, current[name], readings[name])
        store.set_meta(self.conn, _ROOT, str(self.root))

    def _apply_new(self, todo: list[tuple[Entry, str]]) -> None:
        evts = store.append_many(
            self.conn, [(e.uid, e.type, e.at, e.payload, e.body, e.payload_hash, SHARED, name) for e, name in todo]
        )
        self._replay(evts)

    def _replay(self, evts: list[store.Event]) -> None:
        ids = [ev.payload["memory"]["id"] for ev in evts if ev.type == "record" and ev.payload]
        with Batch(self.conn, ids) as batch:
            for ev in evts:
                batch.apply(ev)

    def rebuild(self, sig: Signature | None = None, readings: dict[str, Reading] | None = None) -> int:
        """Recreate the cache: every valid event of every file plus this machine's local and
        private events, replayed in (time, uid) order. Returns the number of events."""
        with self._lock, store.transaction(self.conn):
            if sig is None:
                sig = signature(self.root)
            readings = dict(readings or {})
            # A file unchanged since it was applied in full (every line, from this clone)
            # is taken from the cache: its lines were checked when they were applied.
            same_clone = store.get_meta(self.conn, _ROOT) in (None, str(self.root))
            stored = {r[0]: tuple(r[1:]) for r in self.conn.execute(
                "SELECT name, size, mtime_ns, ino, lines, applied FROM shared_files")}
            cached = {
                name for name, size, mtime, ino in sig or ()
                if name not in readings and same_clone and stored.get(name, ())[:3] == (size, mtime, ino)
                and stored[name][3] == stored[name][4]
            }
            items: dict[str, store.LogItem] = {}
            for name, *_ in sig or ():
                if name in cached:
                    for uid, type_, at, body, payload_hash in self.conn.execute(
                        "SELECT uid, type, at, payload, payload_hash FROM events WHERE scope = ? AND source = ?",
                        (SHARED, name),
                    ).fetchall():
                        if uid not in items:
                            items[uid] = (uid, type_, at, json.loads(body), body, payload_hash, SHARED, name)
                    continue
                if name not in readings:
                    readings[name] = read_file(log_dir(self.root) / name)
                for e in readings[name].entries:
                    if e.uid not in items:
                        items[e.uid] = (e.uid, e.type, e.at, e.payload, e.body, e.payload_hash, SHARED, name)
            for uid, type_, at, body, payload_hash, scope, source in self.conn.execute(
                "SELECT uid, type, at, payload, payload_hash, scope, source FROM events WHERE scope != ?", (SHARED,)
            ).fetchall():
                if uid not in items:
                    payload = json.loads(body) if body is not None else None
                    items[uid] = (uid, type_, at, payload, body, payload_hash, scope, source)
            evts = store.replace_log(self.conn, sorted(items.values(), key=lambda i: (i[2], i[0])))
            clear(self.conn)
            self._replay(evts)
            keep = sorted(cached)
            marks = ",".join("?" * len(keep))
            self.conn.execute(f"DELETE FROM shared_files WHERE name NOT IN ({marks})", keep)
            for name, size, mtime, ino in sig or ():
                if name not in cached:
                    self._store_file(name, (size, mtime, ino), readings[name])
            store.set_meta(self.conn, _ROOT, str(self.root))
            self._seen = sig
        self._on_rebuild()
        return len(evts)

    def _store_file(self, name: str, st: tuple[int, int, int], reading: Reading) -> None:
        applied = self.conn.execute(
            "SELECT count(*) FROM events WHERE scope = ? AND source = ?", (SHARED, name)
        ).fetchone()[0]
        self.conn.execute(
            "INSERT OR REPLACE INTO shared_files (name, size, mtime_ns, ino, lines, applied, problems, tail_ok)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (name, *st, reading.lines, applied, json.dumps([str(p) for p in reading.problems], ensure_ascii=False),
             int(reading.tail_ok)),
        )

    def has_shared_events(self) -> bool:
        return self.conn.execute("SELECT 1 FROM events WHERE scope = ? LIMIT 1", (SHARED,)).fetchone() is not None

    # -- writing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[Journal]:
        """One write: a ``Journal`` inside a database transaction, and, when sharing is on,
        an exclusive lock on this writer's file, to which the journal's lines are appended
        (and fsynced) just before the transaction commits."""
        target = self._writer_file() if self.state() == ON else None
        if target is None:
            self.follow()
            with store.transaction(self.conn):
                yield Journal(self.conn, None)
            return
        path, writer = target
        with _filesystem(f"write {FOLDER}/log/{path.name}"):
            path.parent.mkdir(parents=True, exist_ok=True)
            fh = open(path, "a+b")
        with fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                self.follow()
                with store.transaction(self.conn):
                    journal = Journal(self.conn, FileTail(fh, path.name, writer))
                    yield journal
                    written = journal.flush()
                    if written and not journal.deferred:
                        # Our lines are in the database too: the file's record follows them,
                        # so the next read finds nothing to do (and reads no file).
                        self.conn.execute(
                            "UPDATE shared_files SET size = ?, mtime_ns = ?, ino = ?, lines = lines + ?,"
                            " applied = applied + ?, tail_ok = 1 WHERE name = ?",
                            (*fstat(fh), written, written, path.name),
                        )
                with self._lock:
                    self._seen = self._seen_after_write(path.name, fh) if written else self._seen
                    if written and journal.deferred:
                        self._seen = _UNSEEN  # the next read applies what was written
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _seen_after_write(self, name: str, fh: IO[bytes]) -> Any:
        """The signature after our own append: the one just followed, with our file's new
        stats (a full scandir here could hide a file that changed meanwhile)."""
        if self._seen is _UNSEEN or self._seen is None:
            return _UNSEEN
        entries = {n: (n, size, mtime, ino) for n, size, mtime, ino in self._seen}
        entries[name] = (name, *fstat(fh))
        return tuple(sorted(entries.values()))

    def _writer_file(self) -> tuple[Path, dict[str, Any]] | None:
        """This clone's file and the writer fields of its lines; a new one when ours is damaged
        (lines appended after a damaged line would never be applied by anyone)."""
        key = f"writer:{self.root}"
        with store.transaction(self.conn):
            name = store.get_meta(self.conn, key)
            if name is not None:
                row = self.conn.execute("SELECT tail_ok FROM shared_files WHERE name = ?", (name,)).fetchone()
                if row is not None and not row[0]:
                    name = None
            who = identity(self.root)
            if name is None:
                name = file_name(new_writer_id(), who.name if who else None)
                store.set_meta(self.conn, key, name)
        writer_id = name[: -len(SUFFIX)].rsplit("-", 1)[-1]
        fields = {"id": writer_id, "name": who.name if who else None, "email": who.email if who else None}
        return log_dir(self.root) / name, fields

    def writer_file(self) -> str | None:
        """The name of this clone's log file, once it has one."""
        return store.get_meta(self.conn, f"writer:{self.root}")

    # -- the switch ------------------------------------------------------------------------

    def enable(self) -> dict[str, Any]:
        """Turn sharing on: create the folder, write this clone's history into its file."""
        created = []
        was = state(self.root)
        with _filesystem(f"create {FOLDER}/ in {self.root.name}"):
            self.folder.mkdir(exist_ok=True)
            log_dir(self.root).mkdir(exist_ok=True)
            for name, text in (("README.md", README), (".gitattributes", GITATTRIBUTES)):
                path = self.folder / name
                if not path.exists():
                    path.write_text(text, encoding="utf-8")
                    created.append(f"{FOLDER}/{name}")
            _write_config(self.folder, ON)
        if was == NONE:
            created.append(f"{FOLDER}/{CONFIG}")
        written, kept = self._export_local()
        file = self.writer_file()
        path = log_dir(self.root) / file if file else None
        if path is not None and not path.exists():
            with _filesystem(f"create {FOLDER}/log/{file}"):
                path.touch()  # even with nothing to write: the folder must reach git
        if path is not None and f"{FOLDER}/log/{file}" not in created:
            created.append(f"{FOLDER}/log/{file}")
        self.rebuild()  # replay in the order every clone uses
        where = f"{FOLDER}/log/{file}" if file else None
        name = self.root.name
        said = [f"Sharing was already on for {name}." if was == ON else
                f"Sharing is on for {name}: its memory now travels with the repository, in {FOLDER}/."]
        if created:
            said.append(f"Created {', '.join(created)}.")
        if written:
            said.append(f"Wrote {written} events of this clone's history to {where}.")
        if kept:
            said.append(f"{kept} older events stay on this machine: they fail today's checks.")
        said.append("Private memories (remember --private) stay on this machine.")
        if identity(self.root) is None:
            said.append("git knows no user.name/user.email here, so your lines name nobody: "
                        "set them with `git config user.name ...` and `git config user.email ...`.")
        said.append(f"Commit the folder so teammates get it: git add {FOLDER} && git commit -m \"Share jupymem memory\".")
        return {"state": ON, "was": was, "created": created, "written": written, "kept_local": kept,
                "file": where, "message": " ".join(said)}

    def _export_local(self) -> tuple[int, int]:
        """Write the events that live only here (and are not private) into this writer's file."""
        written = kept = 0
        with self.writing() as journal:
            rows = self.conn.execute(
                "SELECT seq, uid, type, at, payload FROM events WHERE scope = ? ORDER BY seq", (LOCAL,)
            ).fetchall()
            for seq, uid, type_, at, payload in rows:
                if payload is None or type_ == "gc":
                    self.conn.execute("UPDATE events SET scope = ? WHERE seq = ?", (PRIVATE, seq))
                    continue
                try:
                    journal.copy(uid, type_, at, json.loads(payload))
                except JupymemError:  # recorded under older rules; today's readers would refuse it
                    self.conn.execute("UPDATE events SET scope = ? WHERE seq = ?", (PRIVATE, seq))
                    kept += 1
                    continue
                self.conn.execute("UPDATE events SET scope = ?, source = ? WHERE seq = ?",
                                  (SHARED, journal.source, seq))
                written += 1
        return written, kept

    def disable(self) -> dict[str, Any]:
        was = state(self.root)
        name = self.root.name
        if was == NONE:
            return {"state": NONE, "was": NONE, "created": [], "written": 0, "kept_local": 0, "file": None,
                    "message": f"Sharing was never on for {name}; nothing changed."}
        with _filesystem(f"write {FOLDER}/{CONFIG}"):
            _write_config(self.folder, OFF)
        mine = self.writer_file()
        return {
            "state": OFF, "was": was, "created": [], "written": 0, "kept_local": 0,
            "file": f"{FOLDER}/log/{mine}" if mine else None,
            "message": (
                f"Sharing is off for {name}: new memories stay on this machine. The files in {FOLDER}/ stay "
                f"as history and are still read. Commit {FOLDER}/{CONFIG} so teammates stop writing there too."
            ),
        }

    def import_events(self, evts: list[store.Event], source: str = "import") -> int:
        """Write imported events into this writer's file; the next read applies them in order."""
        n = 0
        with self.writing() as journal:
            known = _known_uids(self.conn, [ev.uid for ev in evts])
            for ev in evts:
                if ev.payload is None or ev.uid in known or ev.type == "gc":
                    continue
                try:
                    journal.copy(ev.uid, ev.type, ev.at, ev.payload)
                except JupymemError as exc:  # nothing is written: the file is appended to at the end
                    raise InvalidImport(
                        f"{source}: event {ev.seq} cannot be shared: {exc.message} Nothing was imported."
                    ) from None
                known.add(ev.uid)
                n += 1
            journal.defer()  # applied by the read below, in (time, uid) order, not here
        self.follow()
        return n

    # -- what to say about it ----------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        st = self.state()
        out: dict[str, Any] = {"state": st, "folder": FOLDER, "files": [], "problems": [], "writer": None,
                               "identity": None, "shared_events": 0, "local_events": 0, "private_memories": 0}
        who = identity(self.root)
        out["identity"] = str(who) if who else None
        rows = self.conn.execute("SELECT name, lines, applied, problems FROM shared_files ORDER BY name").fetchall()
        for name, lines, applied, problems in rows:
            found = json.loads(problems)
            out["files"].append({"name": name, "lines": lines, "applied": applied, "problems": len(found)})
            out["problems"].extend(found)
        mine = self.writer_file()
        out["writer"] = f"{FOLDER}/log/{mine}" if mine else None
        row = self.conn.execute("SELECT tail_ok FROM shared_files WHERE name = ?", (mine,)).fetchone() if mine else None
        # Our file ends in a line nobody applies: the next memory starts a new file.
        out["writer_damaged"] = bool(row is not None and not row[0])
        # Counted through partial indexes (shared events, private memories): the sidebar
        # asks for status every few seconds.
        count = "SELECT count(*) FROM events WHERE scope = ?"
        out["shared_events"] = self.conn.execute(count, (SHARED,)).fetchone()[0] if rows else 0
        # Events written before sharing was turned on (only a shared repository asks).
        out["local_events"] = self.conn.execute(count, (LOCAL,)).fetchone()[0] if st != NONE else 0
        out["private_memories"] = self.conn.execute(
            "SELECT count(*) FROM memories WHERE private = 1 AND status = 'active'"
        ).fetchone()[0]
        return out

    def verify_files(self) -> tuple[int, list[str]]:
        """(lines read, problems) of every log file, read afresh."""
        lines, problems = 0, []
        for name, *_ in signature(self.root) or ():
            reading = read_file(log_dir(self.root) / name)
            lines += reading.lines
            problems.extend(str(p) for p in reading.problems)
        return lines, problems


_UNSEEN = object()


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


def _write_config(folder: Path, value: str) -> None:
    path = folder / CONFIG
    tmp = folder / f".{CONFIG}.tmp"
    tmp.write_text(json.dumps({"format": 1, "sharing": value}, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _known_uids(conn: store.Connection, uids: list[str]) -> set[str]:
    known: set[str] = set()
    for i in range(0, len(uids), 500):
        chunk = uids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        known.update(r[0] for r in conn.execute(f"SELECT uid FROM events WHERE uid IN ({marks})", chunk))
    return known
