"""Committed lines that a later commit took out of the log: kept, and named by ``verify``.

Every writer's file is append-only: jupymem never removes or changes a line it wrote,
and a rotation starts a new file. So a committed line that a later commit on this
branch removes (a file rewritten with a valid hash chain, a line re-kinded, a file
deleted) is a change to what its writer said, made by whoever made that commit. The
files themselves cannot show it: a rewritten file is as well formed as the original.

git's history can. One ``git log -p`` of the log folder, oldest first, follows each line
by its hash (the format's ``"hash":"…"``, which covers everything the line says; only on
a line whose hash holds, so a junk line quoting her hash neither hides nor replaces it): a hash
added and later removed, and not added back, was taken out by that commit. Such lines
are read back (``taken``: their bytes as committed) beside what the file holds now, so
memory keeps them on every clone, the writer's own included, and a cut or a deleted file
takes nothing away; what a rewrite added stays too, as any line appended in someone's
name would (only signed lines could tell those apart). A branch checkout is not a
rewrite: the lines of another branch were never in this one's history.

A merge is diffed where its result differs from every parent (``--cc``: a line dropped or
put in while resolving it by hand); a line a merge left out by taking one side's copy of
the file whole shows in no diff, so a line some commit added that none removed and the
file does not hold is read back too (``left_out``). The history is read once per commit
checked out (``_parsed``).
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import gitcall, sharelog
from .checkout import MAX_FILE_BYTES
from .folder import FOLDER, LOG_DIR, shown

__all__ = ["UNCHECKED", "Kept", "Removal", "Taken", "added_order", "as_kept", "as_written", "bounded", "kept", "removals",
           "taken"]

_GIT_TIMEOUT = 60
# Only the writers' files (top-level .jsonl of the log: a junk file beside them is not
# diffed), and no blob larger than a file the reader reads is diffed (git calls it binary).
_WRITER_FILES = f":(glob){FOLDER}/{LOG_DIR}/*.jsonl"
_BOUNDED = ("-c", f"core.bigFileThreshold={MAX_FILE_BYTES}")


class Removal:
    """Lines of one file that one commit took out."""

    __slots__ = ("file", "commit", "author", "lines")

    def __init__(self, file: str, commit: str, author: str) -> None:
        self.file, self.commit, self.author, self.lines = file, commit, author, 0

    def __str__(self) -> str:
        n = self.lines
        if not self.commit:
            return (f"{FOLDER}/{LOG_DIR}/{shown(self.file)}: {n} committed line{'s' if n != 1 else ''} not in the file, "
                    "though no commit on this branch took them out line by line: a merge left them out (`git log -m "
                    f"-p -- {FOLDER}/{LOG_DIR}/{shown(self.file)}` shows its choices). The log is append-only, so this "
                    "rewrites what its writer said. Memory keeps the lines left out, read from git's history.")
        return (f"{FOLDER}/{LOG_DIR}/{shown(self.file)}: {n} committed line{'s' if n != 1 else ''} taken out by "
                f"commit {self.commit[:12]} (authored as {self.author}, which whoever committed it chose). The "
                f"log is append-only, so this rewrites what its writer said; `git show {self.commit[:12]}` shows "
                "it. Memory keeps the lines taken out, read from git's history.")


UNCHECKED = ("the log folder's git history could not be read, so lines a commit took out of a writer's file "
             "are not checked")


@dataclass
class Taken:
    """What commits on this branch took out of writer files and the files do not hold now."""

    removals: list[Removal]
    lines: dict[str, list[bytes]]  # file -> the lines taken out, as committed, oldest first (``bounded``)
    tainted: dict[str, set[str]]  # file -> hashes of lines a rewriting commit put in it
    dropped: dict[str, int] = field(default_factory=dict)  # file -> lines taken out past the bound


@dataclass
class Kept:
    """What a read of the files keeps of history (``kept``): the lines taken out of each
    writer's file, read back, and the lines a rewriting commit put in, not applied."""

    lines: dict[str, list[bytes]]
    tainted: dict[str, set[str]]
    dropped: dict[str, int] = field(default_factory=dict)  # file -> lines taken out past the bound

    @property
    def files(self) -> set[str]:
        return set(self.lines) | set(self.tainted)


@dataclass
class _History:
    """One ``git log -p`` of the log folder, parsed: what each commit took out."""

    taken: dict[tuple[str, str], set[str]]  # (file, commit) -> hashes it took out
    authors: dict[str, str]
    raw: dict[tuple[str, str], bytes]  # (file, hash) -> the line as committed
    # file -> hash -> the line, for lines a commit added that no commit removed line by line
    # and the file did not hold when the history was read: a merge left them out (one
    # side's version taken whole). Merges are diffed (``--cc``) only where the result
    # differs from every parent, so this is how the rest is seen.
    left_out: dict[str, dict[str, bytes]]
    # file -> hashes of the lines a commit added to it while taking some of its lines out
    # (a rewrite): never its writer's, since a writer only appends.
    tainted: dict[str, set[str]]


