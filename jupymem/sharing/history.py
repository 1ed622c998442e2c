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

from . import gitcall
from .folder import FOLDER, LOG_DIR, shown

__all__ = ["UNCHECKED", "Removal", "removals"]

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
                f"commit {self.commit[:12]} (authored as {self.author}, which whoever committed it chose). The "
                f"log is append-only, so this rewrites what its writer said; `git show {self.commit[:12]}` shows "
                "it. Memory shows what the file says now, not what was taken out.")


UNCHECKED = ("the log folder's git history could not be read, so lines a commit took out of a writer's file "
             "are not checked")


def removals(root: Path) -> list[Removal] | None:
    """The commits that took committed lines out of a writer's file, with how many lines
    each took that the file does not hold now; None where git cannot answer (``UNCHECKED``)."""
    out = _git_log(root)
    if out is None:
        return None
    log = root / FOLDER / LOG_DIR
    present: dict[str, dict[str, int]] = {}  # file -> line hash -> how many times it is there
    taken: dict[tuple[str, str], set[str]] = {}  # (file, commit) -> hashes it took out
    authors: dict[str, str] = {}
    commit, file, header = "", "", False
    prefix = f"{FOLDER}/{LOG_DIR}/"
    for raw in out.split(b"\n"):
        if raw.startswith(b"commit "):
            commit, _, who = raw[7:].decode("utf-8", "replace").partition(" ")
            authors[commit] = who
            header = False
        elif raw.startswith(b"diff --git "):
            header, file = True, ""  # the file's names follow, up to its first hunk
        elif header and raw.startswith((b"--- ", b"+++ ")):
            name = raw[4:].decode("utf-8", "replace")
            name = name[2:] if name.startswith(("a/", "b/")) else name
            # A writer's file is a top-level .jsonl of the log: a copy kept in a subfolder
            # puts nothing back.
            rest = name[len(prefix):] if name.startswith(prefix) else ""
            if rest.endswith(".jsonl") and "/" not in rest:
                file = rest
        elif raw.startswith(b"@@"):
            header = False
        elif not header and raw[:1] in (b"+", b"-") and commit and file:
            # A line as a checkout attribute may have stored it (UTF-16): its NULs aside.
            text = raw[1:].replace(b"\x00", b"").decode("utf-8", "replace")
            counts = present.setdefault(file, {})
            for h in _LINE_HASH.findall(text)[:1]:  # the line's own hash: its second key
                if raw[:1] == b"+":
                    counts[h] = counts.get(h, 0) + 1
                elif counts.get(h, 0) > 0:
                    counts[h] -= 1
                    taken.setdefault((file, commit), set()).add(h)
    held: dict[str, set[str]] = {}
    found = []
    for (name, sha), hashes in taken.items():
        if name not in held:
            held[name] = _hashes_now(log / name)
        gone = hashes - held[name]  # not in the file now, whatever put it back in between
        if gone:
            r = Removal(name, sha, authors.get(sha, "?"))
            r.lines = len(gone)
            found.append(r)
    return found


def _hashes_now(path: Path) -> set[str]:
    try:
        data = path.read_bytes() if not path.is_symlink() else b""
    except OSError:
        return set()
    text = data.replace(b"\x00", b"").decode("utf-8", "replace")
    return {found[0] for line in text.splitlines() if (found := _LINE_HASH.findall(line))}


def _git_log(root: Path) -> bytes | None:
    done = gitcall.call(root, "log", "--full-history", "--topo-order", "--reverse", "--format=commit %H %an <%ae>",
                        "-p", "--text", "--unified=0", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
                        "--", f"{FOLDER}/{LOG_DIR}", timeout=_GIT_TIMEOUT)
    if done is None:
        return None
    if done.returncode != 0:
        # Not a repository with commits yet (a fresh `git init`): nothing was committed to take out.
        return b"" if b"does not have any commits" in done.stderr else None
    return done.stdout
