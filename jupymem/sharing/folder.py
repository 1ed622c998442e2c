"""The ``.jupymem/`` folder on disk: real files in a real folder, never a link followed.

Everything under ``.jupymem/`` arrives with a pull, written by whoever could commit
to the repository, and a symbolic link is as easy to commit as a file. Followed, a
committed ``.jupymem/log -> ~/.ssh`` made a plain ``remember`` write its log file
into ``~/.ssh``, a ``.jupymem/.config.json.tmp -> ~/.bashrc`` made ``share``
overwrite ``~/.bashrc``, and ``.jupymem -> ../elsewhere`` moved the whole folder out
of the repository. So every path here is opened one component at a time from the
repository's own directory, each with ``O_NOFOLLOW`` (a link is an error, never a
detour), files must be regular files with one name (no hard link into someone's
home), and a file is replaced through a temporary file created with ``O_EXCL`` under
a random name in the same folder. A link found where a file or folder belongs is
named (``LinkRefused``), and the command goes on without it.

POSIX only, like the rest of jupymem's file locking (``fcntl``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Container, Iterator
from pathlib import Path
from typing import IO

from ..errors import SharingError
from ..intake.text import control, hidden

__all__ = ["FOLDER", "LOG_DIR", "Folder", "LinkRefused", "open_folder", "scan_log"]

FOLDER = ".jupymem"
LOG_DIR = "log"

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO committed in place of a file must not hang the reader.
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class LinkRefused(SharingError, code="link_refused"):
    """Something under ``.jupymem/`` is a symbolic link, or not the regular file or folder
    jupymem expects there; it is neither read nor written."""


def _refused(where: str, what: str) -> LinkRefused:
    return LinkRefused(
        f"{where} is {what}; jupymem reads and writes only real files in a real folder inside the repository, "
        "so it is left alone. If nobody on the team made it, remove it from the repository (`git rm`)."
    )


def _kind(dir_fd: int, name: str) -> str | None:
    """What stands at ``name`` (not following it): "a symbolic link", "not a folder" ..., or None."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        target = ""
        with contextlib.suppress(OSError):
            to = os.readlink(name, dir_fd=dir_fd)
            target = f" (to {to})" if shown(to) == to and len(to) <= 200 else ""
        return f"a symbolic link{target}"
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if stat.S_ISREG(st.st_mode):
        return "a file" if st.st_nlink <= 1 else f"a file with {st.st_nlink} names (a hard link)"
    return "not a regular file"


class Folder:
    """An open ``.jupymem/`` of one repository; use as a context manager (it holds two
    directory descriptors)."""

    def __init__(self, root: Path, fd: int):
        self.root = root
        self.fd = fd
        self._log: int | None = None

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in (self._log, self.fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._log = None

    # -- the log folder ---------------------------------------------------------------

    def log(self, *, create: bool = False) -> int | None:
        """The descriptor of ``log/`` (created if asked), or None when there is none."""
        if self._log is None:
            self._log = _open_dir(self.fd, LOG_DIR, f"{FOLDER}/{LOG_DIR}", create=create)
        return self._log

    def open_log(self, name: str) -> IO[bytes]:
        """A log file for reading."""
        log = self.log()
        if log is None:
            raise FileNotFoundError(name)
        return _open_file(log, name, _READ, f"{FOLDER}/{LOG_DIR}/{name}", "rb")

    def append_log(self, name: str) -> IO[bytes]:
        """This writer's log file, created if new, for appending (``a+b``)."""
        log = self.log(create=True)
        assert log is not None
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        return _open_file(log, name, flags, f"{FOLDER}/{LOG_DIR}/{name}", "a+b")

    # -- files in the folder itself ---------------------------------------------------

    def read(self, name: str, limit: int) -> bytes | None:
        """The first ``limit`` bytes of a file in the folder; None when it is absent."""
        try:
            with _open_file(self.fd, name, _READ, f"{FOLDER}/{name}", "rb") as fh:
                return fh.read(limit)
        except FileNotFoundError:
            return None

    def create(self, name: str, data: bytes) -> bool:
        """Write a new file; False (and nothing written) when a regular file is already there."""
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                         dir_fd=self.fd)
        except FileExistsError:
            what = _kind(self.fd, name)
            if what != "a file":
                raise _refused(f"{FOLDER}/{name}", what or "in the way") from None
            return False
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return True

    def replace(self, name: str, data: bytes) -> None:
        """Write ``name`` whole or not at all: a new temporary file (``O_EXCL``, a random
        name: a committed link under any fixed name is never opened), fsynced, renamed."""
        what = _kind(self.fd, name)
        if what is not None and what != "a file":
            raise _refused(f"{FOLDER}/{name}", what)
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise


