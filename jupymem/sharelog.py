"""The shared log's file format: ``.jupymem/log/<name>-<writer>.jsonl``, read and checked.

One file per writer (one clone of one person), only ever appended to, so two people
recording at the same time change different files and git merges them without a
conflict. Each line is one event, self-describing and hash-chained within its file::

    {"at": "...", "hash": "...", "payload": {...}, "prev": "...", "type": "record",
     "uid": "...", "v": 1, "writer": {"email": "...", "id": "3f9a2c1d4e", "name": "..."}}

``hash`` is the sha256 of the canonical JSON (sorted keys, no spaces) of every other
field, with the payload replaced by ``payload_hash``, the sha256 of its own canonical JSON
(as the database's events are hashed), so the line can be checked on its own and its
payload is encoded once; ``prev`` is the hash of a line before it
in the same file (normally the one just before; after a union merge of two branches the
same writer appended to, a line may follow an earlier one, so the chain is a tree).
Order and identity come from the events (time, uid), never from line positions.

Reading is strict and never partial about a line: a line that is not JSON, fails its
hash, follows no valid line, is not this file's writer's, or fails ``check_line`` is
not applied, and neither is any line that descends from it; each such cause is one
``Problem`` naming file and line. Every line read from a shared file goes through
``check_line``, which applies the validator every entrance uses (``validate``).
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import validate
from .errors import InvalidStatement, JupymemError
from .store import GENESIS, canonical, sha256

FORMAT = 1
FOLDER = ".jupymem"
LOG_DIR = "log"
SUFFIX = ".jsonl"
# The types a shared file may carry; gc is a local retention decision and never shared.
SHARED_TYPES = frozenset({"record", "supersede", "retire", "confirm"})

MAX_AUTHOR_CHARS = 200
MAX_LINE_BYTES = 256 * 1024  # a statement is at most 16 KB; evidence at most 64 x ~3 KB

_NAME = re.compile(r"^(?:[a-z0-9][a-z0-9-]*-)?(?P<id>[0-9a-f]{10})\.jsonl$")
_UID = re.compile(r"^[0-9a-f]{32}$")
_AT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


# -- writers and file names ------------------------------------------------------------


def new_writer_id() -> str:
    return secrets.token_hex(5)


def slug(name: str | None) -> str:
    """A file-name-safe form of a person's name: ``Ana María López`` -> ``ana-mar-a-l-pez``."""
    text = re.sub(r"[^a-z0-9]+", "-", (name or "").lower()).strip("-")
    return text[:24].strip("-") or "writer"


def file_name(writer_id: str, name: str | None) -> str:
    return f"{slug(name)}-{writer_id}{SUFFIX}"


def writer_of(file: str) -> str | None:
    """The writer id in a log file's name, or None when the name is not ours."""
    m = _NAME.match(file)
    return m.group("id") if m else None


def log_dir(root: Path) -> Path:
    return root / FOLDER / LOG_DIR


# -- lines ---------------------------------------------------------------------------


def line_hash(fields: dict[str, Any], payload_hash: str | None = None) -> str:
    """The hash a line must carry: over every field but ``hash``, the payload by its sha256."""
    if payload_hash is None:
        payload_hash = sha256(canonical(fields.get("payload")))
    head = {k: v for k, v in fields.items() if k not in ("hash", "payload")}
    head["payload_hash"] = payload_hash
    return sha256(canonical(head))


def encode(
    uid: str, type_: str, at: str, payload: dict[str, Any], writer: dict[str, Any], prev: str
) -> tuple[str, str]:
    """(the line with its newline, its hash) for one event."""
    fields = {"v": FORMAT, "uid": uid, "type": type_, "at": at, "writer": writer, "payload": payload, "prev": prev}
    h = line_hash(fields)
    return canonical({**fields, "hash": h}).decode("utf-8") + "\n", h


@dataclass(frozen=True)
class Entry:
    """One accepted line: an event ready to apply."""

    line: int
    uid: str
    type: str
    at: str
    payload: dict[str, Any]
    writer: dict[str, Any]
    hash: str
    body: str  # the payload's canonical JSON, as the database stores it
    payload_hash: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.at, self.uid)


@dataclass
class Problem:
    """A line that is not applied, and how many lines after it go with it."""

    file: str
    line: int
    message: str
    following: int = 0

    def __str__(self) -> str:
        tail = ""
        if self.following:
            n = self.following
            lines = f"{n} line that follows" if n == 1 else f"{n} lines that follow"
            tail = f" It and the {lines} it in this writer's chain are not applied."
        else:
            tail = " It is not applied."
        return f"{FOLDER}/{LOG_DIR}/{self.file} line {self.line}: {self.message}.{tail}"


@dataclass
class Reading:
    """What one file holds: the accepted entries in file order, and the problems."""

    file: str
    lines: int = 0
    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # The last complete line was accepted (or there is none): a line appended after it
    # will be applied. When False, the writer must start a new file.
    tail_ok: bool = True


