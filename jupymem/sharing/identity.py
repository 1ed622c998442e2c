"""Who writes here: git's identity (``user.name``/``user.email``, or ``GIT_AUTHOR_*``).

Asked of git once and asked again only when the environment or a git config file
changes; what git said is kept in the memory home too (``identities.json``), so a
one-shot command (``jupymem status``, ``remember``) does not start git each time. Apart
from the journal, because status shows it in every repository, shared or
not, and a repository that never shared needs nothing else of the sharing room.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..models import _Record
from ..storage.files import keep


@dataclass(frozen=True, eq=False, repr=False)
class Identity(_Record):
    """Who writes here, as git says it."""

    name: str | None
    email: str | None

    def __str__(self) -> str:
        if self.name and self.email:
            return f"{self.name} <{self.email}>"
        return self.name or f"<{self.email}>"

    def to_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "email": self.email}


_identities: dict[str, tuple[tuple[Any, ...], Identity | None]] = {}
_identities_lock = threading.Lock()
KEPT_FILE = "identities.json"  # in the memory home: what git said, for the next process
_KEPT_ROOTS = 64  # repositories remembered; the oldest answer goes first
_MAX_FIELD = 1000  # a name or email longer than this in the file is not believed


def _read_kept(kept_at: Path | None, root: str, key: tuple[Any, ...]) -> tuple[bool, Identity | None]:
    """(found, identity) from the kept file, for ``key`` only: any change to the
    environment or a config file's stat makes a kept answer stale."""
    if kept_at is None:
        return False, None
    try:
        entry = json.loads(kept_at.read_text(encoding="utf-8")).get(root)
    except (OSError, ValueError, AttributeError):
        return False, None  # none yet, unreadable or not ours: git is asked
    if not isinstance(entry, list) or len(entry) != 3 or entry[0] != json.loads(json.dumps(key)):
        return False, None
    name, email = entry[1], entry[2]
    if not all(v is None or (isinstance(v, str) and 0 < len(v) <= _MAX_FIELD) for v in (name, email)):
        return False, None
    return True, (Identity(name, email) if (name or email) else None)


def _keep(kept_at: Path | None, root: str, key: tuple[Any, ...], who: Identity | None) -> None:
    """Best effort: a read-only or full home only means git is asked next time."""
    if kept_at is None:
        return
    try:
        kept = json.loads(kept_at.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        kept = {}
    if not isinstance(kept, dict):
        kept = {}
    kept.pop(root, None)
    kept[root] = [key, who.name if who else None, who.email if who else None]
    keep(kept_at, json.dumps(dict(list(kept.items())[-_KEPT_ROOTS:])))


def _identity_key(root: Path) -> tuple[Any, ...]:
    """What the git identity depends on, cheaply: the environment and the config files' stats."""
    env = os.environ
    home = env.get("HOME") or str(Path.home())
    xdg = env.get("XDG_CONFIG_HOME") or f"{home}/.config"
    files = (
        f"{root}/.git/config", f"{home}/.gitconfig", f"{xdg}/git/config", env.get("GIT_CONFIG_GLOBAL"),
        env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
    )
    stats = []
    for f in files:
        try:
            st = os.stat(f) if f else None
        except OSError:
            st = None
        stats.append((st.st_mtime_ns, st.st_size, st.st_ino) if st else None)
    keys = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_SYSTEM",
            "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_DIR", "HOME")
    return (tuple(env.get(k) for k in keys), tuple(stats))


def identity(root: Path, home: Path | None = None) -> Identity | None:
    """The git identity (``user.name``/``user.email``, or GIT_AUTHOR_*) of whoever writes here.

    Asked of git once and kept until the environment or a git config file changes: a
    record must stay well under a few milliseconds, and git takes a few to start.
    ``home``: the memory home, where git's answer is kept for the next process too (a
    change in a file that a config file includes is not noticed until one of the config
    files themselves or the environment changes, in this process or the next).
    """
    key = _identity_key(root)
    with _identities_lock:
        cached = _identities.get(str(root))
        if cached and cached[0] == key:
            return cached[1]
    kept_at = home / KEPT_FILE if home is not None else None
    found, who = _read_kept(kept_at, str(root), key)
    if found:
        with _identities_lock:
            _identities[str(root)] = (key, who)
        return who
    who = _ask_git(root)
    with _identities_lock:
        _identities[str(root)] = (key, who)
    _keep(kept_at, str(root), key, who)
    return who


def _ask_git(root: Path) -> Identity | None:
    import subprocess  # only when git is asked: most commands find the answer kept

    values: dict[str, str] = {}
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "config", "--get-regexp", r"^user\.(name|email)$"],
            capture_output=True, text=True, timeout=10, check=False,
        )
        for line in out.stdout.splitlines():
            k, _, v = line.partition(" ")
            values[k] = v.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    name = os.environ.get("GIT_AUTHOR_NAME") or values.get("user.name") or None
    email = os.environ.get("GIT_AUTHOR_EMAIL") or values.get("user.email") or None
    return Identity(name, email) if (name or email) else None
