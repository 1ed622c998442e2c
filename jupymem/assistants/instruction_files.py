"""The instruction files coding agents read (``AGENTS.md``, ``CLAUDE.md``,
``.github/copilot-instructions.md``), read and written so that nothing but jupymem's
own section ever changes.

jupymem's part of such a file is one section between two marker lines, ``BEGIN ...
-->`` and ``END``; the begin line carries the revision of the block inside. Everything
else is the file's owners', and stays byte for byte as it was: line endings (the
section is written with the file's own), a byte-order mark, a missing final newline.
A file gains the section at its end, after a blank line (and a line ending, when its
last line had none): what was there stays a prefix of what is written.

What these files may be is checked before anything is read into memory or written:
* inside the repository: a link is followed only when it ends inside it (``CLAUDE.md
  -> AGENTS.md`` is one file, written once); a link that leads out, or nowhere, is refused;
* a regular file of at most ``MAX_BYTES``, UTF-8 text, no NUL byte (binary);
* markers: none, or exactly one begin line and one end line after it. Anything else
  (a copied section, a deleted end) is an error that names the lines, and nothing is
  written, in that file or any other: which lines are jupymem's would be a guess.
Writing goes through a temporary file beside the target (same mode), renamed over it;
a file that is read-only, or that changed since it was read, is not written.
"""

from __future__ import annotations

import os
import re
import secrets as _random
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import JupymemError

AGENTS = "AGENTS.md"  # written always (created when missing)
TARGETS = (AGENTS, "CLAUDE.md", ".github/copilot-instructions.md")  # the others where they exist
MAX_BYTES = 1024 * 1024  # an instruction file is a page or two; more is not one

BEGIN = "<!-- jupymem:begin"
END = "<!-- jupymem:end -->"
_END_START = "<!-- jupymem:end"
_REVISION = re.compile(r"revision=([0-9a-f]{6,64})")
HEADING = "## Project memory (jupymem)"


class InstructionFileError(JupymemError, code="instruction_file"):
    """An instruction file jupymem will not read or write as it is (a link out of the
    repository, binary, not UTF-8, too large, read-only, markers out of order)."""


@dataclass(frozen=True)
class File:
    """One instruction file as read: ``name`` as the repository names it, ``path`` where
    its bytes are (a link resolved), ``data``/``text`` None when it does not exist."""

    name: str
    path: Path
    data: bytes | None
    text: str | None

    @property
    def exists(self) -> bool:
        return self.data is not None


@dataclass(frozen=True)
class Section:
    """jupymem's section of a file's text: ``start`` is where its begin line starts,
    ``end`` where its end line's text ends (its line ending stays outside);
    ``lines`` the numbers (from 1) of its first and last line."""

    start: int
    end: int
    lines: tuple[int, int]
    revision: str | None


# -- reading --------------------------------------------------------------------------


def read(root: Path, name: str) -> File:
    """The instruction file ``name`` of the repository at ``root`` (resolved); raises
    ``InstructionFileError`` for one that cannot be trusted as text of this repository."""
    where = root / name
    if not os.path.lexists(where):
        if not _inside(root, where.parent.resolve()):
            raise InstructionFileError(f"{name}: {where.parent.name}/ is a link out of the repository; jupymem "
                                       "writes instruction files inside it only. Nothing was written.")
        return File(name, where, None, None)
    try:
        real = where.resolve(strict=True)
    except (OSError, RuntimeError):
        raise InstructionFileError(f"{name} is a link that leads nowhere; fix or remove it. Nothing was read or "
                                   "written.") from None
    if not _inside(root, real):
        raise InstructionFileError(f"{name} is a link to {real}, outside the repository; jupymem reads and writes "
                                   "instruction files inside it only. Nothing was read or written.")
    try:
        info = os.stat(real)
        if not stat.S_ISREG(info.st_mode):
            raise InstructionFileError(f"{name} is not a regular file; nothing was read or written.")
        if info.st_size > MAX_BYTES:
            raise InstructionFileError(_too_big(name, info.st_size))
        with open(real, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InstructionFileError(f"cannot read {name}: {exc.strerror or exc}. Nothing was written.") from None
    if len(data) > MAX_BYTES:
        raise InstructionFileError(_too_big(name, len(data)))
    if b"\0" in data:
        raise InstructionFileError(f"{name} holds NUL bytes: it is binary, not an instruction file. Nothing was "
                                   "read or written.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstructionFileError(f"{name} is not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8. "
                                   "Nothing was read or written.") from None
    return File(name, real, data, text)


def _too_big(name: str, size: int) -> str:
    return (f"{name} is {size:,} bytes; jupymem reads instruction files of at most {MAX_BYTES:,} bytes. "
            "Nothing was read or written.")


def _inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def present(root: Path) -> list[File]:
    """The files to keep in step: ``AGENTS.md`` (existing or not), and the other targets
    that exist; one entry per real file (a link to another target is that target)."""
    out: list[File] = []
    seen: set[Path] = set()
    for name in TARGETS:
        f = read(root, name)
        if name != AGENTS and not f.exists:
            continue
        if f.path in seen:
            continue
        seen.add(f.path)
        out.append(f)
    return out


# -- the section ----------------------------------------------------------------------


def line_ending(text: str) -> str:
    """The file's own line ending (its first), ``\\n`` when it has none."""
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def section(f: File) -> Section | None:
    """jupymem's section of ``f``, None without one; raises ``InstructionFileError`` for
    markers that do not make exactly one section."""
    text = f.text or ""
    begins: list[tuple[int, int]] = []  # (line number, offset of its start)
    ends: list[tuple[int, int]] = []  # (line number, offset where its text ends)
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        bare = line.strip()
        if bare.startswith(BEGIN):
            begins.append((number, offset))
        elif bare.startswith(_END_START):
            ends.append((number, offset + len(line.rstrip("\r\n"))))
        offset += len(line)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0][0] < begins[0][0]:
        where = ", ".join([f"begin on line {n}" for n, _ in begins] + [f"end on line {n}" for n, _ in ends])
        raise InstructionFileError(
            f"{f.name} has jupymem's markers out of order ({where}); it needs exactly one begin line and one end "
            "line after it. Remove the stray or broken markers (or the whole section: it is written again) and run "
            "again. Nothing was read from it or written anywhere."
        )
    (first, start), (last, end) = begins[0], ends[0]
    found = _REVISION.search(text, start, text.find("\n", start) if "\n" in text[start:] else len(text))
    return Section(start, end, (first, last), found.group(1) if found else None)


