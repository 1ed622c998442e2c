"""Doctor: check the registry and every project database, and repair what can be repaired.

``opening`` refuses to guess about damage: a lost, damaged or too-new database is named
and pointed here. ``doctor`` checks every database, one report each, recovers what the
event logs still hold (``recovery``), rebuilds a shared repository's cache from its
files, rebuilds a missing or corrupt registry (``opening.rebuild_registry_locked``), keeps
the marks in step with the history each database now holds, and, only when asked
(``accept_loss``), starts a lost project afresh. One bad database never stops the others
from being checked.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..config import Settings
from ..errors import DatabaseLost, JupymemError, RegistryCorrupt, SchemaTooNew
from ..sharing import share
from ..storage import database, eventlog, marks, recovery, registry
from ..storage.maintenance import verify
from .opening import (
    _WAYS_OUT, _check_mark, _database_files, _forget, _marked, _nothing_recorded, rebuild_registry_locked,
)

log = logging.getLogger("jupymem")
RegistryState = Literal["ok", "missing", "corrupt"]


@dataclass(frozen=True)
class DoctorReport:
    """What ``doctor`` found and did. ``databases`` holds one report per database (its
    ``state``, what was done, and details that depend on the state) when any was not ok."""

    registry: RegistryState  # as doctor found it; rebuilt unless ok
    projects: int
    bindings: int
    problem: str | None = None  # why the registry could not be read
    repaired: bool = False
    databases: tuple[dict[str, Any], ...] | None = None
    problems: int = 0  # databases that still need a person

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``jupymem doctor --json``: as before, a key with nothing to say is left out."""
        out: dict[str, Any] = {"registry": self.registry, "projects": self.projects, "bindings": self.bindings}
        if self.problem:
            out["problem"] = self.problem
        if self.repaired:
            out["repaired"] = True
        if self.databases is not None:
            out["databases"] = list(self.databases)
            out["problems"] = self.problems
        return out


def doctor(settings: Settings, *, accept_loss: bool = False) -> DoctorReport:
    """Check the registry and every project database; repair what can be repaired.
    Returns a ``DoctorReport``. One bad database never stops the others from being checked."""
    home = settings.home
    with registry.locked(home):
        problem = None
        state: RegistryState
        try:
            reg: registry.Registry | None = registry.read_registry(home)
            state = "ok" if registry.registry_path(home).is_file() else "missing"
        except RegistryCorrupt as exc:
            state, reg, problem = "corrupt", None, exc.message
        records = {p.project_id: p for p in reg.projects} if reg else {}
        ids = sorted({*records, *(db.parent.name for db in _database_files(home))})
        reports = []
        for pid in ids:
            roots = reg.roots_of(pid) if reg else []
            record = records.get(pid)
            if record is not None and record.database:
                # The team engine's: no file here to check, recover or (never) start afresh.
                reports.append({"project_id": pid, "state": "ok", "database": record.database})
                continue
            try:
                report = _doctor_one(home, pid, records.get(pid), roots, accept_loss=accept_loss)
            except Exception as exc:  # one database must never stop the check of the others
                report = {"project_id": pid, "state": "unchecked", "message": f"could not be checked: {exc}"}
            report.setdefault("database", str(registry.database_path(home, pid)))
            _reset_mark(report)
            reports.append(report)
        if state != "ok":
            reg = rebuild_registry_locked(home)
        else:
            assert reg is not None
            reg = _updated_marks(home, reg, reports)
    changed = [r for r in reports if r["state"] not in ("ok",)]
    return DoctorReport(
        registry=state, projects=len(reg.projects), bindings=len(reg.bindings), problem=problem,
        repaired=state != "ok" or any(r["state"] in _FIXED for r in changed),
        databases=tuple(reports) if changed else None,
        problems=sum(1 for r in reports if r["state"] not in ("ok", *_FIXED)) if changed else 0,
    )


_FIXED = ("recovered", "rebuilt", "recreated", "started afresh")
# States after which the database holds a new history: its marks follow it.
_NEW_HISTORY = ("recovered", "partly recovered", "recreated", "started afresh")