def read_file(path: Path) -> Reading:
    """Read and check every line of one writer's file (see the module docstring)."""
    name = path.name
    reading = Reading(name)
    writer_id = writer_of(name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        reading.problems.append(Problem(name, 0, f"cannot be read ({exc.strerror or exc})"))
        return reading
    if writer_id is None:
        reading.problems.append(Problem(name, 0, "is not named <name>-<writer id>.jsonl, so no writer owns it"))
        return reading
    raw_lines = data.split(b"\n")
    unterminated = raw_lines.pop()  # "" when the file ends with a newline, as every write does
    valid = {GENESIS}
    caused_by: dict[str, Problem] = {}  # stated hash of a rejected line -> the problem it descends from
    seen: dict[str, str] = {}  # uid -> hash
    for number, raw in enumerate(raw_lines, 1):
        if not raw.strip():
            continue
        reading.lines += 1
        reading.tail_ok = False
        obj, why = _parse(raw)
        if obj is None:
            reading.problems.append(Problem(name, number, why))
            continue
        stated = obj.get("hash")
        prev = obj.get("prev")
        if prev in caused_by:
            cause = caused_by[prev]
            cause.following += 1
            if isinstance(stated, str):
                caused_by[stated] = cause
            continue
        problem = None
        body = canonical(obj["payload"])
        payload_hash = sha256(body)
        if line_hash(obj, payload_hash) != stated:
            problem = "fails its hash: the line was altered after it was written"
        elif prev not in valid:
            problem = "does not follow any earlier line of this file (a line before it was removed or changed)"
        elif not isinstance(obj.get("writer"), dict) or obj["writer"].get("id") != writer_id:
            problem = "was written by another writer than the one this file belongs to"
        else:
            try:
                check_line(obj)
            except JupymemError as exc:
                problem = f"is refused: {' '.join(exc.message.split())}"
        if problem is None and obj["uid"] in seen:
            if seen[obj["uid"]] == stated:
                reading.tail_ok = True
                continue  # the same line twice (a union merge kept both copies): one event
            problem = "repeats the uid of an earlier event with different content"
        if problem is not None:
            p = Problem(name, number, problem)
            reading.problems.append(p)
            if isinstance(stated, str):
                caused_by[stated] = p
            continue
        valid.add(stated)
        seen[obj["uid"]] = stated
        reading.tail_ok = True
        reading.entries.append(
            Entry(number, obj["uid"], obj["type"], obj["at"], obj["payload"], obj["writer"], stated,
                  body.decode("utf-8"), payload_hash)
        )
    if unterminated.strip():
        reading.lines += 1
        reading.problems.append(
            Problem(name, len(raw_lines) + 1, "is incomplete (no line end): a write was cut short")
        )
    return reading


def _parse(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    if len(raw) > MAX_LINE_BYTES:
        return None, f"is {len(raw):,} bytes, more than any event can be"
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, "is not a JSON event (a hand edit or a merge conflict marker?)"
    if not isinstance(obj, dict) or not {"uid", "type", "at", "payload", "prev", "hash", "writer"} <= set(obj):
        return None, "is not a jupymem event"
    if obj.get("v") != FORMAT:
        return None, f"has format {obj.get('v')!r}; this jupymem reads format {FORMAT} (upgrade jupymem?)"
    return obj, ""


# -- the validator --------------------------------------------------------------------


def check_line(event: dict[str, Any]) -> dict[str, Any]:
    """Refuse an event from a shared file that this machine must not apply; return it.

    Every line read from ``.jupymem/`` and every line about to be written passes here.
    The event itself is checked by the validator every entrance uses (``validate``:
    kinds, standings, ids derived from statements, timestamps, the sizes, characters
    and secrets of every text field); on top of it a shared line must be one of the
    types a shared file carries, have a uid and time in the shared format, name its
    writer in short lines, and never carry a private memory. References to other
    memories are checked for their form only: the memory a line retires may come
    from another writer's file, read in any order, and replay applies events in
    (time, uid) order. Raises a ``JupymemError`` naming the field.
    """
    uid, type_, at, payload = event.get("uid"), event.get("type"), event.get("at"), event.get("payload")
    if not isinstance(uid, str) or not _UID.match(uid):
        raise InvalidStatement("its uid is not 32 hex digits")
    if type_ not in SHARED_TYPES:
        raise InvalidStatement(f"event type {type_!r} is not one a shared file can carry")
    if not isinstance(at, str) or not _AT.match(at):
        raise InvalidStatement("its time is not a UTC timestamp like 2025-01-02T03:04:05.000000Z")
    if not isinstance(payload, dict):
        raise InvalidStatement("it has no payload")
    writer = event.get("writer")
    if isinstance(writer, dict):
        for key in ("name", "email"):
            _short_text(writer.get(key), f"writer {key}", MAX_AUTHOR_CHARS)
    memory = payload.get("memory")
    if isinstance(memory, dict) and memory.get("private"):
        raise InvalidStatement("a private memory cannot be in a shared file")
    validate.check_event({"uid": uid, "type": type_, "at": at, "payload": payload}, validate.ANY_ID, purged_ok=False)
    return event



def _short_text(value: Any, what: str, limit: int) -> None:
    if value is None:
        return
    if not isinstance(value, str) or len(value) > limit or _CONTROL.search(value):
        raise InvalidStatement(f"{what} is not a short line of text")
