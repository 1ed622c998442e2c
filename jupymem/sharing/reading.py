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


_UTF16 = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be", b"{\x00": "utf-16-le", b"\x00{": "utf-16-be"}


def with_taken(folder: Any, name: str, taken: Sequence[bytes]) -> tuple[IO[bytes], int]:
    """The lines taken out of ``name``, then what it holds (up to the size one file may
    have), as one stream. First, so that where a rewrite put another line under a taken
    line's uid, the line its writer wrote is the one applied and the other is named as
    reusing it (the chain is a tree, so a line may come before the one it follows). A file
    in UTF-16 (a checkout attribute, or two bytes a commit put at its top) is decoded here,
    so that the lines taken out are read whatever it holds."""
    data = b""
    if folder is not None:
        try:
            with folder.open_log(name) as fh:
                data = fh.read(MAX_FILE_BYTES)
        except (LinkRefused, OSError):
            data = b""
    codec = _UTF16.get(data[:2])
    if codec is not None:
        # What a checkout converted (or a commit made look so): read as the reader reads it,
        # after the lines taken out, which stay whatever the file's first bytes say.
        data = data.decode(codec, "replace").lstrip("\ufeff").encode("utf-8")
    elif data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a byte order mark starts a stream, not its middle
    return io.BytesIO(b"".join(line + b"\n" for line in taken) + data), len(taken)