def removals(root: Path) -> list[Removal] | None:
    """The commits that took committed lines out of a writer's file, with how many lines
    each took that the file does not hold now; None where git cannot answer (``UNCHECKED``)."""
    found = taken(root)
    return None if found is None else found.removals


def taken(root: Path) -> Taken | None:
    """``Taken`` for ``root`` now; None where git cannot answer."""
    history = _parsed(root)
    if history is None:
        return None
    log = root / FOLDER / LOG_DIR
    held: dict[str, set[bytes]] = {}

    def holds(name: str, raw: bytes) -> bool:
        # By its bytes: a line that only quotes the hash of a line taken out does not hold it.
        if name not in held:
            held[name] = _lines_now(log / name)
        return raw in held[name]

    found: list[Removal] = []
    lines: dict[str, dict[str, bytes]] = {}  # file -> hash -> the line (a line taken out twice, once)
    by_file: dict[str, dict[str, bytes]] = {}  # history.raw by file, in the order lines were taken out
    for (f, h), raw in history.raw.items():
        by_file.setdefault(f, {})[h] = raw
    removed = [(name, sha, {h for h in hashes if not holds(name, history.raw[(name, h)])})
               for (name, sha), hashes in history.taken.items()]  # not in the file now, whatever put it back
    removed += [(name, "", {h for h, raw in lost.items() if not holds(name, raw)})
                for name, lost in history.left_out.items()]
    for name, sha, gone in removed:
        if gone:
            r = Removal(name, sha, history.authors.get(sha, "?"))
            r.lines = len(gone)
            found.append(r)
            kept = lines.setdefault(name, {})
            # In the order they were taken out (the file's own, within one commit); never a
            # line a rewrite had put in, then took out again (a file deleted after a rewrite).
            bad = history.tainted.get(name, set())
            source = by_file.get(name, {}) if sha else history.left_out.get(name, {})
            kept.update((h, raw) for h, raw in source.items() if h in gone and h not in bad)
    out = Taken(found, {}, {name: set(hashes) for name, hashes in history.tainted.items() if hashes})
    for name, by_hash in lines.items():
        every = list(by_hash.values())
        cut = bounded(every)
        if cut:
            out.lines[name] = every[:cut]
        if cut < len(every):
            out.dropped[name] = len(every) - cut
    return out


def bounded(lines: list[bytes]) -> int:
    """How many of the lines taken out of one file are read back (and kept by the cache):
    as many as one file may hold, lines and bytes (``MAX_LINES``, ``MAX_FILE_BYTES``),
    whatever a commit put in and took out again."""
    size = 0
    for i, line in enumerate(lines[:sharelog.MAX_LINES]):
        size += len(line) + 1
        if size > MAX_FILE_BYTES:
            return i
    return min(len(lines), sharelog.MAX_LINES)


def kept(root: Path, before: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the projection keeps of history: ``{"head": HEAD, "lines": {file: [line]}}``,
    the committed lines taken out of each writer's file (``taken``), as text. ``before``:
    what this returned at an earlier HEAD (the cache keeps it), reused when no commit on
    either side between that HEAD and this one takes a line out of a writer's file: one
    small ``git log`` after a pull, where the whole history costs a second per few
    hundred commits. None where git cannot say (no git, no commit yet)."""
    head = gitcall.output(root, "rev-parse", "-q", "--verify", "HEAD", timeout=_GIT_TIMEOUT)
    now = head.strip().decode("ascii", "replace") if head else ""
    if not now:
        return None
    was = before.get("head") if isinstance(before, dict) else None
    if was == now:
        return before
    if isinstance(was, str) and was and _none_taken_between(root, was, now):
        return {**(before or {}), "head": now}
    found = taken(root)
    if found is None:
        # git could not answer (a history made slow to diff: a timeout). What was read back
        # before stays read back, and git is asked again at the next commit, not at every read.
        return {**(before or {}), "head": now, "unchecked": True} if isinstance(before, dict) else None
    return {"head": now, "lines": {name: [line.decode("utf-8", "replace") for line in lines]
                                   for name, lines in found.lines.items()},
            "tainted": {name: sorted(hashes) for name, hashes in found.tainted.items()},
            "dropped": dict(found.dropped)}


def as_kept(state: dict[str, Any] | None) -> Kept:
    """``kept``'s answer (or the cache's copy of it) as ``Kept``."""
    state = state or {}
    return Kept({name: [line.encode("utf-8") for line in lines] for name, lines in (state.get("lines") or {}).items()},
                {name: set(hashes) for name, hashes in (state.get("tainted") or {}).items()},
                {name: n for name, n in (state.get("dropped") or {}).items() if isinstance(n, int)})


def _none_taken_between(root: Path, a: str, b: str) -> bool:
    """Whether no commit reachable from one of ``a``, ``b`` and not the other removes a
    line from a writer's file (False where git cannot say: ``a`` gone after a rewrite)."""
    log = f"{FOLDER}/{LOG_DIR}"
    out = gitcall.output(root, *_BOUNDED, "log", "--full-history", "--format=commit %H %an <%ae>", "-p", "--cc",
                         "--text", "--unified=0", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
                         f"{a}...{b}", "--", _WRITER_FILES, timeout=_GIT_TIMEOUT)
    # What the two trees differ by: a line of ``a`` that a merge left out (one side's copy
    # of the file taken whole) shows in no commit's diff, only here.
    trees = gitcall.output(root, *_BOUNDED, "diff", "--text", "--unified=1", "--no-color", "--no-ext-diff",
                           "--no-textconv", "--no-renames", a, b, "--", _WRITER_FILES, timeout=_GIT_TIMEOUT)
    if out is None or trees is None:
        return False
    commits = _parse(out, counted=False, log=root / log)
    return (not commits.taken and not commits.left_out and _appends_only(trees)
            and not _parse(b"commit trees\n" + trees, counted=False).taken)


