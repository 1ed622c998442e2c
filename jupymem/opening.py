"""Opening projects: find (never writes), require, init (binds or adopts), doctor.

Split from ``core`` because opening is about the home directory, the registry and
the health of each database, while ``Project`` is about one database's memory.
Projects are cached per process, so a kernel hook or a server handler that asks for
the same project again gets the same connection.

Opening is split in two on purpose: ``find_project`` only reads (status, search,
block and list never create anything, anywhere), ``init_project`` binds and creates.
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

from . import registry, store
from .config import Settings
from .core import Project
from .errors import JupymemError, NoMemory, RegistryCorrupt
from .maintenance import ImportReport, import_log

_open: dict[tuple[str, str, str], Project] = {}
_open_lock = threading.Lock()


def _cached(settings: Settings, project_id: str, root: Path, *, create: bool) -> Project:
    key = (str(settings.home), project_id, str(root))
    with _open_lock:
        proj = _open.get(key)
        if proj is not None and proj.database.exists():
            return proj
        path = registry.database_path(settings.home, project_id)
        conn = store.open_database(path, create=create)
        proj = Project(settings, project_id, root, conn)
        _open[key] = proj
        return proj


def close_all() -> None:
    """Close every cached connection (tests, and servers shutting down)."""
    with _open_lock:
        for proj in _open.values():
            proj.conn.close()
        _open.clear()


def find_project(path: str | Path, settings: Settings) -> Project | None:
    """The project of the repository holding ``path``, or None. Never writes."""
    root = registry.find_git_root(path)
    if root is None:
        return None
    reg = registry.read_registry(settings.home)
    pid = reg.project_for_root(root)
    if pid is None or not registry.database_path(settings.home, pid).exists():
        return None
    return _cached(settings, pid, root, create=False)


def require_project(path: str | Path, settings: Settings) -> Project:
    proj = find_project(path, settings)
    if proj is None:
        root = registry.require_git_root(path)
        raise NoMemory(
            f"{root.name} has no memory yet. Record something (`%%remember`) or run `%memory init` "
            "(`jupymem init` on the command line) to start it."
        )
    return proj


def init_project(path: str | Path, settings: Settings) -> Project:
    """Bind the repository holding ``path``, creating or adopting its project."""
    root = registry.require_git_root(path)
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
            matches = reg.projects_with_commit(commit)
            if matches:  # a moved or re-cloned checkout adopts its memory
                pid = sorted(matches, key=lambda p: p.created_at)[0].project_id
                records = reg.projects
            else:
                pid = registry.new_project_id()
                records = (*reg.projects, registry.ProjectRecord(pid, commit, registry.now_iso()))
            reg = registry.Registry((*reg.bindings, registry.Binding(str(root), pid)), records)
            _ensure_database(home, pid, root, reg)
            registry.write_registry(home, reg)
        elif not registry.database_path(home, pid).exists():
            _ensure_database(home, pid, root, reg)
    return _cached(settings, pid, root, create=False)


def import_into(path: str | Path, text: str, settings: Settings, *, source: str = "import") -> ImportReport:
    """Verify and merge an export into the memory of ``path``'s repository.

    A repository without memory gets one only for a file that imports cleanly: the
    whole file is checked against a scratch database first, so a damaged or foreign
    file initializes nothing (every face that imports calls this)."""
    registry.require_git_root(path)
    if find_project(path, settings) is None:
        scratch = store.memory_database()
        try:
            import_log(scratch, io.StringIO(text), source=source)
        finally:
            scratch.close()
    proj = find_project(path, settings) or init_project(path, settings)
    return proj.import_(io.StringIO(text), source=source)


def _ensure_database(home: Path, pid: str, root: Path, reg: registry.Registry) -> None:
    """Create the database if needed; it records its own identity and roots for doctor."""
    path = registry.database_path(home, pid)
    conn = store.open_database(path, create=True)
    try:
        record = next((p for p in reg.projects if p.project_id == pid), None)
        roots = json.loads(store.get_meta(conn, "roots") or "[]")
        with store.transaction(conn):
            if store.get_meta(conn, "project_id") is None:
                store.set_meta(conn, "project_id", pid)
                store.set_meta(conn, "root_commit", (record.root_commit if record else None) or "")
                store.set_meta(conn, "created_at", record.created_at if record else registry.now_iso())
            if str(root) not in roots:
                store.set_meta(conn, "roots", json.dumps([*roots, str(root)]))
    finally:
        conn.close()


def rebuild_registry_locked(home: Path) -> registry.Registry:
    """Recreate the registry from the project databases' own identity (doctor)."""
    projects = []
    claims: dict[str, list[tuple[int, str, str]]] = {}  # root -> (events, created_at, project id)
    base = home / registry.PROJECTS_DIR
    for db in sorted(base.glob(f"*/{registry.DB_FILE}")) if base.exists() else []:
        try:
            conn = store.open_database(db, create=False)
        except JupymemError:
            continue
        try:
            pid = store.get_meta(conn, "project_id") or db.parent.name
            commit = store.get_meta(conn, "root_commit") or None
            created = store.get_meta(conn, "created_at") or registry.now_iso()
            roots = json.loads(store.get_meta(conn, "roots") or "[]")
            n_events = store.last_seq(conn)
        finally:
            conn.close()
        projects.append(registry.ProjectRecord(pid, commit, created))
        for r in roots:
            if r and Path(r).exists() and registry.find_git_root(r) == Path(r):
                claims.setdefault(r, []).append((n_events, created, pid))
    # A root is bound once; when several databases claim it, the one holding the
    # most history wins (then the oldest), never an arbitrary one.
    bindings = [
        registry.Binding(r, max(c, key=lambda t: (t[0], _reverse(t[1])))[2]) for r, c in sorted(claims.items())
    ]
    reg = registry.Registry(tuple(bindings), tuple(projects))
    registry.write_registry(home, reg)
    return reg


def doctor(settings: Settings) -> dict[str, Any]:
    """Check the registry; rebuild it from the databases when it is corrupt or missing."""
    home = settings.home
    with registry.locked(home):
        try:
            reg = registry.read_registry(home)
            state = "ok" if registry.registry_path(home).exists() else "missing"
        except RegistryCorrupt as exc:
            state, reg = "corrupt", None
            problem = exc.message
        if state != "ok":
            reg = rebuild_registry_locked(home)
    assert reg is not None
    out: dict[str, Any] = {"registry": state, "projects": len(reg.projects), "bindings": len(reg.bindings)}
    if state == "corrupt":
        out["problem"] = problem
    if state != "ok":
        out["repaired"] = True
    return out


def _reverse(text: str) -> tuple[int, ...]:
    """A key that sorts strings in reverse order (older ISO times first under max())."""
    return tuple(-ord(c) for c in text)
