"""Small files kept beside the database and in the memory home (what was checked, the
block, git's identity): written whole or not at all, readable by their owner only.

They only save work: a file that cannot be written (a read-only or full home) means
the work is done again next time, so writing them never raises.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path


def private_dir(path: Path) -> None:
    """Make ``path`` (and any missing parent) a folder only its owner can enter, and close
    one this user owns that others can enter. A project's folder holds its database,
    private memories and failed cells' source included; SQLite makes its files with the
    process's umask (0644 by default), so the folder is what keeps other local users out
    of them. Raises ``OSError`` when it cannot be made; tightening is best effort."""
    missing = []
    at = path
    while not at.exists() and at != at.parent:
        missing.append(at)
        at = at.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            folder.mkdir(mode=0o700)
    close_to_others(path)


def close_to_others(path: Path) -> None:
    """Take group and others' access off ``path`` when this user owns it (a folder an
    earlier version made 0755); best effort, never raises."""
    with contextlib.suppress(OSError):
        st = os.stat(path)
        if st.st_uid == os.geteuid() and st.st_mode & 0o077:
            os.chmod(path, st.st_mode & 0o700)


def keep(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it (a reader sees the
    old file or the new one, never part of one); best effort, never raises."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