def _open_dir(parent: int, name: str, where: str, *, create: bool) -> int | None:
    try:
        return os.open(name, _DIR, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _refused(where, _kind(parent, name) or "not a folder") from None
        raise
    try:
        os.mkdir(name, 0o777, dir_fd=parent)
    except FileExistsError:  # a dangling link: mkdir never creates its target
        raise _refused(where, _kind(parent, name) or "in the way") from None
    return os.open(name, _DIR, dir_fd=parent)


def _open_file(dir_fd: int, name: str, flags: int, where: str, mode: str) -> IO[bytes]:
    try:
        fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refused(where, _kind(dir_fd, name) or "a symbolic link") from None
        if exc.errno in (errno.EISDIR, errno.ENOTDIR, errno.ENXIO):
            # A folder (or a socket) committed in place of a writer's file: refused like a
            # link, so that the writer starts a new file instead of failing at every record.
            raise _refused(where, _kind(dir_fd, name) or "not a regular file") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        os.close(fd)
        raise _refused(where, _kind(dir_fd, name) or "not a regular file")
    if flags & os.O_NONBLOCK:
        os.set_blocking(fd, True)
    return os.fdopen(fd, mode)


def open_folder(root: Path, *, create: bool = False) -> Folder | None:
    """``root``'s ``.jupymem/``, or None when it has none (and ``create`` is false).

    Raises ``LinkRefused`` when ``.jupymem`` is a link or not a folder, and OSError
    (permissions, a full disk) for the caller to say plainly."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = _open_dir(root_fd, FOLDER, FOLDER, create=create)
    finally:
        os.close(root_fd)
    return Folder(root, fd) if fd is not None else None


def utf8(name: str) -> bool:
    """Whether a name read from the disk is UTF-8 (Python holds other bytes as surrogates,
    which no database, JSON or terminal takes as text)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(name: str) -> str:
    """A name from the folder as a message may show it: a name is written by whoever
    committed it, so one holding a secret or hidden characters is described, not quoted."""
    # The secret scan compiles its patterns on import: only a folder with names to show needs it.
    from ..intake.secrets_scan import find_secrets

    if not utf8(name):
        return "<a name that is not UTF-8>"
    found = find_secrets(name)
    if found:
        return f"<a name holding {found[0].label}>"
    if hidden(name) or control(name, "line"):
        return "<a name holding invisible or control characters>"
    return name


Stat = tuple[str, int, int, int, int]  # name, size, mtime_ns, ctime_ns, inode


def scan_log(folder: Folder, suffix: str, known: Container[str] = (), *, first: bool = False,
             ) -> tuple[list[Stat], list[str]]:
    """The regular files in ``log/`` whose names end in ``suffix``, and the names of the
    entries ending so that are not regular files (links, folders, FIFOs), or whose names
    hold a secret or characters nobody can see: refused (show them with ``shown``).

    ``known``: names already found fit to show (the cache's files), not scanned again: a
    name's scan is most of what a listing of 20,000 files costs. ``first``: stop at the
    first regular file (whether there is a log at all)."""
    log = folder.log()
    if log is None:
        return [], []
    files, refused = [], []
    with os.scandir(log) as it:
        for e in it:
            if not e.name.endswith(suffix):
                continue
            st = e.stat(follow_symlinks=False)
            # ``first`` asks only whether a log is there: no name is shown, so none is scanned
            # (which would import the secret scan for a yes or no).
            if (stat.S_ISREG(st.st_mode) and st.st_nlink <= 1 and utf8(e.name)
                    and (first or e.name in known or shown(e.name) == e.name)):
                files.append((e.name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
                if first:
                    break
            else:
                refused.append(e.name)
    return files, refused


@contextlib.contextmanager
def opened(root: Path, *, create: bool = False) -> Iterator[Folder | None]:
    folder = open_folder(root, create=create)
    try:
        yield folder
    finally:
        if folder is not None:
            folder.close()