def _appends_only(diff: bytes) -> bool:
    """Whether a two-tree diff (one line of context) only adds lines at the ends of files.
    Lines put before others (even blank ones) move those toward the file's caps, where the
    reader no longer reads them: that takes a whole read to see."""
    added = False
    for raw in diff.split(b"\n"):
        if raw.startswith(b"@@"):
            added = False
        elif raw.startswith(b"+") and not raw.startswith(b"+++ "):
            added = True
        elif (raw.startswith(b"-") and not raw.startswith(b"--- ")) or (raw.startswith(b" ") and added):
            return False
    return True


_cache: dict[str, tuple[str, _History]] = {}  # root -> (HEAD, its history)
_cache_lock = threading.Lock()


def _parsed(root: Path) -> _History | None:
    head = gitcall.output(root, "rev-parse", "-q", "--verify", "HEAD", timeout=_GIT_TIMEOUT)
    key = head.strip().decode("ascii", "replace") if head else ""
    with _cache_lock:
        cached = _cache.get(str(root))
    if cached is not None and key and cached[0] == key:
        return cached[1]
    out = _git_log(root)
    if out is None:
        return None
    history = _parse(out, log=root / FOLDER / LOG_DIR)
    if key:
        with _cache_lock:
            _cache[str(root)] = (key, history)
    return history


def _parse(out: bytes, *, counted: bool = True, log: Path | None = None) -> _History:
    """``counted``: a removed line counts only if an earlier commit of ``out`` added it
    (the whole history); otherwise every removed line counts (a range of commits).
    ``log``: the log folder, whose files now say which added lines a merge left out."""
    present: dict[str, dict[str, int]] = {}  # file -> line hash -> how many times it is there
    history = _History({}, {}, {}, {}, {})
    added: dict[tuple[str, str], set[str]] = {}  # (file, commit) -> hashes it put in
    adders: dict[tuple[str, str], set[str]] = {}  # (file, hash) -> every commit that put it in
    removed: dict[tuple[str, str], set[str]] = {}  # (file, commit) -> hashes it took out
    lines: dict[str, dict[str, bytes]] = {}  # file -> hash -> the line, for every line added
    commit, file, header, columns = "", "", False, 1
    prefix = f"{FOLDER}/{LOG_DIR}/"
    for raw in out.split(b"\n"):
        if raw.startswith(b"commit "):
            commit, _, who = raw[7:].decode("utf-8", "replace").partition(" ")
            history.authors[commit] = who
            header = False
        elif raw.startswith((b"diff --git ", b"diff --cc ", b"diff --combined ")):
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
            # "@@" for a commit; a merge's combined diff has one "@" more per parent after
            # the first, and a column per parent before each line.
            header, columns = False, len(raw) - len(raw.lstrip(b"@")) - 1
        elif not header and raw[:1] in (b"+", b"-") and commit and file:
            sign = raw[:columns]
            if sign not in (b"+" * columns, b"-" * columns):
                continue  # a merge taking a line from one parent: its commit on that side is diffed
            line = as_written(raw[columns:])
            h = sharelog.verified_hash(line)
            if h is None:
                continue  # not a line the format writes: it stands for no line, whatever hash it quotes
            counts = present.setdefault(file, {})
            if sign[:1] == b"+":
                added.setdefault((file, commit), set()).add(h)
                adders.setdefault((file, h), set()).add(commit)
                counts[h] = counts.get(h, 0) + 1
                lines.setdefault(file, {}).setdefault(h, line)
                continue
            removed.setdefault((file, commit), set()).add(h)
            if counts.get(h, 0) > 0 or not counted:
                counts[h] = max(0, counts.get(h, 0) - 1)
                history.taken.setdefault((file, commit), set()).add(h)
                # Its hash holds, so these are the bytes its writer wrote, whichever commit shows them.
                history.raw.setdefault((file, h), line)
    # A line moved, or given a byte order mark, is taken out and put back in one commit:
    # the same line, not a new one. And a line some other commit also put in (its writer's,
    # a copy of which a rewrite carries, on a branch git may list first) is not the rewrite's.
    for (file, commit), gone in removed.items():
        new = {h for h in added.get((file, commit), set()) - gone if adders.get((file, h)) == {commit}}
        if new:
            history.tainted.setdefault(file, set()).update(new)
    if log is not None:
        ever_removed = {(f, h) for (f, _), hashes in removed.items() for h in hashes}
        for file, by_hash in lines.items():
            now = _lines_now(log / file)
            lost = {h: line for h, line in by_hash.items() if (file, h) not in ever_removed and line not in now}
            if lost:
                history.left_out[file] = lost
    return history


