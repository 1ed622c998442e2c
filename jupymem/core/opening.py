"""Opening projects: find (never writes), require, init (binds or adopts); doctor is ``doctor``'s.

Split from ``core`` because opening is about the home directory, the registry and
the health of each database, while ``Project`` is about one database's memory.
Projects are cached per process, so a kernel hook or a server handler that asks for
the same project again gets the same connection.

Opening is split in two on purpose: ``find_project`` only reads (status, search,
block and list never create anything, anywhere), ``init_project`` binds and creates.
The one exception is a repository that holds a shared log (``.jupymem/``, see
``share``): it has memory, so reading it binds it and builds the local cache. Every
project handed out has followed its shared files first (``Project.follow``).

Neither guesses about damage. A bound project whose database is missing, empty or
holds less history than its marks say it held (the registry's, ``registry.record_mark``,
and the one beside the database that every write leaves, ``marks``) is *lost*:
``DatabaseLost`` says so, naming the file, and nothing is recreated in its place; a
database that is not a database any more is ``DatabaseDamaged``; one written by a newer
jupymem is ``SchemaTooNew`` and is never touched. All point at ``doctor`` (``core.doctor``),
which checks every database, reports each, recovers what the event logs still hold
(``recovery``) and, only when asked (``accept_loss``), starts a lost project afresh. The
checks it shares with opening (marks, what counts as lost) and the registry's rebuild
stay here.

A shared repository's database is a cache of its ``.jupymem/log`` files plus this
machine's own events, and its sequence numbers are re-derived whenever it is replayed:
marks do not apply to it, and ``doctor`` rebuilds a missing or damaged one from the
files and whatever of its own events the damaged file still holds, saying what was not.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import (
    DatabaseDamaged, DatabaseLost, JupymemError, NoMemory, NotOnTeamEngine, RegistryCorrupt, SchemaTooNew,
    StorageError, warn,
)
from ..intake import clock
from ..storage import database, eventlog, marks, registry
from . import team
from .project import Project

# Sharing, recovery and maintenance are imported inside the functions that need them: a
# command that only reads an unshared repository (`jupymem block`) needs none of them, and
# they cost more to import than the read itself (see ``_has_log``).
if TYPE_CHECKING:
    from ..storage.maintenance import ImportReport



_open: dict[tuple[str, str, str], Project] = {}
_open_lock = threading.Lock()


def _cached(settings: Settings, project_id: str, root: Path, record: registry.ProjectRecord | None) -> Project:
    key = (str(settings.home), project_id, str(root))
    with _open_lock:
        proj = _open.get(key)
        if proj is not None and proj.database.exists():
            return proj
        if proj is not None:  # its file went away under us: never carry on with a ghost
            del _open[key]
            proj.conn.close()
        path = registry.database_path(settings.home, project_id)
        conn = _open_checked(path, project_id, root, record)
        proj = Project(settings, project_id, root, conn)
        proj.on_write = _marker(settings.home, project_id, record)
        _open[key] = proj
        return proj


def _forget(home: Path, project_id: str) -> None:
    """Close and drop cached projects of one database (doctor replaces its file)."""
    with _open_lock:
        for key in [k for k in _open if k[0] == str(home) and k[1] == project_id]:
            _open.pop(key).conn.close()


def close_all() -> None:
    """Close every cached connection (tests, and servers shutting down)."""
    with _open_lock:
        for proj in _open.values():
            proj.conn.close()
        _open.clear()


# -- lost and damaged ---------------------------------------------------------------

_WAYS_OUT = (
    "Nothing was recreated in its place. Restore the file from a backup, or run `jupymem doctor` to see what "
    "can be recovered (`jupymem doctor --accept-loss` starts the project afresh; `jupymem import` then brings "
    "back an export if you have one)."
)


def _lost(
    path: Path, project_id: str, root: Path | None, record: registry.ProjectRecord | None, what: str,
    *, recorded: int | None = None,
) -> DatabaseLost:
    name = f"{root.name}'s memory" if root else f"project {project_id}"
    n = max(recorded or 0, (record.events or 0) if record else 0, _marked(path))
    had = f"{n} events were recorded in it" if n else "the registry binds this repository to it"
    return DatabaseLost(f"The database of {name} ({path}) {what}, but {had}. {_WAYS_OUT}")


def _marked(path: Path) -> int:
    mark = marks.read(path)
    return mark.events if mark else 0


def _nothing_recorded(record: registry.ProjectRecord | None, path: Path | None = None) -> bool:
    """True only when the registry knows that the project never recorded anything (and
    the mark beside its database, when there is one, agrees)."""
    return record is not None and record.events == 0 and (path is None or _marked(path) == 0)


def _open_checked(
    path: Path, project_id: str, root: Path, record: registry.ProjectRecord | None
) -> database.Connection:
    """The project's database, checked against the file and against its mark."""
    try:
        conn = database.open_database(path, create=False)
    except FileNotFoundError:
        raise _lost(path, project_id, root, record, "is missing") from None
    except DatabaseDamaged as exc:
        if path.stat().st_size == 0 and not _nothing_recorded(record, path):
            raise _lost(path, project_id, root, record, "is empty (0 bytes)") from None
        raise exc from None
    try:
        _check_mark(conn, path, project_id, root, record)
    except BaseException:
        conn.close()
        raise
    return conn