def render(block_text: str, revision: str, eol: str) -> str:
    """The section for a block, from its begin line to its end line (no final line
    ending), with ``eol`` between lines. The block goes in a code fence longer than any
    run of backticks it holds, so nothing in a statement can end the fence."""
    longest = max((len(run) for run in re.findall(r"`+", block_text)), default=0)
    fence = "`" * max(3, longest + 1)
    lines = [
        f"{BEGIN} revision={revision} (written by `jupymem instructions` from this repository's memory; "
        "change the memory, not these lines) -->",
        HEADING,
        "",
        f"{fence}text",
        *block_text.split("\n"),
        fence,
        END,
    ]
    return eol.join(lines)


def with_section(f: File, rendered: str) -> str:
    """``f``'s text with ``rendered`` as its section: in place of the old one, else at the end."""
    text = f.text or ""
    eol = line_ending(text)
    found = section(f)
    if found is not None:
        return text[: found.start] + rendered + text[found.end:]
    if not text:
        return rendered + eol
    prefix = text if text.endswith("\n") else text + eol
    if not prefix.endswith(eol + eol):
        prefix += eol
    return prefix + rendered + eol


def outside(f: File) -> str:
    """``f``'s text with its section's lines blanked (numbers kept): what its owners wrote."""
    text = f.text or ""
    found = section(f)
    if found is None:
        return text
    inner = text[found.start: found.end]
    return text[: found.start] + "\n" * inner.count("\n") + text[found.end:]


# -- writing --------------------------------------------------------------------------


def check_writable(f: File) -> None:
    """Refuse, before anything is written, a file that exists read-only."""
    if f.exists and not os.access(f.path, os.W_OK):
        raise InstructionFileError(f"{f.name} is read-only; nothing was written (make it writable, or leave it "
                                   "out of the repository's instruction files).")
    if not f.exists and not os.access(f.path.parent, os.W_OK):
        raise InstructionFileError(f"cannot create {f.name}: its folder is read-only. Nothing was written.")


def write(f: File, text: str) -> None:
    """Replace ``f``'s bytes with ``text`` (UTF-8), whole or not at all, keeping its mode;
    refused when the file changed since it was read (someone is editing it)."""
    check_writable(f)
    path = f.path
    mode = stat.S_IMODE(os.stat(path).st_mode) if f.exists else 0o644
    tmp = path.with_name(f".{path.name}.jupymem-{_random.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            if hasattr(os, "fchmod"):  # POSIX (and Windows from Python 3.13)
                os.fchmod(fd, mode)
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        now = path.read_bytes() if path.exists() else None
        if now != f.data:
            raise InstructionFileError(f"{f.name} changed while jupymem was writing it; nothing was written. Run "
                                       "again.")
        os.replace(tmp, path)
    except OSError as exc:
        raise InstructionFileError(f"cannot write {f.name}: {exc.strerror or exc}. It is as it was.") from None
    finally:
        if tmp.exists():
            tmp.unlink()
