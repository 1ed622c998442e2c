"""Which repository a path belongs to, and which project database holds its memory.

Memory belongs to a git repository (SPEC 1). This module finds the top-level
working tree of a path, names the repository (canonical root path plus root
commit, so a moved or re-cloned checkout can be recognised) and keeps the
bindings in ``$JUPYMEM_HOME/registry.json``.

The registry is small, read on every lookup and written rarely, so it is one
JSON document with a sha256 checksum, rewritten atomically (temp file, fsync,
rename) under an exclusive ``flock``. A registry that fails its checksum (or is
not a file at all) is never "repaired" by guessing: reading raises
``RegistryCorrupt`` and only ``jupymem doctor`` rewrites it, from the project
databases themselves, which each record their own identity.

Each project's record also keeps a *mark*: an event count and the hash of that
event, written when a project's history first reaches 1, 2, 4, 8 ... events (so a
few registry writes over a project's life, not one per record). A database
that is missing, empty or holds less history than its mark was lost, deleted or
rolled back: that is reported, never taken for a fresh start.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..models import _Record
from ..errors import JupymemError, NotAGitRepository, ReadOnlyHome, RegistryCorrupt, StorageError
from ..intake import clock
from . import files

# subprocess, secrets and tempfile are imported where git is asked, an id made or the registry
# written: a command that only reads a bound repository does none of these, and the three
# (with random, shutil and its compressors) cost it several milliseconds at start-up.

REGISTRY_FILE = "registry.json"
PROJECTS_DIR = "projects"
DB_FILE = "memory.sqlite"
_VERSION = 1


# -- git --------------------------------------------------------------------


def find_git_root(path: str | os.PathLike[str]) -> Path | None:
    """The top-level working tree containing ``path`` (a file or directory), or None.

    Walks up looking for ``.git`` (a directory, or a file for worktrees and
    submodules) instead of spawning git: this runs on hot paths. A ``.git`` another user
    owns is no repository of ours (``_trusted``): None.
    """
    p = Path(path).expanduser()
    try:
        p = p.resolve()
    except OSError:
        return None
    if not p.is_dir():
        p = p.parent
    for candidate in (p, *p.parents):
        if (candidate / ".git").exists():
            return candidate if _trusted(candidate) else None
    return None


def _untrusted_root(path: str | os.PathLike[str]) -> Path | None:
    """The nearest folder above ``path`` holding a ``.git`` that ``_trusted`` refuses."""
    try:
        p = Path(path).expanduser().resolve()
    except OSError:
        return None
    for candidate in (p if p.is_dir() else p.parent, *p.parents):
        if (candidate / ".git").exists():
            return None if _trusted(candidate) else candidate
    return None


def _trusted(root: Path) -> bool:
    """git's own rule (``safe.directory``): a repository whose ``.git`` another user owns
    is none of ours unless git's global or system config names it safe. Without it, a
    ``.git`` and ``.jupymem/`` planted in a shared parent (``/tmp``) would make that
    user's log part of our block and our records land in their folder."""
    try:
        owner = os.lstat(root / ".git").st_uid
    except OSError:
        return False
    if owner == os.geteuid():
        return True
    if os.geteuid() == 0 and os.environ.get("SUDO_UID") == str(owner):
        return True  # as git: root through sudo works in the repository of the user who ran it
    return _safe_directory(root)