def _doctor_one(
    home: Path, pid: str, record: registry.ProjectRecord | None, roots: list[str], *, accept_loss: bool
) -> dict[str, Any]:
    path = registry.database_path(home, pid)
    out: dict[str, Any] = {"project_id": pid, "database": str(path)}
    shared_root = _shared_root(path, roots)
    if shared_root is not None:
        return _doctor_shared(path, pid, record, roots, shared_root)
    if not path.exists():
        if _nothing_recorded(record, path) or accept_loss:
            recovery.rebuild_database(path, recovery.Salvage(), recovery.identity_of(record, roots))
            state = "recreated" if _nothing_recorded(record, path) else "started afresh"
            return {**out, "state": state, "events": 0, "message": "the missing database was recreated empty"}
        n = max((record.events or 0) if record else 0, _marked(path))
        had = f"{n} events were recorded" if n else "it was bound"
        return {**out, "state": "lost", "message": f"the database is missing; {had}. {_WAYS_OUT}"}
    try:
        conn = database.open_database(path, create=False)
    except SchemaTooNew as exc:
        return {**out, **_too_new(exc)}
    except (JupymemError, OSError) as exc:
        return _recover(path, pid, record, roots, str(getattr(exc, "message", exc)), accept_loss=accept_loss)
    try:
        report = verify(conn)
        integrity = database.integrity_check(conn)
        n, last = eventlog.last_seq(conn), eventlog.last_hash(conn)
        try:
            _check_mark(conn, path, pid, None, record)
            lost = None
        except DatabaseLost as exc:
            lost = exc.message
    finally:
        conn.close()
    if integrity != "ok" or not report.log_ok:
        why = f"SQLite integrity check: {integrity}" if integrity != "ok" else report.problems[0]
        return _recover(path, pid, record, roots, why, accept_loss=accept_loss)
    if lost:
        if accept_loss:
            return {**out, "state": "started afresh", "events": n, "last_hash": last,
                    "message": f"the loss was accepted; {n} events remain"}
        return {**out, "state": "lost", "events": n, "message": lost}
    return _rebuilt_if_drifted(out, path, report, n)


def _too_new(exc: SchemaTooNew) -> dict[str, Any]:
    """A database from a newer jupymem: reported, never rebuilt (that would downgrade it)."""
    return {"state": "too new", "message": f"written by a newer jupymem; upgrade jupymem to use it. {exc.message}"}


def _rebuilt_if_drifted(
    out: dict[str, Any], path: Path, report: Any, n: int, shared_root: Path | None = None
) -> dict[str, Any]:
    """A database whose log verifies: rebuild tables that drifted from it, report the rest."""
    drift = [p for p in report.problems if "`rebuild` recreates" in p]
    if drift:
        conn = database.open_database(path, create=False)
        try:
            if shared_root is not None:  # a cache: rebuilt from the files and this machine's own events
                share.Sharing(conn, shared_root, on_rebuild=lambda: None).rebuild()
            else:
                from ..storage.maintenance import rebuild

                rebuild(conn)
        finally:
            conn.close()
        return {**out, "state": "rebuilt", "events": n, "message": "tables rebuilt from the event log: " + drift[0]}
    others = [p for p in report.problems if p not in drift]
    if others:  # events that would be refused today: reported, nothing to rebuild
        return {**out, "state": "warning", "events": n, "message": "; ".join(others[:3])}
    return {**out, "state": "ok", "events": n}


def _recover(
    path: Path, pid: str, record: registry.ProjectRecord | None, roots: list[str], why: str, *, accept_loss: bool
) -> dict[str, Any]:
    """A damaged file: rebuild the project from the verified prefix of its event log."""
    _forget(path.parent.parent.parent, pid)
    salvage = recovery.read_log(path)
    n = len(salvage.events)
    expected = max((record.events or 0) if record else 0, _marked(path), salvage.total or 0)
    out: dict[str, Any] = {"project_id": pid, "database": str(path), "problem": why}
    if n == 0 and not _nothing_recorded(record, path) and not accept_loss:
        # Nothing readable, and history may have existed: a person decides (a backup, or --accept-loss).
        return {**out, "state": "damaged",
                "message": f"{why}; no event could be read from it ({salvage.stopped}). {_WAYS_OUT}"}
    moved = recovery.rebuild_database(path, salvage, recovery.identity_of(record, roots))
    n = len(salvage.events)  # rebuilding may stop earlier, at an event that cannot be applied
    last = salvage.events[-1].hash if salvage.events else eventlog.GENESIS
    missing = f"; events {n + 1}..{expected} could not be recovered ({salvage.stopped})" if expected > n else ""
    if n == 0:
        state = "recreated" if _nothing_recorded(record) else "started afresh"
    else:
        state = "partly recovered" if expected > n else "recovered"
    return {
        **out, "state": state, "events": n, "last_hash": last, "kept": str(moved) if moved else None,
        "message": f"{why}; rebuilt from {n} events of its log{missing}. The damaged file is kept at {moved}.",
    }


