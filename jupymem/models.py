"""Frozen records that cross module boundaries.

Everything here is plain data: the store produces these from rows, the faces
turn them into HTML and text (``faces/render.py``) or JSON (``to_json``, the one
serializer, also behind ``to_dict``). Nothing here touches SQLite.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

# What a memory is (SPEC 2). The order of KINDS is the block's: what an assistant must
# not get wrong comes first.
Kind = Literal["correction", "constraint", "preference", "decision", "procedure", "failure", "fact", "note"]
# Who stands behind it: a person ("supported") or an assistant nobody confirmed yet.
Standing = Literal["supported", "unconfirmed"]
# Where it is in its life: answering, replaced by another, or withdrawn.
Status = Literal["active", "superseded", "retired"]
# What a search answered: hits, or "no memory answers this confidently".
SearchStatus = Literal["ok", "abstained"]
# Who recorded a statement.
Recorder = Literal["person", "assistant"]
# The dense leg's encoder, when it ran.
Tier = Literal["static", "transformer"]

KINDS: tuple[Kind, ...] = (
    "correction",
    "constraint",
    "preference",
    "decision",
    "procedure",
    "failure",
    "fact",
    "note",
)
assert set(KINDS) == set(get_args(Kind))
KIND_RANK: dict[str, int] = {kind: i for i, kind in enumerate(KINDS)}


def kind_rank(kind: str) -> int:
    """A kind's place in block order; a kind this version does not know goes last.
    Every ordering by kind derives from ``KINDS`` through this (and ``core``'s SQL)."""
    return KIND_RANK.get(kind, len(KINDS))

# Kinds that gc never drops while they are supported (SPEC 8).
PROTECTED_KINDS = frozenset({"decision", "correction", "constraint", "preference"})

SUPPORTED: Standing = "supported"
UNCONFIRMED: Standing = "unconfirmed"

ACTIVE: Status = "active"
SUPERSEDED: Status = "superseded"
RETIRED: Status = "retired"


_FIELDS: dict[type, tuple[str, ...]] = {}


def _names(value: Any) -> tuple[str, ...]:
    cls = type(value)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(value))
    return names


def to_json(value: Any) -> Any:
    """Records -> plain JSON-ready data: the one serializer of every face (REST, the
    CLI's ``--json``, the assistant tools) and of ``to_dict``.

    Each dataclass becomes a dict of its fields, nested ones too, tuples become
    lists. One exception: a ``Recorded`` is its memory's dict plus ``similar``, so a
    record answers with the memory itself, as it always has. Memories take a
    shorter path (every field but provenance and evidence is a str, int or None):
    a list response is mostly memories, and this is about four times faster than
    walking them with ``dataclasses.asdict``."""
    if isinstance(value, Memory):
        out = {name: getattr(value, name) for name in _names(value)}
        prov = value.provenance
        out["provenance"] = {name: getattr(prov, name) for name in _names(prov)}
        out["evidence"] = [to_json(e) for e in value.evidence]
        out["replacements"] = list(value.replacements)
        return out
    if isinstance(value, Recorded):
        return {**to_json(value.memory), "similar": to_json(value.similar)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: to_json(getattr(value, name)) for name in _names(value)}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


class _Record:
    """What every frozen record shares. Records are ``@dataclass(frozen=True, eq=False,
    repr=False)`` on this base: dataclasses then generates only ``__init__`` and the
    frozen ``__setattr__``/``__delattr__``. Equality, hashing and ``repr`` are written once
    here with the meaning dataclasses gives them (equal when of the same class with equal
    fields; hashed and shown field by field, in order), because generating them per class
    compiles source each time: about 0.3 ms a class, which made up a third of what
    importing this module and ``reports`` cost a one-shot command (``bench_cli.py``).
    ``tests/test_public_api.py`` holds the meaning to a generated dataclass's."""

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in _names(self)])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()  # type: ignore[attr-defined]
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _names(self))
        return f"{type(self).__qualname__}({shown})"


class _Plain(_Record):
    """A record a face shows: ``to_dict`` is its JSON."""

    def to_dict(self) -> dict[str, Any]:
        return to_json(self)  # type: ignore[no-any-return]


@dataclass(frozen=True, eq=False, repr=False)
class Provenance(_Plain):
    """Where a statement came from. Every field is optional outside a kernel."""

    recorder: Recorder = "person"
    notebook: str | None = None  # path relative to the repository root
    cell_id: str | None = None
    execution_count: int | None = None
    session: str | None = None  # kernel session id
    quote: str | None = None  # the user's own words, when they differ from the statement
    author: str | None = None  # the recorder's git identity, "Name <email>", when git knows it