def _check_mark(
    conn: database.Connection, path: Path, project_id: str, root: Path | None, record: registry.ProjectRecord | None
) -> None:
    """``DatabaseLost`` when the database holds less history than a mark says it held,
    or another history: the registry's mark and the one every write leaves beside it."""
    if is_cache(conn, root):
        # A shared repository's log is a cache of its .jupymem/ files, replayed in (time, uid)
        # order whenever a pull interleaves: its sequence numbers and hashes are not history
        # to hold it to, and a lost cache is rebuilt from the files.
        return
    # The file first: it is written after each commit, so whatever it says was committed
    # before the database is asked below (another process writing meanwhile cannot make
    # it look ahead).
    seen = [m for m in (marks.read(path),) if m is not None and m.events > 0]
    if record is not None and record.events:
        seen.append(marks.Mark(record.events, record.last_hash or ""))
    if not seen:
        return
    n = eventlog.last_seq(conn)
    most = max(m.events for m in seen)
    if n < most:
        raise _lost(path, project_id, root, record, f"holds {n} events", recorded=most)
    for m in seen:
        # Read as bytes: a garbled event (its hash not a hash any more) is damage that verify
        # and doctor name, not another history, and must not stop reads here.
        found = eventlog.stored_hash(conn, m.events)
        if found is None or (m.last_hash and _HASH.fullmatch(found) and found.decode() != m.last_hash):
            raise _lost(path, project_id, root, record, "holds a different history", recorded=most)


_HASH = re.compile(rb"[0-9a-f]{64}")


def _has_log(root: Path) -> bool:
    """``share.has_log``, without importing the sharing room where there is no ``.jupymem``
    entry at all (most repositories): then there is no log, and every open asks."""
    if not os.path.lexists(root / ".jupymem"):  # sharing.folder.FOLDER
        return False
    from ..sharing.share import has_log

    return has_log(root)


def is_cache(conn: database.Connection, root: Path | None) -> bool:
    """Whether the database is (or was) a shared repository's cache: its repository holds
    a log, or it was replayed from one (``share`` keeps the clone it was built for)."""
    if root is not None and _has_log(root):
        return True
    return database.get_meta(conn, "share_root") is not None


def _marker(home: Path, project_id: str, record: registry.ProjectRecord | None) -> Any:
    """The callback ``Project`` runs after each write: leave the mark beside the database
    (``marks``: every write, a few microseconds) and raise the registry's mark when the
    history reaches the next power of two (a handful of fsynced registry writes in a
    project's life)."""
    state = {"next": 2 * record.events if record and record.events else 1}

    def on_write(proj: Project) -> None:
        if _has_log(proj.root):
            return  # the files are the history (see _check_mark)
        row = eventlog.head(proj.conn)
        n, last = (row[0], str(row[1])) if row else (0, eventlog.GENESIS)
        try:
            marks.write(proj.database, n, last)
        except OSError as exc:  # the write itself succeeded; the mark is a safety net
            warn("jupymem: could not leave the history mark of %s: %s", project_id, exc.strerror or exc)
        if n < state["next"]:
            return
        state["next"] = 2 * n
        try:
            registry.record_mark(home, project_id, n, last)
        except JupymemError as exc:  # the write itself succeeded; the mark is a safety net
            warn("jupymem: could not record the history mark of %s: %s", project_id, exc.message)

    return on_write


# -- finding and binding -------------------------------------------------------------


