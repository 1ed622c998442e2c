"""Who a memory belongs to when several writers' files record it: a line speaks only for its writer.

A memory's id derives from its words (``original`` when the statement was translated),
so two files can record the same id: two people said the same thing, or one file
claims another person's memory (Alice's exact words with other words as the statement,
as a note, in other case, with a fabricated failure). One writer owns the memory: its
words, kind, author and evidence come from the owner's record, and a record of the id
in another writer's file changes nothing (the projection keeps it in the memory's
history only, ``projection._upsert``). Only a supersede, retire or confirm acts on
another writer's memory, and history names who did.

The owner is the writer who recorded the id *first*, and ``at`` cannot say what was
first: a writer sets it (a line dated 2025 in a file pushed today). What a writer
cannot forge relative to the others is the repository's history: a commit made after
pulling Alice's commit descends from it. So the owner is the claimant whose line
entered the history in a commit that is an ancestor of every other claimant's (a line
not committed yet comes after every committed one). Where git cannot order them (no
git, concurrent branches, none committed) and they differ, the file that owned the id on
this clone before keeps it (``owners``' ``seen``). A clone that sees them all at once (a
new clone) has nothing a claimant cannot steer but what the lines say, so it reads that
(``_unordered``): a record in its own words before one that takes the id through
``original``, the more binding kind, the fewer failures cited; (time, uid) only between
records that say the same. Either way the other files' lines are named by ``verify``
when they differ from the owner's (other words, another kind, failures it does not
cite), on every clone, because every clone reads the same files and the same history.

git is asked only about ids that two files record, which few repositories ever hold.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..storage.eventlog import PRIVATE, SHARED, LogItem, canonical
from . import gitcall, history, sharelog
from .folder import FOLDER, LOG_DIR
from .sharelog import Entry, Problem, Reading

__all__ = ["Claim", "contested", "git_order", "memory_of", "owners", "problems", "replay_order", "rewritten"]

_GIT_TIMEOUT = 20


@dataclass(frozen=True)
class Claim:
    """A file's first record of a memory id (a record, or the new memory of a supersede)."""

    file: str
    entry: Entry

    @property
    def memory(self) -> dict[str, Any]:
        return self.entry.payload["memory"]

    def says(self) -> tuple[Any, ...]:
        """What must agree for two records to be one memory: the words, case and all (a
        final full stop or a curly quote aside, as two people type the same sentence), the
        kind, the standing, the topic, who recorded it (a person or an assistant), the
        words as said (``provenance.quote``) and every failure cited, whole. Not who wrote
        it, when, or from which notebook: two people who said the same thing are one memory."""
        return (*self._words_kind(), *self._rest())

    def _words_kind(self) -> tuple[Any, ...]:
        from ..intake.capture import fold_quote  # only for an id two files record

        m = self.memory
        words = [fold_quote(w).rstrip(". \t\n") if isinstance(w, str) else w for w in (m.get("statement"),
                                                                                        m.get("original"))]
        return (*words, m.get("kind"))

    def _rest(self) -> tuple[Any, ...]:
        m = self.memory
        provenance = m.get("provenance")
        recorder = provenance.get("recorder") if isinstance(provenance, dict) else None
        quote = provenance.get("quote") if isinstance(provenance, dict) else None
        return (m.get("standing"), m.get("topic"), recorder, quote, self.cited())

    def cited(self) -> frozenset[bytes]:
        """The failures the record cites, each whole (its canonical JSON): a failure of the
        same handle with other contents is another failure."""
        return frozenset(canonical(e) for e in self.memory.get("evidence") or () if isinstance(e, dict))


def memory_of(type_: str, payload: dict[str, Any] | None) -> dict[str, Any] | None:
    """The memory a record or supersede event records, or None."""
    m = (payload or {}).get("memory") if type_ in ("record", "supersede") else None
    return m if isinstance(m, dict) else None


def _founds(e: Entry) -> str | None:
    m = memory_of(e.type, e.payload)
    return m["id"] if m is not None else None


