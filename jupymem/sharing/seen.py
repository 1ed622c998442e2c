"""What status says of sharing, from the cache's tables and git's identity.

``switch.status`` reads the folder (its state, the files it refuses) and hands the rest
to ``tables``. A repository with no ``.jupymem`` and nothing shared in its cache
(``core.upkeep.never_shared``) has no folder to read: its state is "none" and nothing
is refused, so status there calls ``tables`` directly and never imports the readers
and writers of the sharing room (a third of what `jupymem status` imported).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..reports import SharedFile, SharingState, SharingStatus
from ..storage import database
from ..storage.eventlog import LOCAL, SHARED
from .identity import identity

FOLDER = ".jupymem"  # sharing.folder.FOLDER: that module reads folders, which this one never does
NONE: SharingState = "none"


def tables(
    conn: database.Connection, root: Path, state: SharingState, problems: Sequence[str] = (), *,
    home: Path | None = None,
) -> SharingStatus:
    """Sharing as status shows it: ``state`` and the folder's ``problems`` (what is not
    read), then each file as the cache read it, the lines not applied, this clone's
    writer and identity (``home``: where git's answer is kept between processes), and
    what stays on this machine."""
    who_writes = identity(root, home)
    rows = conn.execute("SELECT name, lines, applied, problems, due FROM shared_files ORDER BY name").fetchall()
    files: list[SharedFile] = []
    found_all: list[str] = []
    for name, lines, applied, found_json, due in rows:
        found = json.loads(found_json) if found_json != "[]" else []
        files.append(SharedFile(name=name, lines=lines, applied=applied, problems=len(found), waiting_until=due))
        found_all.extend(found)
    found_all.extend(problems)
    mine = database.get_meta(conn, f"writer:{root}")  # share.Sharing.writer_file
    row: Any = conn.execute("SELECT tail_ok FROM shared_files WHERE name = ?", (mine,)).fetchone() if mine else None
    # Counted through partial indexes (shared events, private memories): the sidebar
    # asks for status every few seconds.
    count = "SELECT count(*) FROM events WHERE scope = ?"
    return SharingStatus(
        state=state,
        folder=FOLDER,
        files=tuple(files),
        problems=tuple(found_all),
        writer=f"{FOLDER}/log/{mine}" if mine else None,
        identity=str(who_writes) if who_writes else None,
        shared_events=conn.execute(count, (SHARED,)).fetchone()[0] if rows else 0,
        # Events written before sharing was turned on (only a shared repository asks).
        local_events=conn.execute(count, (LOCAL,)).fetchone()[0] if state != NONE else 0,
        private_memories=conn.execute(
            "SELECT count(*) FROM memories WHERE private = 1 AND status = 'active'"
        ).fetchone()[0],
        # Our file ends in a line nobody applies: the next memory starts a new file.
        writer_damaged=bool(row is not None and not row[0]),
    )
