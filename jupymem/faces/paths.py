"""Paths a client names, confined to the Jupyter server's root: one rule for REST and MCP.

A browser (REST) and a model (MCP tools) name notebooks and folders the same way
Jupyter's own APIs do: "/"-separated, relative to the server root. Whatever they
send, jupymem must never read or create memory for a repository the server does
not serve, so ``resolve_path`` refuses absolute paths (``/etc``, ``C:\\x``),
the home directory (``~``), ``..``, and anything whose real path (symlinks
followed) leaves the root. Stdlib only: the MCP tools need it without tornado.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from ..errors import JupymemError


class PathOutsideRoot(JupymemError, code="path_outside_root", http_status=403):
    """Raised when a path is absolute, starts at ``~``, climbs with ``..``, or resolves
    (symlinks included) outside the server root."""


class PathNotFound(JupymemError, code="path_not_found", http_status=404):
    """Raised when a path names nothing under the server root."""


class PathTooLong(JupymemError, code="path_too_long"):
    """Raised when a path (or one of its components) is longer than any file system takes:
    the file system is never asked about a name it would refuse (ENAMETOOLONG)."""


MAX_PATH_BYTES = 4096  # PATH_MAX
MAX_NAME_BYTES = 255  # NAME_MAX


class BadPath(JupymemError, code="bad_request"):
    """Raised when a path cannot be a path at all (a NUL byte, a name the system refuses)."""


_DRIVE = re.compile(r"^[A-Za-z]:")


def inside(root: Path, target: Path) -> bool:
    """True when ``target`` is ``root`` or below it (both already resolved)."""
    return target == root or root in target.parents


def resolve_path(server_root: str | os.PathLike[str], raw: str | None) -> Path:
    """``raw`` (API style, "/"-separated, relative to the server root) as a real path.

    Refuses absolute paths, ``~``, ``..`` and anything whose real path (symlinks
    followed) leaves the root; a path that names nothing is PathNotFound. "" is the root.
    """
    raw = raw or ""
    if "\x00" in raw:
        raise BadPath("path contains a NUL byte.")
    size = len(raw.encode("utf-8", "surrogatepass"))
    if size > MAX_PATH_BYTES:
        raise PathTooLong(f"path is {size:,} bytes long; the limit is {MAX_PATH_BYTES:,}.")
    longest = max((len(part.encode("utf-8", "surrogatepass")) for part in raw.replace("\\", "/").split("/")), default=0)
    if longest > MAX_NAME_BYTES:
        raise PathTooLong(f"path has a component of {longest:,} bytes; the limit is {MAX_NAME_BYTES}.")
    text = raw.replace("\\", "/")
    if text.startswith("/") or _DRIVE.match(text) or os.path.isabs(raw):
        raise PathOutsideRoot(f"{raw!r} is absolute; give a path relative to the Jupyter server's root.")
    if text.startswith("~"):
        raise PathOutsideRoot(f"{raw!r} starts at a home directory; give a path relative to the Jupyter server's root.")
    if ".." in PurePosixPath(text).parts:
        raise PathOutsideRoot(f"{raw!r} climbs out with '..'; give a path inside the Jupyter server's root.")
    root = Path(server_root).resolve()
    try:
        target = (root / text).resolve()
        exists = target.exists()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a name the system refuses
        raise BadPath(f"{raw[:200]!r} cannot be resolved ({getattr(exc, 'strerror', None) or exc}).") from None
    if not inside(root, target):
        raise PathOutsideRoot(f"{raw!r} leads outside the Jupyter server's root (through a symlink).")
    if not exists:
        raise PathNotFound(f"{raw!r} does not exist under the Jupyter server's root.")
    return target
