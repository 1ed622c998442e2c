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

import os
import threading
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import JupymemError, RegistryCorrupt, SharingError
from ..reports import BlockSize, Engine, ProjectMatch, RepositoryStatus, SharingSeen
from ..storage import registry


def status(path: Path, settings: Settings, *, within: Path | None = None) -> RepositoryStatus:
    """What jupymem knows about ``path``'s repository, said for people in ``message``.
    ``within``: a face confined to a folder (the Jupyter server's root), whose init adopts
    only what ``opening.init_project`` adopts there, so this says what its init would do."""
    base = RepositoryStatus(path=str(path), home=str(settings.home))
    if settings.database_url:
        from . import team

        base = replace(base, engine=Engine(name="postgresql", where=team.where(settings.database_url)))
    root = registry.find_git_root(path)
    if root is None:
        return replace(base, message=f"{path} is not inside a git repository; jupymem records nothing here.")
    base = replace(base, git=True, root=str(root), name=root.name)
    try:
        reg = registry.read_registry(settings.home)
    except RegistryCorrupt as exc:
        return replace(base, registry="corrupt", message=exc.message)
    from .opening import find_project

    try:
        proj = find_project(root, settings)
    except JupymemError as exc:  # a lost or damaged database: said plainly, never "no memory"
        return replace(base, memory=True, damage=exc.code, message=exc.message, project_id=reg.project_for_root(root))
    if proj is None:
        return _unbound(base, root, reg, within)
    from .team import engine_of

    engine = engine_of(proj)
    counts = proj.counts()
    blk = proj.block()
    sharing = proj.sharing_status()
    message = f"{root.name}: {sum(counts.values())} active memories, block {blk.bytes}/{blk.cap} bytes."
    if sharing.problems:
        n = len(sharing.problems)
        message += (
            f" {n} problem{'s' if n != 1 else ''} in {sharing.folder}/: some shared lines are not applied "
            "(`jupymem verify` names them)."
        )
    if proj.team:
        message += f" Memory is in the team database at {engine.where} (project {proj.id})."
        lowest = registry.root_commit(root)
        if lowest and lowest != proj.id:  # a merge brought a lower root: the project keeps its key
            message += (f" The repository's roots changed since the project was made (git now names {lowest[:12]} "
                        f"first); its memory stays under {proj.id[:12]}, the root it was made with.")
    if proj.disk_full:
        message += " The disk holding the memory home is full: reading works, recording does not until space is freed."
    elif proj.readonly:
        message += " The memory home is read-only: reading works, recording does not."
    # Lines of .jupymem/log a read-only home's cache cannot follow (0 where it follows them).
    seen = SharingSeen(**{f.name: getattr(sharing, f.name) for f in fields(sharing)})
    unseen = _not_shown(proj) if proj.readonly else None
    if unseen is not None:
        lines, files, said = unseen
        message += f" {said}"
        # the sidebar lists the problems
        seen = replace(seen, unseen_lines=lines, unseen_files=files, problems=(*seen.problems, said))
    return replace(
        base,
        memory=True,
        project_id=proj.id,
        revision=proj.revision(),
        counts=counts,
        total=sum(counts.values()),
        staged=proj.conn.execute("SELECT count(*) FROM staged_evidence").fetchone()[0],
        staged_revision=proj.staged_revision(),
        block=BlockSize(bytes=blk.bytes, cap=blk.cap, shown=blk.shown, omitted=blk.omitted, revision=blk.revision),
        database=str(proj.database),
        message=message,
        retrieval=dense_now(proj),
        sharing=seen,
        read_only=proj.readonly,
        disk_full=proj.disk_full,
        engine=engine,
    )


def dense_now(proj: Any) -> Any:
    """The search legs as a search would find them now, not as the last search found them.

    The dense leg's state is written down by each search, so a process idle since its
    first search kept saying "loading the bundled model" long after the encoders had
    loaded, and a project opened after them (sharing reopens it) said "words only".
    Once this long-lived process has started its encoders (shared by its projects), the
    leg is asked again, as a search would: it moves the transformer's take-over on, and
    never starts anything a search would not have started. A one-shot command and a
    process that never searched are only described."""
    engine = proj.engine
    if proj.settings.interactive and engine.tiers.static_encoder().state != "off":
        engine.dense_leg(proj.revision())
    return proj.dense_status()


