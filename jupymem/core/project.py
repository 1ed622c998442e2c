"""Project: the one core API that every face calls, a facade of reads and writes.

A ``Project`` is one repository's memory: a SQLite database under
``$JUPYMEM_HOME/projects/<id>/``. Writes append an event and project it in one
transaction (``recording``); reads go to the projection (``reads``); searches to the
search engine (``retrieval.engine``). A memory's payload is built by ``payload``, failures
are staged by ``staged``, verify/rebuild/export/import are ``upkeep``'s. Finding, creating
and checking projects is ``opening``'s job.

When the repository shares its memory through git (``share``), the database is a cache of
the ``.jupymem/`` files plus this machine's private events: ``follow`` brings it in step
(``opening`` calls it before every read), and every write goes through
``share.Sharing.writing``, which also appends the events to this writer's file. Private
memories (``private=True``) and everything that touches them stay here. (The module is
``core.project``, and ``core`` imports it: a ``jupymem.project`` submodule would replace
the public function ``jupymem.project(path)`` the moment it is imported.)
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..config import CLOSED_DAYS, EVIDENCE_DAYS, UNCONFIRMED_DAYS, Settings
from ..errors import InvalidStatement, InvalidTransition
from ..models import (
    ACTIVE, SUPPORTED, Block, Evidence, HistoryEntry, Memory, Provenance, Recorded, SearchResult, Similar,
)
from ..storage import database, eventlog
from ..storage.projection import GENERATION, memories_by_id
from ..storage.reads import store_for
from . import payload, recording, staged, team, upkeep
from .block import BlockCache, kept_beside
from .reads import Reads

# Searching, sharing and maintenance are reached through the modules that import them
# when needed (the engine, ``upkeep``): `jupymem status` and `block` read, and pay for none.
if TYPE_CHECKING:
    from ..reports import DenseStatus, ShareResult, SharingStatus
    from ..retrieval import retrieve
    from ..retrieval.engine import SearchEngine
    from ..sharing import share
    from ..storage.maintenance import ImportReport, VerifyReport
    from ..storage.retention import GcReport


_MAKING = threading.Lock()  # a project's engine is made once, whichever thread asks first


class Project:
    """One repository's memory. ``translator`` (callable(str) -> str) is set by faces that
    have a model; ``on_write`` runs after every committed write (``opening`` keeps the
    registry's history mark with it)."""

    def __init__(self, settings: Settings, project_id: str, root: Path, conn: database.Connection):
        self.settings = settings
        self.id = project_id
        self.root = root
        self.name = root.name
        self.conn = conn
        self.translator: Any = None
        self.on_write: Any = None
        self.store = store_for(conn)  # what retrieval and the conversations read through
        self._engine: SearchEngine | None = None
        self._sharing: share.Sharing | None = None  # made on first use (``upkeep.sharing_of``)
        self._unshared = False  # follow() found no .jupymem and nothing shared in the cache
        # The team engine (PostgreSQL): the database is the shared memory (``core.team``).
        self.team = getattr(conn, "module_name", None) == "postgresql"
        if self.team:
            self._sharing = team.TeamWrites(conn, root, settings.home)  # type: ignore[assignment]
        self._reads = Reads(conn, self.name, self.revision)
        # The last block, and its rendered lines refreshed per change (the first one kept for the next command)
        self._blocks = BlockCache(kept_beside(conn))
        self._generation = database.get_meta(conn, GENERATION)  # see revision()

    def __repr__(self) -> str:
        return f"<Project {self.id} {self.root}>"

    @property
    def engine(self) -> SearchEngine:
        """This project's searches (``retrieval.engine``), made on first use."""
        if self._engine is None:
            from ..retrieval.engine import SearchEngine

            with _MAKING:  # the server's threads: one engine, one set of encoders loading
                if self._engine is None:
                    self._engine = SearchEngine(self.conn, self.settings, self.revision)
        return self._engine

    @property
    def sharing(self) -> share.Sharing:
        """This project's view of ``.jupymem/`` (``share.Sharing``), made on first use."""
        return upkeep.sharing_of(self)

    @property
    def database(self) -> Path:
        """The path of the project's SQLite file."""
        return self.conn.path

    # -- reading --------------------------------------------------------------

    def follow(self) -> None:
        """Bring the cache in step with the repository's shared files (a few stats when
        nothing changed; see ``share``). Faces reach projects through ``opening``, which
        calls this before every read. A read-only home answers from the cache as it is
        (the files may have moved on; nothing can be written to follow them)."""
        if self.team:
            return  # nothing to follow: teammates write to the same database
        # Every read follows first: in an unshared repository that is one stat after the first.
        self._unshared = self._sharing is None and upkeep.never_shared(self.conn, self.root, self._unshared)
        if not self._unshared:
            upkeep.follow(self.conn, self.sharing, self.name)

    def revision(self) -> int:
        """The last event's sequence number: it changes whenever memory changes.

        A replay of the tables by another process (``rebuild``, or a shared
        repository's cache following an interleaving pull) may give row ids to other
        memories without changing the count; its generation mark says so, and what
        this process computed from rows is dropped. On the team engine the head row alone
        says it: nothing replays its tables (``rebuild`` is refused), so row ids never move."""
        if self.team:
            return eventlog.last_seq(self.conn)
        generation = database.get_meta(self.conn, GENERATION)
        if generation != self._generation:
            self._generation = generation
            self._forget_caches()
        return eventlog.last_seq(self.conn)

    def get(self, memory_id: str) -> Memory:
        """A memory by id or by a unique prefix of it (``m-`` optional). Raises
        ``UnknownMemory`` for none or several."""
        return self._reads.get(memory_id)

    def list(
        self, kind: str | None = None, include_inactive: bool = False, *, limit: int | None = None, offset: int = 0,
    ) -> builtins.list[Memory]:
        """Memories in block order (kind, time, id); a page of them with ``limit``, paged in SQL
        (a page of 200 of 10,000 builds 200 records). Raises ``InvalidStatement`` for an unknown kind."""
        return self._reads.list(kind, include_inactive, limit, offset)

    def count(self, kind: str | None = None, include_inactive: bool = False) -> int:
        """How many memories ``list`` would return without a limit."""
        return self._reads.count(kind, include_inactive)

    def counts(self) -> dict[str, int]:
        """Active memories per kind, every kind named (0 where none)."""
        return self._reads.counts()

    def history(self, memory_id: str) -> builtins.list[HistoryEntry]:
        """What happened to a memory, oldest first; raises ``UnknownMemory``."""
        return self._reads.history(memory_id)

    def search(
        self, query: str, limit: int = 10, *, include_inactive: bool = False, kinds: Sequence[str] | None = None,
        mode: str = "hybrid",
    ) -> SearchResult:
        """Ranked memories for ``query``, each with a confidence, or an abstention. Never
        raises for any text (``InvalidStatement`` for an unknown kind or mode).

        ``mode`` "hybrid" uses every leg that is ready now (the dense leg joins once its
        encoder has loaded in the background, the transformer's once it has embedded every
        memory; ``legs`` on the result says which ran); "lexical" is the BM25 leg alone
        (with stems and typo-tolerant identifiers). For evaluation: "static" and
        "transformer" are hybrid with that tier's dense leg only (lexical alone while it
        cannot answer), "dense" the transformer's ranking alone and "fts" plain FTS5 BM25
        (both rankings without abstention).
        """
        limit = max(1, min(int(limit), 200))
        result = self.engine.search(query, limit, include_inactive=include_inactive, kinds=kinds, mode=mode)
        return self._reads.disputed_result(result)

    def explain(
        self, query: str, count: int = 10, *, include_inactive: bool = False, kinds: Sequence[str] | None = None,
        mode: str = "hybrid",
    ) -> retrieve.Ranking:
        """The ranking behind ``search``: every candidate, best first, the first ``count``
        with their answerability signals and confidence. For tuning and error analysis
        (``benchmarks/``); faces call ``search``. Raises as ``search`` does."""
        return self.engine.explain(query, count, include_inactive=include_inactive, kinds=kinds, mode=mode)

    def prepare_lexical(self, timeout: float | None = None) -> bool:
        """Build the in-memory lexical index and the typo vocabulary now, waiting (evaluation,
        benchmarks, tests); searches never wait for them. True when the index answers."""
        return self.engine.prepare_lexical(timeout)

    def similar(self, statement: str, *, exclude: Iterable[str] = (), limit: int = 3) -> builtins.list[Similar]:
        """Active memories that ``statement`` nearly repeats, closest first (never the
        ``exclude``d ids: the memory just recorded, the one it superseded). Faces call it
        after recording, to offer superseding the old memory instead."""
        return self.engine.similar(statement, exclude=exclude, limit=limit)

    def applicable(self, prompt: str, *, limit: int = 3, exclude: Iterable[str] = ()) -> builtins.list[Memory]:
        """Lessons that may apply to a request (``engine.LESSON_KINDS``: corrections, constraints,
        preferences, decisions, procedures, failure lessons), nearest by meaning, whether or not memory answers the
        request (``SearchEngine.applicable``). Empty without the dense leg. ``inject`` hands
        them to assistants."""
        return self.engine.applicable(prompt, limit=limit, exclude=exclude)

    @property
    def tiers(self) -> Any:
        """The dense leg's encoders and indexes (``retrieval.tiers``), made on first use."""
        return self.engine.tiers

    def prepare_dense(self, timeout: float | None = None) -> DenseStatus:
        """Load the encoders and embed every memory now, waiting (evaluation, benchmarks,
        tests). Searches never call this; returns the ``DenseStatus`` after it."""
        self.engine.prepare_dense(timeout)
        return self.dense_status()

    def dense_status(self) -> DenseStatus:
        """A ``DenseStatus``: which legs answer searches and, when the dense leg does not, why."""
        return self.engine.status()

    def block(self, cap: int | None = None) -> Block:
        """The ``<project_memory>`` block; rebuilt only when memory has changed."""
        result, built = self._blocks.at(self.store, self.revision(), cap or self.settings.block_cap, self._generation)
        if built and result.omitted and self.settings.interactive:
            self.engine.start()  # memory outgrew the block: searches will want vectors
        return result

    def staged_evidence(self, session: str | None = None, limit: int = staged.EVIDENCE_WINDOW) -> builtins.list[Evidence]:
        """Staged failures, newest first (optionally of one kernel session)."""
        return staged.staged(self.conn, session, limit)

    def kept_as(self, handles: Iterable[str]) -> dict[str, str]:
        """Which of these staged failures a memory cites (was kept as a lesson): handle -> memory id."""
        return staged.citing(self.conn, builtins.list(handles))

    def evidence(self, handle: str) -> Evidence:
        """A staged or cited failure by its handle; raises ``UnknownEvidence``."""
        return staged.evidence(self.conn, handle, self.name)

    # -- writing --------------------------------------------------------------

    def remember(
        self, statement: str | bytes, kind: str = "note", topic: str | None = None,
        evidence: Iterable[str | Evidence] = (), supersedes: str | None = None, *,
        provenance: Provenance | None = None, standing: str | None = None, private: bool = False,
    ) -> Memory:
        """Record a statement (dedup by its normalized text) and return the memory.

        ``private`` keeps it in this machine's store only: it never reaches ``.jupymem/``.
        Raises ``InvalidStatement``, ``SecretRefused``, ``LanguageRefused``, ``ReadOnlyHome``.
        """
        if supersedes:
            return self.supersede(
                supersedes, statement, kind=kind, topic=topic, evidence=evidence, provenance=provenance,
                standing=standing, private=private,
            )
        upkeep.check_writable(self.conn)
        memory = self._payload(statement, kind, topic, evidence, provenance, standing, private)
        if recording.record(self.conn, self.sharing, memory, self.engine):
            self._after_write()
        return self.get(memory["id"])

    def record(
        self, statement: str | bytes, kind: str | None = None, topic: str | None = None,
        evidence: Iterable[str | Evidence] = (), supersedes: str | None = None, *,
        provenance: Provenance | None = None, standing: str | None = None, private: bool = False,
    ) -> Recorded:
        """What a person's record does in every face: ``remember`` (or, with ``supersedes``,
        ``supersede``, keeping the old kind and topic unless given), then ``similar``: the
        active memories the statement nearly repeats, besides the one it replaced. Raises
        as those do."""
        before = self.revision()
        how: dict[str, Any] = {"provenance": provenance, "standing": standing, "private": private}
        if supersedes:
            m = self.supersede(supersedes, statement, kind=kind, topic=topic, evidence=evidence, **how)
        else:
            m = self.remember(statement, kind or "note", topic, evidence, **how)
        near = self.similar(m.statement, exclude=[m.id, *([m.supersedes] if m.supersedes else [])])
        return Recorded(m, tuple(near), changed=self.revision() != before)

    def remember_many(self, items: Iterable[dict[str, Any]]) -> builtins.list[Memory]:
        """Record many statements in one transaction (each item: remember()'s keywords);
        the first refused item refuses them all. Returns the memories, in order."""
        upkeep.check_writable(self.conn)
        memories, check = [], recording.checker(self.conn)
        who = (team.author if self.team else payload.author)(self.root, self.settings.home)  # once for the batch
        for item in map(_item, items):
            memory = self._payload(
                item.pop("statement"), item.pop("kind", "note"), item.pop("topic", None),
                item.pop("evidence", ()), item.pop("provenance", None), item.pop("standing", None),
                bool(item.pop("private", False)), who=who,
            )
            check(memory)
            memories.append(memory)
        recording.record_many(self.conn, self.sharing, memories)
        self._after_write()
        # Exact ids, a few queries for all of them (get() also matches prefixes).
        ids = [memory["id"] for memory in memories]
        found = memories_by_id(self.conn, ids)
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def supersede(
        self, memory_id: str, statement: str | bytes, *, kind: str | None = None, topic: str | None = None,
        evidence: Iterable[str | Evidence] = (), provenance: Provenance | None = None, standing: str | None = None,
        private: bool = False,
    ) -> Memory:
        """Replace a memory with a new statement; the old one's validity closes. Returns the
        new memory; raises ``InvalidTransition`` for an inactive or identical one.

        Replacing a private memory is private too: teammates never saw the old one.
        """
        upkeep.check_writable(self.conn)
        old = self.get(memory_id)
        if old.status != ACTIVE:
            raise InvalidTransition(f"{old.id} is {old.status}; only an active memory can be superseded.")
        if self.team:
            team.check_supersede(old, private)
        private = private or old.private
        memory = self._payload(statement, kind or old.kind, topic or old.topic, evidence, provenance, standing, private)
        if memory["id"] == old.id:
            raise InvalidTransition(f"The new statement is the same as {old.id}; nothing to supersede.")
        recording.supersede(self.conn, self.sharing, old.id, memory, private=private, engine=self.engine)
        self._after_write()
        return self.get(memory["id"])

    def retire(self, memory_id: str, reason: str | None = None) -> Memory:
        """Retire an active memory (``reason`` kept); raises ``InvalidTransition`` otherwise."""
        upkeep.check_writable(self.conn)
        m = self.get(memory_id)
        if m.status != ACTIVE:
            raise InvalidTransition(f"{m.id} is already {m.status}.")
        self._event("retire", {"id": m.id, "reason": payload.reason(reason)}, private=m.private, active=m.id)
        return self.get(m.id)

    def confirm(self, memory_id: str, by: str | None = None) -> Memory:
        """Mark a memory supported (``by`` whom, default a person); returns it."""
        upkeep.check_writable(self.conn)
        m = self.get(memory_id)
        if m.standing == SUPPORTED:
            return m
        self._event("confirm", {"id": m.id, "by": by or "person"}, private=m.private)
        return self.get(m.id)

    def stage_failure(self, evidence: Evidence, *more: Evidence) -> None:
        """Keep failures for later citation, in one transaction; the window keeps 64 per
        kernel session. Staging again under the same handle replaces it (a failure that
        gained its fix, or names the failure that followed it). Notebooks are kept relative
        to the repository (``staged.stage``). Never raises for a read-only home: staging is
        a convenience, never worth an error in a user's cell; it then keeps nothing."""
        if not self.conn.readonly:
            staged.stage(self.conn, self.root, (evidence, *more))

    def staged_revision(self) -> int:
        """Changes whenever staged evidence is written (a new failure, a fix, a suggestion).
        Staged evidence is not in the event log, so ``revision`` does not see it; a front
        end that shows failures watches both."""
        return staged.staged_revision(self.conn)

    # -- maintenance and sharing ----------------------------------------------

    def verify(self) -> VerifyReport:
        """The database's own chain and projection, and, in a shared repository, every
        line of every ``.jupymem/`` file (problems name file and line)."""
        return upkeep.verify_all(self.conn, self.sharing, self.root)

    def rebuild(self) -> int:
        """Recreate every table from the log (in a shared repository: from the files and
        this machine's own events, which is what the cache is). Returns the events replayed."""
        upkeep.check_writable(self.conn)
        team.not_here(self, "rebuild")
        return upkeep.rebuild_all(self.conn, self.sharing, forget=self._forget_caches)

    def gc(self, *, dry_run: bool = False, closed_days: int = CLOSED_DAYS, unconfirmed_days: int = UNCONFIRMED_DAYS,
           evidence_days: int = EVIDENCE_DAYS, now: datetime | None = None) -> GcReport:
        """Forget closed memories after ``closed_days``, unconfirmed ones after ``unconfirmed_days``,
        uncited staged failures after ``evidence_days``, counted back from ``now`` (default: now;
        ``retention.gc``: on the team engine, only this member's own); ``dry_run`` only counts."""
        if not dry_run:
            upkeep.check_writable(self.conn)
        report = upkeep.gc(self.conn, dry_run=dry_run, closed_days=closed_days, unconfirmed_days=unconfirmed_days,
                           evidence_days=evidence_days, now=now)
        self._after_write()
        return report

    def export(self, fp: IO[str]) -> int:
        """The log as JSONL, private events left out (an export is meant to be shared)."""
        return upkeep.export(self.conn, fp, self.id, self.root)

    def export_to(self, path: str | Path) -> int:
        """Write the export to a file, whole or not at all (a temporary file beside it,
        then renamed); a folder that does not exist is an error that changes nothing."""
        return upkeep.export_to(self.conn, path, self.id, self.root)

    def import_(self, fp: IO[str], *, source: str = "import", other_project: bool = False) -> ImportReport:
        """Merge an export. In a shared repository the new events go to this writer's file
        too (teammates get them), and are applied in (time, uid) order. An export of another
        repository (another root commit), or one that cannot say which it is of, is refused
        (``OtherProjectImport``) unless ``other_project``."""
        upkeep.check_writable(self.conn)
        # On the team engine too: an export holds no private events, and each event goes in
        # as ``migrate`` moves one (after the head, its uid skipped when already there).
        origin = None if other_project else (self.id, self.name)
        report = upkeep.import_into(self.conn, self.sharing, fp, source, origin)
        self._after_write()
        return report

    def share(self, on: bool = True) -> ShareResult:
        """Turn sharing through git on (create ``.jupymem/``, write this clone's history
        into its file) or off (the files stay as history). Returns what was done, a ``ShareResult``."""
        upkeep.check_writable(self.conn)
        team.not_here(self, "share (the team database is shared already; .jupymem/ is for repositories without one)")
        return upkeep.switch_sharing(self.sharing, on)

    def sharing_status(self) -> SharingStatus:
        """A ``SharingStatus``: whether memory is shared, this writer's file, the shared files' problems."""
        return upkeep.sharing_status(self)

    # -- internals ------------------------------------------------------------

    @property
    def readonly(self) -> bool:
        """True when the memory home could only be opened for reading."""
        return bool(self.conn.readonly)

    @property
    def disk_full(self) -> bool:
        """True when it was opened for reading because the disk is full (not read-only)."""
        return bool(getattr(self.conn, "disk_full", False))

    def _forget_caches(self) -> None:
        """Drop what was computed from the tables: a rebuild may have moved every row."""
        self._blocks.reset()
        self._reads.reset()
        if self._engine is not None:
            self._engine.reset()

    def _event(self, type_: str, payload: dict[str, Any], *, private: bool = False, active: str | None = None) -> None:
        recording.write(self.conn, self.sharing, type_, payload, private=private, active=active)
        self._after_write()

    def _after_write(self) -> None:
        if self.on_write is not None:
            self.on_write(self)

    def _payload(
        self, statement: str | bytes, kind: str, topic: str | None, evidence: Iterable[str | Evidence],
        provenance: Provenance | None, standing: str | None, private: bool = False, *, who: str | None = None,
    ) -> dict[str, Any]:
        return payload.memory_payload(
            statement, kind, topic, evidence, provenance, standing, private, root=self.root, settings=self.settings,
            translator=self.translator, lookup=self.evidence,
            who=who or (team.author if self.team else payload.author)(self.root, self.settings.home),
            owner=getattr(self.conn, "private_owner", None),  # the team engine's (``capture.memory_id``)
        )


def _item(item: Any) -> dict[str, Any]:
    """One item of ``remember_many``: remember()'s keywords, or a statement alone."""
    if isinstance(item, (str, bytes)):
        return {"statement": item}
    if not isinstance(item, Mapping) or "statement" not in item:
        raise InvalidStatement(f"remember_many takes statements or dicts with a 'statement'; got {type(item).__name__}")
    return dict(item)