def find_project(path: str | Path, settings: Settings) -> Project | None:
    """The project of the repository holding ``path``, or None. Never writes.

    Raises ``DatabaseLost``/``DatabaseDamaged`` for a bound project whose database
    is gone or broken: "no memory here" would be a lie that the next record acts on.
    """
    root = registry.find_git_root(path)
    if root is None:
        return None
    if settings.database_url:  # the team engine, for every repository (``core.team``)
        return _open_team(settings, root, settings.database_url)
    reg = registry.read_registry(settings.home)
    pid = reg.project_for_root(root)
    record = reg.record(pid) if pid is not None else None
    if record is not None and record.database:  # bound by `jupymem init --database`
        return _open_team(settings, root, record.database)
    if pid is None:
        # A shared log is memory already: its cache is built on first read (SPEC 1, 9).
        return init_project(root, settings) if _has_log(root) else None
    record = reg.record(pid)
    db = registry.database_path(settings.home, pid)
    if not db.exists():
        if _has_log(root):
            return init_project(root, settings)  # the cache is rebuilt from the files
        if _nothing_recorded(record, db):
            return None  # bound, but nothing was ever recorded: `init` recreates it
        raise _lost(db, pid, root, record, "is missing")
    proj = _cached(settings, pid, root, record)
    proj.follow()
    return proj


def require_project(path: str | Path, settings: Settings) -> Project:
    proj = find_project(path, settings)
    if proj is None:
        root = registry.require_git_root(path)
        raise NoMemory(
            f"{root.name} has no memory yet. Record something (`%%remember`) or run `%memory init` "
            "(`jupymem init` on the command line) to start it."
        )
    return proj


def adoptable(matches: list[registry.ProjectRecord], reg: registry.Registry,
              within: Path | None) -> list[registry.ProjectRecord]:
    """Of the projects with this repository's first commit, those ``init_project`` may adopt:
    every one, or under ``within`` those none of whose existing checkouts lies outside it."""
    if within is None:
        return list(matches)
    return [p for p in matches if _all_within(reg.roots_of(p.project_id), within)]


def _all_within(roots: list[str], within: Path) -> bool:
    """Whether every one of ``roots`` that still exists lies inside ``within``."""
    for root in roots:
        path = Path(root)
        if path.exists() and not path.resolve().is_relative_to(within):
            return False
    return True


def init_project(path: str | Path, settings: Settings, *, database_url: str | None = None,
                 within: Path | None = None) -> Project:
    """Bind the repository holding ``path``, creating or adopting its project;
    ``database_url``: in that team database (``core.team``), remembered for the repository.
    ``within``: a face confined to a folder (the Jupyter server's root) adopts only a
    project none of whose existing checkouts lies outside it; otherwise a checkout placed
    in the root with the same first commit (a clone, an uploaded ``.git``) would read the
    memory of a repository the face may not reach, private memories included."""
    root = registry.require_git_root(path)
    url = database_url or settings.database_url or _bound_team(settings.home, root)
    if url:
        return _init_team(settings, root, url) if database_url else _open_team(settings, root, url)
    home = settings.home
    with registry.locked(home):
        try:
            reg = registry.read_registry(home)
        except RegistryCorrupt:
            # init is an explicit repair: rebuild the bindings from the databases.
            reg = rebuild_registry_locked(home)
        pid = reg.project_for_root(root)
        if pid is None:
            commit = registry.root_commit(root)
            matches = adoptable(reg.projects_with_commit(commit), reg, within)
            if matches:  # a moved or re-cloned checkout adopts its memory
                pid = sorted(matches, key=lambda p: p.created_at)[0].project_id
                records = reg.projects
            else:
                pid = registry.new_project_id()
                records = (*reg.projects, registry.ProjectRecord(pid, commit, clock.now_at(), 0, eventlog.GENESIS))
            reg = registry.Registry((*reg.bindings, registry.Binding(str(root), pid)), records)
            _ensure_database(home, pid, root, reg)
            registry.write_registry(home, reg)
        elif not registry.database_path(home, pid).exists():
            _ensure_database(home, pid, root, reg)
    proj = _cached(settings, pid, root, reg.record(pid))
    proj.follow()
    return proj


_team_keys: dict[str, str] = {}  # root -> its key on the team database (``team.project_key``)
_unreachable: dict[str, tuple[float, StorageError]] = {}  # url -> when it did not answer, and how
_RETRY_AFTER = 15.0  # seconds


