"""One writer's file as the cache reads it: opened without following a link, with what
git's history says of it (``history.Kept``): the committed lines a commit took out,
read back first, and the lines a rewriting commit put in, not applied (``claims.rewritten``)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import datetime
from typing import IO, Any

from . import claims, history
from .checkout import MAX_FILE_BYTES
from .folder import LinkRefused
from .history import Kept
from .sharelog import Problem, Reading, read_stream

__all__ = ["read_one", "with_taken"]


def read_one(folder: Any, name: str, now: datetime, kept: Kept) -> Reading:
    """One file, opened without following a link; a file that cannot be opened is a problem.
    ``kept``: what history says of it (``Share._read``; a deleted file: its lines taken out alone)."""
    if name in kept.files:
        lines = list(kept.lines.get(name, ()))
        cut = history.bounded(lines)  # already so, unless a cache held more
        stream, n = with_taken(folder, name, lines[:cut])
        reading = read_stream(name, stream, now, n, sum(len(line) + 1 for line in lines[:cut]))
        every = len(lines) + kept.dropped.get(name, 0)
        if cut < every:
            reading.problems.append(Problem(name, 0, (
                f"had {every:,} committed lines taken out by commits (`jupymem verify` names them); the first "
                f"{cut:,} are read back from git's history, the rest are not")))
        claims.rewritten(reading, kept.tainted.get(name, set()))
        return reading
    try:
        if folder is None:
            raise FileNotFoundError(name)
        with folder.open_log(name) as fh:
            return read_stream(name, fh, now)
    except LinkRefused:  # it became a link after the folder was listed
        reading = Reading(name)
        reading.problems.append(Problem(name, 0, "is a symbolic link or not a regular file, so it is not read"))
        reading.tail_ok = False
        return reading
    except OSError as exc:
        reading = Reading(name)
        reading.problems.append(Problem(name, 0, f"cannot be read ({exc.strerror or exc})"))
        reading.tail_ok = False
        return reading


def with_taken(folder: Any, name: str, taken: Sequence[bytes]) -> tuple[IO[bytes], int]:
    """The lines taken out of ``name``, then what it holds (up to the size one file may
    have), as one stream. First, so that where a rewrite put another line under a taken
    line's uid, the line its writer wrote is the one applied and the other is named as
    reusing it (the chain is a tree, so a line may come before the one it follows). A file
    git converted to UTF-16 at checkout keeps what it holds only: the lines taken out are
    UTF-8, and cannot share one stream with it."""
    data = b""
    if folder is not None:
        try:
            with folder.open_log(name) as fh:
                data = fh.read(MAX_FILE_BYTES)
        except (LinkRefused, OSError):
            data = b""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff", b"{\x00", b"\x00{"):
        return io.BytesIO(data), 0
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a byte order mark starts a stream, not its middle
    return io.BytesIO(b"".join(line + b"\n" for line in taken) + data), len(taken)