def as_written(line: bytes) -> bytes:
    """A line of git's diff as the reader reads it: one CR before its end aside (git's
    ``eol=crlf``), and nothing else. A NUL or a byte order mark inside a file is no line
    (the reader refuses it), so it cannot stand in for the line it resembles."""
    return line[:-1] if line.endswith(b"\r") else line


def _lines_now(path: Path) -> set[bytes]:
    """The lines the reader reads of the file now (``sharelog.lines_read``); none for a link,
    or under a folder that is one (the reader refuses ``.jupymem`` or its log as a link)."""
    import os
    import stat

    if path.parent.is_symlink() or path.parent.parent.is_symlink():
        return set()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)  # a FIFO never blocks
    except OSError:
        return set()
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return set()
    with os.fdopen(fd, "rb") as fh:
        try:
            return sharelog.lines_read(fh)
        except OSError:
            return set()


def added_order(root: Path, names: Collection[str]) -> dict[str, int]:
    """For each of ``names`` (writer files) that a commit added: how many of the others
    were added by commits that are ancestors of its own (git's graph, not the dates a
    commit claims). A file committed on top of a teammate's commit comes after hers; files
    added on concurrent branches tie, whichever way the branches were merged, so a branch
    cut from an old commit gains nothing. Files no commit added are left out; empty where
    git cannot answer."""
    out = gitcall.output(root, "log", "--full-history", "--topo-order", "--reverse", "--parents",
                         "--format=commit %H %P", "--name-status", "--no-renames", "--no-color", "--no-ext-diff",
                         "--no-textconv", "--", _WRITER_FILES,
                         timeout=_GIT_TIMEOUT)
    prefix = f"{FOLDER}/{LOG_DIR}/"
    wanted = set(names)
    parents: dict[str, list[str]] = {}
    order: list[str] = []  # commits, parents first
    adder: dict[str, str] = {}  # file -> the first commit that added it
    commit = ""
    for raw in (out or b"").decode("utf-8", "replace").split("\n"):
        if raw.startswith("commit "):
            commit, *rest = raw[7:].split()
            parents[commit] = rest  # rewritten by --parents: the nearest commits that touch the log
            order.append(commit)
        elif raw.startswith("A\t") and raw[2:].startswith(prefix) and commit:
            name = raw[2 + len(prefix):]
            if name in wanted:
                adder.setdefault(name, commit)
    adding = {c: 1 << i for i, c in enumerate(dict.fromkeys(adder.values()))}
    below: dict[str, int] = {}  # commit -> the adding commits among its ancestors, as bits
    for c in order:
        bits = 0
        for p in parents.get(c, ()):
            bits |= below.get(p, 0) | adding.get(p, 0)
        below[c] = bits
    return {name: below.get(c, 0).bit_count() for name, c in adder.items()}


def _git_log(root: Path) -> bytes | None:
    done = gitcall.call(root, *_BOUNDED, "log", "--full-history", "--topo-order", "--reverse",
                        "--format=commit %H %an <%ae>", "-p", "--cc", "--text", "--unified=0", "--no-color",
                        "--no-ext-diff", "--no-textconv", "--no-renames", "--", _WRITER_FILES, timeout=_GIT_TIMEOUT)
    if done is None:
        return None
    if done.returncode != 0:
        # Not a repository with commits yet (a fresh `git init`): nothing was committed to take out.
        return b"" if b"does not have any commits" in done.stderr else None
    return done.stdout