def _unbound(base: RepositoryStatus, root: Path, reg: registry.Registry, within: Path | None) -> RepositoryStatus:
    """A repository with no memory bound here: perhaps a known project moved or re-cloned."""
    from .opening import adoptable

    found = reg.projects_with_commit(registry.root_commit(root))
    matches = adoptable(found, reg, within)
    match = None
    if matches:
        m = sorted(matches, key=lambda p: p.created_at)[0]
        match = ProjectMatch(project_id=m.project_id, roots=tuple(reg.roots_of(m.project_id)))
        where = f" (bound at {match.roots[0]})" if match.roots and within is None else ""
        message = (
            f"{root.name} has no memory bound here, but it is the same repository as project "
            f"{m.project_id}{where}. `%memory init` (or `jupymem init`) adopts that memory."
        )
    elif found:
        # Named without its path: a checkout outside the root is not this face's to show.
        message = (
            f"{root.name} has no memory bound here. It is the same repository as a project with a checkout "
            "outside this server's root, which this server does not adopt: `jupymem init` in a terminal adopts "
            "that memory; initializing here starts a new one."
        )
    else:
        message = f"{root.name} has no memory yet. `%%remember` or `%memory init` starts it."
    # A committed .jupymem that is not read (a link, say) is why a clone shows nothing shared.
    from ..sharing.share import folder_problems

    problems = folder_problems(root)
    if problems:
        message += " " + " ".join(problems)
    return replace(base, matches=match, message=message)


# (project id, root) -> (the files' signature and the cache's revision, what _not_shown said)
_said: dict[tuple[str, str], tuple[Any, tuple[int, int, str] | None]] = {}
_said_lock = threading.Lock()


def _not_shown(proj: Any) -> tuple[int, int, str] | None:
    """What a cache that cannot follow its files (a read-only home) does not show: new
    lines in ``.jupymem/log`` (lines now minus lines applied, per changed file), how many
    files changed, and the sentence that says so; None when the cache is in step.

    Without writing: the files' signature against the ``shared_files`` table. Only the
    files that changed are read (their newlines counted), and once per signature."""
    from ..sharing import share, sharelog  # a read-only home only
    from ..sharing.checkout import MAX_FILE_BYTES

    try:
        sig = share.signature(proj.root)
    except SharingError:
        return None  # the folder cannot be read: nothing more to say than sharing status does
    key, seen = (proj.id, str(proj.root)), (sig, proj.revision())
    with _said_lock:
        cached = _said.get(key)
    if cached is not None and cached[0] == seen:
        return cached[1]
    stored = {r[0]: (tuple(r[1:5]), r[5]) for r in proj.conn.execute(
        "SELECT name, size, mtime_ns, ctime_ns, ino, lines FROM shared_files")}
    current = share.stats(sig)
    changed = sorted(n for n in current if stored.get(n, (None, 0))[0] != current[n])
    changed += sorted(set(stored) - set(current))  # files that went away
    lines = 0
    for name in changed:
        if name not in current:
            continue  # a file that went away: changed, no new lines
        try:
            # As a reader reads: never through a link, and at most as far as a reader goes.
            fd = os.open(sharelog.log_dir(proj.root) / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as fh:
                now = fh.read(MAX_FILE_BYTES).count(b"\n")
        except OSError:
            continue
        lines += max(0, now - (stored[name][1] if name in stored else 0))
    out = (lines, len(changed), _sentence(lines, len(changed))) if changed else None
    with _said_lock:
        _said[key] = (seen, out)
    return out


def _sentence(lines: int, files: int) -> str:
    from ..sharing.seen import FOLDER

    where = f"{FOLDER}/log"
    if lines:
        return (f"{lines} new line{'s' if lines != 1 else ''} in {where} {'are' if lines != 1 else 'is'} not shown: "
                "the memory home is read-only here, so its cache cannot follow the files.")
    return (f"{files} file{'s' if files != 1 else ''} in {where} changed since the cache was built, and the change "
            "is not shown: the memory home is read-only here.")
