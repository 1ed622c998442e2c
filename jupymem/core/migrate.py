"""Moving a repository's memory between its own SQLite file and the team database (``jupymem migrate``).

``migrate(path, URL)`` moves the SQLite memory of ``path``'s repository into its project
on the team database at URL and binds the repository there (as ``init --database`` does);
``migrate(path, "sqlite")`` brings what this person can see there back into a file of the
repository's own. Decisions worth knowing:

* The target's chain is the truth. The source's events are appended after the target's
  head, in the source's order, each keeping its event id (uid), time, writer and payload,
  re-hashed into the target's chain as an import re-hashes them. An event whose uid the
  target holds already is skipped, so running it again, or a teammate moving the same
  history (a repository that shared it through ``.jupymem/``), adds nothing twice; a
  record that would add nothing (the same words are there already) is skipped as an
  import skips it.
* Private memories stay private and the mover's: their events go in as private events,
  written in the mover's role (row-level security keys on it). On the team engine a
  private memory's id derives from its author's role too (``capture.memory_id``), so one
  person's private "X" neither blocks nor reveals a teammate's shared "X": moving there
  re-keys each private memory (``owner`` in its payload) and rewrites what the private
  events that follow say of it. Back in a file the owner is dropped and the id is the
  words' again, as SQLite keys it, so a round trip gives the ids it started with.
* Shared events are moved as they are, never rewritten: a memory said privately and then
  again openly is two memories on the team engine (the private copy and the team's), as
  if both had been said there.
* What the team engine refuses, a shared memory superseded privately (``team.check_supersede``),
  arrives as the private record of the new memory: the shared one stays open for the team.
  gc's events, and events whose payloads gc purged, stay behind (retention is the deciding
  machine's, as in an import). The report counts each.
* Nothing is deleted. Moved to the team, the SQLite file is renamed beside itself
  (``MOVED``; opening, doctor and adoption by another clone no longer find it) and its
  project leaves the registry; every clone on this machine bound to it moves along.
  ``migrate --to URL`` again re-reads that file and adds what the team lacks (nothing,
  the second time). Back to a file, the team's events stay where they are; teammates'
  private memories are invisible to this role and stay behind, by design.
* All or nothing: every event goes in one transaction of the target, and the registry is
  changed only after it committed (run it again after a crash in between: it adds nothing
  and binds).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..config import Settings
from ..errors import AlreadyThere, CorruptLog, JupymemError, NoMemory
from ..intake import clock
from ..storage import database, eventlog, registry
from . import team

TO_FILE = "sqlite"  # ``--to sqlite``: back to a file of the repository's own
MOVED = f"{registry.DB_FILE}.moved-to-team"  # the SQLite file, once moved (kept, never deleted)


@dataclass(frozen=True)
class MigrateReport:
    to: str  # "postgresql" or "sqlite"
    where: str  # host:port/db of the team database, or the file
    project_id: str
    events: int  # read from the source
    added: int
    skipped: int  # the target held them already, or they add nothing
    left_behind: int = 0  # gc's events and purged payloads (to the team)
    private: int = 0  # private events among those added
    rekeyed: dict[str, str] = field(default_factory=dict)  # private memory ids: before -> after
    opened: tuple[str, ...] = ()  # private supersedes of a shared memory, moved as private records
    kept: str | None = None  # the SQLite file, renamed (to the team)
    verified: bool = True
    problems: tuple[str, ...] = ()
    note: str | None = None


class _Moving(NamedTuple):
    uid: str
    type: str
    at: str
    payload: dict[str, Any]
    private: bool
    writer: str | None


def migrate(path: str | Path, to: str, settings: Settings) -> MigrateReport:
    """Move the memory of ``path``'s repository ``to`` a team database URL, or back to a file (``TO_FILE``)."""
    root = registry.require_git_root(path)
    if to.strip().lower() == TO_FILE:
        return _to_file(settings, root)
    if not _is_url(to):
        raise JupymemError(
            f"--to takes a PostgreSQL URL (postgresql://...) or `{TO_FILE}` (back to a file of the repository's "
            f"own), not {to!r}. Nothing was moved."
        )
    return _to_team(settings, root, to)


def _is_url(to: str) -> bool:
    return to.startswith(("postgresql://", "postgres://")) or "=" in to  # or a libpq connection string


