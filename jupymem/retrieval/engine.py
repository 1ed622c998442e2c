"""One project's search engine: the state retrieval keeps between searches, out of ``Project``.

``retrieve`` ranks with whatever legs it is handed; this object owns them and knows which
can answer now: the lexical leg's in-memory index (``postings``), the names typos are
fixed against (``fuzzy``), the dense leg's encoders and per-tier indexes (``tiers``, which
loads and backfills them in the background), and two per-revision counts every search
needs (how many memories, which rows a default search leaves out). ``Project`` owns one
and delegates its searches, near-duplicate checks and lessons to it; ``reset`` after a
rebuild drops everything computed from row ids.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import InvalidStatement
from ..models import Memory, SearchResult, Similar
from ..storage import database
from ..storage.reads import Store, store_for
from .tokenize import encodable

if TYPE_CHECKING:
    from ..reports import DenseStatus
    from . import retrieve
    from .fuzzy import Vocabulary
    from .postings import Postings
    from .tiers import Tiers

# What ``applicable`` hands over: the kinds of memory that say how to do a task right (every
# kind but facts and notes: a preference or a decision shapes code as a constraint does,
# "every chart uses the colorblind palette", "model log1p(sale_price)"; two of the outcome
# benchmark's fit cases were missed for their kind alone), and how far above a request's
# dense background one must be (benchmarks/bench_lessons.py).
LESSON_KINDS = frozenset({"correction", "constraint", "preference", "decision", "procedure", "failure"})
LESSON_MARGIN = 0.15
# Which of them: the LESSON_POOL nearest by meaning, reordered by reciprocal rank with the
# lexical leg's order of lessons (``retrieve.nearest_of_kinds``). MiniLM put a lesson that
# shares the request's rarer words ("weather" in both) behind several that only sound
# alike. Chosen on fit suites only (the outcome benchmark's fit cases, bench_lessons.py,
# lessons-fit2.gold.jsonl): 62 lessons delivered of 86 instead of 60, as many handed to
# unrelated requests; held out, the outcome benchmark's contexts carry 19 of 24, not 17
# (README, issue 34).
LESSON_POOL = 12
LESSON_RANK_K = 3.0
LESSON_LEXICAL = 30  # the lexical leg's first this many lessons have a rank
# ... among its first this many memories (the kinds filter follows BM25): 100 lost a fit
# lesson; 200 delivers what 400 does, for 1.5 ms a request at 10,000 memories, not 2.1.
LESSON_DEPTH = 200


class SearchEngine:
    """The legs of one project's searches, made on first use. ``revision`` is the
    project's (a callable: the engine asks it before each search). Thread-safe."""

    def __init__(self, conn: database.Connection, settings: Settings, revision: Callable[[], int]):
        self.conn = conn
        # What every leg reads memory through (storage/reads.py): no SQL here.
        self.store: Store = store_for(conn)
        self.settings = settings
        self.revision = revision
        self._lock = threading.Lock()
        self._tiers: Tiers | None = None
        self._vocab: Vocabulary | None = None
        self._postings: Postings | None = None
        self._ndocs_cache: tuple[int, int] | None = None
        self._inactive_cache: tuple[int, frozenset[int]] | None = None
        self._lexical_rev: int | None = None  # the revision the in-process lexical index was caught up to

    # -- per-revision counts ---------------------------------------------------

    def n_docs(self, rev: int) -> int:
        """How many memories there are at ``rev`` (BM25's N)."""
        cached = self._ndocs_cache
        if cached and cached[0] == rev:
            return cached[1]
        n = self.store.count()
        self._ndocs_cache = (rev, n)
        return n

    def inactive(self, rev: int) -> frozenset[int]:
        """The rows a default search leaves out (superseded, retired), per revision: a
        search's candidates are then admitted without reading their rows (0.5 ms a hybrid
        search at 100,000 memories). Few, and found through the status index."""
        cached = self._inactive_cache
        if cached and cached[0] == rev:
            return cached[1]
        got = frozenset(self.store.closed_rids())
        self._inactive_cache = (rev, got)
        return got

    # -- searching -------------------------------------------------------------

    def search(
        self, query: str, limit: int, *, include_inactive: bool, kinds: Sequence[str] | None, mode: str
    ) -> SearchResult:
        """``verdict.search`` with every leg that can answer now (``Project.search``)."""
        from . import verdict

        query = encodable(query)
        legs = self.legs(mode, kinds)
        return verdict.search(
            self.store, query, limit=limit, include_inactive=include_inactive,
            kinds=_kinds(kinds), mode=mode, **legs,
        )

    def explain(
        self, query: str, count: int, *, include_inactive: bool, kinds: Sequence[str] | None, mode: str
    ) -> retrieve.Ranking:
        """The ranking behind ``search``, the first ``count`` judged (``Project.explain``)."""
        from . import retrieve, verdict

        query = encodable(query)
        legs = self.legs(mode, kinds)
        ranking = retrieve.rank(
            self.store, query, mode=mode, include_inactive=include_inactive, kinds=_kinds(kinds),
            depth=max(count, 40), **legs,
        )
        if ranking.legs not in (("fts",), ("dense",)):  # as ``search`` orders them
            retrieve.give_way(self.store, ranking.candidates, count)
            retrieve.share_head(self.store, ranking.candidates, count)
        verdict.judge(self.store, ranking, count)
        return ranking

    def legs(self, mode: str, kinds: Sequence[str] | None) -> dict[str, Any]:
        """What ``retrieve`` needs to run every leg that can answer now. Raises
        ``InvalidStatement`` for an unknown kind or mode."""
        from . import retrieve
        from ..storage import validate

        for k in _kinds(kinds) or ():
            validate.check_kind(k)
        if mode not in retrieve.MODES:
            raise InvalidStatement(f"Unknown search mode {mode!r}; use one of: {', '.join(retrieve.MODES)}.")
        rev = self.revision()  # once a search: on PostgreSQL each read is a round trip
        vocab, postings = self._lexical()
        if not self.native_bm25 and self._lexical_rev != rev:
            # Nothing else could answer: build (or catch up) now, waiting. Memory unchanged
            # since (the same revision), it is still caught up: retrieve's refresh suffices.
            if self.prepare_lexical(rev=rev):
                self._lexical_rev = rev
        dense = self.dense_leg(rev, retrieve.MODE_TIER.get(mode)) if mode in retrieve.DENSE_MODES else None
        return {
            "n_docs": self.n_docs(rev), "dense": dense, "vocab": vocab, "postings": postings,
            "inactive": self.inactive(rev),
        }

    @property
    def native_bm25(self) -> bool:
        """Whether the store ranks by BM25 itself (SQLite's FTS5). A store that does not
        (PostgreSQL's, ``storage/postgres/store.py``) answers through the in-process index only."""
        return bool(getattr(self.store, "native_bm25", True))

    def _lexical(self) -> tuple[Vocabulary, Postings]:
        if self._vocab is None:
            from .fuzzy import Vocabulary

            self._vocab = Vocabulary()
        if self._postings is None:
            from .postings import Postings

            self._postings = Postings()
        return self._vocab, self._postings

    def prepare_lexical(self, timeout: float | None = None, *, rev: int | None = None) -> bool:
        """Build the in-memory lexical index and the typo vocabulary now, waiting. True
        when the index answers. ``rev``: the revision the caller just read (else read here)."""
        vocab, postings = self._lexical()
        if rev is None:
            rev = self.revision()
        if not postings.refresh(self.store, self.n_docs(rev), force=True):
            postings.wait(timeout)
            rev = self.revision()  # it waited: memory may have moved on meanwhile
        if not vocab.refresh(self.store):
            vocab.wait(timeout)
        return postings.refresh(self.store, self.n_docs(rev))

    def similar(self, statement: str, *, exclude: Iterable[str] = (), limit: int = 3) -> list[Similar]:
        """Active memories that ``statement`` nearly repeats, closest first (``similar``)."""
        from . import similar

        found, dense = self._pairs(statement, exclude, closed=False)
        return similar.similar(found, dense, limit)

    def reopens(self, statement: str, *, exclude: Iterable[str] = (), private: bool = False) -> Memory | None:
        """The retired or superseded memory that ``statement`` says again in other words:
        the closest of every memory, active or closed, by ``similar``'s score and
        thresholds, when that one is closed. A statement closest to an active memory
        restates what stands (a superseding one included) and brings nothing back.
        Private memories count only for a ``private`` statement: a shared record's refusal
        must not tell its caller what a private memory said, or that one exists."""
        from . import similar

        found, dense = self._pairs(statement, exclude, closed=None)
        found = [p for p in found if private or not p.candidate.memory.private]
        best = similar.passing(found, dense)[:1]
        return best[0][1].candidate.memory if best and not best[0][1].candidate.memory.active else None

    def _pairs(self, statement: str, exclude: Iterable[str], closed: bool | None) -> tuple[list[Any], Any]:
        from . import similar

        if not isinstance(statement, str):  # nothing is like what is not text
            return [], None
        statement = encodable(statement)
        rev = self.revision()
        dense = self.dense_leg(rev)
        index = None
        if not self.native_bm25:
            _, index = self._lexical()
            if self._lexical_rev != rev and self.prepare_lexical(rev=rev):
                self._lexical_rev = rev
        found = similar.pairs(self.store, statement, n_docs=self.n_docs(rev), dense=dense, exclude=frozenset(exclude),
                              index=index, closed=closed)
        return found, dense

    def applicable(self, prompt: str, *, limit: int = 3, exclude: Iterable[str] = ()) -> list[Memory]:
        """Lessons (``LESSON_KINDS``) nearest ``prompt`` by meaning, at least
        ``LESSON_MARGIN`` above its dense background, whether or not memory answers the
        request: "write the code to merge orders with clients" asks nothing that a memory
        answers, yet "join on customer_id, email repeats" is what the code must get right.
        The ``LESSON_POOL`` nearest are taken in an order that also weighs the lexical leg's
        (``LESSON_RANK_K``). Empty without the dense leg."""
        dense = self.dense_leg(self.revision())
        if dense is None or not isinstance(prompt, str) or not prompt.strip():  # no lesson for what is not text
            return []
        from . import retrieve

        prompt = encodable(prompt)
        skip = set(exclude)
        kinds = tuple(sorted(LESSON_KINDS))
        # Lessons that share the request's words, in BM25's order (the kinds filter follows
        # BM25's first rows, so it looks deep: the in-memory index makes that cheap).
        lexical: dict[int, int] = {}
        if LESSON_LEXICAL:
            legs = self.legs("lexical", None)
            order = retrieve.lexical_order(
                self.store, prompt, n_docs=legs["n_docs"], kinds=kinds, depth=LESSON_DEPTH, vocab=legs["vocab"],
                postings=legs["postings"], inactive=legs["inactive"],
            )
            lexical = {rid: i for i, rid in enumerate(order[:LESSON_LEXICAL])}
        found = retrieve.nearest_of_kinds(
            self.store, prompt, dense, LESSON_KINDS, LESSON_POOL, LESSON_MARGIN,
            lexical=lexical, rank_k=LESSON_RANK_K, exclude=skip,
        )
        return [m for m, _ in found][:limit]

    # -- the dense leg ---------------------------------------------------------

    @property
    def tiers(self) -> Tiers:
        """The dense leg's encoders and indexes (``retrieval.tiers``), made on first use."""
        if self._tiers is None:
            from .tiers import Tiers

            with self._lock:
                if self._tiers is None:
                    self._tiers = Tiers(self.store, self.settings.encoder, interactive=self.settings.interactive)
        return self._tiers

    @property
    def made_tiers(self) -> Tiers | None:
        """The tiers if a search has made them, else None (without making them)."""
        return self._tiers

    def dense_leg(self, rev: int, tier: str | None = None) -> retrieve.DenseLeg | None:
        """The dense leg if it can answer right now (``retrieval.tiers``), of ``tier`` only
        when one is named; never waits for it in a long-lived process, whose first search
        starts the encoders loading."""
        from .retrieve import DenseLeg

        return self.tiers.leg(rev, DenseLeg, only=tier)

    def start(self) -> None:
        """Begin loading the encoders in the background (memory outgrew the block)."""

        self.tiers.start()

    def prepare_dense(self, timeout: float | None = None) -> None:
        """Load the encoders and embed every memory now, waiting."""
        from . import retrieve

        self.tiers.prepare(self.revision, retrieve.DenseLeg, timeout)

    def status(self) -> DenseStatus:
        """Which legs answer searches and, when the dense leg does not, why."""
        # The lexical leg's in-memory index and the names typos are fixed against: a
        # long-lived process builds them on its first searches (FTS5 answers until then).
        return dataclasses.replace(
            self.tiers.status(),
            index=self._postings.state() if self._postings is not None else "not built",
            typos=self._vocab.state() if self._vocab is not None else "not read",
        )

    def reset(self) -> None:
        """Drop what was computed from the tables: a rebuild may have moved every row."""
        self._ndocs_cache = None
        self._inactive_cache = None
        if self._tiers is not None:
            self._tiers.reset()  # row ids may have moved: look at every row again
        self._vocab = None
        self._postings = None  # row ids may have moved
        self._lexical_rev = None


def _kinds(kinds: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """The kinds a search keeps; one kind may be given as a string (``kinds="constraint"``,
    which a tuple of its letters would refuse as "Unknown kind 'c'")."""
    if not kinds:
        return None
    if isinstance(kinds, str):
        return (kinds,)
    if not isinstance(kinds, (list, tuple, set, frozenset)) or not all(isinstance(k, str) for k in kinds):
        raise InvalidStatement(f"kinds must be a kind's name or a list of them, not {type(kinds).__name__}.")
    return tuple(kinds)