def contested(readings: dict[str, Reading]) -> dict[str, list[Claim]]:
    """Memory id -> each file's first record of it (in (time, uid) order within the
    file), for ids that more than one file records."""
    firsts: dict[str, dict[str, Claim]] = {}
    for name in sorted(readings):
        for e in sorted(readings[name].entries, key=lambda x: x.key):
            mid = _founds(e)
            if mid is not None:
                firsts.setdefault(mid, {}).setdefault(name, Claim(name, e))
    return {mid: list(by_file.values()) for mid, by_file in firsts.items() if len(by_file) > 1}


# Given the claims of one id: their order in the repository's history, earliest first,
# or None where it cannot tell which came first.
Order = Callable[[list[Claim]], Claim | None]


# git processes one read may start to order claims. A teammate who commits copies of a
# contested line again and again (each commit adds it once more) would otherwise start one
# per pair of adding commits at every rebuild: thousands, tens of seconds per read.
_ANCESTRY_BUDGET = 128


class _OverBudget(Exception):
    pass


def git_order(root: Path) -> Order:
    """The claim whose line entered ``root``'s git history before every other's, or None.

    git is asked once per file (``introduced``) and once per pair of commits, whatever
    the number of claims: a teammate's file recording hundreds of ids that another file
    records too would otherwise start two git processes per id at every rebuild."""
    by_file: dict[str, dict[str, list[str]] | None] = {}
    ancestry: dict[tuple[str, str], bool] = {}

    def introduced(c: Claim) -> list[str] | None:
        if c.file not in by_file:
            by_file[c.file] = _adding_commits(root, f"{FOLDER}/{LOG_DIR}/{c.file}")
        commits = by_file[c.file]
        return None if commits is None else commits.get(c.entry.hash, [])

    def before(a: str, b: str) -> bool:
        if (a, b) not in ancestry:
            if len(ancestry) >= _ANCESTRY_BUDGET:
                raise _OverBudget
            ancestry[(a, b)] = _is_ancestor(root, a, b)
        return ancestry[(a, b)]

    def first(claims: list[Claim]) -> Claim | None:
        # Every commit that added each claim's line: a copy of Alice's file committed on a
        # branch cut before her commit, and merged, adds her line a second time. A claim
        # is first when one commit that added it is an ancestor of every commit that added
        # each other claim; two claims added in one commit have no order.
        found = [(c, introduced(c)) for c in claims]
        if any(hs is None for _, hs in found):
            return None  # git did not answer for one of them (a timeout): no order, not "uncommitted"
        committed = [(c, hs) for c, hs in found if hs]
        try:
            for c, hs in committed:
                others = [hs2 for c2, hs2 in committed if c2 is not c]
                for h in hs:
                    if all(h not in hs2 and all(before(h, h2) for h2 in hs2) for hs2 in others):
                        return c
        except _OverBudget:
            return None  # as where git cannot order them: the owner seen before, or what the lines say
        return None

    return first


def _adding_commits(root: Path, path: str) -> dict[str, list[str]] | None:
    """Line hash -> every commit that added a line carrying it to ``path``, in git's
    topological order: one ``git log -p --full-history`` of the file (without
    ``--full-history``, git follows one parent of a merge whose copy of the file is the
    same as the merge's, and a commit on the other side drops out of the file's history).
    A line counts by its own hash, and only where that hash holds (not its uid, which the
    writer chooses: a uid planted in an earlier commit would date a claim before the words
    it claims were ever written; nor a hash merely quoted by a junk line). None where git
    did not answer."""
    out = gitcall.output(root, "log", "--full-history", "--topo-order", "--reverse", "--format=commit %H", "-p",
                         "--cc", "--text", "--unified=0", "--no-color", "--no-ext-diff", "--no-textconv", "--", path,
                         timeout=_GIT_TIMEOUT)
    if out is None:
        return None
    found: dict[str, list[str]] = {}
    commit, columns = None, 1
    for line in out.split(b"\n"):
        if line.startswith(b"commit ") and len(line) == 47:
            commit = line[7:].decode("ascii", "replace")
        elif line.startswith(b"@@"):
            # A merge's combined diff (``--cc``: a line put in while resolving it, as a
            # conflicted pull concluded with ``git add``) has a column per parent.
            columns = len(line) - len(line.lstrip(b"@")) - 1
        elif commit and line.startswith(b"+" * columns):
            # A header ("+++ b/...") is no line whose hash holds; an octopus merge's line
            # starts with as many "+" (one per parent).
            h = sharelog.verified_hash(history.as_written(line[columns:]))
            if h is not None:
                commits = found.setdefault(h, [])
                if commit not in commits:
                    commits.append(commit)
    return found


