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
``check_line``, the one place to plug a stricter validator in.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import capture
from .errors import InvalidStatement, JupymemError
from .models import KINDS, SUPPORTED, UNCONFIRMED
from .store import GENESIS, canonical, sha256

FORMAT = 1
FOLDER = ".jupymem"
LOG_DIR = "log"
SUFFIX = ".jsonl"
# The types a shared file may carry; gc is a local retention decision and never shared.
SHARED_TYPES = frozenset({"record", "supersede", "retire", "confirm"})

MAX_TOPIC_CHARS = 80  # as core.MAX_TOPIC_CHARS
MAX_AUTHOR_CHARS = 200
MAX_EVIDENCE = 64
MAX_LINE_BYTES = 256 * 1024  # a statement is at most 16 KB; evidence at most 64 x ~3 KB

_NAME = re.compile(r"^(?:[a-z0-9][a-z0-9-]*-)?(?P<id>[0-9a-f]{10})\.jsonl$")
_UID = re.compile(r"^[0-9a-f]{32}$")
_AT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
_MEMORY_ID = re.compile(r"^m-[0-9a-f]{12}$")
_HANDLE = re.compile(r"^ev-[0-9a-f]{8}$")
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
    It applies the checks jupymem has for its own input: a known event type, a known
    kind and standing, ids derived from statements as ``capture.memory_id`` derives
    them, timestamps and uids in our format, sizes, and no secret in any free text
    (``capture.check_statement``, ``capture.find_secrets``). Raises ``InvalidStatement``
    or ``SecretRefused`` naming the field.
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
    if type_ in ("record", "supersede"):
        memory = _check_memory(payload.get("memory"))
        if type_ == "supersede":
            old = _memory_id(payload.get("old"), "the superseded id")
            if old == memory["id"]:
                raise InvalidStatement("it supersedes a memory with itself")
    elif type_ == "retire":
        _memory_id(payload.get("id"), "the retired id")
        reason = payload.get("reason")
        if reason is not None:
            _text(reason, "the reason")
    else:  # confirm
        _memory_id(payload.get("id"), "the confirmed id")
        _short_text(payload.get("by"), "who confirmed", MAX_AUTHOR_CHARS)
    return event


def _check_memory(m: Any) -> dict[str, Any]:
    if not isinstance(m, dict):
        raise InvalidStatement("it carries no memory")
    memory_id = _memory_id(m.get("id"), "the memory id")
    if m.get("kind") not in KINDS:
        raise InvalidStatement(f"kind {m.get('kind')!r} is not one of {', '.join(KINDS)}")
    if m.get("standing") not in (SUPPORTED, UNCONFIRMED):
        raise InvalidStatement(f"standing {m.get('standing')!r} is not supported or unconfirmed")
    if m.get("private"):
        raise InvalidStatement("a private memory cannot be in a shared file")
    statement = _text(m.get("statement"), "the statement")
    original = m.get("original")
    if original is not None:
        _text(original, "the original words")
    # Identity is keyed on the words as said (the original when it was translated).
    if capture.memory_id(original if original is not None else statement) != memory_id:
        raise InvalidStatement(f"{memory_id} is not the id of its statement")
    topic = m.get("topic")
    if topic is not None and len(_text(topic, "the topic")) > MAX_TOPIC_CHARS:
        raise InvalidStatement(f"the topic is longer than {MAX_TOPIC_CHARS} characters")
    prov = m.get("provenance", {})
    if not isinstance(prov, dict):
        raise InvalidStatement("its provenance is not an object")
    if prov.get("recorder", "person") not in ("person", "assistant"):
        raise InvalidStatement("its recorder is neither person nor assistant")
    for key in ("notebook", "cell_id", "session", "author"):
        _short_text(prov.get(key), key, 1024)
    if prov.get("quote") is not None:
        _text(prov["quote"], "the quote")
    count = prov.get("execution_count")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
        raise InvalidStatement("its execution count is not a number")
    _check_evidence(m.get("evidence", []))
    return m


def _check_evidence(items: Any) -> None:
    if not isinstance(items, list) or len(items) > MAX_EVIDENCE:
        raise InvalidStatement("its evidence is not a list of at most 64 failures")
    for e in items:
        if not isinstance(e, dict) or not isinstance(e.get("handle"), str) or not _HANDLE.match(e["handle"]):
            raise InvalidStatement("it cites evidence without an ev-xxxxxxxx handle")
        texts = [e.get("excerpt"), e.get("evalue"), e.get("ename"), *(e.get("diagnosis") or [])]
        for text in texts:
            if text is None:
                continue
            if not isinstance(text, str) or len(text.encode("utf-8")) > 4 * capture.MAX_EXCERPT_BYTES:
                raise InvalidStatement(f"evidence {e['handle']} holds an oversized or non-text field")
            found = capture.find_secrets(text)
            if found:
                raise InvalidStatement(f"evidence {e['handle']} holds {found[0].label} ({found[0].masked})")


def _memory_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _MEMORY_ID.match(value):
        raise InvalidStatement(f"{what} is not an id like m-3f9a2c1d4e5f")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidStatement(f"{what} is not text")
    try:
        cleaned = capture.check_statement(value)
    except JupymemError as exc:
        raise type(exc)(f"{what}: {exc.message}") from None
    if cleaned != value:
        raise InvalidStatement(f"{what} is not in the form jupymem stores (stray whitespace or line ends)")
    return value


def _short_text(value: Any, what: str, limit: int) -> None:
    if value is None:
        return
    if not isinstance(value, str) or len(value) > limit or _CONTROL.search(value):
        raise InvalidStatement(f"{what} is not a short line of text")
