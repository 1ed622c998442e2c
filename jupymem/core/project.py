"""Project: the one core API that every face calls.

A ``Project`` is one repository's memory: a SQLite database under
``$JUPYMEM_HOME/projects/<id>/``. Writes append an event and project it in one
transaction (``eventlog``/``projection``); reads go to the projection. The block is
rebuilt only when the log has grown. Finding, creating and checking projects is
``opening``'s job.

When the repository shares its memory through git (``share``), the database is a
cache of the ``.jupymem/`` files plus this machine's private events: ``follow``
brings it in step (``opening`` calls it before every read), and every write goes
through ``share.Sharing.writing``, which also appends the events to this writer's
file. Private memories (``private=True``) and everything that touches them stay here.

(The module is ``core``, not ``project``: a submodule named ``project`` would
replace the public function ``jupymem.project(path)`` the moment it is imported.)
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..storage import database, eventlog, registry
from .block import BlockCache
from ..config import Settings
from ..errors import (
    InvalidStatement,
    JupymemError,
    InvalidTransition,
    LanguageRefused,
    ReadOnlyHome,
    StorageError,
    UnknownEvidence,
    UnknownMemory,
)
from ..models import (
    ACTIVE, KINDS, SUPPORTED, UNCONFIRMED, Block, Evidence, HistoryEntry, Memory, Provenance, Recorded, SearchResult,
    Similar, kind_rank,
)
from ..storage.projection import (
    MEMORY_COLUMNS, Batch, adds_nothing, apply, evidence_from_json, history_from_row, memories_by_id,
    memory_from_row,
)
from ..storage.projection import GENERATION
from ..storage.projection import disputes as projection_disputes  # a local name in Project._disputes

# Imported inside the methods that use them, not here: a one-shot command that only reads
# (`jupymem status`, `block`) would otherwise pay for what writing, searching and maintenance
# need (intake's secret patterns and language tables, validation, retrieval and its
# answerability model, the shared log's format): most of its 0.45 s. Sharing, too, is
# imported only where the repository has shared something (``follow``, ``sharing``).
if TYPE_CHECKING:
    from ..retrieval import retrieve
    from ..sharing import share
    from ..storage import validate
    from ..storage.maintenance import GcReport, ImportReport, VerifyReport

EVIDENCE_WINDOW = 64
STAGED_REVISION = "staged_revision"  # meta key: a counter of writes to staged_evidence
_PROVENANCE_FIELDS = tuple(f.name for f in dataclasses.fields(Provenance))
# Block order in SQL, derived from KINDS as models.kind_rank is (a fixed tuple, not user input).
_KIND_ORDER = "CASE kind " + " ".join(f"WHEN '{k}' THEN {kind_rank(k)}" for k in KINDS) + f" ELSE {len(KINDS)} END"
_LANGUAGE_NAMES = {"es": "Spanish", "de": "German", "fr": "French", "pt": "Portuguese", "it": "Italian", "nl": "Dutch"}
MAX_TOPIC_CHARS = 80
# What ``applicable`` hands over: the kinds of memory that say how to do a task right,
# and how far above a request's dense background one must be (benchmarks/bench_lessons.py).
LESSON_KINDS = frozenset({"correction", "constraint", "procedure", "failure"})
LESSON_MARGIN = 0.15


class Project:
    def __init__(self, settings: Settings, project_id: str, root: Path, conn: database.Connection):
        self.settings = settings
        self.id = project_id
        self.root = root
        self.name = root.name
        self.conn = conn
        self.translator: Any = None  # callable(str) -> str; set by faces that have a model
        self._cache_lock = threading.Lock()
        self._block_cache: tuple[int, int, Block] | None = None
        self._block_lines = BlockCache()  # rendered lines, refreshed per change
        self._ndocs_cache: tuple[int, int] | None = None
        self._inactive_cache: tuple[int, frozenset[int]] | None = None
        # Retrieval state, created on first use (retrieval/index.py, retrieval/fuzzy.py).
        self._tiers: Any = None
        self._vocab: Any = None
        self._postings: Any = None
        self._disputes_cache: tuple[int, dict[str, tuple[str, ...]]] | None = None
        self._sharing: share.Sharing | None = None  # made on first use (the ``sharing`` property)
        self._sharing_lock = threading.Lock()
        self._never_shared = False  # follow() found no .jupymem and nothing shared in the cache
        # Run after every committed write (opening keeps the registry's history mark with it).
        self.on_write: Any = None
        self._generation = database.get_meta(conn, GENERATION)  # see revision()

    def __repr__(self) -> str:
        return f"<Project {self.id} {self.root}>"

    @property
    def database(self) -> Path:
        return self.conn.path

    @property
    def sharing(self) -> share.Sharing:
        """This project's view of ``.jupymem/`` (``share.Sharing``), made on first use."""
        sharing = self._sharing
        if sharing is None:
            from ..sharing.share import Sharing

            with self._sharing_lock:
                sharing = self._sharing
                if sharing is None:
                    sharing = self._sharing = Sharing(self.conn, self.root, on_rebuild=self._forget_caches)
        return sharing

    # -- reading --------------------------------------------------------------

    def follow(self) -> None:
        """Bring the cache in step with the repository's shared files (a few stats when
        nothing changed; see ``share``). Faces reach projects through ``opening``, which
        calls this before every read. A read-only home answers from the cache as it is
        (the files may have moved on; nothing can be written to follow them)."""
        if self.conn.readonly:
            return
        if self._sharing is None and self._unshared():
            return
        try:
            self.sharing.follow()
        except json.JSONDecodeError:  # a replay met a garbled event of this machine's own: name it
            from ..storage.maintenance import garbled_error

            raise garbled_error(self.conn, f"The cache of {self.name}'s memory cannot follow .jupymem/log.") from None

    def _unshared(self) -> bool:
        """True when following has nothing to do and the sharing room need not be imported:
        no ``.jupymem`` entry in the repository (a link counts as one: ``share`` names it), and
        no shared file or event in the cache. ``Sharing.follow`` would find no signature and
        the cache in step, and, like it, this looks at the tables once, then only at the
        folder. Saves a one-shot command in an unshared repository the sharing room's import."""
        if os.path.lexists(self.root / ".jupymem"):  # sharing.folder.FOLDER
            return False
        if not self._never_shared:
            shared = self.conn.execute("SELECT 1 FROM shared_files LIMIT 1").fetchone() or self.conn.execute(
                "SELECT 1 FROM events WHERE scope = ? LIMIT 1", (eventlog.SHARED,)
            ).fetchone()
            self._never_shared = shared is None
        return self._never_shared

    def revision(self) -> int:
        """The last event's sequence number: it changes whenever memory changes.

        A replay of the tables by another process (``rebuild``, or a shared
        repository's cache following an interleaving pull) may give row ids to other
        memories without changing the count; its generation mark says so, and what
        this process computed from rows is dropped."""
        generation = database.get_meta(self.conn, GENERATION)
        if generation != self._generation:
            self._generation = generation
            self._forget_caches()
        return eventlog.last_seq(self.conn)

    def _n_docs(self, rev: int) -> int:
        cached = self._ndocs_cache
        if cached and cached[0] == rev:
            return cached[1]
        n = self.conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        self._ndocs_cache = (rev, n)
        return n

    def _inactive(self, rev: int) -> frozenset[int]:
        """The rows a default search leaves out (superseded, retired), per revision: a
        search's candidates are then admitted without reading their rows (0.5 ms a hybrid
        search at 100,000 memories). Few, and found through the status index."""
        cached = self._inactive_cache
        if cached and cached[0] == rev:
            return cached[1]
        # Two ranges of the status index around "active": every other status, now or later.
        rows = self.conn.execute("SELECT rid FROM memories WHERE status < ? OR status > ?", (ACTIVE, ACTIVE)).fetchall()
        got = frozenset(r[0] for r in rows)
        self._inactive_cache = (rev, got)
        return got

    def get(self, memory_id: str) -> Memory:
        """A memory by id or by a unique prefix of it (``m-`` optional)."""
        key = (memory_id or "").strip().lower()
        if not key:
            raise UnknownMemory("Give a memory id, e.g. m-3f9a2c1d4e5f.")
        if not key.startswith("m-"):
            key = "m-" + key
        row = self.conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (key,)).fetchone()
        if row is not None:
            return self._disputed(memory_from_row(row))
        # A prefix: a range on the unique index. (``id = ? OR id LIKE ?`` scanned the whole
        # table, and every remember() ends with a get(): 3 ms per record at 10,000.)
        rows = self.conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT 2",
            (key, key + "\U0010ffff"),
        ).fetchall()
        if len(rows) == 1 and len(key) >= 5:
            return self._disputed(memory_from_row(rows[0]))
        if rows:
            raise UnknownMemory(f"{memory_id!r} matches several memories; give more of the id.")
        raise UnknownMemory(f"No memory {memory_id!r} in {self.name}. `%memory list` shows the ids.")

    def list(
        self,
        kind: str | None = None,
        include_inactive: bool = False,
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Memory]:
        """Memories in block order (kind, then time, then id); a page of them with ``limit``.

        Ordering and paging happen in SQL, so a page of 200 out of 10,000 builds
        200 records, not 10,000.
        """
        where, params = self._list_filter(kind, include_inactive)
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories{where} ORDER BY {_KIND_ORDER}, created_at, id"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [max(0, int(limit)), max(0, int(offset))]
        return [self._disputed(memory_from_row(r)) for r in self.conn.execute(sql, params).fetchall()]

    def count(self, kind: str | None = None, include_inactive: bool = False) -> int:
        """How many memories ``list`` would return without a limit."""
        where, params = self._list_filter(kind, include_inactive)
        return self.conn.execute(f"SELECT count(*) FROM memories{where}", params).fetchone()[0]

    def _list_filter(self, kind: str | None, include_inactive: bool) -> tuple[str, list[Any]]:
        where, params = [], []
        if not include_inactive:
            where.append("status = ?")
            params.append(ACTIVE)
        if kind:
            _check_kind(kind)
            where.append("kind = ?")
            params.append(kind)
        return (" WHERE " + " AND ".join(where) if where else ""), params

    def counts(self) -> dict[str, int]:
        rows = self.conn.execute("SELECT kind, count(*) FROM memories WHERE status = ? GROUP BY kind", (ACTIVE,))
        got = dict(rows.fetchall())
        return {k: got.get(k, 0) for k in KINDS}

    def _disputed(self, m: Memory) -> Memory:
        """``m`` with ``replacements`` set when two people superseded the same memory differently."""
        if m.supersedes is None and m.superseded_by is None:
            return m  # neither a replacement nor replaced: nothing to look up (most memories)
        disputes = self._disputes()
        key = m.supersedes if m.supersedes in disputes and m.active else m.id
        found = disputes.get(key or "")
        return dataclasses.replace(m, replacements=found) if found else m

    def _disputes(self) -> dict[str, tuple[str, ...]]:
        """Replaced memory id -> its active replacements, where there is more than one."""
        rev = self.revision()
        cached = self._disputes_cache
        if cached and cached[0] == rev:
            return cached[1]
        disputes = projection_disputes(self.conn)
        self._disputes_cache = (rev, disputes)
        return disputes

    def history(self, memory_id: str) -> list[HistoryEntry]:
        m = self.get(memory_id)
        rows = self.conn.execute(
            "SELECT memory_id, seq, at, action, detail FROM history WHERE memory_id = ? ORDER BY seq", (m.id,)
        ).fetchall()
        return [history_from_row(r) for r in rows]

    def search(
        self,
        query: str,
        limit: int = 10,
        *,
        include_inactive: bool = False,
        kinds: Sequence[str] | None = None,
        mode: str = "hybrid",
    ) -> SearchResult:
        """Ranked memories for ``query``, each with a confidence, or an abstention. Never
        raises for any text.

        ``mode`` "hybrid" uses every leg that is ready now (the dense leg joins once its
        encoder has loaded in the background, the transformer's once it has embedded every
        memory; ``legs`` on the result says which ran); "lexical" is the BM25 leg alone
        (with stems and typo-tolerant identifiers). For evaluation: "static" and
        "transformer" are hybrid with that tier's dense leg only (lexical alone while it
        cannot answer), "dense" the transformer's ranking alone and "fts" plain FTS5 BM25
        (both rankings without abstention).
        """
        from ..retrieval import retrieve  # not at import: reading commands never search

        limit = max(1, min(int(limit), 200))
        legs = self._legs(mode, kinds)
        result = retrieve.search(
            self.conn, query, limit=limit, include_inactive=include_inactive,
            kinds=tuple(kinds) if kinds else None, mode=mode, **legs,
        )
        if not any(h.memory.supersedes or h.memory.superseded_by for h in result.hits):
            return result  # no hit can be one of two replacements
        return dataclasses.replace(
            result,
            hits=tuple(dataclasses.replace(h, memory=self._disputed(h.memory)) for h in result.hits),
            full=self._disputed(result.full) if result.full is not None else None,
        )

    def explain(
        self,
        query: str,
        count: int = 10,
        *,
        include_inactive: bool = False,
        kinds: Sequence[str] | None = None,
        mode: str = "hybrid",
    ) -> retrieve.Ranking:
        """The ranking behind ``search``: every candidate, best first, the first ``count``
        with their answerability signals and confidence. For tuning and error analysis
        (``benchmarks/``); faces call ``search``."""
        from ..retrieval import retrieve

        legs = self._legs(mode, kinds)
        ranking = retrieve.rank(
            self.conn, query, mode=mode, include_inactive=include_inactive, kinds=tuple(kinds) if kinds else None,
            depth=max(count, 40), **legs,
        )
        retrieve.judge(self.conn, ranking, count)
        return ranking

    def _legs(self, mode: str, kinds: Sequence[str] | None) -> dict[str, Any]:
        """What ``retrieve`` needs to run every leg that can answer now."""
        from ..retrieval import retrieve

        if kinds:
            for k in kinds:
                _check_kind(k)
        if mode not in retrieve.MODES:
            raise InvalidStatement(f"Unknown search mode {mode!r}; use one of: {', '.join(retrieve.MODES)}.")
        rev = self.revision()
        if self._vocab is None:
            from ..retrieval.fuzzy import Vocabulary

            self._vocab = Vocabulary()
        if self._postings is None:
            from ..retrieval.postings import Postings

            self._postings = Postings()
        dense = self._dense_leg(rev, retrieve.MODE_TIER.get(mode)) if mode in retrieve.DENSE_MODES else None
        return {
            "n_docs": self._n_docs(rev), "dense": dense, "vocab": self._vocab, "postings": self._postings,
            "inactive": self._inactive(rev),
        }

    def prepare_lexical(self, timeout: float | None = None) -> bool:
        """Build the in-memory lexical index and the typo vocabulary now, waiting (evaluation,
        benchmarks, tests); searches never wait for them. True when the index answers."""
        from ..retrieval.fuzzy import Vocabulary
        from ..retrieval.postings import Postings

        if self._vocab is None:
            self._vocab = Vocabulary()
        if self._postings is None:
            self._postings = Postings()
        n = self._n_docs(self.revision())
        if not self._postings.refresh(self.conn, n, force=True):
            self._postings.wait(timeout)
        if not self._vocab.refresh(self.conn):
            self._vocab.wait(timeout)
        return self._postings.refresh(self.conn, self._n_docs(self.revision()))

    def similar(self, statement: str, *, exclude: Iterable[str] = (), limit: int = 3) -> list[Similar]:
        """Active memories that ``statement`` nearly repeats, closest first (never the
        ``exclude``d ids: the memory just recorded, the one it superseded). Faces call it
        after recording, to offer superseding the old memory instead."""
        from ..retrieval import similar

        rev = self.revision()
        return similar.similar(
            self.conn, statement, n_docs=self._n_docs(rev), dense=self._dense_leg(rev),
            exclude=frozenset(exclude), limit=limit,
        )

    def applicable(self, prompt: str, *, limit: int = 3, exclude: Iterable[str] = ()) -> list[Memory]:
        """Lessons that may apply to a request (``LESSON_KINDS``: corrections, constraints,
        procedures, failure lessons), nearest by meaning, whether or not memory answers
        the request: "write the code to merge orders with clients" asks nothing that a
        memory answers, yet "join on customer_id, email repeats" is what the code must get
        right. Empty without the dense leg. ``inject`` hands them to assistants."""
        from ..retrieval.retrieve import nearest_of_kinds

        dense = self._dense_leg(self.revision())
        if dense is None or not (prompt or "").strip():
            return []
        skip = set(exclude)
        found = nearest_of_kinds(self.conn, prompt, dense, LESSON_KINDS, limit + len(skip), LESSON_MARGIN)
        return [m for m, _ in found if m.id not in skip][:limit]

    # -- the dense leg --------------------------------------------------------

    @property
    def tiers(self) -> Any:
        """The dense leg's encoders and indexes (``retrieval.tiers``), made on first use."""
        if self._tiers is None:
            from ..retrieval.tiers import Tiers

            with self._cache_lock:
                if self._tiers is None:
                    self._tiers = Tiers(self.conn, self.settings.encoder, interactive=self.settings.interactive)
        return self._tiers

    def _dense_leg(self, rev: int, tier: str | None = None) -> retrieve.DenseLeg | None:
        """The dense leg if it can answer right now (``retrieval.tiers``), of ``tier`` only
        when one is named; never waits for it in a long-lived process, whose first search
        starts the encoders loading."""
        from ..retrieval.retrieve import DenseLeg

        return self.tiers.leg(rev, DenseLeg, only=tier)

    def prepare_dense(self, timeout: float | None = None) -> dict[str, Any]:
        """Load the encoders and embed every memory now, waiting (evaluation, benchmarks,
        tests). Searches never call this; returns ``dense_status()``."""
        from ..retrieval.retrieve import DenseLeg

        self.tiers.prepare(self.revision, DenseLeg, timeout)
        return self.dense_status()

    def dense_status(self) -> dict[str, Any]:
        """Which legs answer searches and, when the dense leg does not, why."""
        out = self.tiers.status()
        # The lexical leg's in-memory index and the names typos are fixed against: a
        # long-lived process builds them on its first searches (FTS5 answers until then).
        out["index"] = self._postings.state() if self._postings is not None else "not built"
        out["typos"] = self._vocab.state() if self._vocab is not None else "not read"
        return out

    def block(self, cap: int | None = None) -> Block:
        """The ``<project_memory>`` block; rebuilt only when memory has changed."""
        cap = cap or self.settings.block_cap
        rev = self.revision()
        cached = self._block_cache
        if cached and cached[0] == rev and cached[1] == cap:
            return cached[2]
        result = self._block_lines.build(self.conn, cap)
        with self._cache_lock:
            self._block_cache = (rev, cap, result)
        if result.omitted and self.settings.interactive:
            self.tiers.start()  # memory outgrew the block: searches will want vectors
        return result

    def staged_evidence(self, session: str | None = None, limit: int = EVIDENCE_WINDOW) -> list[Evidence]:
        """Staged failures, newest first (optionally of one kernel session)."""
        sql, params = "SELECT data FROM staged_evidence", []
        if session:
            sql += " WHERE session = ?"
            params.append(session)
        sql += " ORDER BY created_at DESC, handle LIMIT ?"
        params.append(limit)
        return [evidence_from_json(json.loads(r[0])) for r in self.conn.execute(sql, params).fetchall()]

    def evidence(self, handle: str) -> Evidence:
        h = (handle or "").strip()
        for table in ("staged_evidence", "cited_evidence"):
            row = self.conn.execute(f"SELECT data FROM {table} WHERE handle = ?", (h,)).fetchone()
            if row:
                return evidence_from_json(json.loads(row[0]))
        raise UnknownEvidence(f"No staged failure {handle!r} in {self.name}; `%memory evidence` lists them.")

    # -- writing --------------------------------------------------------------

    def remember(
        self,
        statement: str | bytes,
        kind: str = "note",
        topic: str | None = None,
        evidence: Iterable[str | Evidence] = (),
        supersedes: str | None = None,
        *,
        provenance: Provenance | None = None,
        standing: str | None = None,
        private: bool = False,
    ) -> Memory:
        """Record a statement (dedup by its normalized text) and return the memory.

        ``private`` keeps it in this machine's store only: it never reaches ``.jupymem/``.
        """
        from ..storage import validate  # the write path's checks: imported by writers only

        if supersedes:
            return self.supersede(
                supersedes, statement, kind=kind, topic=topic, evidence=evidence, provenance=provenance,
                standing=standing, private=private,
            )
        self._writable()
        payload = self._memory_payload(statement, kind, topic, evidence, provenance, standing, private)
        validate.check_payload("record", {"memory": payload}, self._known())
        with self.sharing.writing() as log:
            if adds_nothing(self.conn, payload):
                return self.get(payload["id"])
            ev = log.append("record", {"memory": payload}, private=private)
            apply(self.conn, ev)
        self._after_write()
        return self.get(payload["id"])

    def record(
        self,
        statement: str | bytes,
        kind: str | None = None,
        topic: str | None = None,
        evidence: Iterable[str | Evidence] = (),
        supersedes: str | None = None,
        *,
        provenance: Provenance | None = None,
        standing: str | None = None,
        private: bool = False,
    ) -> Recorded:
        """What a person's record does in every face: ``remember`` (or, with ``supersedes``,
        ``supersede``, keeping the old kind and topic unless given), then ``similar``: the
        active memories the statement nearly repeats, besides the one it replaced."""
        before = self.revision()
        if supersedes:
            m = self.supersede(supersedes, statement, kind=kind, topic=topic, evidence=evidence,
                               provenance=provenance, standing=standing, private=private)
        else:
            m = self.remember(
                statement, kind or "note", topic, evidence, provenance=provenance, standing=standing, private=private
            )
        near = self.similar(m.statement, exclude=[m.id, *([m.supersedes] if m.supersedes else [])])
        return Recorded(m, tuple(near), changed=self.revision() != before)

    def remember_many(self, items: Iterable[dict[str, Any]]) -> list[Memory]:
        """Record many statements in one transaction (each item: remember()'s keywords)."""
        from ..storage import validate

        self._writable()
        payloads = []
        author = self._author()  # asked once for the whole batch
        known = self._known()
        for item in items:
            item = dict(item)
            payload = self._memory_payload(
                item.pop("statement"), item.pop("kind", "note"), item.pop("topic", None),
                item.pop("evidence", ()), item.pop("provenance", None), item.pop("standing", None),
                bool(item.pop("private", False)), author=author,
            )
            validate.check_payload("record", {"memory": payload}, known)
            payloads.append(payload)
        ids = [payload["id"] for payload in payloads]
        with self.sharing.writing() as log, Batch(self.conn, ids) as batch:
            for payload in payloads:
                if batch.adds_nothing(payload):
                    continue
                ev = log.append("record", {"memory": payload}, private=bool(payload.get("private")))
                batch.apply(ev)
        self._after_write()
        # Exact ids, a few queries for all of them (get() also matches prefixes).
        found = memories_by_id(self.conn, ids)
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def supersede(
        self,
        memory_id: str,
        statement: str | bytes,
        *,
        kind: str | None = None,
        topic: str | None = None,
        evidence: Iterable[str | Evidence] = (),
        provenance: Provenance | None = None,
        standing: str | None = None,
        private: bool = False,
    ) -> Memory:
        """Replace a memory with a new statement; the old one's validity closes.

        Replacing a private memory is private too: teammates never saw the old one.
        """
        from ..storage import validate

        self._writable()
        old = self.get(memory_id)
        if old.status != ACTIVE:
            raise InvalidTransition(f"{old.id} is {old.status}; only an active memory can be superseded.")
        private = private or old.private
        payload = self._memory_payload(
            statement, kind or old.kind, topic or old.topic, evidence, provenance, standing, private
        )
        if payload["id"] == old.id:
            raise InvalidTransition(f"The new statement is the same as {old.id}; nothing to supersede.")
        validate.check_payload("supersede", {"old": old.id, "memory": payload}, self._known())
        with self.sharing.writing() as log:
            ev = log.append("supersede", {"old": old.id, "memory": payload}, private=private)
            apply(self.conn, ev)
        self._after_write()
        return self.get(payload["id"])

    def retire(self, memory_id: str, reason: str | None = None) -> Memory:
        from ..intake import capture

        self._writable()
        m = self.get(memory_id)
        if m.status != ACTIVE:
            raise InvalidTransition(f"{m.id} is already {m.status}.")
        if reason is not None:
            reason = capture.check_statement(reason, "reason")
        self._event("retire", {"id": m.id, "reason": reason}, private=m.private)
        return self.get(m.id)

    def confirm(self, memory_id: str, by: str | None = None) -> Memory:
        self._writable()
        m = self.get(memory_id)
        if m.standing == SUPPORTED:
            return m
        self._event("confirm", {"id": m.id, "by": by or "person"}, private=m.private)
        return self.get(m.id)

    def stage_failure(self, evidence: Evidence, *more: Evidence) -> None:
        """Keep failures for later citation, in one transaction; the window keeps 64 per
        kernel session. Staging again under the same handle replaces it (a failure that
        gained its fix, or names the failure that followed it).

        A notebook is kept relative to the repository root, as a memory's is: kernels
        know their notebook by its absolute path. Staging is a convenience, never worth
        an error in a user's cell: in a read-only home it keeps nothing (the kernel's own
        window still holds the failure)."""
        if self.conn.readonly:
            return
        evidence, *more = [
            dataclasses.replace(ev, notebook=_relative(ev.notebook, self.root)) if ev.notebook else ev
            for ev in (evidence, *more)
        ]
        with database.transaction(self.conn):
            for ev in (evidence, *more):
                data = json.dumps(ev.to_dict(), sort_keys=True, ensure_ascii=False)
                self.conn.execute(
                    "INSERT OR REPLACE INTO staged_evidence (handle, session, created_at, data) VALUES (?, ?, ?, ?)",
                    (ev.handle, ev.session, ev.created_at, data),
                )
            for session in dict.fromkeys(ev.session for ev in (evidence, *more)):
                self.conn.execute(
                    "DELETE FROM staged_evidence WHERE session = ? AND handle NOT IN (SELECT handle FROM"
                    " staged_evidence WHERE session = ? ORDER BY created_at DESC, handle LIMIT ?)",
                    (session, session, EVIDENCE_WINDOW),
                )
            database.set_meta(self.conn, STAGED_REVISION, str(self.staged_revision() + 1))

    def staged_revision(self) -> int:
        """Changes whenever staged evidence is written (a new failure, a fix, a suggestion).

        Staged evidence is not in the event log, so ``revision`` does not see it; a front
        end that shows failures watches both.
        """
        value = database.get_meta(self.conn, STAGED_REVISION)
        return int(value) if value and value.isdigit() else 0

    # -- maintenance ----------------------------------------------------------

    def verify(self) -> VerifyReport:
        """The database's own chain and projection, and, in a shared repository, every
        line of every ``.jupymem/`` file (problems name file and line)."""
        from ..sharing import share
        from ..storage.maintenance import verify

        shared = self.sharing.state() != share.NONE or self.sharing.has_shared_events()
        report = verify(self.conn, shared=shared)
        if self.sharing.state() == share.NONE:
            # No folder, or a .jupymem that is a link (never followed): the link is named.
            lines, problems = 0, share.folder_problems(self.root)
        else:
            lines, problems = self.sharing.verify_files()
        return dataclasses.replace(
            report, ok=report.ok and not problems, problems=(*report.problems, *problems), shared_lines=lines
        )

    def rebuild(self) -> int:
        """Recreate every table from the log (in a shared repository: from the files and
        this machine's own events, which is what the cache is)."""
        from ..sharing import share
        from ..storage.maintenance import garbled_error, rebuild

        self._writable()
        if self.sharing.state() != share.NONE or self.sharing.has_shared_events():
            try:
                return self.sharing.rebuild()
            except json.JSONDecodeError:  # a garbled event of this machine's own: name it
                raise garbled_error(self.conn, "Nothing was rebuilt.") from None
        n = rebuild(self.conn)
        self._forget_caches()
        return n

    def _forget_caches(self) -> None:
        """Drop what was computed from the tables: a rebuild may have moved every row."""
        self._block_cache = None
        self._block_lines.reset()
        self._ndocs_cache = None
        self._inactive_cache = None
        self._disputes_cache = None
        if self._tiers is not None:
            self._tiers.reset()  # row ids may have moved: look at every row again
        self._vocab = None
        self._postings = None  # row ids may have moved

    def gc(self, *, dry_run: bool = False, **retention: int) -> GcReport:
        if not dry_run:
            self._writable()
        from ..storage.maintenance import gc

        report = gc(self.conn, dry_run=dry_run, **retention)
        self._after_write()
        return report

    def export(self, fp: IO[str]) -> int:
        """The log as JSONL, private events left out (an export is meant to be shared)."""
        from ..storage.maintenance import export_log

        stored = database.get_meta(self.conn, "root_commit") or None
        return export_log(self.conn, fp, project_id=self.id, repository=stored or registry.root_commit(self.root))

    def export_to(self, path: str | Path) -> int:
        """Write the export to a file, whole or not at all (a temporary file beside it,
        then renamed); a folder that does not exist is an error that changes nothing."""
        target = Path(path).expanduser()
        buf = io.StringIO()
        n = self.export(buf)
        import uuid  # (and platform, which it imports) only for an export

        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            tmp.write_text(buf.getvalue(), encoding="utf-8")
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise JupymemError(f"Cannot write {path}: {exc.strerror or exc}. Nothing was exported.") from None
        return n

    def import_(self, fp: IO[str], *, source: str = "import", other_project: bool = False) -> ImportReport:
        """Merge an export. In a shared repository the new events go to this writer's file
        too (teammates get them), and are applied in (time, uid) order.

        An export of another repository (another root commit), or one that cannot say
        which it is of, is refused (``OtherProjectImport``) unless ``other_project``."""
        from ..sharing import share
        from ..storage.maintenance import ImportReport, Origin, import_log, read_import

        self._writable()
        origin = None if other_project else Origin(self._root_commits(), self.id, self.name)
        if self.sharing.state() != share.ON:
            report = import_log(self.conn, fp, source=source, origin=origin)
        else:
            evts = read_import(self.conn, fp, source, origin=origin)
            added = self.sharing.import_events(evts, source)
            report = ImportReport(events=len(evts), added=added, skipped=len(evts) - added)
        self._after_write()
        return report

    # -- sharing --------------------------------------------------------------

    def share(self, on: bool = True) -> dict[str, Any]:
        """Turn sharing through git on (create ``.jupymem/``, write this clone's history
        into its file) or off (the files stay as history). Returns what was done."""
        self._writable()
        return self.sharing.enable() if on else self.sharing.disable()

    def sharing_status(self) -> dict[str, Any]:
        return self.sharing.status()

    # -- internals ------------------------------------------------------------

    def _root_commits(self) -> frozenset[str]:
        """This repository's identity: the root commit stored when it was bound and git's
        own now (a repository bound before its first commit has one only later)."""
        stored = database.get_meta(self.conn, "root_commit") or None
        return frozenset(c for c in (stored, registry.root_commit(self.root)) if c)

    def _known(self) -> validate.Known:
        from ..storage import validate

        return validate.DatabaseKnown(self.conn)

    @property
    def readonly(self) -> bool:
        """True when the memory home could only be opened for reading."""
        return bool(self.conn.readonly)

    @property
    def disk_full(self) -> bool:
        """True when it was opened for reading because the disk is full (not read-only)."""
        return bool(getattr(self.conn, "disk_full", False))

    def _writable(self) -> None:
        if self.disk_full:
            raise StorageError(
                f"{self.database} cannot be written: the disk holding it is full ({self.conn.readonly_reason}). "
                "Free some space and try again; searching and reading work meanwhile."
            )
        if self.conn.readonly:
            raise ReadOnlyHome(
                f"{self.database} is read-only here ({self.conn.readonly_reason}): searching and reading "
                "work, but nothing can be recorded. Make the memory home writable, or point JUPYMEM_HOME "
                "at a writable directory."
            )

    def _event(self, type_: str, payload: dict[str, Any], *, private: bool = False) -> None:
        from ..storage import validate

        validate.check_payload(type_, payload, self._known())
        with self.sharing.writing() as log:
            ev = log.append(type_, payload, private=private)
            apply(self.conn, ev)
        self._after_write()

    def _after_write(self) -> None:
        if self.on_write is not None:
            self.on_write(self)

    def _memory_payload(
        self,
        statement: str | bytes,
        kind: str,
        topic: str | None,
        evidence: Iterable[str | Evidence],
        provenance: Provenance | None,
        standing: str | None,
        private: bool = False,
        *,
        author: str | None = None,
    ) -> dict[str, Any]:
        from ..intake import capture  # its secret scan: only statements being recorded need it

        text = capture.check_statement(statement)
        _check_kind(kind)
        topic = _check_topic(topic)
        prov = provenance or Provenance()
        if prov.recorder not in ("person", "assistant"):
            raise InvalidStatement(f"recorder must be 'person' or 'assistant', not {prov.recorder!r}")
        if standing is None:
            standing = SUPPORTED if prov.recorder == "person" else UNCONFIRMED
        if standing not in (SUPPORTED, UNCONFIRMED):
            raise InvalidStatement(f"standing must be {SUPPORTED!r} or {UNCONFIRMED!r}, not {standing!r}")
        stored, original = self._english(text)
        prov_dict = {name: getattr(prov, name) for name in _PROVENANCE_FIELDS}  # to_dict(), without the recursion
        prov_dict["notebook"] = _relative(prov.notebook, self.root)
        if prov.quote is not None:
            prov_dict["quote"] = capture.check_statement(prov.quote, "quote")
        if prov.author is None:  # who recorded it: the git identity of whoever writes here
            prov_dict["author"] = author or self._author()
        payload = {
            "id": capture.memory_id(text),  # identity is keyed on the words as said
            "kind": kind,
            "topic": topic,
            "statement": stored,
            "original": original,
            "standing": standing,
            "provenance": {k: v for k, v in prov_dict.items() if v is not None},
            # A failure's notebook relative to the repository, as provenance's: the
            # evidence travels with the lesson, and a path on this machine means nothing elsewhere.
            "evidence": [
                {**e.to_dict(), "notebook": _relative(e.notebook, self.root)} for e in self._resolve_evidence(evidence)
            ],
        }
        if private:
            payload["private"] = True
        return payload

    def _author(self) -> str | None:
        from ..sharing.share import identity

        who = identity(self.root)
        return str(who) if who else None

    def _english(self, text: str) -> tuple[str, str | None]:
        """(statement to store, original words or None) under the language policy (SPEC 6)."""
        from ..intake import capture

        translator = self.translator or _model_translator(self.settings)
        if not needs_translation(text, self.settings, translator):
            return text, None
        translated = capture.check_statement(translator(text))
        return translated, text

    def _resolve_evidence(self, evidence: Iterable[str | Evidence]) -> list[Evidence]:
        from ..intake import capture

        out: dict[str, Evidence] = {}
        for e in evidence or ():
            item = e if isinstance(e, Evidence) else self.evidence(str(e))
            out[item.handle] = capture.clean_evidence(item)
        return list(out.values())


