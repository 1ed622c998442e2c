"""What jupymem knows about a path's repository, as plain data. Never writes.

Every face shows status; this is the one place that decides what it says,
including the cases people most need told plainly: a checkout that is
not bound but matches a known project (moved or re-cloned), a registry
that fails its checksum (with the command that repairs it), and a read-only
home in a shared repository, whose cache cannot follow the files: the lines
teammates added since it was built are counted and said not to be shown
(``_not_shown``), never silently left out.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import JupymemError, RegistryCorrupt, SharingError
from ..sharing import share, sharelog
from ..storage import registry


def status(path: Path, settings: Settings) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": str(path),
        "git": False,
        "root": None,
        "name": None,
        "memory": False,
        "project_id": None,
        "registry": "ok",
        "matches": None,
        "revision": 0,
        "counts": {},
        "total": 0,
        "staged": 0,
        "staged_revision": 0,  # changes whenever a failure is staged or gains its fix
        "block": None,
        "database": None,
        # Which search legs answer, and why the dense one does not (Project.dense_status).
        "retrieval": None,
        # Sharing through git (Project.sharing_status): state, files, this writer, problems.
        "sharing": None,
        # database_damaged / database_lost / storage_error when the database cannot be used
        "damage": None,
        "read_only": False,
        "disk_full": False,  # opened for reading only because the disk is full
        "home": str(settings.home),
        # Which engine holds the memory and where: {"name": "sqlite", "where": the file} or
        # {"name": "postgresql", "where": "host:port/db"} (the team engine; never a password).
        "engine": None,
    }
    if settings.database_url:
        from . import team

        out["engine"] = {"name": "postgresql", "where": team.where(settings.database_url)}
    root = registry.find_git_root(path)
    if root is None:
        out["message"] = f"{path} is not inside a git repository; jupymem records nothing here."
        return out
    out.update(git=True, root=str(root), name=root.name)
    try:
        reg = registry.read_registry(settings.home)
    except RegistryCorrupt as exc:
        out.update(registry="corrupt", message=exc.message)
        return out
    from .opening import find_project

    try:
        proj = find_project(root, settings)
    except JupymemError as exc:  # a lost or damaged database: said plainly, never "no memory"
        out.update(memory=True, damage=exc.code, message=exc.message, project_id=reg.project_for_root(root))
        return out
    if proj is None:
        commit = registry.root_commit(root)
        matches = reg.projects_with_commit(commit)
        if matches:
            m = sorted(matches, key=lambda p: p.created_at)[0]
            roots = reg.roots_of(m.project_id)
            out["matches"] = {"project_id": m.project_id, "roots": roots}
            where = f" (bound at {roots[0]})" if roots else ""
            out["message"] = (
                f"{root.name} has no memory bound here, but it is the same repository as project "
                f"{m.project_id}{where}. `%memory init` (or `jupymem init`) adopts that memory."
            )
        else:
            out["message"] = f"{root.name} has no memory yet. `%%remember` or `%memory init` starts it."
        # A committed .jupymem that is not read (a link, say) is why a clone shows nothing shared.
        problems = share.folder_problems(root)
        if problems:
            out["message"] += " " + " ".join(problems)
        return out
    from .team import engine_of

    out["engine"] = engine_of(proj)
    counts = proj.counts()
    blk = proj.block()
    sharing = proj.sharing_status()
    message = f"{root.name}: {sum(counts.values())} active memories, block {blk.bytes}/{blk.cap} bytes."
    if sharing["problems"]:
        n = len(sharing["problems"])
        message += (
            f" {n} problem{'s' if n != 1 else ''} in {sharing['folder']}/: some shared lines are not applied "
            "(`jupymem verify` names them)."
        )
    if proj.team:
        message += f" Memory is in the team database at {out['engine']['where']} (project {proj.id})."
    if proj.disk_full:
        message += " The disk holding the memory home is full: reading works, recording does not until space is freed."
    elif proj.readonly:
        message += " The memory home is read-only: reading works, recording does not."
    # Lines of .jupymem/log a read-only home's cache cannot follow (0 where it follows them).
    sharing["unseen_lines"] = sharing["unseen_files"] = 0
    unseen = _not_shown(proj) if proj.readonly else None
    if unseen is not None:
        sharing["unseen_lines"], sharing["unseen_files"], said = unseen
        message += f" {said}"
        sharing["problems"] = [*sharing["problems"], said]  # the sidebar lists these
    out.update(
        memory=True,
        project_id=proj.id,
        revision=proj.revision(),
        counts=counts,
        total=sum(counts.values()),
        staged=proj.conn.execute("SELECT count(*) FROM staged_evidence").fetchone()[0],
        staged_revision=proj.staged_revision(),
        block={"bytes": blk.bytes, "cap": blk.cap, "shown": blk.shown, "omitted": blk.omitted, "revision": blk.revision},
        database=str(proj.database),
        message=message,
        retrieval=proj.dense_status(),
        sharing=sharing,
        read_only=proj.readonly,
        disk_full=proj.disk_full,
    )
    return out


# (project id, root) -> (the files' signature and the cache's revision, what _not_shown said)
_said: dict[tuple[str, str], tuple[Any, tuple[int, int, str] | None]] = {}
_said_lock = threading.Lock()


def _not_shown(proj: Any) -> tuple[int, int, str] | None:
    """What a cache that cannot follow its files (a read-only home) does not show: new
    lines in ``.jupymem/log`` (lines now minus lines applied, per changed file), how many
    files changed, and the sentence that says so; None when the cache is in step.

    Without writing: the files' signature against the ``shared_files`` table. Only the
    files that changed are read (their newlines counted), and once per signature."""
    try:
        sig = share.signature(proj.root)
    except SharingError:
        return None  # the folder cannot be read: nothing more to say than sharing status does
    key, seen = (proj.id, str(proj.root)), (sig, proj.revision())
    with _said_lock:
        cached = _said.get(key)
    if cached is not None and cached[0] == seen:
        return cached[1]
    stored = {r[0]: r[1:] for r in proj.conn.execute("SELECT name, size, mtime_ns, ino, lines FROM shared_files")}
    current = {name: (size, mtime, ino) for name, size, mtime, ino in sig or ()}
    changed = sorted(n for n in current if stored.get(n, (None,))[:3] != current[n])
    changed += sorted(set(stored) - set(current))  # files that went away
    lines = 0
    for name in changed:
        if name not in current:
            continue  # a file that went away: changed, no new lines
        try:
            now = (sharelog.log_dir(proj.root) / name).read_bytes().count(b"\n")
        except OSError:
            continue
        lines += max(0, now - (stored[name][3] if name in stored else 0))
    out = (lines, len(changed), _sentence(lines, len(changed))) if changed else None
    with _said_lock:
        _said[key] = (seen, out)
    return out


def _sentence(lines: int, files: int) -> str:
    where = f"{sharelog.FOLDER}/log"
    if lines:
        return (f"{lines} new line{'s' if lines != 1 else ''} in {where} {'are' if lines != 1 else 'is'} not shown: "
                "the memory home is read-only here, so its cache cannot follow the files.")
    return (f"{files} file{'s' if files != 1 else ''} in {where} changed since the cache was built, and the change "
            "is not shown: the memory home is read-only here.")
