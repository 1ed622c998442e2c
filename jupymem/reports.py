"""What memory says about itself: a repository's status, sharing through git, the search
legs. Records a face shows, apart from ``models`` (what memory holds): creating a frozen
dataclass costs a few tenths of a millisecond even with ``models._Plain``'s shared methods, and the commands that never report status
(``block``, ``search``, ``remember``, a kernel's start) need none of these.

Each ``to_dict()`` is the JSON the REST API, ``--json`` and the sidebar read
(labextension/src/tokens.ts): the fields are in the order of its keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .models import Tier, _Plain


# Sharing through git: writing to .jupymem/ ("on"), files kept as history ("off"), or no folder.
SharingState = Literal["on", "off", "none"]
# Whether the dense (meaning) leg answers searches in this process.
DenseState = Literal["on", "off"]


@dataclass(frozen=True, eq=False, repr=False)
class SharedFile(_Plain):
    """One writer's file in ``.jupymem/log`` as the cache last read it."""

    name: str
    lines: int
    applied: int
    problems: int  # lines not applied
    waiting_until: str | None = None  # a line dated in the future is applied from then


@dataclass(frozen=True, eq=False, repr=False)
class SharingStatus(_Plain):
    """Sharing through git (``Project.sharing_status``): its state, the files and this
    clone's writer, and every line that is not applied, one sentence each."""

    state: SharingState
    folder: str
    files: tuple[SharedFile, ...] = ()
    problems: tuple[str, ...] = ()
    writer: str | None = None  # this clone's file, relative to the repository root
    identity: str | None = None  # the git identity written into this clone's lines
    shared_events: int = 0
    local_events: int = 0  # written before sharing was turned on, not shared yet
    private_memories: int = 0
    writer_damaged: bool = False  # our file ends in a line nobody applies: the next memory starts a new one


@dataclass(frozen=True, eq=False, repr=False)
class SharingSeen(SharingStatus):
    """Sharing as ``jupymem.status`` tells it: also what a read-only home's cache cannot
    follow (lines and files of ``.jupymem/log``; 0 where it follows them)."""

    unseen_lines: int = 0
    unseen_files: int = 0


@dataclass(frozen=True, eq=False, repr=False)
class ShareResult(_Plain):
    """What turning sharing on or off did (``Project.share``)."""

    state: SharingState
    was: SharingState
    created: tuple[str, ...] = ()  # files made, relative to the repository root
    written: int = 0  # events of this clone's history written to its file
    kept_local: int = 0  # older events that fail today's checks, kept on this machine
    file: str | None = None  # this clone's file
    message: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class Embedding(_Plain):
    """The transformer's background embedding: memories done of total."""

    done: int
    total: int


@dataclass(frozen=True, eq=False, repr=False)
class DenseStatus(_Plain):
    """Which legs answer searches in this process (``Project.dense_status``) and, when the
    dense leg does not (or not at its best), why; the encoders' states."""

    legs: tuple[str, ...]
    dense: DenseState
    tier: Tier | None = None  # the encoder that answered the last search
    reason: str | None = None
    encoder: str = "off"  # the shown tier's encoder: "not loaded", "loading", "ready", "failed", "off"
    encoder_reason: str = ""
    encoder_load_seconds: float | None = None
    static_encoder: str = "off"
    transformer: str = "off"
    embedding: Embedding | None = None
    model: str | None = None  # the model whose vectors are stored
    vectors: int = 0
    driver: str = ""  # the SQLite build, or the engine's name
    index: str = "not built"  # the lexical leg's in-memory index
    typos: str = "not read"  # the names typos are fixed against


@dataclass(frozen=True, eq=False, repr=False)
class BlockSize(_Plain):
    """The block's size and revision, without its text (``RepositoryStatus.block``)."""

    bytes: int
    cap: int
    shown: int
    omitted: int
    revision: str


@dataclass(frozen=True, eq=False, repr=False)
class ProjectMatch(_Plain):
    """A project with this checkout's root commit: the repository moved or was re-cloned."""

    project_id: str
    roots: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class Engine(_Plain):
    """Which engine holds a project's memory, and where (``RepositoryStatus.engine``)."""

    name: Literal["sqlite", "postgresql"]
    where: str  # the SQLite file, or the team database as host:port/db (never a password)


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)  # keyword-only: ``home`` keeps its place among the keys
class RepositoryStatus(_Plain):
    """What jupymem knows about a path's repository (``jupymem.status``); never written.
    ``message`` says it for people; the rest are the facts every face shows."""

    path: str
    git: bool = False
    root: str | None = None
    name: str | None = None
    memory: bool = False
    project_id: str | None = None
    registry: Literal["ok", "corrupt"] = "ok"
    matches: ProjectMatch | None = None
    revision: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # active memories per kind, in block order
    total: int = 0
    staged: int = 0
    staged_revision: int = 0  # changes whenever a failure is staged or gains its fix
    block: BlockSize | None = None
    database: str | None = None
    retrieval: DenseStatus | None = None
    sharing: SharingSeen | None = None
    # database_damaged / database_lost / storage_error when the database cannot be used
    damage: str | None = None
    read_only: bool = False
    disk_full: bool = False  # opened for reading only because the disk is full
    home: str  # the memory home
    engine: Engine | None = None  # added with the team engine (a new key; none renamed or moved)
    message: str = ""