def _open_team(settings: Settings, root: Path, url: str) -> Project:
    """The project of ``root`` in the team database at ``url`` (cached per process, as
    ``opening`` caches SQLite projects). Raises ``StorageError`` when the database cannot
    be reached, ``AccessDenied`` when this person is not a member of the project."""
    from ..storage.postgres import connect

    cache = (str(settings.home), team.where(url), str(root))
    with _open_lock:
        proj = _open.get(cache)
        if proj is not None:
            return proj
        failed = _unreachable.get(url)
    # A kernel asks on every cell (staging, the assistants' context): a database that did not
    # answer is not asked again for a while, or each cell would wait out the connect timeout.
    if failed is not None and time.monotonic() - failed[0] < _RETRY_AFTER:
        raise failed[1]
    # The project keeps the key it has (a merge may add a lower root): found among the roots once.
    known = _team_keys.get(str(root)) or _bound_key(settings.home, root)
    roots = tuple(dict.fromkeys((known,) + team.root_commits(root))) if known else team.root_commits(root)
    try:
        conn: Any = connect(url, roots[0], candidates=roots)
    except StorageError as exc:
        _unreachable[url] = (time.monotonic(), exc)
        raise
    _unreachable.pop(url, None)
    _team_keys[str(root)] = conn.project
    proj = Project(settings, conn.project, root, conn)
    with _open_lock:
        _open.setdefault(cache, proj)
        kept = _open[cache]
    if kept is not proj:  # another thread opened it meanwhile
        conn.close()
    return kept


def _init_team(settings: Settings, root: Path, url: str) -> Project:
    """Bind ``root`` to its project in the team database at ``url`` (``jupymem init
    --database``), remembering the URL without its password. The project must exist there
    with this person as a member: the administrator admits people (``admin.add_member``)."""
    from ..storage.postgres.connection import public_url

    remembered = public_url(url)
    proj = _open_team(settings, root, url)  # connect and check first: a refused URL binds nothing
    with registry.locked(settings.home):
        reg = registry.read_registry(settings.home)
        bound = reg.project_for_root(root)
        if bound is not None and bound != proj.id:
            old = reg.record(bound)
            if old is None or old.database is None:
                raise NotOnTeamEngine(
                    f"{root.name} already has memory of its own (project {bound}): move it to the team database "
                    "with `jupymem migrate --to URL` (its history comes along). Nothing was changed."
                )
        record = reg.record(proj.id)
        new = registry.ProjectRecord(
            proj.id, proj.id, record.created_at if record else clock.now_at(), database=remembered
        )
        bindings = tuple(b for b in reg.bindings if b.root != str(root))
        reg = registry.Registry((*bindings, registry.Binding(str(root), proj.id)), reg.projects)
        registry.write_registry(settings.home, reg.with_record(new))
    return proj


def _bound_key(home: Path, root: Path) -> str | None:
    """The key ``jupymem init --database`` or ``migrate`` remembered for ``root``'s project."""
    try:
        reg = registry.read_registry(home)
    except RegistryCorrupt:
        return None
    pid = reg.project_for_root(root)
    record = reg.record(pid) if pid is not None else None
    return pid if record is not None and record.database is not None else None


def _bound_team(home: Path, root: Path) -> str | None:
    """The team database ``jupymem init --database`` bound ``root`` to, if it did."""
    try:
        reg = registry.read_registry(home)
    except RegistryCorrupt:
        return None  # init rebuilds it below
    pid = reg.project_for_root(root)
    record = reg.record(pid) if pid is not None else None
    return record.database if record is not None else None


def import_into(
    path: str | Path, text: str, settings: Settings, *, source: str = "import", other_project: bool = False
) -> ImportReport:
    """Verify and merge an export into the memory of ``path``'s repository.

    A repository without memory gets one only for a file that imports cleanly: the
    whole file is checked against a scratch database first, so a damaged or foreign
    file initializes nothing (every face that imports calls this). An export of another
    repository needs ``other_project`` (``maintenance.check_origin``)."""
    from ..storage.maintenance import Origin, import_log

    root = registry.require_git_root(path)
    if find_project(path, settings) is None:
        commit = registry.root_commit(root)
        origin = None if other_project else Origin(frozenset([commit] if commit else []), None, root.name)
        scratch = database.memory_database()
        try:
            import_log(scratch, io.StringIO(text), source=source, origin=origin)
        finally:
            scratch.close()
    proj = find_project(path, settings) or init_project(path, settings)
    return proj.import_(io.StringIO(text), source=source, other_project=other_project)


