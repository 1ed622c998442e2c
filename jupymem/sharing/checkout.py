"""What git's checkout may do to a log file, undone for reading, and named for review.

A committed ``.gitattributes`` decides how git writes a file into a working tree, and a
pull can bring one. Every clone made after it would read converted bytes: line ends
turned into CRLF (``text eol=crlf``), the whole file re-encoded (``working-tree-encoding``),
``$Id$`` expanded (``ident``), or content run through a command (``filter``). Left as is,
each of those made every line fail its canonical form, and a fresh clone applied none of
a team's memory. Two defences, both here:

* **Reading undoes what can be undone**, exactly: a UTF-8 byte order mark at the start of
  a file, a CR before each line end, a file in UTF-16 (with or without a byte order mark),
  ``$Id: <hash> $`` back to ``$Id$`` where the line only checks that way. The hash of every
  line is still checked against these restored bytes, so nothing is accepted that its
  writer did not write; a filter, which can do anything, cannot be undone, and its lines
  are refused as altered.
* **Writing never hands git bytes it would garble**: ``working-tree-encoding`` and
  ``filter`` act when a file is committed too, so a UTF-8 line written under them would
  reach the repository re-encoded (and be lost once the attribute goes). While one of them
  applies to the log, new events stay on this machine (status counts them; ``share``
  writes them out once the attribute is gone).
* **Review is told**: ``share`` writes ``.jupymem/.gitattributes`` so that no conversion
  applies to the folder's files (a deeper ``.gitattributes`` wins over one nearer the root,
  so this one overrides the repository's), and ``verify`` asks git which attributes apply
  to each log file and names any that changes their bytes at checkout, or hides them from
  ``git diff`` (``-diff``, ``binary``), wherever it was set.

Bytes are bounded too: a file is read up to ``MAX_FILE_BYTES`` (a writer starts a new file
at half of it), so a huge or sparse file costs bounded time whatever its lines.
"""

from __future__ import annotations

import codecs
import io
import os
import re
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

from . import gitcall

if TYPE_CHECKING:
    from .folder import Folder

__all__ = [
    "ATTRIBUTES", "MAX_FILE_BYTES", "LineReader", "attribute_problems", "open_lines", "rewritten_on_commit",
    "unexpand_ident",
]

MAX_FILE_BYTES = 64 * 1024 * 1024

# What ``share`` writes to ``.jupymem/.gitattributes``. Unset rather than set to false: git
# converts nothing for a path whose text, eol, filter, ident and working-tree-encoding are
# unset, and the deepest .gitattributes that names an attribute decides it.
ATTRIBUTES = (
    "# jupymem reads and writes these files byte for byte: git must not convert them at checkout.\n"
    "* -text -eol -filter -ident -working-tree-encoding\n"
    "*.jsonl merge=union\n"
)
# The text ``share`` wrote before: replaced by ATTRIBUTES when ``share`` runs again.
OLD_ATTRIBUTES = ("*.jsonl merge=union\n",)

_BOM8 = codecs.BOM_UTF8
_IDENT = re.compile(rb"\$Id: [0-9a-f]{40,64} \$")