# -- doctor, for a shared repository's cache ---------------------------------------------


def _shared_root(path: Path, roots: list[str]) -> Path | None:
    """The checkout whose ``.jupymem/log`` this database is a cache of, if any: a root the
    registry binds to it, else one the database names itself (when the registry is gone)."""
    candidates = list(roots)
    if not candidates and path.exists():
        candidates = recovery.roots_in(path)
    for r in candidates:
        root = Path(r)
        if root.is_dir() and share.has_log(root):
            return root
    return None


def _doctor_shared(
    path: Path, pid: str, record: registry.ProjectRecord | None, roots: list[str], root: Path
) -> dict[str, Any]:
    """A shared repository's cache: healthy, or rebuilt from the files (never "lost").

    What only this machine held (private memories, history recorded before sharing was
    turned on) lives in the cache alone; what of it the damaged file still holds is kept,
    and what it does not is said."""
    out: dict[str, Any] = {"project_id": pid, "database": str(path), "shared": True}
    if not path.exists():
        return {**out, **_rebuild_cache(path, pid, record, roots, root, "the database (a cache of "
                                        f"{share.FOLDER}/log) was missing")}
    try:
        conn = database.open_database(path, create=False)
    except SchemaTooNew as exc:
        return {**out, **_too_new(exc)}
    except (JupymemError, OSError) as exc:
        return {**out, **_rebuild_cache(path, pid, record, roots, root, str(getattr(exc, "message", exc)))}
    try:
        report = verify(conn, shared=True)
        integrity = database.integrity_check(conn)
        n = eventlog.count(conn)
    finally:
        conn.close()
    if integrity != "ok" or not report.log_ok:
        why = f"SQLite integrity check: {integrity}" if integrity != "ok" else report.problems[0]
        return {**out, **_rebuild_cache(path, pid, record, roots, root, why)}
    return _rebuilt_if_drifted(out, path, report, n, shared_root=root)


def _rebuild_cache(
    path: Path, pid: str, record: registry.ProjectRecord | None, roots: list[str], root: Path, why: str
) -> dict[str, Any]:
    _forget(path.parent.parent.parent, pid)
    own = recovery.read_own(path) if path.exists() else None
    moved, events = recovery.rebuild_cache(
        path, own, recovery.identity_of(record, roots or [str(root)]),
        lambda conn: share.Sharing(conn, root, on_rebuild=lambda: None).rebuild(),  # as a read rebuilds it
    )
    kept = f" The damaged file is kept at {moved}." if moved else ""
    if own is None:
        return {"state": "recovered", "events": events, "message": (
            f"{why}; rebuilt from {share.FOLDER}/log ({events} events). Whatever only this machine held "
            "(private memories, history not yet shared) was in the missing file and cannot be recovered.")}
    mine = f"{len(own.events)} of this machine's own events (private memories, history not yet shared)"
    if own.lost is None:
        gone = f"; this machine's own events could not be read from it at all ({own.stopped}), so any it held are gone"
    elif own.lost:
        gone = (f"; {own.lost} events could not be read from it ({own.stopped}): those of this machine's own among "
                "them are gone")
    else:
        gone = ""
    return {
        "state": "partly recovered" if gone else "recovered", "events": events, "problem": why,
        "kept": str(moved) if moved else None,
        "message": f"{why}; rebuilt from {share.FOLDER}/log and {mine} kept from the damaged file{gone}.{kept}",
    }


def _reset_mark(report: dict[str, Any]) -> None:
    """After doctor gave a database a new history, the mark beside it follows (a shared
    repository's cache has none: its files are its history)."""
    if report["state"] not in _NEW_HISTORY:
        return
    db = Path(report["database"])
    if report.get("shared"):
        marks.remove(db)
        return
    try:
        marks.write(db, report.get("events", 0), report.get("last_hash") or eventlog.GENESIS)
    except OSError as exc:
        log.warning("jupymem: could not leave the history mark of %s: %s", db, exc.strerror or exc)


def _updated_marks(home: Path, reg: registry.Registry, reports: list[dict[str, Any]]) -> registry.Registry:
    """After recovery or an accepted loss, the registry's marks follow the new history."""
    changed = False
    for r in reports:
        if r["state"] in _NEW_HISTORY and not r.get("shared") and r["project_id"] in {
            p.project_id for p in reg.projects
        }:
            rec = reg.record(r["project_id"])
            assert rec is not None
            reg = reg.with_record(rec.marked(r.get("events", 0), r.get("last_hash") or eventlog.GENESIS))
            changed = True
    if changed:
        registry.write_registry(home, reg)
    return reg