def _ensure_database(home: Path, pid: str, root: Path, reg: registry.Registry) -> None:
    """Create the database if needed; it records its own identity and roots for doctor.

    Only a project that never recorded anything gets a new, empty file: recreating
    one that had history would hide that it was lost."""
    path = registry.database_path(home, pid)
    record = reg.record(pid)
    if not path.exists() and not _nothing_recorded(record, path) and not _has_log(root):
        raise _lost(path, pid, root, record, "is missing")
    new = not path.exists()
    try:
        conn = database.open_database(path, create=True)
        try:
            roots = json.loads(database.get_meta(conn, "roots") or "[]")
            with database.transaction(conn):
                if database.get_meta(conn, "project_id") is None:
                    database.set_meta(conn, "project_id", pid)
                    database.set_meta(conn, "root_commit", (record.root_commit if record else None) or "")
                    database.set_meta(conn, "created_at", record.created_at if record else clock.now_at())
                if str(root) not in roots:
                    database.set_meta(conn, "roots", json.dumps([*roots, str(root)]))
        finally:
            conn.close()
    except JupymemError:
        if new:  # a full disk, say: leave no half-made database for doctor to call damaged
            _remove_new(path)
        raise


def _remove_new(path: Path) -> None:
    """Remove a database this call began to create (nothing was ever recorded in it)."""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), marks.mark_path(path)):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
    with contextlib.suppress(OSError):
        path.parent.rmdir()


def rebuild_registry_locked(home: Path) -> registry.Registry:
    """Recreate the registry from the project databases' own identity (doctor).

    A database that cannot be read is left out (``doctor`` reports it); every
    readable one is recorded with its current history as its mark."""
    projects: list[registry.ProjectRecord] = []
    claims: dict[str, list[tuple[int, str, str]]] = {}  # root -> (events, created_at, project id)
    for db in _database_files(home):
        try:
            conn = database.open_database(db, create=False, check=False)
        except SchemaTooNew:
            # A newer jupymem's database keeps its binding (read as it is, never migrated):
            # dropping it would let the next record start a second, empty project.
            _bind_as_found(db, projects, claims)
            continue
        except (JupymemError, OSError):
            continue
        try:
            pid = database.get_meta(conn, "project_id") or db.parent.name
            commit = database.get_meta(conn, "root_commit") or None
            created = database.get_meta(conn, "created_at") or clock.now_at()
            roots = json.loads(database.get_meta(conn, "roots") or "[]")
            n_events = eventlog.last_seq(conn)
            last = eventlog.last_hash(conn)
        except (JupymemError, ValueError):
            continue
        finally:
            conn.close()
        projects.append(registry.ProjectRecord(pid, commit, created, n_events, last))
        for r in roots:
            if r and Path(r).exists() and registry.find_git_root(r) == Path(r):
                claims.setdefault(r, []).append((n_events, created, pid))
    # A root is bound once; when several databases claim it, the one holding the
    # most history wins (then the oldest), never an arbitrary one.
    bindings = [
        registry.Binding(r, max(c, key=lambda t: (t[0], _reverse(t[1])))[2]) for r, c in sorted(claims.items())
    ]
    reg = registry.Registry(tuple(bindings), tuple(projects))
    path = registry.registry_path(home)
    if path.exists() and not path.is_file():  # a directory where the registry belongs
        registry.set_aside(path)
    registry.write_registry(home, reg)
    return reg


def _bind_as_found(
    db: Path, projects: list[registry.ProjectRecord], claims: dict[str, list[tuple[int, str, str]]]
) -> None:
    """Record a database as its own meta describes it, without opening it through SQLite's
    migrations (one from a newer jupymem): no mark, since its history is not ours to count."""
    from ..storage import recovery

    meta = recovery.identity_in(db)
    pid = meta.get("project_id") or db.parent.name
    created = meta.get("created_at") or clock.now_at()
    projects.append(registry.ProjectRecord(pid, meta.get("root_commit") or None, created))
    for r in recovery.roots_in(db):
        if r and Path(r).exists() and registry.find_git_root(r) == Path(r):
            claims.setdefault(r, []).append((0, created, pid))


def _database_files(home: Path) -> list[Path]:
    base = home / registry.PROJECTS_DIR
    return sorted(base.glob(f"*/{registry.DB_FILE}")) if base.exists() else []


def _reverse(text: str) -> tuple[int, ...]:
    """A key that sorts strings in reverse order (older ISO times first under max())."""
    return tuple(-ord(c) for c in text)