def _git(root: Path, *args: str) -> str | None:
    out = gitcall.output(root, *args, timeout=_GIT_TIMEOUT)
    return out.decode("utf-8", "replace") if out is not None else None


def _is_ancestor(root: Path, a: str, b: str) -> bool:
    done = gitcall.call(root, "merge-base", "--is-ancestor", a, b, timeout=_GIT_TIMEOUT)
    return done is not None and done.returncode == 0


SHALLOW = ("this is a shallow clone: git holds too little history to tell which of two files recording one "
           "memory recorded it first, so time decides here, which a writer sets; `git fetch --unshallow` gives "
           "the history")


def shallow(root: Path) -> bool:
    """Whether ``root`` is a shallow clone (``--depth``: the usual CI checkout)."""
    return (_git(root, "rev-parse", "--is-shallow-repository") or "").strip() == "true"


def owners(claims: dict[str, list[Claim]], order: Order | None,
           seen: dict[str, str | None] | None = None) -> dict[str, Claim]:
    """Memory id -> the claim that owns it (see the module docstring). ``seen``: memory id
    -> the file that owned it on this clone before this read. Where git cannot order the
    claims, that file keeps it: a teammate who reads Alice's words, commits a claim on a
    branch cut from before her commit and merges it has made the two concurrent, and his
    line's time is his to choose. A clone that sees both at once (a new one) reads what
    they say (``_unordered``)."""
    out = {}
    for mid, cs in claims.items():
        found = order(cs) if order is not None else None
        if found is None and seen and _differ(cs):
            found = next((c for c in cs if c.file == seen.get(mid)), None)
        out[mid] = found if found is not None else min(cs, key=_unordered)
    return out


def _unordered(c: Claim) -> tuple[Any, ...]:
    """Which of claims that git cannot order owns their id on a clone that never saw one
    own it, least first. The claimant sets time, uid, file name and every commit on his
    branch; what he cannot set is what the first writer's line says, and a copy of it can
    only add to or move away from it. So: a record whose statement is its own words (no
    ``original``, or the same words) before one that takes the id through ``original``
    with other words (Mallory's words over Alice's id); then the more binding kind (her
    constraint copied as a note is not demoted; the most he gets is her note shown as a
    constraint, in her words); then supported before unconfirmed, and a person's record
    before an assistant's (hers is not demoted to an unconfirmed guess); then the fewer
    failures cited (a fabricated failure is not attached; the most he gets is hers not
    shown); (time, uid) between records that say the same, so that every clone shows the
    same one."""
    from ..intake.capture import fold_quote  # only for an id two files record
    from ..models import kind_rank

    m = c.memory
    statement, original = m.get("statement"), m.get("original")

    def fold(w: Any) -> Any:
        return fold_quote(w).rstrip(". \t\n").casefold() if isinstance(w, str) else w

    own_words = not original or fold(original) == fold(statement)
    kind = m.get("kind")
    standing, _, recorder, _, cited = c._rest()
    # Her words in another form (full-width letters, ligatures) fold to the same id: the
    # form a keyboard types (NFKC) before it, since whoever copies them can only move away.
    odd_form = isinstance(statement, str) and unicodedata.normalize("NFKC", statement) != statement
    return (not own_words, kind_rank(kind if isinstance(kind, str) else ""), standing != "supported",
            recorder != "person", len(cited), odd_form, c.entry.key)


def _differ(cs: list[Claim]) -> bool:
    """Whether the claims say different things (``Claim.says``): two people who said the
    same thing are one memory whoever owns it, and every clone must agree on which record
    shows, so (time, uid) decides between them (its author and notebook with it)."""
    return len({c.says() for c in cs}) > 1


