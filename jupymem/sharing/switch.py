"""Turning sharing on and off, and what status says about it: the switch of ``share``.

``enable`` creates ``.jupymem/`` (its README, its ``.gitattributes``, ``config.json``),
writes this clone's history into its writer's file and rebuilds the cache in the order
every clone uses; ``disable`` leaves the files as history and keeps new memories here;
``import_events`` sends an import's events to the writer's file, for the next read to
apply in order; ``status`` is what every face shows. The cache that follows the files and
the write path are ``share.Sharing``'s; these act on one.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidImport, JupymemError, SharingError
from ..reports import ShareResult, SharingStatus
from ..storage import eventlog
from ..storage.eventlog import LOCAL, PRIVATE, SHARED
from . import checkout, seen
from .identity import identity
from .folder import opened
from .share import CONFIG, NONE, OFF, ON, Sharing, _filesystem, state
from .sharelog import FOLDER

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
- `.gitattributes` tells git to keep these files byte for byte (no line-end, encoding or
  filter conversion at checkout) and marks the logs `merge=union`, in case one writer's
  file was appended to on two branches.
- `config.json` says whether sharing is on (`jupymem share`) or off (`jupymem share --off`:
  the files stay as history, new memories stay on each machine).

Never committed: private memories (`remember --private`), failed cells that no lesson
cites, conversations with assistants, and anything that looks like a secret (refused when
recorded). A lesson that cites a failure carries only its redacted, capped excerpt.

Do not edit these files by hand: `jupymem verify` names any line that fails its hash, and
such a line (and the lines after it in that writer's file) is not applied. To undo a
memory, retire or supersede it (`jupymem retire ID`). To repair a damaged file, restore it
from git history (`git checkout <commit> -- .jupymem/log/<file>`).

Reviewing a change to this folder: expect only lines added at the end of log files, or new
log files (one per clone of a teammate). A changed or removed line, a symbolic link, or a
line naming a writer who is not the commit's author needs a reason. `jupymem verify` on the
branch names every line jupymem would refuse. The hash chain shows that a line was not
altered after it was written; it does not prove who wrote it (there are no signatures).
"""

GITATTRIBUTES = checkout.ATTRIBUTES


def enable(sharing: Sharing) -> ShareResult:
    """Turn sharing on: create the folder, write this clone's history into its file."""
    created = []
    was = state(sharing.root)
    with _filesystem(f"create {FOLDER}/ in {sharing.root.name}"), opened(sharing.root, create=True) as folder:
        assert folder is not None
        folder.log(create=True)
        for name, text in (("README.md", README), (".gitattributes", GITATTRIBUTES)):
            if folder.create(name, text.encode("utf-8")):
                created.append(f"{FOLDER}/{name}")
        # What an earlier `share` wrote is brought up to date; anything else is a person's
        # (or a pull's) and stays, for `verify` to name what it does.
        if folder.read(".gitattributes", 4096) in tuple(t.encode() for t in checkout.OLD_ATTRIBUTES):
            folder.replace(".gitattributes", GITATTRIBUTES.encode("utf-8"))
            created.append(f"{FOLDER}/.gitattributes (updated)")
        _write_config(folder, ON)
    if was == NONE:
        created.append(f"{FOLDER}/{CONFIG}")
    written, kept = _export_local(sharing)
    file = sharing.writer_file()
    if file is not None:
        # Even with nothing to write, the file makes the folder reach git.
        with _filesystem(f"create {FOLDER}/log/{file}"), opened(sharing.root, create=True) as folder:
            assert folder is not None
            folder.append_log(file).close()
        if f"{FOLDER}/log/{file}" not in created:
            created.append(f"{FOLDER}/log/{file}")
    sharing.rebuild()  # replay in the order every clone uses
    where = f"{FOLDER}/log/{file}" if file else None
    name = sharing.root.name
    said = [f"Sharing was already on for {name}." if was == ON else
            f"Sharing is on for {name}: its memory now travels with the repository, in {FOLDER}/."]
    if created:
        said.append(f"Created {', '.join(created)}.")
    if written:
        said.append(f"Wrote {written} events of this clone's history to {where}.")
    if kept:
        said.append(f"{kept} older events stay on this machine: they fail today's checks.")
    why = sharing.held_back()
    if why is not None:
        said.append(held_back_text(why) + ".")
    said.append("Private memories (remember --private) stay on this machine.")
    if identity(sharing.root) is None:
        said.append("git knows no user.name/user.email here, so your lines name nobody: "
                    "set them with `git config user.name ...` and `git config user.email ...`.")
    said.append(f"Commit the folder so teammates get it: git add {FOLDER} && git commit -m \"Share jupymem memory\".")
    return ShareResult(state=ON, was=was, created=tuple(created), written=written, kept_local=kept, file=where,
                       message=" ".join(said))


