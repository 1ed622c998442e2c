"""Keeping one project's memory sound for ``Project``: verify, rebuild, export and import, whether or not it is shared.

In a repository that shares its memory through git (``share``) the database is a cache
of the ``.jupymem/`` files plus this machine's private events, so each of these asks the
files too: ``verify`` checks every line of every file, ``rebuild`` replays them, and an
import's new events go to this writer's file as well. Also here: whether the memory home
can be written now, said the way a person can act on.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
import threading
from typing import IO, TYPE_CHECKING, Any

from ..errors import JupymemError, ReadOnlyHome, StorageError
from ..storage import database, eventlog, registry

# Sharing and maintenance are imported by the functions that need them: a command that
# only reads an unshared repository (`jupymem block`) needs neither, and they cost more
# to import than the read itself.
if TYPE_CHECKING:
    from ..reports import ShareResult, SharingStatus
    from ..sharing import share
    from ..storage.maintenance import ImportReport, VerifyReport
    from ..storage.retention import GcReport

_SHARING_LOCK = threading.Lock()


def sharing_of(project: Any) -> share.Sharing:
    """``project``'s view of ``.jupymem/`` (``share.Sharing``), made on first use."""
    if project._sharing is None:
        from ..sharing.share import Sharing

        with _SHARING_LOCK:
            if project._sharing is None:
                project._sharing = Sharing(project.conn, project.root, on_rebuild=project._forget_caches)
    return project._sharing


def never_shared(conn: database.Connection, root: Path, known_unshared: bool = False) -> bool:
    """Nothing to follow: no ``.jupymem`` entry in the repository (a link counts as one:
    ``share`` names it) and nothing shared in the cache, which is what ``Sharing.follow``
    would conclude after importing the sharing room. ``known_unshared``: the cache was
    found so before; only a ``.jupymem`` can change that, so the tables are not asked again."""
    if os.path.lexists(root / ".jupymem"):
        return False
    return known_unshared or not eventlog.any_shared(conn)


def check_writable(conn: database.Connection) -> None:
    """Raise ``StorageError`` (the disk is full) or ``ReadOnlyHome`` when ``conn`` was
    opened for reading only."""
    if getattr(conn, "disk_full", False):
        raise StorageError(
            f"{conn.path} cannot be written: the disk holding it is full ({conn.readonly_reason}). "
            "Free some space and try again; searching and reading work meanwhile."
        )
    if conn.readonly:
        raise ReadOnlyHome(
            f"{conn.path} is read-only here ({conn.readonly_reason}): searching and reading "
            "work, but nothing can be recorded. Make the memory home writable, or point JUPYMEM_HOME "
            "at a writable directory."
        )


def follow(conn: database.Connection, sharing: share.Sharing, name: str) -> None:
    """Bring the cache in step with the shared files; a read-only home answers from the
    cache as it is (nothing can be written to follow them). A garbled event of this
    machine's own is named (``DatabaseDamaged``)."""
    if conn.readonly:
        return
    try:
        sharing.follow()
    except json.JSONDecodeError:  # a replay met a garbled event of this machine's own: name it
        from ..storage.maintenance import garbled_error

        raise garbled_error(conn, f"The cache of {name}'s memory cannot follow .jupymem/log.") from None


def root_commits(conn: database.Connection, root: Path) -> frozenset[str]:
    """This repository's identity: the root commit stored when it was bound and git's
    own now (a repository bound before its first commit has one only later)."""
    stored = database.get_meta(conn, "root_commit") or None
    return frozenset(c for c in (stored, registry.root_commit(root)) if c)


def verify_all(conn: database.Connection, sharing: share.Sharing, root: Path) -> VerifyReport:
    """The database's chain and projection, and the shared files' lines when there are any."""
    from ..sharing import share
    from ..storage.maintenance import verify

    shared = sharing.state() != share.NONE or sharing.has_shared_events()
    report = verify(conn, shared=shared)
    if sharing.state() == share.NONE:
        # No folder, or a .jupymem that is a link (never followed): the link is named.
        lines, problems = 0, share.folder_problems(root)
    else:
        lines, problems = sharing.verify_files()
    return dataclasses.replace(
        report, ok=report.ok and not problems, problems=(*report.problems, *problems), shared_lines=lines
    )


