"""One check for every event, wherever it comes from.

Events enter memory through several doors: the live API (``Project`` writes, from
every face), ``import`` of an exported log, and lines pulled from a shared log in
the repository. A verified hash chain proves that a file is intact, not that what
it carries is clean: an export edited and re-hashed verifies perfectly. So every
event passes here before it is stored, the same way whichever door it used:

* its type, its ``at`` (an ISO 8601 UTC time) and its uid;
* kinds and standings from the fixed lists; a memory's id derived from its words
  (``capture.memory_id``); supersede, retire and confirm naming known memories;
* every text field (statement, original, quote, topic, provenance, evidence, a
  retirement's reason ...): its type, its length, its characters, and secrets;
* no field that the writers do not write: an unknown field would be stored
  unchecked.

Validation never rewrites an event: it is either in the form jupymem's writers
produce or refused, with an ``InvalidField`` (or ``SecretRefused``) naming the
field and why. Rewriting would change the event's hash and make two copies of one
log disagree. ``check_events`` is the batch form for files: it names the line and
refuses the whole batch at the first bad event, so a refused import imports nothing.

Stdlib only; it runs on every record, so the checks are plain comparisons and the
secret scan, which is cheap on ordinary text.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Protocol

from ..errors import InvalidField, InvalidImport, InvalidStatement, JupymemError, SecretRefused
from ..intake import capture, clock
from ..intake.secrets_scan import find_secrets
from ..intake.strictjson import INT_MAX
from ..intake.text import control, hidden
from ..models import KINDS, SUPPORTED, UNCONFIRMED, Evidence, Fix, Provenance

__all__ = [
    "EVENT_TYPES", "Known", "DatabaseKnown", "AnyId", "ANY_ID", "Replay", "check_event", "check_payload", "check_memory",
    "check_events", "check_label", "problems", "quoted", "check_kind", "check_topic", "check_standing",
]

EVENT_TYPES = ("record", "supersede", "retire", "confirm", "gc")
STANDINGS = (SUPPORTED, UNCONFIRMED)
RECORDERS = ("person", "assistant")

MAX_TOPIC_CHARS = 80
MAX_PATH_CHARS = 4096  # PATH_MAX
MAX_ID_CHARS = 1024  # cell ids are short, but VS Code sends a URI with the notebook's path
MAX_LABEL_CHARS = 200  # an exception name, who confirmed
MAX_EVIDENCE = 64  # the staging window: a memory cannot cite more than one session holds

_MEMORY_ID = re.compile(r"m-[0-9a-f]{12}")
_HANDLE = re.compile(r"ev-[0-9a-f]{8}")
_UID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.:-]{7,127}")
_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z")  # ASCII digits only

_EVENT_KEYS = {"uid", "type", "at", "payload"}
_CHAIN_KEYS = {"seq", "payload_hash", "prev", "hash", "writer"}  # an exported line carries these too
# "private": kept on this machine only (a shared file refuses it: sharelog.check_line).
_MEMORY_KEYS = {"id", "kind", "topic", "statement", "original", "standing", "provenance", "evidence", "private",
                "owner"}
_PROVENANCE_KEYS = {f.name for f in dataclasses.fields(Provenance)}
_EVIDENCE_KEYS = {f.name for f in dataclasses.fields(Evidence)}
_EVIDENCE_REQUIRED = {"handle", "session", "ename", "evalue", "diagnosis", "excerpt", "created_at"}
_FIX_KEYS = {f.name for f in dataclasses.fields(Fix)}


# -- what the validator needs to know about memory ------------------------------------


class Known(Protocol):
    """Which memory ids exist: a database, or a replay of events seen so far."""

    def exists(self, memory_id: str) -> bool: ...


class DatabaseKnown:
    """The memories of a project database (one primary-key lookup per question)."""

    def __init__(self, conn: Any):
        self.conn = conn

    def exists(self, memory_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None


class AnyId:
    """Every well-formed memory id may exist: for events whose references are resolved
    by replay, not by the order they are read in (lines of several writers' shared
    files, each dated by its own clock)."""

    def exists(self, memory_id: str) -> bool:
        return True


ANY_ID = AnyId()


class Replay:
    """What exists after the events of a batch seen so far, over a base (or nothing).

    ``forgotten``: ids that gc forgot somewhere in the batch. Their record events are
    purged from an exported log, but a supersede that replaced one still names it.
    """

    def __init__(self, base: Known | None = None, forgotten: Iterable[str] = ()):
        self.base = base
        self.added: set[str] = set()
        self.removed: set[str] = set()
        self.forgotten = set(forgotten)

    def exists(self, memory_id: str) -> bool:
        if memory_id in self.added or memory_id in self.forgotten:
            return True
        if memory_id in self.removed:
            return False
        return self.base is not None and self.base.exists(memory_id)

    def follow(self, type_: str, payload: Mapping[str, Any] | None) -> None:
        if payload is None:
            return
        if type_ in ("record", "supersede"):
            self.added.add(payload["memory"]["id"])
            self.removed.discard(payload["memory"]["id"])
        elif type_ == "gc":
            self.removed.update(payload.get("forgotten", ()))
            self.added.difference_update(payload.get("forgotten", ()))


# -- fields ---------------------------------------------------------------------------


def _fail(field: str, why: str) -> InvalidField:
    return InvalidField(field, f"{field} {why}")


def _type_name(value: Any) -> str:
    return "null" if value is None else {dict: "an object", list: "a list", str: "text", bool: "true/false"}.get(
        type(value), type(value).__name__
    )


def quoted(value: Any, limit: int = 40) -> str:
    """How a message shows a value it refuses: its repr, clipped to ``limit`` characters.

    The message about a refused line or field is kept and shown (a shared line's problem
    is stored in the cache, printed by ``status`` and ``verify``, sent to the sidebar), so
    a value holding a secret is never quoted, only named the way the scanner names it
    (``a GitHub token (ghp_…q7R8)``). The whole value is scanned, not the clip: a secret
    cut short by the clip would no longer look like one and be quoted in part."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = repr(value)
    elif isinstance(value, str):
        found = find_secrets(value)
        if found:
            return f"a text holding {found[0].label} ({found[0].masked})"
        text = repr(value)
    else:
        return _type_name(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def _text(
    value: Any,
    field: str,
    *,
    max_chars: int | None = None,
    max_bytes: int | None = None,
    one_line: bool = False,
    ident: bool = False,
    empty: bool = False,
) -> str:
    """A text field: type, size, secrets and characters, in that order."""
    if not isinstance(value, str):
        raise _fail(field, f"must be text, not {_type_name(value)}.")
    if not empty and not value.strip():
        raise _fail(field, "is empty.")
    if max_chars is not None and len(value) > max_chars:
        raise _fail(field, f"is {len(value):,} characters long; the limit is {max_chars:,}.")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise _fail(field, f"holds an unpaired surrogate (U+{ord(value[exc.start]):04X}); it is not valid text.") from None
    if max_bytes is not None and size > max_bytes:
        raise _fail(field, f"is {size:,} bytes long; the limit is {max_bytes:,}.")
    _no_secret(value, field)  # before the characters: "it holds a token" says more than "a space"
    bad = control(value, "name" if ident else "line" if one_line else "text")
    if bad:
        c = bad.group()
        what = "a control character" if unicodedata.category(c) == "Cc" else "a space" if c.isspace() else (
            "an invisible character"
        )
        raise _fail(field, f"holds {what} (U+{ord(bad.group()):04X} at character {bad.start()}).")
    why = hidden(value)
    if why:
        raise _fail(field, f"{why}: it could hide text that people do not see and assistants read.")
    return value


def check_label(value: Any, field: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    """A short one-line text (a name, an email, who wrote a line): the checks of every text.

    The same few names recur on every line of a shared file, so a label that passed is
    remembered (the checks depend on the value and its limit only)."""
    if isinstance(value, str) and (value, max_chars) in _GOOD_LABELS:
        return value
    _text(value, field, max_chars=max_chars, one_line=True)
    if len(_GOOD_LABELS) >= 4096:
        _GOOD_LABELS.clear()
    _GOOD_LABELS.add((value, max_chars))
    return value


_GOOD_LABELS: set[tuple[str, int]] = set()


def _no_secret(value: str, field: str) -> None:
    found = find_secrets(value)
    if found:
        what = "; ".join(f"{f.label} ({f.masked})" for f in found[:3])
        raise SecretRefused(
            f"{field} contains {what}. Secrets are never stored: remove it, say where the secret "
            "lives instead (e.g. an environment variable name), and try again."
        )


def _statement(value: Any, field: str) -> str:
    """Text as a statement must be: ``capture.check_statement``'s rules, in its normal form."""
    if not isinstance(value, str):
        raise _fail(field, f"must be text, not {_type_name(value)}.")
    try:
        clean = capture.check_statement(value, field)
    except SecretRefused as exc:
        raise SecretRefused(exc.message.replace(f"The {field}", field, 1)) from None
    except InvalidStatement as exc:
        raise InvalidField(field, exc.message.replace(f"The {field}", field, 1)) from None
    if clean != value:
        raise _fail(field, "is not in the form jupymem stores (surrounding blanks or \\r line ends).")
    return value


def _optional_statement(value: Any, field: str) -> str | None:
    return None if value is None else _statement(value, field)


def _choice(value: Any, field: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise _fail(field, f"{quoted(value)} is not one of: {', '.join(choices)}.")
    return value


def _pattern(value: Any, field: str, pattern: re.Pattern[str], example: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise _fail(field, f"{quoted(value)} is not of the form {example}.")
    return value


def _time(value: Any, field: str) -> str:
    _pattern(value, field, _AT, "2024-05-01T12:00:00.000000Z")
    try:  # the constructor checks the ranges, at a tenth of strptime's cost (every line has one)
        datetime(int(value[:4]), int(value[5:7]), int(value[8:10]), int(value[11:13]), int(value[14:16]),
                 int(value[17:19]))
    except ValueError:
        raise _fail(field, f"{value!r} is not a real time.") from None
    return value


def _event_time(value: Any, field: str, now: datetime | None) -> str:
    """An event's own time: real, and no earlier than any jupymem event can be. With
    ``now`` (an entrance, not a re-check of stored history), also not ahead of this
    machine's clock by more than the skew clocks are allowed (``clock.MAX_SKEW``)."""
    _time(value, field)
    if value < clock.EARLIEST:
        raise _fail(field, f"{value!r} is before any jupymem event could be written ({clock.EARLIEST[:10]}).")
    if now is not None and clock.ahead(value, now):
        raise _fail(field, f"{value!r} is ahead of this machine's clock ({clock.format_at(now)}) by more than "
                           f"{clock.skew_text()}: check the clock of the machine that wrote it.")
    return value


def _count(value: Any, field: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(field, f"must be a whole number of 0 or more, not {_type_name(value)}.")
    if value > INT_MAX:  # SQLite stores 64-bit integers; more overflowed at the INSERT
        raise _fail(field, f"is {str(value)[:24]}…, more than any count can be.")
    return value


def _object(value: Any, field: str, allowed: set[str], required: set[str] = frozenset()) -> Mapping[str, Any]:  # type: ignore[assignment]
    if not isinstance(value, dict) and not isinstance(value, Mapping):  # dict first: the ABC check is slow
        raise _fail(field, f"must be an object, not {_type_name(value)}.")
    keys = value.keys()
    if not keys <= allowed:
        unknown = sorted(str(k) for k in keys - allowed)
        raise _fail(field, f"has a field jupymem does not write: {quoted(unknown[0])}.")
    if not required <= keys:
        raise _fail(field, f"lacks {sorted(required - keys)[0]!r}.")
    return value


def _known(value: Any, field: str, known: Known) -> str:
    _pattern(value, field, _MEMORY_ID, "m-3f9a2c1d4e5f")
    if not known.exists(value):
        raise _fail(field, f"{value!r} names no memory that exists here.")
    return value


# -- what a person gives the API --------------------------------------------------
# The same rules as the events' (one list of kinds, one topic limit), said the way a
# person giving a statement needs to hear them, and normalized where a person's input
# may differ harmlessly from the stored form (a topic's spaces).


def check_kind(kind: str) -> str:
    """``kind`` if it is one of ``KINDS``; else ``InvalidStatement`` naming them."""
    if kind not in KINDS:
        raise InvalidStatement(f"Unknown kind {kind!r}; use one of: {', '.join(KINDS)}.")
    return kind


def check_topic(topic: str | None) -> str | None:
    """A topic as stored (one line, single spaces), or None; ``InvalidStatement`` when it
    is no statement or longer than ``MAX_TOPIC_CHARS``."""
    if topic is None:
        return None
    t = " ".join(capture.check_statement(topic, "topic").split())
    if len(t) > MAX_TOPIC_CHARS:
        raise InvalidStatement(f"A topic is a short label (at most {MAX_TOPIC_CHARS} characters).")
    return t


def check_standing(standing: str | None, recorder: str) -> str:
    """The standing a new memory gets: ``standing``, or by default supported when a person
    records it and unconfirmed when an assistant does. ``InvalidStatement`` for a recorder
    or standing outside ``RECORDERS``/``STANDINGS``."""
    if recorder not in RECORDERS:
        raise InvalidStatement(f"recorder must be 'person' or 'assistant', not {recorder!r}")
    if standing is None:
        return SUPPORTED if recorder == "person" else UNCONFIRMED
    if standing not in STANDINGS:
        raise InvalidStatement(f"standing must be {SUPPORTED!r} or {UNCONFIRMED!r}, not {standing!r}")
    return standing


# -- records ------------------------------------------------------------------------


def check_memory(m: Any, field: str = "memory") -> Mapping[str, Any]:
    """A memory as a record or supersede event carries it; returns it unchanged."""
    _object(m, field, _MEMORY_KEYS, {"id", "kind", "statement", "standing"})
    _choice(m["kind"], f"{field}.kind", KINDS)
    _choice(m["standing"], f"{field}.standing", STANDINGS)
    statement = _statement(m["statement"], f"{field}.statement")
    original = _optional_statement(m.get("original"), f"{field}.original")
    memory_id = _pattern(m["id"], f"{field}.id", _MEMORY_ID, "m-3f9a2c1d4e5f")
    owner = m.get("owner")
    if owner is not None:  # the team engine's private memory (``capture.memory_id``)
        _text(owner, f"{field}.owner", max_chars=MAX_TOPIC_CHARS, one_line=True)
        if m.get("private") is not True:
            raise _fail(f"{field}.owner", "belongs to a private memory only.")
    expected = capture.memory_id(original if original is not None else statement, owner)
    if memory_id != expected:
        raise _fail(f"{field}.id", f"{memory_id!r} does not derive from its words (they give {expected}).")
    topic = m.get("topic")
    if topic is not None:
        _text(topic, f"{field}.topic", max_chars=MAX_TOPIC_CHARS, one_line=True)
        if topic != " ".join(topic.split()):
            raise _fail(f"{field}.topic", "must be one line with single spaces.")
    if "private" in m and not isinstance(m["private"], bool):
        raise _fail(f"{field}.private", f"must be true or false, not {_type_name(m['private'])}.")
    _provenance(m.get("provenance"), f"{field}.provenance")
    evidence = m.get("evidence")
    if evidence is not None:
        if not isinstance(evidence, list):
            raise _fail(f"{field}.evidence", f"must be a list, not {_type_name(evidence)}.")
        if len(evidence) > MAX_EVIDENCE:
            raise _fail(f"{field}.evidence", f"cites {len(evidence)} failures; the limit is {MAX_EVIDENCE}.")
        for i, item in enumerate(evidence):
            _evidence(item, f"{field}.evidence[{i}]")
    return m


def _provenance(p: Any, field: str) -> None:
    if p is None:
        return
    _object(p, field, _PROVENANCE_KEYS)
    if "recorder" in p:
        _choice(p["recorder"], f"{field}.recorder", RECORDERS)
    _ids_and_places(p, field)
    if p.get("author") is not None:  # "Name <email>" from git
        check_label(p["author"], f"{field}.author")
    if p.get("quote") is not None:
        _statement(p["quote"], f"{field}.quote")


def _ids_and_places(d: Mapping[str, Any], field: str) -> None:
    """The fields that provenance and evidence share: where and when a cell ran."""
    if d.get("notebook") is not None:
        _text(d["notebook"], f"{field}.notebook", max_chars=MAX_PATH_CHARS, one_line=True)
    if d.get("cell_id") is not None:
        _text(d["cell_id"], f"{field}.cell_id", max_chars=MAX_ID_CHARS, ident=True)
    if d.get("session") is not None:
        _text(d["session"], f"{field}.session", max_chars=MAX_ID_CHARS, ident=True)
    _count(d.get("execution_count"), f"{field}.execution_count")


def _evidence(e: Any, field: str) -> None:
    _object(e, field, _EVIDENCE_KEYS, _EVIDENCE_REQUIRED)
    _pattern(e["handle"], f"{field}.handle", _HANDLE, "ev-0123abcd")
    _text(e["ename"], f"{field}.ename", max_chars=MAX_LABEL_CHARS, one_line=True)
    _text(e["evalue"], f"{field}.evalue", max_chars=capture.MAX_EVALUE_CHARS, empty=True)
    _text(e["excerpt"], f"{field}.excerpt", max_bytes=capture.MAX_EXCERPT_BYTES, empty=True)
    diagnosis = e["diagnosis"]
    if not isinstance(diagnosis, list):
        raise _fail(f"{field}.diagnosis", f"must be a list of lines, not {_type_name(diagnosis)}.")
    if len(diagnosis) > capture.MAX_DIAGNOSIS_LINES:
        raise _fail(f"{field}.diagnosis", f"has {len(diagnosis)} lines; the limit is {capture.MAX_DIAGNOSIS_LINES}.")
    for i, line in enumerate(diagnosis):
        _text(line, f"{field}.diagnosis[{i}]", max_chars=capture.MAX_LINE_CHARS, one_line=True)
    _time(e["created_at"], f"{field}.created_at")
    _ids_and_places(e, field)
    if e["session"] is None:
        raise _fail(f"{field}.session", "is missing.")
    if e.get("fix") is not None:
        _fix(e["fix"], f"{field}.fix")
    for name in ("suggestion", "suggested_by", "next_failure"):
        if e.get(name) is not None:
            _text(e[name], f"{field}.{name}", max_bytes=capture.MAX_EXCERPT_BYTES, empty=True)


def _fix(f: Any, field: str) -> None:
    """The run that fixed a failure (``models.Fix``): named fields only, like the rest."""
    _object(f, field, _FIX_KEYS, {"source", "diff", "at"})
    _text(f["source"], f"{field}.source", max_bytes=capture.MAX_EXCERPT_BYTES, empty=True)
    _text(f["diff"], f"{field}.diff", max_bytes=capture.MAX_EXCERPT_BYTES, empty=True)
    _time(f["at"], f"{field}.at")
    if f.get("cell_id") is not None:
        _text(f["cell_id"], f"{field}.cell_id", max_chars=MAX_ID_CHARS, ident=True)
    _count(f.get("execution_count"), f"{field}.execution_count")
    if "paired_by" in f:
        _text(f["paired_by"], f"{field}.paired_by", max_chars=MAX_LABEL_CHARS, one_line=True)
    if f.get("after") is not None:
        _text(f["after"], f"{field}.after", max_bytes=capture.MAX_EXCERPT_BYTES, empty=True)


# -- events -------------------------------------------------------------------------


def check_payload(type_: str, payload: Any, known: Known) -> Mapping[str, Any]:
    """One event's payload, for its type; returns it unchanged or raises naming the field."""
    if type_ == "record":
        _object(payload, "payload", {"memory"}, {"memory"})
        check_memory(payload["memory"])
    elif type_ == "supersede":
        _object(payload, "payload", {"old", "memory"}, {"old", "memory"})
        old = _known(payload["old"], "supersede.old", known)
        check_memory(payload["memory"])
        if payload["memory"]["id"] == old:
            raise _fail("supersede.old", "is the memory that replaces it.")
    elif type_ == "retire":
        _object(payload, "payload", {"id", "reason"}, {"id"})
        _known(payload["id"], "retire.id", known)
        _optional_statement(payload.get("reason"), "retire.reason")
    elif type_ == "confirm":
        _object(payload, "payload", {"id", "by"}, {"id"})
        _known(payload["id"], "confirm.id", known)
        # Who confirmed is the event's writer; "by" says only what kind of confirmer it
        # was, so that no line can name a person as its author in free text.
        if payload.get("by") is not None:
            _choice(payload["by"], "confirm.by", RECORDERS)
    elif type_ == "gc":
        _object(payload, "payload", {"forgotten", "purged_uids", "rules"}, {"forgotten"})
        _list_of(payload["forgotten"], "gc.forgotten", lambda v, f: _pattern(v, f, _MEMORY_ID, "m-3f9a2c1d4e5f"))
        _list_of(payload.get("purged_uids", []), "gc.purged_uids", lambda v, f: _pattern(v, f, _UID, "a uuid"))
        rules = payload.get("rules", {})
        _object(rules, "gc.rules", {"closed_days", "unconfirmed_days", "evidence_days"})
        for name, value in rules.items():
            _count(value, f"gc.rules.{name}")
    else:
        _choice(type_, "type", EVENT_TYPES)
    return payload


def _list_of(value: Any, field: str, check: Any) -> None:
    if not isinstance(value, list):
        raise _fail(field, f"must be a list, not {_type_name(value)}.")
    for i, item in enumerate(value):
        check(item, f"{field}[{i}]")


def check_event(
    event: Any, known: Known, *, purged_ok: bool = True, now: datetime | None = None
) -> dict[str, Any]:
    """A whole event: ``{"uid", "type", "at", "payload"}`` (an exported line's chain
    fields and its ``writer`` are allowed and left out). Returns the event as a plain
    dict of those four fields. A ``payload`` of None is an event gc purged;
    ``purged_ok`` accepts it (the chain check is what proves a purge happened).
    ``now``: the event enters here, so its time may not be ahead of this clock."""
    _object(event, "event", _EVENT_KEYS | _CHAIN_KEYS, _EVENT_KEYS)
    type_ = _choice(event["type"], "type", EVENT_TYPES)
    uid = _pattern(event["uid"], "uid", _UID, "a uuid")
    at = _event_time(event["at"], "at", now)
    if event.get("writer") is not None:
        _text(event["writer"], "writer", max_chars=MAX_LABEL_CHARS, one_line=True)
    payload = event["payload"]
    if payload is None and purged_ok:
        return {"uid": uid, "type": type_, "at": at, "payload": None}
    check_payload(type_, payload, known)
    return {"uid": uid, "type": type_, "at": at, "payload": payload}


def _forgotten(events: list[Mapping[str, Any]]) -> set[str]:
    out: set[str] = set()
    for ev in events:
        payload = ev.get("payload") if isinstance(ev, Mapping) else None
        if isinstance(ev, Mapping) and ev.get("type") == "gc" and isinstance(payload, Mapping):
            forgotten = payload.get("forgotten")
            if isinstance(forgotten, list):
                out.update(f for f in forgotten if isinstance(f, str))
    return out


def check_events(
    items: Iterable[tuple[int, Mapping[str, Any]]], known: Known | None, *, source: str
) -> list[dict[str, Any]]:
    """Every event of a file, in order, each against what the ones before it made known.

    ``items`` are ``(line number, event)``. Raises ``InvalidImport`` naming the first
    bad line ("line 17: memory.kind 'admin' is not one of ..."); nothing is returned,
    so nothing is stored, unless every event passes.
    """
    pairs = list(items)
    replay = Replay(known, _forgotten([ev for _, ev in pairs]))
    out = []
    now = clock.now()
    for line, event in pairs:
        try:
            checked = check_event(event, replay, now=now)
        except JupymemError as exc:
            raise InvalidImport(f"{source}: line {line}: {exc.message} Nothing was imported.") from None
        replay.follow(checked["type"], checked["payload"])
        out.append(checked)
    return out


def problems(
    events: Iterable[Mapping[str, Any]], *, label: str = "event", references_by_replay: bool = False
) -> list[str]:
    """Every event of a log that would be refused today, as messages (``verify``).

    ``references_by_replay``: the log is a shared repository's cache, where a line may
    name a memory that another writer's line, dated earlier by a skewed clock, records
    later in the log; references are then checked for their form only (``AnyId``)."""
    pairs = list(events)
    replay = Replay(ANY_ID if references_by_replay else None, _forgotten(pairs))
    out = []
    for ev in pairs:
        try:
            checked = check_event(ev, replay)
        except JupymemError as exc:
            out.append(f"{label} {ev.get('seq', '?')}: {exc.message}")
            continue
        replay.follow(checked["type"], checked["payload"])
    return out