def _export_local(sharing: Sharing) -> tuple[int, int]:
    """Write the events that live only here (and are not private) into this writer's file."""
    written = kept = 0
    with sharing.writing() as journal:
        rows = sharing.conn.execute(
            "SELECT seq, uid, type, at, payload FROM events WHERE scope = ? ORDER BY seq", (LOCAL,)
        ).fetchall()
        for seq, uid, type_, at, payload in rows:
            if payload is None or type_ == "gc":
                sharing.conn.execute("UPDATE events SET scope = ? WHERE seq = ?", (PRIVATE, seq))
                continue
            try:
                journal.copy(uid, type_, at, json.loads(payload))
            except JupymemError:  # recorded under older rules; today's readers would refuse it
                sharing.conn.execute("UPDATE events SET scope = ? WHERE seq = ?", (PRIVATE, seq))
                kept += 1
                continue
            sharing.conn.execute("UPDATE events SET scope = ?, source = ? WHERE seq = ?",
                              (SHARED, journal.source, seq))
            written += 1
    return written, kept


def disable(sharing: Sharing) -> ShareResult:
    """Turn sharing off: the files stay as history, new memories stay on this machine."""
    was = state(sharing.root)
    name = sharing.root.name
    if was == NONE:
        return ShareResult(state=NONE, was=NONE, message=f"Sharing was never on for {name}; nothing changed.")
    with _filesystem(f"write {FOLDER}/{CONFIG}"), opened(sharing.root) as folder:
        if folder is None:
            raise SharingError(f"{FOLDER}/ is gone from {name}; nothing changed.")
        _write_config(folder, OFF)
    mine = sharing.writer_file()
    return ShareResult(
        state=OFF, was=was, file=f"{FOLDER}/log/{mine}" if mine else None,
        message=(
            f"Sharing is off for {name}: new memories stay on this machine. The files in {FOLDER}/ stay "
            f"as history and are still read. Commit {FOLDER}/{CONFIG} so teammates stop writing there too."
        ),
    )


def import_events(sharing: Sharing, evts: list[eventlog.Event], source: str = "import") -> int:
    """Write imported events into this writer's file; the next read applies them in order."""
    n = 0
    with sharing.writing() as journal:
        known = set(eventlog.known(sharing.conn, [ev.uid for ev in evts]))
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
    sharing.follow()
    return n


def status(sharing: Sharing) -> SharingStatus:
    """What every face shows of sharing (``seen.tables``), with what the folder says."""
    now = sharing.state()
    problems = sharing.folder_problems()
    if now == ON and sharing.conn.execute("SELECT 1 FROM events WHERE scope = ? LIMIT 1", (LOCAL,)).fetchone():
        why = sharing.held_back()  # asked only when something stayed here
        if why is not None:
            problems.append(held_back_text(why))
    return seen.tables(sharing.conn, sharing.root, now, problems)


def held_back_text(why: str) -> str:
    return (f"New memories stay on this machine: the git attribute `{why}` applies to {FOLDER}/log, and under it "
            "git would rewrite what jupymem writes there when it is committed (`jupymem verify` names it). Remove "
            f"it (keep {FOLDER}/.gitattributes as `jupymem share` writes it), then run `jupymem share` to write them out")


def _write_config(folder: Any, value: str) -> None:
    folder.replace(CONFIG, (json.dumps({"format": 1, "sharing": value}, indent=2) + "\n").encode("utf-8"))