# -- to the team database -----------------------------------------------------------------


def _to_team(settings: Settings, root: Path, url: str) -> MigrateReport:
    from ..storage.postgres import connect
    from ..storage.postgres.connection import public_url

    remembered = public_url(url)  # an unreadable URL is refused before anything is opened
    key = team.project_key(root)
    reg = registry.read_registry(settings.home)
    pid = reg.project_for_root(root)
    record = reg.record(pid) if pid is not None else None
    source: Path | None = None
    if record is not None and record.database is not None:
        if team.where(record.database) != team.where(url):
            raise AlreadyThere(
                f"{root.name}'s memory is in another team database ({team.where(record.database)}). Move it back to "
                f"a file first (jupymem migrate --to {TO_FILE}), then here. Nothing was moved."
            )
        source = _kept_file(settings.home, key)
        if source is None:
            raise AlreadyThere(
                f"{root.name}'s memory is already in the team database at {team.where(url)}, and there is no file of "
                "its own left to move. Nothing was moved."
            )
    elif pid is not None and registry.database_path(settings.home, pid).exists():
        source = registry.database_path(settings.home, pid)
    if source is None:
        raise NoMemory(f"{root.name} has no memory of its own to move (no SQLite memory is bound to it). "
                       "Nothing was moved.")
    evts, private = _read_file(source)
    target: Any = connect(url, key, candidates=team.root_commits(root))  # unreachable, no schema, not a member:
    key = target.project  # one line each, nothing moved; the project's own key, if a merge added a lower root
    try:
        moving, rekeyed, opened, left = _for_team(evts, private, target.private_owner)
        added, skipped, n_private = _append(target, moving)
        from ..storage.maintenance import verify

        check = verify(target)
    finally:
        target.close()
    kept = None
    if source.name == registry.DB_FILE:  # the first time: bind, then set the file aside
        assert pid is not None
        moved = _bind_to_team(settings.home, pid, key, remembered)
        kept = str(_set_aside(settings.home, pid, source))
        note = f"{len(moved)} clones on this machine moved with it." if len(moved) > 1 else None
    else:
        kept, note = str(source), "read again from the file kept when it was moved"
    return MigrateReport(
        to="postgresql", where=team.where(url), project_id=key, events=len(evts), added=added, skipped=skipped,
        left_behind=left, private=n_private, rekeyed=rekeyed, opened=tuple(opened), kept=kept,
        verified=check.ok, problems=check.problems, note=note,
    )


def _kept_file(home: Path, key: str) -> Path | None:
    """The file a move to the team set aside for the repository whose root commit is ``key``."""
    for path in sorted((home / registry.PROJECTS_DIR).glob(f"*/{MOVED}")):
        conn = database.open_database(path, create=False, check=False)
        try:
            if database.get_meta(conn, "root_commit") == key:
                return path
        finally:
            conn.close()
    return None


def _read_file(path: Path) -> tuple[list[eventlog.Event], set[int]]:
    """A SQLite memory's events and which are private, once it verifies."""
    from ..storage.maintenance import read_log, verify

    conn = database.open_database(path, create=False)
    try:
        report = verify(conn, shared=eventlog.any_shared(conn))
        if not report.log_ok or not report.ok:
            raise CorruptLog(
                f"{path} does not verify ({report.problems[0] if report.problems else 'its log is damaged'}); "
                "`jupymem verify` says more and `jupymem doctor` repairs. Nothing was moved."
            )
        evts = list(read_log(conn, "Nothing was moved."))
        private = eventlog.private_seqs(conn)
    finally:
        conn.close()
    return evts, private


def _for_team(
    evts: list[eventlog.Event], private: set[int], owner: str
) -> tuple[list[_Moving], dict[str, str], list[str], int]:
    """The events as they go to the team: private memories re-keyed to ``owner``, what the
    team refuses made private records, gc's events and purged payloads left behind."""
    out: list[_Moving] = []
    ids: dict[str, str] = {}  # a private memory's id in the file -> its id on the team engine
    opened: list[str] = []
    left = 0
    for ev in evts:
        if ev.payload is None or ev.type == "gc":
            left += 1
            continue
        type_, payload = ev.type, ev.payload
        if ev.seq in private:
            type_, payload = _rekeyed(type_, payload, ids, owner)
            if type_ != ev.type:
                opened.append(payload["memory"]["id"])
        out.append(_Moving(ev.uid, type_, ev.at, payload, ev.seq in private, ev.writer))
    return out, {k: v for k, v in ids.items() if k != v}, opened, left


