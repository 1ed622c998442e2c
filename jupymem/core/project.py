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
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from ..intake import capture, translate
from ..intake.translate import check_first_record, needs_translation  # noqa: F401 (faces import them from here)
from ..storage import database, eventlog, registry, validate
from ..sharing import share
from ..retrieval import retrieve
from ..retrieval.engine import SearchEngine
from . import staged
from .block import BlockCache
from .reads import Reads
from ..config import Settings
from ..errors import (
    JupymemError,
    InvalidTransition,
    ReadOnlyHome,
    StorageError,
)
from ..storage.maintenance import (
    GcReport, ImportReport, Origin, VerifyReport, export_log, garbled_error, gc, import_log, read_import, rebuild,
    verify,
)
from ..models import (
    ACTIVE, SUPPORTED, Block, Evidence, HistoryEntry, Memory, Provenance, Recorded, SearchResult, Similar,
)
from ..storage.projection import GENERATION, Batch, adds_nothing, apply, memories_by_id

_PROVENANCE_FIELDS = tuple(f.name for f in dataclasses.fields(Provenance))


class Project:
    def __init__(self, settings: Settings, project_id: str, root: Path, conn: database.Connection):
        self.settings = settings
        self.id = project_id
        self.root = root
        self.name = root.name
        self.conn = conn
        self.translator: Any = None
        self.on_write: Any = None
        self.engine = SearchEngine(conn, settings, self.revision)
        self._reads = Reads(conn, self.name, self.revision)
        self._blocks = BlockCache()  # the last block, and its rendered lines refreshed per change
        self.sharing = share.Sharing(conn, root, on_rebuild=self._forget_caches)
        self._generation = database.get_meta(conn, GENERATION)  # see revision()

    def __repr__(self) -> str:
        return f"<Project {self.id} {self.root}>"

    @property
    def database(self) -> Path:
        return self.conn.path

    # -- reading --------------------------------------------------------------

    def follow(self) -> None:
        """Bring the cache in step with the repository's shared files (a few stats when
        nothing changed; see ``share``). Faces reach projects through ``opening``, which
        calls this before every read. A read-only home answers from the cache as it is
        (the files may have moved on; nothing can be written to follow them)."""
        if self.conn.readonly:
            return
        try:
            self.sharing.follow()
        except json.JSONDecodeError:  # a replay met a garbled event of this machine's own: name it
            raise garbled_error(self.conn, f"The cache of {self.name}'s memory cannot follow .jupymem/log.") from None

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

    def get(self, memory_id: str) -> Memory:
        """A memory by id or by a unique prefix of it (``m-`` optional). Raises
        ``UnknownMemory`` for none or several."""
        return self._reads.get(memory_id)

    def list(
        self, kind: str | None = None, include_inactive: bool = False, *, limit: int | None = None, offset: int = 0,
    ) -> list[Memory]:
        """Memories in block order (kind, then time, then id); a page of them with ``limit``.

        Ordering and paging happen in SQL, so a page of 200 out of 10,000 builds
        200 records, not 10,000. Raises ``InvalidStatement`` for an unknown kind.
        """
        return self._reads.list(kind, include_inactive, limit, offset)

    def count(self, kind: str | None = None, include_inactive: bool = False) -> int:
        """How many memories ``list`` would return without a limit."""
        return self._reads.count(kind, include_inactive)

    def counts(self) -> dict[str, int]:
        """Active memories per kind, every kind named (0 where none)."""
        return self._reads.counts()

    def history(self, memory_id: str) -> list[HistoryEntry]:
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
        return self.engine.explain(query, count, include_inactive=include_inactive, kinds=kinds, mode=mode)

    def prepare_lexical(self, timeout: float | None = None) -> bool:
        """Build the in-memory lexical index and the typo vocabulary now, waiting (evaluation,
        benchmarks, tests); searches never wait for them. True when the index answers."""
        return self.engine.prepare_lexical(timeout)

    def similar(self, statement: str, *, exclude: Iterable[str] = (), limit: int = 3) -> list[Similar]:
        """Active memories that ``statement`` nearly repeats, closest first (never the
        ``exclude``d ids: the memory just recorded, the one it superseded). Faces call it
        after recording, to offer superseding the old memory instead."""
        return self.engine.similar(statement, exclude=exclude, limit=limit)

    def applicable(self, prompt: str, *, limit: int = 3, exclude: Iterable[str] = ()) -> list[Memory]:
        """Lessons that may apply to a request (``engine.LESSON_KINDS``: corrections, constraints,
        procedures, failure lessons), nearest by meaning, whether or not memory answers
        the request: "write the code to merge orders with clients" asks nothing that a
        memory answers, yet "join on customer_id, email repeats" is what the code must get
        right. Empty without the dense leg. ``inject`` hands them to assistants."""
        return self.engine.applicable(prompt, limit=limit, exclude=exclude)

    # -- the dense leg --------------------------------------------------------

    @property
    def tiers(self) -> Any:
        """The dense leg's encoders and indexes (``retrieval.tiers``), made on first use."""
        return self.engine.tiers

    def prepare_dense(self, timeout: float | None = None) -> dict[str, Any]:
        """Load the encoders and embed every memory now, waiting (evaluation, benchmarks,
        tests). Searches never call this; returns ``dense_status()``."""
        self.engine.prepare_dense(timeout)
        return self.dense_status()

    def dense_status(self) -> dict[str, Any]:
        """Which legs answer searches and, when the dense leg does not, why."""
        return self.engine.status()

    def block(self, cap: int | None = None) -> Block:
        """The ``<project_memory>`` block; rebuilt only when memory has changed."""
        result, built = self._blocks.at(self.conn, self.revision(), cap or self.settings.block_cap)
        if built and result.omitted and self.settings.interactive:
            self.engine.start()  # memory outgrew the block: searches will want vectors
        return result

    def staged_evidence(self, session: str | None = None, limit: int = staged.EVIDENCE_WINDOW) -> list[Evidence]:
        """Staged failures, newest first (optionally of one kernel session)."""
        return staged.staged(self.conn, session, limit)

    def evidence(self, handle: str) -> Evidence:
        """A staged or cited failure by its handle; raises ``UnknownEvidence``."""
        return staged.evidence(self.conn, handle, self.name)

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

    # -- maintenance ----------------------------------------------------------

    def verify(self) -> VerifyReport:
        """The database's own chain and projection, and, in a shared repository, every
        line of every ``.jupymem/`` file (problems name file and line)."""
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
        self._blocks.reset()
        self._reads.reset()
        self.engine.reset()

    def gc(self, *, dry_run: bool = False, **retention: int) -> GcReport:
        if not dry_run:
            self._writable()
        report = gc(self.conn, dry_run=dry_run, **retention)
        self._after_write()
        return report

    def export(self, fp: IO[str]) -> int:
        """The log as JSONL, private events left out (an export is meant to be shared)."""
        stored = database.get_meta(self.conn, "root_commit") or None
        return export_log(self.conn, fp, project_id=self.id, repository=stored or registry.root_commit(self.root))

    def export_to(self, path: str | Path) -> int:
        """Write the export to a file, whole or not at all (a temporary file beside it,
        then renamed); a folder that does not exist is an error that changes nothing."""
        target = Path(path).expanduser()
        buf = io.StringIO()
        n = self.export(buf)
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
        text = capture.check_statement(statement)
        validate.check_kind(kind)
        topic = validate.check_topic(topic)
        prov = provenance or Provenance()
        standing = validate.check_standing(standing, prov.recorder)
        stored, original = self._english(text)
        prov_dict = {name: getattr(prov, name) for name in _PROVENANCE_FIELDS}  # to_dict(), without the recursion
        prov_dict["notebook"] = staged.relative(prov.notebook, self.root)
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
                {**e.to_dict(), "notebook": staged.relative(e.notebook, self.root)} for e in self._resolve_evidence(evidence)
            ],
        }
        if private:
            payload["private"] = True
        return payload

    def _author(self) -> str | None:
        who = share.identity(self.root)
        return str(who) if who else None

    def _english(self, text: str) -> tuple[str, str | None]:
        """(statement to store, original words or None) under the language policy (SPEC 6)."""
        return translate.english(text, self.settings, self.translator)

    def _resolve_evidence(self, evidence: Iterable[str | Evidence]) -> list[Evidence]:
        out: dict[str, Evidence] = {}
        for e in evidence or ():
            item = e if isinstance(e, Evidence) else self.evidence(str(e))
            out[item.handle] = capture.clean_evidence(item)
        return list(out.values())