@dataclass(frozen=True, eq=False, repr=False)
class Fix(_Plain):
    """The later run of a failed cell that succeeded (SPEC 3), kept with the failure."""

    source: str  # the fixing cell, redacted, at most 2 KB (its tail, like an excerpt)
    diff: str  # compact unified diff, failed source -> fixed source; redacted and capped
    at: str
    execution_count: int | None = None
    cell_id: str | None = None
    # How the pair was found: "cell id", or "similarity 0.87" where the front end sends no id.
    paired_by: str = "cell id"
    # When the source ran unchanged, the cell that ran in between (its first line, redacted):
    # the fix was made outside the failed cell.
    after: str | None = None


@dataclass(frozen=True, eq=False, repr=False)
class Evidence(_Plain):
    """A failed cell, staged so that a lesson can cite it (SPEC 3)."""

    handle: str  # "ev-" + 8 hex
    session: str
    ename: str
    evalue: str
    diagnosis: tuple[str, ...]
    excerpt: str  # redacted, at most 2 KB
    created_at: str
    cell_id: str | None = None
    execution_count: int | None = None
    notebook: str | None = None
    fix: Fix | None = None  # the run that fixed it, once one did
    # A one-sentence lesson drawn from the pair; never a memory until a person keeps it.
    suggestion: str | None = None
    suggested_by: str | None = None  # "pair" (built from the fix) or the model that wrote it
    next_failure: str | None = None  # the same cell failed again: that failure's handle


@dataclass(frozen=True, eq=False, repr=False)
class Memory(_Plain):
    """One memory as stored: its statement, kind, standing and status, where it came from,
    the failed cells it cites, and what replaced it."""

    id: str
    kind: Kind
    statement: str  # English text as stored and shown
    standing: Standing
    status: Status
    created_at: str
    valid_from: str
    valid_to: str | None = None
    topic: str | None = None
    original: str | None = None  # the words as said, when translated
    provenance: Provenance = field(default_factory=Provenance)
    evidence: tuple[Evidence, ...] = ()
    supersedes: str | None = None
    superseded_by: str | None = None
    retire_reason: str | None = None
    confirmed_at: str | None = None
    private: bool = False  # kept in this machine's store only, never written to .jupymem/
    # Two people superseded the same memory differently: the active replacements (on the
    # replaced memory and on each replacement) until a person resolves it. Empty otherwise.
    replacements: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return self.status == ACTIVE


@dataclass(frozen=True, eq=False, repr=False)
class HistoryEntry(_Plain):
    """One event of a memory's history (``Project.history``)."""

    memory_id: str
    seq: int
    at: str
    action: str  # recorded, reopened, superseded, supersedes, retired, confirmed, imported
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False, repr=False)
class Hit(_Plain):
    """One search result: ``score`` orders hits within a search; ``confidence`` (0..1)
    says how likely this memory answers the query, comparable across searches."""

    memory: Memory
    score: float
    legs: tuple[str, ...] = ("lexical",)
    confidence: float = 0.0


@dataclass(frozen=True, eq=False, repr=False)
class SearchResult(_Plain):
    """``status`` is "ok" or "abstained" (``hits`` empty, ``closest`` the nearest ones);
    ``full`` is set when one hit clearly wins;
    ``legs`` are the retrieval legs that ran (no "dense" when the encoder was not ready,
    e.g. in a one-shot command)."""

    query: str
    status: SearchStatus
    hits: tuple[Hit, ...] = ()
    full: Memory | None = None
    reason: str | None = None  # why it abstained, for people
    legs: tuple[str, ...] = ()
    # When it abstained: the nearest memories all the same, for people to judge (faces
    # show them under "no memory answers this confidently"); never handed to assistants.
    closest: tuple[Hit, ...] = ()
    tier: Tier | None = None  # the dense leg's encoder when it ran

    @property
    def abstained(self) -> bool:
        return self.status == "abstained"


@dataclass(frozen=True, eq=False, repr=False)
class Similar(_Plain):
    """An active memory that a new statement nearly repeats (``Project.similar``)."""

    id: str
    kind: Kind
    statement: str
    score: float  # 0..1, see retrieval/similar.py


@dataclass(frozen=True, eq=False, repr=False)
class Recorded(_Plain):
    """What recording answers (``Project.record``): the memory, the active memories it
    nearly repeats (each a candidate for ``--supersedes``), and whether anything was
    written (``False``: the statement was already remembered, unchanged)."""

    memory: Memory
    similar: tuple[Similar, ...] = ()
    changed: bool = True


@dataclass(frozen=True, eq=False, repr=False)
class Block(_Plain):
    """The ``<project_memory>`` block as an assistant receives it (``Project.block``):
    ``revision`` changes exactly when ``text`` does."""

    text: str
    revision: str
    bytes: int
    cap: int
    shown: int  # memories in the block
    omitted: int  # active memories that did not fit