def _rekeyed(type_: str, payload: dict[str, Any], ids: dict[str, str], owner: str | None) -> tuple[str, dict[str, Any]]:
    """A private event with its memory keyed for ``owner`` (None: as SQLite keys it) and its
    references rewritten through ``ids``, which learns each memory's new id."""
    from ..intake import capture

    p = dict(payload)
    if "memory" in p:
        m = {k: v for k, v in p["memory"].items() if k != "owner"}
        mine = owner if m.get("private") else None  # only a private memory has an owner
        words = m["original"] if m.get("original") is not None else m["statement"]
        new = capture.memory_id(words, mine)
        if mine is not None:
            m["owner"] = mine
        ids[p["memory"]["id"]] = new
        m["id"] = new
        p["memory"] = m
    if type_ == "supersede":
        if owner is not None and p["old"] not in ids:
            # A shared memory superseded privately: the team engine keeps it open for the
            # team (``team.check_supersede``), and the private version is recorded beside it.
            return "record", {"memory": p["memory"]}
        p["old"] = ids.get(p["old"], p["old"])
    elif "id" in p:  # retire, confirm
        p["id"] = ids.get(p["id"], p["id"])
    return type_, p


def _append(conn: Any, moving: list[_Moving]) -> tuple[int, int, int]:
    """Append ``moving`` after ``conn``'s head in one transaction, each applied as it goes;
    an event the log holds already (its uid) or a record that adds nothing is skipped.
    Returns (added, skipped, private added)."""
    from ..storage.projection import adds_nothing, apply

    added = skipped = n_private = 0
    with database.transaction(conn):
        known = set(eventlog.known(conn, [m.uid for m in moving]))
        prev = eventlog.last_hash(conn)
        for m in moving:
            if m.uid in known or (m.type == "record" and adds_nothing(conn, m.payload["memory"])):
                skipped += 1
                continue
            scope = eventlog.PRIVATE if m.private else eventlog.LOCAL
            ev = eventlog.append(conn, m.uid, m.type, m.at, m.payload, prev=prev, scope=scope, writer=m.writer)
            apply(conn, ev)
            known.add(m.uid)
            prev = ev.hash
            added += 1
            n_private += m.private
    return added, skipped, n_private


def _bind_to_team(home: Path, pid: str, key: str, url: str) -> list[str]:
    """Bind every root bound to the SQLite project ``pid`` to ``key`` on the team database
    at ``url`` (no password), and drop ``pid``'s record. Returns the roots moved."""
    with registry.locked(home):
        reg = registry.read_registry(home)
        roots = reg.roots_of(pid)
        kept = reg.record(key)
        new = registry.ProjectRecord(key, key, kept.created_at if kept else clock.now_at(), database=url)
        bindings = [b for b in reg.bindings if b.project_id != pid]
        bindings += [registry.Binding(r, key) for r in roots]
        projects = [p for p in reg.projects if p.project_id not in (pid, key)]
        registry.write_registry(home, registry.Registry(tuple(bindings), (*projects, new)))
    return roots


def _set_aside(home: Path, pid: str, path: Path) -> Path:
    """Rename the moved SQLite file (its WAL and shared memory with it) to ``MOVED``."""
    from .opening import _forget

    _forget(home, pid)  # this process's connection first: closing checkpoints the WAL
    target = path.with_name(MOVED)
    if target.exists():  # moved once before, and brought back since: keep both
        target = path.with_name(f"{MOVED}-{clock.now_stamp()}")
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{path}{suffix}", f"{target}{suffix}")
    os.replace(path, target)
    return target


# -- back to a file -------------------------------------------------------------------


