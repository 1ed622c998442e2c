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
