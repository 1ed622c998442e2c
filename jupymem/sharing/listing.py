"""What a repository's ``.jupymem/`` holds, as the cache sees it: whether sharing is on,
the signature of its log files (name, size, mtime, ctime, inode), and what it refuses.

Everything here lists or reads the folder without following a link (``folder``), and
none of it writes. ``share.Sharing`` compares the signature with what it applied
(``Applied``, a row of ``shared_files``) to notice, at the cost of a listing, that
nothing changed.
"""

from __future__ import annotations

from collections.abc import Container
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..errors import SharingError
from ..intake import strictjson
from .folder import LinkRefused, opened, scan_log, shown
from .sharelog import FOLDER, SUFFIX, Problem

if TYPE_CHECKING:
    from ..reports import SharingState

__all__ = ["CONFIG", "NONE", "OFF", "ON", "Applied", "Signature", "Stat", "folder_problems", "has_log", "scan", "signature",
           "state", "stats"]

CONFIG = "config.json"
ON: SharingState = "on"
OFF: SharingState = "off"
NONE: SharingState = "none"


def state(root: Path) -> SharingState:
    """"on" (write to the files), "off" (files stay as history, writes stay local) or "none"."""
    try:
        with opened(root) as folder:
            if folder is None:
                return NONE
            try:
                raw = folder.read(CONFIG, 64 * 1024)
            except (LinkRefused, OSError):
                return ON  # a damaged config: the folder is there, so keep the team's history flowing
            if raw is None:
                try:
                    return ON if folder.log() is not None else NONE
                except LinkRefused:
                    return ON  # named by status; a write says it cannot use it
    except LinkRefused:
        return NONE  # .jupymem is not a real folder: nothing there is read (status says so)
    except OSError:
        return NONE
    try:
        config = strictjson.loads(raw, max_bytes=64 * 1024)
    except strictjson.StrictJSONError:
        return ON
    return OFF if isinstance(config, dict) and config.get("sharing") == OFF else ON


def has_log(root: Path) -> bool:
    """Whether the repository holds a shared log (then reading it builds a local cache)."""
    try:
        with opened(root) as folder:
            return folder is not None and bool(scan_log(folder, SUFFIX, first=True)[0])
    except (LinkRefused, OSError):
        return False


Signature = tuple[tuple[str, int, int, int, int], ...]
Stat = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode: what tells a file changed


def stats(sig: Signature | None) -> dict[str, Stat]:
    """A signature as {name: its stat}."""
    return {name: (size, mtime, ctime, ino) for name, size, mtime, ctime, ino in sig or ()}


class Applied(NamedTuple):
    """What the cache applied of one file (a row of ``shared_files``)."""

    stat: Stat
    lines: int
    applied: int
    due: str | None
    tail_ok: int


def signature(root: Path, known: Container[str] = ()) -> Signature | None:
    """(name, size, mtime_ns, ctime_ns, inode) of every log file, or None without a (real) log folder.

    Regular files only, reached without following a link (``folder``): a link could
    point anywhere on this machine. What is refused is named by ``folder_problems``.
    ``known``: names already found fit to show (``folder.scan_log``)."""
    return scan(root, known)[0]


def scan(root: Path, known: Container[str] = ()) -> tuple[Signature | None, list[str]]:
    """The signature, and what ``folder_problems`` says of the same listing."""
    try:
        with opened(root) as folder:
            if folder is None:
                return None, []
            files, refused = scan_log(folder, SUFFIX, known)
            if not files and folder.log() is None:
                return None, _refused_problems(refused)
    except LinkRefused as exc:
        return None, [exc.message]
    except OSError as exc:
        raise SharingError(f"Cannot read {FOLDER}/log ({exc.strerror or exc}); check its permissions.") from None
    return tuple(sorted(files)), _refused_problems(refused)


def folder_problems(root: Path, known: Container[str] = ()) -> list[str]:
    """What under ``.jupymem/`` is not read because it is a link or not a regular file
    (``known``: as ``signature`` takes it)."""
    try:
        with opened(root) as folder:
            if folder is None:
                return []
            _, refused = scan_log(folder, SUFFIX, known)
    except LinkRefused as exc:
        return [exc.message]
    except OSError:
        return []
    return _refused_problems(refused)


def _refused_problems(refused: list[str]) -> list[str]:
    return [str(Problem(shown(name), 0, "is a symbolic link, not a regular file, or a name that must not be shown, so "
                                       "it is not read")) for name in refused]
