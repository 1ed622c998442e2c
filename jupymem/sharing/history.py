"""Committed lines that a later commit took out of the log: what ``verify`` says of a rewrite.

Every writer's file is append-only: jupymem never removes or changes a line it wrote,
and a rotation starts a new file. So a committed line that a later commit on this
branch removes (a file rewritten with a valid hash chain, a line re-kinded, a file
deleted) is a change to what its writer said, made by whoever made that commit. The
files themselves cannot show it: a rewritten file is as well formed as the original,
and every clone, the writer's own included, rebuilds from what the files say now.

git's history can. One ``git log -p`` of the log folder, oldest first, follows each line
by its hash (the format's ``"hash":"…"``, which covers everything the line says): a hash
added and later removed, and not added back, was taken out by that commit. A branch
checkout is not a rewrite: the lines of another branch were never in this one's history.

Merge commits are not diffed (git's default), so a line dropped while resolving a merge
by hand is not seen here.
"""

from __future__ import annotations

import re
from pathlib import Path

from .folder import FOLDER, LOG_DIR, shown

__all__ = ["Removal", "removals"]

_LINE_HASH = re.compile(r'"hash":"([0-9a-f]{64})"')
_GIT_TIMEOUT = 60


class Removal:
    """Lines of one file that one commit took out."""

    __slots__ = ("file", "commit", "author", "lines")

    def __init__(self, file: str, commit: str, author: str) -> None:
        self.file, self.commit, self.author, self.lines = file, commit, author, 0

    def __str__(self) -> str:
        n = self.lines
        return (f"{FOLDER}/{LOG_DIR}/{shown(self.file)}: {n} committed line{'s' if n != 1 else ''} taken out by "
                f"commit {self.commit[:12]} ({self.author}). The log is append-only, so this rewrites what its "
                f"writer said; `git show {self.commit[:12]}` shows it. Memory shows what the file says now, "
                "not what was taken out.")


def removals(root: Path) -> list[Removal]:
    """The commits on this branch that took committed lines out of a writer's file, and
    how many, oldest first; none where git cannot answer."""
    out = _git_log(root)
    if not out:
        return []
    present: dict[str, dict[str, int]] = {}  # file -> line hash -> how many times it is there
    taken: dict[tuple[str, str], set[str]] = {}  # (file, commit) -> hashes it took out
    authors: dict[str, str] = {}
    commit, file, header = "", "", False
    for raw in out.split(b"\n"):
        if raw.startswith(b"commit "):
            commit, _, who = raw[7:].decode("utf-8", "replace").partition(" ")
            authors[commit] = who
            header = False
        elif raw.startswith(b"diff --git "):
            header = True  # the file's names follow, up to its first hunk
        elif header and raw.startswith((b"--- ", b"+++ ")):
            name = raw[4:].decode("utf-8", "replace")
            if name != "/dev/null":
                file = name.rsplit("/", 1)[-1]
        elif raw.startswith(b"@@"):
            header = False
        elif not header and raw[:1] in (b"+", b"-") and commit and file:
            # A line as a checkout attribute may have stored it (UTF-16): its NULs aside.
            text = raw[1:].replace(b"\x00", b"").decode("utf-8", "replace")
            counts = present.setdefault(file, {})
            for h in _LINE_HASH.findall(text):
                if raw[:1] == b"+":
                    counts[h] = counts.get(h, 0) + 1
                elif counts.get(h, 0) > 0:
                    counts[h] -= 1
                    taken.setdefault((file, commit), set()).add(h)
    found = []
    for (name, sha), hashes in taken.items():
        gone = [h for h in hashes if present.get(name, {}).get(h, 0) == 0]  # not added back since
        if gone:
            r = Removal(name, sha, authors.get(sha, "?"))
            r.lines = len(gone)
            found.append(r)
    return found


def _git_log(root: Path) -> bytes | None:
    import os
    import subprocess  # only when verify asks

    path = f"{FOLDER}/{LOG_DIR}"
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "log", "--topo-order", "--reverse", "--format=commit %H %an <%ae>", "-p",
             "--text", "--unified=0", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--", path],
            capture_output=True, timeout=_GIT_TIMEOUT, check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None