class LineReader(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...

    def read(self, size: int = -1, /) -> bytes: ...


class _Decoded:
    """A file git re-encoded (``working-tree-encoding``), read back as UTF-8 lines."""

    def __init__(self, fh: IO[bytes], encoding: str):
        self._text = io.TextIOWrapper(fh, encoding=encoding, errors="replace", newline="")

    def readline(self, size: int = -1, /) -> bytes:
        return self._text.readline(size).encode("utf-8", "replace")

    def read(self, size: int = -1, /) -> bytes:
        return self._text.read(size).encode("utf-8", "replace")


def open_lines(fh: IO[bytes]) -> LineReader:
    """``fh`` (at its start) as UTF-8 lines: past a UTF-8 byte order mark, or decoded from
    UTF-16 when the file starts as git writes it in that encoding. Our lines start with
    ``{``, so its first two bytes tell the encoding apart."""
    head = fh.read(3)
    if head.startswith(_BOM8):
        return fh
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        fh.seek(0)
        return _Decoded(fh, "utf-16")
    if head[:2] in (b"{\x00", b"\x00{"):
        fh.seek(0)
        return _Decoded(fh, "utf-16-le" if head[:1] == b"{" else "utf-16-be")
    fh.seek(0)
    return fh


def unexpand_ident(raw: bytes) -> bytes:
    """A line with git's ``ident`` expansion undone (``$Id: <blob hash> $`` -> ``$Id$``)."""
    return _IDENT.sub(b"$Id$", raw) if b"$Id: " in raw else raw


# -- naming the attributes -----------------------------------------------------------------

# Attributes that change a log file's bytes between the repository and the working tree,
# or hide its changes from review. ``merge`` other than union, and ``diff`` set to a
# driver, change nothing on disk; ``-diff``/``binary`` make `git diff` say only "Binary
# files differ", so a reviewer never sees what a pull adds.
_CONVERTING = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")
_WHY = {
    "diff": "hides the file's changes from review (`git diff` shows \"Binary files differ\")",
    "binary": "hides the file's changes from review (`git diff` shows \"Binary files differ\")",
}


def _offending(attr: str, value: str) -> str | None:
    """Why ``attr: value`` (as `git check-attr` prints it) matters, or None."""
    if attr in _CONVERTING and value not in ("unset", "unspecified"):
        if attr == "text" and value == "auto":
            return "lets git convert line ends at checkout"
        return "makes git change the file's bytes at checkout"
    if attr in ("diff", "binary") and value in ("unset", "set") and (attr == "binary" or value == "unset"):
        return _WHY[attr]
    return None


def attribute_problems(root: Path, relpaths: list[str]) -> list[str]:
    """One sentence per git attribute that converts a log file at checkout or hides it
    from review, with how many of the files it applies to. Asked of git itself (`git
    check-attr`, which reads every ``.gitattributes`` of the tree, ``.git/info/attributes``
    and the user's own attributes file, in git's own order); nothing when git cannot say."""
    if not relpaths:
        return []
    said = gitcall.output(root, "check-attr", "--stdin", "-z", "-a", timeout=30,
                          input=b"\0".join(p.encode("utf-8", "surrogateescape") for p in relpaths) + b"\0")
    if said is None:
        return []
    fields = said.split(b"\0")
    found: dict[tuple[str, str], list[str]] = {}
    for i in range(0, len(fields) - 2, 3):
        path, attr, value = (f.decode("utf-8", "replace") for f in fields[i : i + 3])
        why = _offending(attr, value)
        if why is not None:
            setting = {"set": attr, "unset": f"-{attr}"}.get(value, f"{attr}={value}")
            found.setdefault((setting, why), []).append(path)
    out = []
    for (setting, why), paths in sorted(found.items()):
        which = paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1:,} more log files"
        hides = "review" in why
        out.append(f"{which}: git applies the attribute `{setting}` to it, which {why}"
                   + ("" if hides else "; jupymem reads it all the same")
                   + ". Remove the attribute from the .gitattributes that sets it (`git check-attr -a <file>` lists "
                   "them; .jupymem/.gitattributes as `jupymem share` writes it keeps git from converting these files)")
    return out


# -- writing -------------------------------------------------------------------------------

# Attributes under which git rewrites a file's bytes when it is committed, so that what
# reaches the repository is not what jupymem wrote (text/eol only turn CRLF into LF, which
# our lines never hold; ident only collapses an expanded $Id$, which we never write).
_ON_COMMIT = ("working-tree-encoding", "filter")


def rewritten_on_commit(root: Path, folder: Folder, relpath: str) -> str | None:
    """The attribute (``working-tree-encoding=UTF-16LE``) under which git would rewrite
    what jupymem appends to ``relpath`` when it is committed, or None.

    Cheap where it can be: ``.jupymem/.gitattributes`` as ``share`` writes it, and none in
    ``log/``, decide every attribute for the log's files (the deepest file wins), so git
    need not be asked. Otherwise `git check-attr` says."""
    if folder.read(".gitattributes", 4096) == ATTRIBUTES.encode("utf-8") and not _log_attributes(folder):
        return None
    out = gitcall.output(root, "check-attr", "-z", *_ON_COMMIT, "--", relpath, timeout=30)
    fields = out.split(b"\0") if out is not None else []
    for i in range(0, len(fields) - 2, 3):
        attr, value = fields[i + 1].decode("utf-8", "replace"), fields[i + 2].decode("utf-8", "replace")
        if value not in ("unset", "unspecified"):
            return attr if value == "set" else f"{attr}={value}"
    return None


def _log_attributes(folder: Folder) -> bool:
    log = folder.log()
    if log is None:
        return False
    try:
        os.stat(".gitattributes", dir_fd=log, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True
