"""Asking git from inside a read of the shared folder: never a prompt, a pager or a lock.

Every face reads ``.jupymem/`` (a kernel's block, the sidebar, ``status``), so git is
asked there without a terminal behind it: a credential prompt or a pager would hang the
read, and an index refresh would take ``index.lock`` from under the person's own ``git``.
git's answer is bytes, read leniently by the callers (a file converted at checkout, UTF-16
say, must not stop a read); None is "git could not answer" (not installed, not a
repository, timed out), which each caller turns into what it can still say.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["call", "output"]


def call(root: Path, *args: str, timeout: float = 20, input: bytes | None = None) -> Any | None:
    """``git -C root args``, finished, or None where it could not run."""
    import os
    import subprocess  # only when git is asked: most reads never do

    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        return subprocess.run(["git", "-C", str(root), *args], input=input, capture_output=True,
                              timeout=timeout, check=False, env=env)
    except (OSError, subprocess.SubprocessError):
        return None


def output(root: Path, *args: str, timeout: float = 20, input: bytes | None = None) -> bytes | None:
    """What git printed, where it exited 0; None otherwise."""
    done = call(root, *args, timeout=timeout, input=input)
    return done.stdout if done is not None and done.returncode == 0 else None