def _to_file(settings: Settings, root: Path) -> MigrateReport:
    from ..storage.maintenance import verify
    from ..storage.postgres import connect

    reg = registry.read_registry(settings.home)
    pid = reg.project_for_root(root)
    record = reg.record(pid) if pid is not None else None
    url = settings.database_url or (record.database if record is not None else None)
    own = pid is not None and record is not None and record.database is None
    if url is None:
        if own and registry.database_path(settings.home, pid or "").exists():
            raise AlreadyThere(f"{root.name}'s memory is already in a file of its own "
                               f"({registry.database_path(settings.home, pid or '')}). Nothing was moved.")
        raise NoMemory(f"{root.name}'s memory is not on a team database (JUPYMEM_DATABASE_URL is not set and "
                       "`jupymem init --database` did not bind it): there is nothing to bring back. Nothing was moved.")
    key = team.project_key(root)
    source: Any = connect(url, key, candidates=team.root_commits(root))
    key = source.project
    try:
        check = verify(source)
        if not check.ok:
            raise CorruptLog(f"The team database's memory of {root.name} does not verify ({check.problems[0]}); "
                             "`jupymem verify` says more. Nothing was moved.")
        evts = list(eventlog.events(source))
        private = eventlog.private_seqs(source)
    finally:
        source.close()
    moving, ids = _for_file(evts, private)
    if own and pid is not None and registry.database_path(settings.home, pid).exists():
        # JUPYMEM_DATABASE_URL put this repository on the team while a file was bound to it:
        # the file is the target, and what it holds already is skipped.
        path, new = registry.database_path(settings.home, pid), False
    else:
        pid, new = registry.new_project_id(), True
        path = registry.database_path(settings.home, pid)
    with _new_file(path, new, pid, key, root) as conn:
        added, skipped, n_private = _append(conn, moving)
        check = verify(conn)
        n, last = eventlog.last_seq(conn), eventlog.last_hash(conn)
    if new:
        _bind_to_file(settings.home, root, pid, key, n, last)
    note = ("JUPYMEM_DATABASE_URL is set, which puts every repository on the team database: unset it to use "
            "the file.") if settings.database_url else None
    return MigrateReport(
        to="sqlite", where=str(path), project_id=pid, events=len(evts), added=added, skipped=skipped,
        private=n_private, rekeyed=ids, verified=check.ok, problems=check.problems, note=note,
    )


def _for_file(evts: Iterable[eventlog.Event], private: set[int]) -> tuple[list[_Moving], dict[str, str]]:
    """The team's events as a file keeps them: this person's private memories keyed by
    their words alone (the role the team engine adds is dropped)."""
    out: list[_Moving] = []
    ids: dict[str, str] = {}
    for ev in evts:
        if ev.payload is None:
            continue
        type_, payload = ev.type, ev.payload
        if ev.seq in private:
            type_, payload = _rekeyed(type_, payload, ids, None)
        out.append(_Moving(ev.uid, type_, ev.at, payload, ev.seq in private, ev.writer))
    return out, {k: v for k, v in ids.items() if k != v}


@contextlib.contextmanager
def _new_file(path: Path, new: bool, pid: str, key: str, root: Path) -> Iterator[database.Connection]:
    """The SQLite database to bring memory back into; a new one records its own identity
    (for doctor) and is removed again if the move fails."""
    from .opening import _remove_new

    if new and path.exists():
        raise JupymemError(f"{path} exists already; nothing was moved.")  # a random id: never in practice
    try:
        conn = database.open_database(path, create=True)
        try:
            if new:
                with database.transaction(conn):
                    database.set_meta(conn, "project_id", pid)
                    database.set_meta(conn, "root_commit", key)
                    database.set_meta(conn, "created_at", clock.now_at())
                    database.set_meta(conn, "roots", json.dumps([str(root)]))
            yield conn
        finally:
            conn.close()
    except BaseException:
        if new:
            _remove_new(path)
        raise


def _bind_to_file(home: Path, root: Path, pid: str, key: str, events: int, last: str) -> None:
    """Bind ``root`` to its new file, with the history it holds as its mark; the team's
    record goes when no other clone here is bound to it."""
    from ..storage import marks

    with registry.locked(home):
        reg = registry.read_registry(home)
        bindings = [b for b in reg.bindings if b.root != str(root)]
        still = any(b.project_id == key for b in bindings)
        projects = [p for p in reg.projects if still or p.project_id != key]
        projects.append(registry.ProjectRecord(pid, key, clock.now_at(), events, last))
        registry.write_registry(home, registry.Registry((*bindings, registry.Binding(str(root), pid)), tuple(projects)))
    with contextlib.suppress(OSError):  # the registry's mark holds; this one is a second safety net
        marks.write(registry.database_path(home, pid), events, last)