def rebuild_all(conn: database.Connection, sharing: share.Sharing, forget: Callable[[], None]) -> int:
    """Recreate every table from the log (or the shared files); returns the events
    replayed. ``forget`` drops what was computed from rows (a shared cache's rebuild calls
    its ``on_rebuild`` itself)."""
    from ..sharing import share
    from ..storage.maintenance import garbled_error, rebuild

    if sharing.state() != share.NONE or sharing.has_shared_events():
        try:
            return sharing.rebuild()
        except json.JSONDecodeError:  # a garbled event of this machine's own: name it
            raise garbled_error(conn, "Nothing was rebuilt.") from None
    n = rebuild(conn)
    forget()
    return n


def export(conn: database.Connection, fp: IO[str], project_id: str, root: Path) -> int:
    """The log as JSONL, private events left out, naming the repository it is of."""
    from ..storage.maintenance import export_log

    stored = database.get_meta(conn, "root_commit") or None
    return export_log(conn, fp, project_id=project_id, repository=stored or registry.root_commit(root))


def export_to(conn: database.Connection, path: str | Path, project_id: str, root: Path) -> int:
    """Write the export to a file, whole or not at all (a temporary file beside it,
    then renamed); raises ``JupymemError`` when it cannot, having changed nothing."""
    target = Path(path).expanduser()
    buf = io.StringIO()
    n = export(conn, buf, project_id, root)
    import secrets  # not uuid: it imports platform, ~4 ms on every command that opens a project

    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_text(buf.getvalue(), encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise JupymemError(f"Cannot write {path}: {exc.strerror or exc}. Nothing was exported.") from None
    return n


def import_into(
    conn: database.Connection, sharing: share.Sharing, fp: IO[str], source: str, origin: tuple[str, str] | None
) -> ImportReport:
    """Merge an export; with sharing on, the new events go to this writer's file too.
    ``origin``: this project's (id, name), when an export of another repository is refused."""
    from ..sharing import share, switch
    from ..storage.maintenance import ImportReport, Origin, import_log, read_import

    into = None if origin is None else Origin(root_commits(conn, sharing.root), *origin)
    if sharing.state() != share.ON:
        return import_log(conn, fp, source=source, origin=into)
    evts = read_import(conn, fp, source, origin=into)
    added = switch.import_events(sharing, evts, source)
    return ImportReport(events=len(evts), added=added, skipped=len(evts) - added)


def gc(conn: database.Connection, *, dry_run: bool, closed_days: int, unconfirmed_days: int,
       evidence_days: int, now: datetime | None) -> GcReport:
    """``retention.gc``, with the retention days ``Project.gc`` was given (``config``'s by default)."""
    from ..storage.retention import gc as collect

    return collect(conn, dry_run=dry_run, closed_days=closed_days, unconfirmed_days=unconfirmed_days,
                   evidence_days=evidence_days, now=now)


def switch_sharing(sharing: share.Sharing, on: bool) -> ShareResult:
    """Turn sharing on or off (``sharing.switch``)."""
    from ..sharing import switch

    return switch.enable(sharing) if on else switch.disable(sharing)


def sharing_status(project: Any) -> SharingStatus:
    """``project``'s ``SharingStatus``. A repository that never shared has no folder to
    read: its status comes from the tables alone, without the sharing room's readers. On
    the team engine the database is the shared memory (``team.TeamWrites.status``)."""
    if project.team:
        return project.sharing.status()  # type: ignore[no-any-return]
    if never_shared(project.conn, project.root, project._unshared):
        from ..sharing import seen

        return seen.tables(project.conn, project.root, seen.NONE, home=project.settings.home)
    from ..sharing import switch

    return switch.status(sharing_of(project))