def _safe_directory(root: Path) -> bool:
    import subprocess  # only for a repository another user owns

    try:
        out = subprocess.run(["git", "config", "--get-all", "safe.directory"], capture_output=True, text=True,
                             timeout=10, check=False, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return False
    said: list[str] = []
    for line in out.stdout.splitlines():
        value = line.strip()
        said = [*said, value] if value else []  # an empty value resets the list, as git reads it
    # "*" trusts every repository.
    return "*" in said or str(root) in said or f"{root}/" in said or f"{root}/.git" in said


def require_git_root(path: str | os.PathLike[str]) -> Path:
    root = find_git_root(path)
    if root is None:
        foreign = _untrusted_root(path)
        if foreign is not None:
            raise NotAGitRepository(
                f"{foreign} is a git repository another user owns, so jupymem keeps no memory for it (git "
                "calls such a repository of dubious ownership). If it is yours to use, name it safe as git "
                f"does: git config --global --add safe.directory {foreign}"
            )
        raise NotAGitRepository(
            f"{path} is not inside a git repository, so there is nowhere to keep its memory. "
            "Run `git init` there (or open a notebook inside a repository) and try again."
        )
    return root


def root_commit(root: Path) -> str | None:
    """The repository's first commit: the part of its identity that survives a move."""
    commits = root_commits(root)
    return commits[0] if commits else None


def root_commits(root: Path) -> tuple[str, ...]:
    """Every root commit of HEAD, lowest first: more than one after a merge of an unrelated
    history (or ``git subtree add``), which adds roots and takes none away."""
    import subprocess

    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-list", "--max-parents=0", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(sorted(out.stdout.split())) if out.returncode == 0 else ()


# -- registry -----------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class Binding(_Record):
    """A working tree bound to the project it records into."""

    root: str  # canonical absolute path of the working tree
    project_id: str


@dataclass(frozen=True, eq=False, repr=False)
class ProjectRecord(_Record):
    """A project the registry knows: its key, and the mark of its database."""

    project_id: str
    root_commit: str | None
    created_at: str
    # The mark: this many events, the last of them with this hash, were seen in the
    # project's database. None: not known (a registry written before marks existed).
    events: int | None = None
    last_hash: str | None = None
    # A team engine's project: the PostgreSQL URL (never with a password) its memory is in.
    database: str | None = None

    def marked(self, events: int, last_hash: str) -> ProjectRecord:
        return ProjectRecord(self.project_id, self.root_commit, self.created_at, events, last_hash, self.database)


@dataclass(frozen=True, eq=False, repr=False)
class Registry(_Record):
    """The memory home's registry: every binding and every project."""

    bindings: tuple[Binding, ...] = ()
    projects: tuple[ProjectRecord, ...] = ()

    def project_for_root(self, root: Path) -> str | None:
        key = str(root)
        for b in self.bindings:
            if b.root == key:
                return b.project_id
        return None

    def projects_with_commit(self, commit: str | None) -> list[ProjectRecord]:
        if not commit:
            return []
        return [p for p in self.projects if p.root_commit == commit]

    def roots_of(self, project_id: str) -> list[str]:
        return [b.root for b in self.bindings if b.project_id == project_id]

    def record(self, project_id: str) -> ProjectRecord | None:
        return next((p for p in self.projects if p.project_id == project_id), None)

    def with_record(self, record: ProjectRecord) -> Registry:
        others = tuple(p for p in self.projects if p.project_id != record.project_id)
        return Registry(self.bindings, (*others, record))


def _checksum(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def registry_path(home: Path) -> Path:
    return home / REGISTRY_FILE


def database_path(home: Path, project_id: str) -> Path:
    return home / PROJECTS_DIR / project_id / DB_FILE


def new_project_id() -> str:
    import secrets

    return "p-" + secrets.token_hex(6)


def read_registry(home: Path) -> Registry:
    """The bindings; an empty registry when none was ever written. Never writes."""
    path = registry_path(home)
    fix = f"Run `jupymem doctor` (or `%memory init`) to rebuild it from the project databases in {home}."
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        # No registry but project databases: it was lost, and an empty answer would make
        # `init` start a second, empty project beside the real one. Report it instead.
        if any((home / PROJECTS_DIR).glob(f"*/{DB_FILE}")):
            raise RegistryCorrupt(f"The jupymem registry {path} is missing. {fix}") from None
        return Registry()
    except OSError as exc:  # a directory in its place, no permission to read it
        raise RegistryCorrupt(f"The jupymem registry {path} cannot be read ({exc.strerror or exc}). {fix}") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
        body = {"version": doc["version"], "bindings": doc["bindings"], "projects": doc["projects"]}
        ok = doc.get("checksum") == _checksum(body)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise RegistryCorrupt(f"The jupymem registry {path} cannot be read. {fix}") from None
    if not ok:
        raise RegistryCorrupt(f"The jupymem registry {path} fails its checksum. {fix}")
    if body["version"] > _VERSION:
        raise RegistryCorrupt(f"The registry {path} was written by a newer jupymem; upgrade jupymem.")
    try:
        return Registry(
            bindings=tuple(Binding(b["root"], b["project_id"]) for b in body["bindings"]),
            projects=tuple(
                ProjectRecord(
                    p["project_id"], p.get("root_commit"), p["created_at"], _mark(p.get("events")),
                    p.get("last_hash") if isinstance(p.get("last_hash"), str) else None,
                    p.get("database") if isinstance(p.get("database"), str) else None,
                )
                for p in body["projects"]
            ),
        )
    except (KeyError, TypeError, AttributeError):
        raise RegistryCorrupt(f"The jupymem registry {path} has malformed entries. {fix}") from None


def _serialize(reg: Registry) -> bytes:
    body = {
        "version": _VERSION,
        "bindings": [{"root": b.root, "project_id": b.project_id} for b in sorted(reg.bindings, key=lambda b: b.root)],
        "projects": [_project_json(p) for p in sorted(reg.projects, key=lambda p: p.project_id)],
    }
    return (json.dumps({**body, "checksum": _checksum(body)}, indent=2, sort_keys=True) + "\n").encode()


def _mark(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _project_json(p: ProjectRecord) -> dict[str, object]:
    out: dict[str, object] = {"project_id": p.project_id, "root_commit": p.root_commit, "created_at": p.created_at}
    if p.events is not None:
        out.update(events=p.events, last_hash=p.last_hash)
    if p.database is not None:
        out["database"] = p.database
    return out


def _unwritable(home: Path, exc: OSError) -> JupymemError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # a full disk is never "read-only"
        return StorageError(
            f"The memory home {home} is on a full disk ({exc.strerror}): nothing could be recorded or bound. "
            "Free some space; reading works meanwhile."
        )
    return ReadOnlyHome(
        f"The memory home {home} is read-only here ({exc.strerror or exc}): reading works, nothing can be "
        "recorded or bound. Make it writable, or point JUPYMEM_HOME at a writable directory."
    )


@contextlib.contextmanager
def locked(home: Path, wait: float | None = None) -> Iterator[None]:
    """Exclusive lock over registry changes, across threads and processes, waited for up
    to ``wait`` seconds (``_LOCK_WAIT`` unless said)."""
    try:
        if not home.exists():
            files.private_dir(home)  # a home of ours, made now: only we enter it
        # Only this user may open the lock: flock works through a read-only descriptor, so
        # a lock file others can read is one another local user can hold forever.
        fd = os.open(home / "registry.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise _unwritable(home, exc) from None
    with os.fdopen(fd, "r+b") as fh:
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_mode & 0o077:
                os.fchmod(fd, 0o600)  # made 0644 by an earlier version
        _flock(fh.fileno(), home, _LOCK_WAIT if wait is None else wait)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


_LOCK_WAIT = 30.0


def _flock(fd: int, home: Path, wait: float) -> None:
    """The registry's lock, waited for up to ``wait`` seconds: a change to the
    registry takes milliseconds, so a lock held longer is a process that hangs (or
    another user's), and the person is told instead of waiting forever."""
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise StorageError(
                    f"The registry of the memory home {home} stayed locked by another process for "
                    f"{wait:g} s (registry.lock); nothing was changed. Try again, or look for a hung "
                    "jupymem process.") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.1)


def write_registry(home: Path, reg: Registry) -> None:
    """Atomic replace; call only while holding ``locked(home)``."""
    try:
        _write_registry(home, reg)
    except OSError as exc:
        raise _unwritable(home, exc) from None


def set_aside(path: Path) -> Path:
    """Rename a damaged file (or whatever stands in its place) beside itself, never
    deleting it: ``name.damaged-<UTC time>``. Returns the new path."""
    target = path.with_name(f"{path.name}.damaged-{clock.now_stamp()}")
    os.replace(path, target)
    return target


def _write_registry(home: Path, reg: Registry) -> None:
    path = registry_path(home)
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".registry-", dir=home)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(_serialize(reg))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(home, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def record_mark(home: Path, project_id: str, events: int, last_hash: str) -> None:
    """Raise the project's mark to ``events`` (never lower it; doctor resets it)."""
    with locked(home):
        reg = read_registry(home)
        rec = reg.record(project_id)
        if rec is None or (rec.events is not None and rec.events >= events):
            return
        write_registry(home, reg.with_record(rec.marked(events, last_hash)))
