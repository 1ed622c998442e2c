"""Who writes here: git's identity (``user.name``/``user.email``, or ``GIT_AUTHOR_*``).

Asked of git once and asked again only when the environment or a git config file
changes. Apart from the journal, because status shows it in every repository, shared or
not, and a repository that never shared needs nothing else of the sharing room.
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Identity:
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


def _identity_key(root: Path) -> tuple[Any, ...]:
    """What the git identity depends on, cheaply: the environment and the config files' stats."""
    env = os.environ
    home = env.get("HOME") or str(Path.home())
    xdg = env.get("XDG_CONFIG_HOME") or f"{home}/.config"
    files = (f"{root}/.git/config", f"{home}/.gitconfig", f"{xdg}/git/config", env.get("GIT_CONFIG_GLOBAL"))
    stats = []
    for f in files:
        try:
            st = os.stat(f) if f else None
        except OSError:
            st = None
        stats.append((st.st_mtime_ns, st.st_size, st.st_ino) if st else None)
    keys = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "HOME")
    return (tuple(env.get(k) for k in keys), tuple(stats))


def identity(root: Path) -> Identity | None:
    """The git identity (``user.name``/``user.email``, or GIT_AUTHOR_*) of whoever writes here.

    Asked of git once and kept until the environment or a git config file changes: a
    record must stay well under a few milliseconds, and git takes a few to start.
    """
    key = _identity_key(root)
    with _identities_lock:
        cached = _identities.get(str(root))
        if cached and cached[0] == key:
            return cached[1]
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
    who = Identity(name, email) if (name or email) else None
    with _identities_lock:
        _identities[str(root)] = (key, who)
    return who