def rewritten(reading: Reading, tainted: set[str]) -> None:
    """In a file that a commit rewrote, the lines its writer committed stand.

    * A line that a commit put in while taking lines of the file out (``tainted``, by
      hash; ``history``) is not its writer's, who only appends: dropped and named.
    * A line that records a memory which a line taken out of the file (read back from
      history, numbered below 1) recorded, with other words, kind or failures, is dropped
      and named: a cut, then a re-chained append in another commit, would otherwise found
      the memory before her own line (her constraint as a note, under a new uid or an
      earlier time), as replay in (time, uid) order has it."""
    taken = {m["id"]: Claim(reading.file, e) for e in reading.entries
             if e.line < 0 and (m := memory_of(e.type, e.payload)) is not None}
    kept = []
    for e in reading.entries:
        if e.hash in tainted:
            reading.problems.append(Problem(reading.file, e.line, (
                "was put in this writer's file by a commit that took some of its committed lines out (a rewrite; "
                "`jupymem verify` names the commit), so it is not its writer's")))
            continue
        m = memory_of(e.type, e.payload) if e.line > 0 else None
        first = taken.get(m["id"]) if m is not None else None
        if first is not None and _differ([first, Claim(reading.file, e)]):
            reading.problems.append(Problem(reading.file, e.line, (
                f"records memory {first.memory['id']} with other words, kind or failures than its writer's own "
                "line, which a commit took out (read back from git's history): that line stands")))
            continue
        kept.append(e)
    reading.entries[:] = kept


def problems(claims: dict[str, list[Claim]], owned: dict[str, Claim]) -> list[Problem]:
    """The lines that record another writer's memory with other words, another kind, or
    failures the owner's record does not cite: kept in its history, applied to nothing."""
    out = []
    for mid, cs in claims.items():
        owner = owned[mid]
        where = f"{owner.entry.who}'s record"  # a person, not a file: the problem is this file's line
        for c in cs:
            if c is owner or c.says() == owner.says():
                continue  # the same thing said: a teammate said it too
            if c._words_kind() != owner._words_kind():
                what = "with other words or another kind than"
            elif c.cited() != owner.cited():
                what = "citing failures that are not, or not as they are, in"
            else:
                what = "with another standing, topic, recorder or quote than"
            out.append(Problem(c.file, c.entry.line, (
                f"records memory {mid} {what} {where}, which owns it: a line speaks only for its "
                "writer, so it is kept in that memory's history and changes nothing"), applied=True))
    return out


def replay_order(owned: dict[str, Claim], items: Iterable[LogItem] = ()) -> Callable[[LogItem], tuple[Any, ...]]:
    """Replay in (time, uid) order, except that a record of an id whose owner is another
    file (``claims``) comes just after the owner's record, whatever time it claims: it
    never founds the memory, so the projection keeps it in history only. Likewise a
    shared record of an id that this machine recorded privately (among ``items``),
    whatever writer it names: a teammate's line dated before it would
    otherwise found the memory with the teammate's words and no private flag, and the
    author's next supersede of it would be written to the files."""
    first = {mid: (c.file, c.entry.at, c.entry.uid) for mid, c in owned.items()}
    private: dict[str, tuple[str, str, str | None]] = {}
    for i in items:
        m = memory_of(i[1], i[3])
        if m is not None and i[6] == PRIVATE and (i[2], i[0]) < private.get(m["id"], ("\uffff", "", None))[:2]:
            private[m["id"]] = (i[2], i[0], i[8])

    def key(i: LogItem) -> tuple[Any, ...]:
        m = memory_of(i[1], i[3])
        if m is None or i[6] != SHARED:
            return (i[2], i[0], 0, "", "")
        owner = first.get(m["id"])
        if owner is not None and i[7] != owner[0] and (i[2], i[0]) < owner[1:]:
            return (owner[1], owner[2], 1, i[2], i[0])
        mine = private.get(m["id"])
        if mine is not None and (i[2], i[0]) < mine[:2]:
            return (mine[0], mine[1], 1, i[2], i[0])
        return (i[2], i[0], 0, "", "")

    return key