def needs_translation(text: str, settings: Settings, translator: Any = None) -> bool:
    """True when ``text`` must be translated before it is stored; raises
    ``LanguageRefused`` when it would need translating and nothing can."""
    from ..intake import language  # its word tables: only statements being recorded need them

    if settings.language == "source" or language.is_english(text):
        return False
    if translator is None and not settings.model:
        lang = language.detect(text)
        raise LanguageRefused(
            f"This statement looks like {_LANGUAGE_NAMES.get(lang, 'another language')}, and stored memory is "
            "English so every assistant reads it the same way. Set JUPYMEM_MODEL to a litellm model to "
            "translate it on the way in (your words are kept as its quote), or set JUPYMEM_LANGUAGE=source "
            "to store statements as written."
        )
    return True


def check_first_record(statement: str | bytes, settings: Settings) -> None:
    """Refuse what ``remember`` would refuse *before* a face initializes memory for
    it, so a refused first statement leaves no empty project behind."""
    from ..intake import capture

    needs_translation(capture.check_statement(statement), settings)


def _model_translator(settings: Settings) -> Any:
    if not settings.model:
        return None
    from ..intake.llm import translator_for  # litellm itself is imported only when translating

    return translator_for(settings)


# -- helpers ------------------------------------------------------------------


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InvalidStatement(f"Unknown kind {kind!r}; use one of: {', '.join(KINDS)}.")


def _check_topic(topic: str | None) -> str | None:
    from ..intake import capture

    if topic is None:
        return None
    t = " ".join(capture.check_statement(topic, "topic").split())
    if len(t) > MAX_TOPIC_CHARS:
        raise InvalidStatement(f"A topic is a short label (at most {MAX_TOPIC_CHARS} characters).")
    return t


def _relative(notebook: str | None, root: Path) -> str | None:
    if not notebook:
        return None
    p = Path(notebook)
    if p.is_absolute():
        try:
            return p.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            return p.as_posix()
    return p.as_posix()
