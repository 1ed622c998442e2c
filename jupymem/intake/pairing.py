"""Failure -> fix: a failed cell paired with the later run that fixed it (SPEC 3).

The most valuable lessons in a notebook are written by the notebook itself: a
cell fails, the person edits it, it runs. ``Pairing`` is one kernel session's
list of failures still waiting for their fix; the post-run hook tells it about
every failure and, only while something waits, every success.

* By cell id where the front end sends one (JupyterLab): one dict lookup.
* Where it sends none (terminal IPython, nbclient): the most recent waiting
  failure, among the ``CANDIDATES`` newest, whose source the successful cell
  closely edits (``similarity`` >= ``THRESHOLD``, chosen by measurement on the
  suite in tests/fix_pairs.py; benchmarks/bench_pairing.py sweeps it).
* A cell that fails again continues the chain (failure, failure, fix): the
  earlier failure names the next one, and the fix goes to every failure of the
  chain, each diffed against its own source.

A pair gives the failure a ``Fix`` (the fixing source, a compact redacted diff,
where and when) and a one-sentence ``suggestion`` built from the pair: what
raised, and what the edit changed. A suggestion is never a memory until a
person keeps it.

Stdlib only at import: the kernel imports this on its first failure. rapidfuzz
is imported on the first comparison of two sources (a success without a cell
id while something waits), never when the extension loads.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..models import Evidence, Fix
from .capture import excerpt, redact
from .clock import now_at
from .text import unify_newlines

__all__ = [
    "THRESHOLD",
    "CANDIDATES",
    "Pairing",
    "similarity",
    "compact_diff",
    "make_fix",
    "suggest",
    "error_phrase",
    "to_prompt",
]

# Chosen on tests/fix_pairs.py's SESSION (benchmarks/bench_pairing.py prints the sweep):
# there the closest unrelated success scores 0.74 (a look at part of the failed
# expression) and the weakest direct fix 0.80 (an alias import); 0.77 is midway.
THRESHOLD = 0.77
CANDIDATES = 4  # waiting failures without a cell id that a success is compared with
HORIZON = 40  # cells run after which a failure without a cell id stops waiting
LIMIT = 64  # waiting failures with a cell id (the session window's size)
MAX_CHAIN = 8  # failures of one cell that receive its fix; older ones keep only their link

MAX_COMPARE_CHARS = 4000  # of each source, for similarity and diff: cells can be huge
MAX_DIFF_LINES = 24
MAX_DIFF_BYTES = 1024
CODE_CHARS = 80  # a line of code quoted in a suggestion

_ELLIPSIS = "…"

# -- similarity ------------------------------------------------------------------------

_lcs: Callable[..., float] | None = None


def _lcs_length() -> Callable[..., float]:
    global _lcs
    if _lcs is None:
        from rapidfuzz.distance import LCSseq  # here, not at import: %load_ext must not pay for it

        _lcs = LCSseq.similarity
    return _lcs


def similarity(failed: str, success: str) -> float:
    """How closely ``success`` edits ``failed``, from 0 to 1.

    From the longest common subsequence L of the two sources (characters): the
    edit similarity 2L / (|failed| + |success|), and, when the success is longer
    (an edit that adds code: a missing import, a filter wrapped around an
    expression), how much of the failed cell it keeps, L / |failed|, discounted
    by how much it adds (at most 1.6 L / |success|). A success more than three
    times as long is not an edit of it. A shorter success gets no such credit:
    looking at part of the failed expression (``arr.shape``) is not a fix.
    """
    a, b = failed.strip(), success.strip()
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    common = _lcs_length()(a, b)
    whole = 2.0 * common / (len(a) + len(b))
    if len(b) <= len(a) or len(b) > 3 * len(a):
        return whole
    return max(whole, min(common / len(a), 1.6 * common / len(b)))


_similarity = similarity  # the default, under a name the constructor's parameter does not hide


# -- the session's waiting failures -------------------------------------------------------


@dataclass
class _Waiting:
    evidence: Evidence
    source: str
    line: int | None  # the line that raised, 1-based, when known
    tick: int
    chain: tuple[tuple[Evidence, str, int | None], ...] = ()  # earlier failures of the same cell


class Pairing:
    """One kernel session's failures waiting for the run that fixes them.

    ``failed`` and ``succeeded`` return the evidence they changed, for the caller
    to store. ``waiting`` is read by the post-run hook on every successful cell,
    so it is a plain attribute: False means a success costs nothing more.
    """

    def __init__(
        self,
        threshold: float = THRESHOLD,
        *,
        candidates: int = CANDIDATES,
        horizon: int = HORIZON,
        similarity: Callable[[str, str], float] | None = None,
    ):
        self.threshold = threshold
        self.candidates = candidates
        self.horizon = horizon
        self.similarity = similarity or _similarity
        self.waiting = False
        self._by_cell: dict[str, _Waiting] = {}
        self._loose: list[_Waiting] = []  # without a cell id, newest first
        self._tick = 0
        self._last_ok: tuple[int, str] | None = None  # the last success while something waited

    def failed(self, evidence: Evidence, source: str, line: int | None = None) -> Evidence | None:
        """``evidence`` starts waiting for its fix. When it is the same cell failing
        again, the earlier failure is returned with ``next_failure`` set."""
        self._tick += 1
        source = source[:MAX_COMPARE_CHARS]
        found = self._take(evidence.cell_id, source)
        earlier: Evidence | None = None
        chain: tuple[tuple[Evidence, str, int | None], ...] = ()
        if found is not None:
            prev = found[0]
            earlier = replace(prev.evidence, next_failure=evidence.handle)
            # Bounded: a cell failing over and over must not cost more each time.
            chain = (*prev.chain, (earlier, prev.source, prev.line))[-(MAX_CHAIN - 1):]
        entry = _Waiting(evidence, source, line, self._tick, chain)
        if evidence.cell_id is not None:
            self._by_cell[evidence.cell_id] = entry
            if len(self._by_cell) > LIMIT:
                del self._by_cell[next(iter(self._by_cell))]  # the oldest
        else:
            self._loose.insert(0, entry)
            del self._loose[self.candidates :]
        self.waiting = True
        return earlier

    def succeeded(self, source: str, cell_id: str | None, execution_count: int | None) -> list[Evidence]:
        """A cell ran without error. Returns the failures it fixed (newest first, the
        whole chain), each with its ``fix`` and ``suggestion``; usually none."""
        self._tick += 1
        found = self._take(cell_id, source[:MAX_COMPARE_CHARS])
        if found is None:
            self._last_ok = (self._tick, source)
            return []
        entry, paired_by = found
        self.waiting = bool(self._by_cell or self._loose)
        after = None
        if self._last_ok is not None and self._last_ok[0] > entry.tick:
            after = _code(_first_line(self._last_ok[1]))
        at = now_at()
        out = []
        for ev, failed_source, line in (*entry.chain, (entry.evidence, entry.source, entry.line)):
            fix = make_fix(
                failed_source, source, at=at, execution_count=execution_count, cell_id=cell_id,
                paired_by=paired_by, after=after,
            )
            lesson = suggest(ev, failed_source, source, fix, line)
            out.append(replace(ev, fix=fix, suggestion=lesson, suggested_by="pair"))
        return out[::-1]

    def _take(self, cell_id: str | None, source: str) -> tuple[_Waiting, str] | None:
        """The waiting failure this source continues (and how it was found), removed."""
        if cell_id is not None:
            entry = self._by_cell.pop(cell_id, None)
            return (entry, "cell id") if entry is not None else None
        if not self._loose:
            return None
        oldest = self._tick - self.horizon
        for i, entry in enumerate(self._loose):
            if entry.tick < oldest:
                del self._loose[i:]  # newest first: the rest are older still
                self.waiting = bool(self._by_cell or self._loose)
                return None
            score = self.similarity(entry.source, source)
            if score >= self.threshold:
                del self._loose[i]
                return entry, f"similarity {score:.2f}"
        return None


# -- the fix and its diff -----------------------------------------------------------------


def _lines(source: str) -> list[str]:
    text = unify_newlines(source[:MAX_COMPARE_CHARS])
    return [line.rstrip() for line in text.strip("\n").split("\n")]


def compact_diff(before: str, after: str) -> str:
    """A unified diff of two cells with one line of context and no file header
    (nor hunk header when there is a single hunk); redacted, then capped at
    ``MAX_DIFF_LINES`` lines and ``MAX_DIFF_BYTES`` bytes. "" when nothing changed."""
    lines = list(difflib.unified_diff(_lines(before), _lines(after), lineterm="", n=1))[2:]
    if sum(line.startswith("@@") for line in lines) == 1:
        lines = [line for line in lines if not line.startswith("@@")]
    text = redact("\n".join(lines))  # before clipping, so a cut never hides half a secret
    kept: list[str] = []
    size = 0
    for line in text.split("\n") if text else []:
        size += len(line.encode("utf-8")) + 1
        if len(kept) == MAX_DIFF_LINES or size > MAX_DIFF_BYTES:
            kept.append(_ELLIPSIS)
            break
        kept.append(line)
    return "\n".join(kept)


def make_fix(
    failed_source: str,
    source: str,
    *,
    at: str | None = None,
    execution_count: int | None = None,
    cell_id: str | None = None,
    paired_by: str = "cell id",
    after: str | None = None,
) -> Fix:
    """The ``Fix`` of a failure whose cell ``source`` later ran without error."""
    diff = compact_diff(failed_source, source)
    return Fix(
        source=excerpt(source, None),
        diff=diff,
        at=at or now_at(),
        execution_count=execution_count,
        cell_id=cell_id,
        paired_by=paired_by,
        after=redact(after) if after and not diff else None,
    )


# -- the suggested lesson -----------------------------------------------------------------

_QUOTED = re.compile(r"'([^']{2,})'|\"([^\"]{2,})\"")


def error_phrase(ev: Evidence) -> str:
    """``KeyError 'custid'`` or ``NameError: name 'np' is not defined``."""
    head = ev.diagnosis[0] if ev.diagnosis else ""
    prefix = f"{ev.ename}: "
    message = head[len(prefix):] if head.startswith(prefix) else (ev.evalue.split("\n", 1)[0] if ev.evalue else "")
    message = _clip(" ".join(message.split()), 120)
    if not message:
        return ev.ename
    return f"{ev.ename} {message}" if " " not in message else f"{ev.ename}: {message}"


@dataclass(frozen=True)
class _Change:
    kind: str  # "replace", "insert" or "delete"
    old: str | None
    new: str | None
    old_index: int | None


def _changes(before: Sequence[str], after: Sequence[str]) -> list[_Change]:
    out: list[_Change] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        olds = [(i, before[i]) for i in range(i1, i2) if before[i].strip()]
        news = [after[j] for j in range(j1, j2) if after[j].strip()]
        for k in range(max(len(olds), len(news))):
            old = olds[k] if k < len(olds) else None
            new = news[k] if k < len(news) else None
            kind = "replace" if old and new is not None else ("delete" if old else "insert")
            out.append(_Change(kind, old[1] if old else None, new, old[0] if old else None))
    return out


def _is_assert(line: str | None) -> bool:
    return (line or "").lstrip().startswith("assert ")


def _main_change(changes: list[_Change], line: int | None, names: set[str]) -> _Change:
    """The change a lesson should name: at the line that raised, else one that
    touches a name from the error message, else an edit, else the first.

    An ``assert`` that raised states what should hold; when the fix also changed
    other lines, the lesson is in how the value was computed, not in the check.
    """
    if line is not None:
        for c in changes:
            if c.old_index == line - 1:
                if _is_assert(c.old) and len(changes) > 1:
                    others = [o for o in changes if o is not c and not _is_assert(o.old or o.new)]
                    if others:
                        return others[0]
                return c
    for c in changes:
        if c.old and any(n in c.old for n in names):
            return c
    for c in changes:
        if c.kind == "replace":
            return c
    return changes[0]


def suggest(
    ev: Evidence, failed_source: str, fixed_source: str, fix: Fix | None = None, line: int | None = None
) -> str:
    """A one-sentence lesson from a pair, naming what raised and what the edit changed:
    "`sales["custid"]` raised KeyError 'custid'; the fix used `sales["customer_id"]`."

    ``line`` is the failed cell's line that raised (1-based) when known. Redacted.
    """
    before, after = _lines(failed_source), _lines(fixed_source)
    error = error_phrase(ev)
    names = {a or b for a, b in _QUOTED.findall(" ".join(ev.diagnosis) or ev.evalue)}
    raising = _raising(before, line, names)
    changes = _changes(before, after)
    if not changes:
        where = f" in [{fix.execution_count}]" if fix is not None and fix.execution_count is not None else ""
        cause = f" after `{fix.after}` ran" if fix is not None and fix.after else ", so the cause was outside the cell"
        return redact(f"`{_code(raising)}` raised {error}; it ran unchanged{where}{cause}.")
    main = _main_change(changes, line, names)
    more = len(changes) - 1
    tail = f" (and {more} more changed line{'s' if more != 1 else ''})" if more else ""
    if main.kind == "replace":
        old, new = _focus(main.old or "", main.new or "")
        known = line is not None and 0 < line <= len(before) and before[line - 1].strip() == raising.strip()
        if known and raising.strip() != (main.old or "").strip():
            # The line that raised is not the one the fix edited: say both.
            text = f"`{_code(raising)}` raised {error}; the fix changed `{old}` to `{new}`{tail}."
        else:
            text = f"`{old}` raised {error}; the fix used `{new}`{tail}."
    elif main.kind == "insert":
        text = f"`{_code(raising)}` raised {error}; the fix added `{_code(main.new or '')}`{tail}."
    else:
        old = _code(main.old or "")
        if (main.old or "").strip() == raising.strip():
            text = f"`{old}` raised {error}; the fix removed that line{tail}."
        else:
            text = f"`{_code(raising)}` raised {error}; the fix removed `{old}`{tail}."
    return redact(text)


def _raising(lines: Sequence[str], line: int | None, names: set[str]) -> str:
    """The failed cell's line that raised: known, else one naming the error's subject, else the last."""
    if line is not None and 0 < line <= len(lines) and lines[line - 1].strip():
        return lines[line - 1]
    for text in reversed(lines):
        if any(n in text for n in names):
            return text
    return next((text for text in reversed(lines) if text.strip()), "")


def _first_line(source: str) -> str:
    return next((line for line in source.strip().split("\n") if line.strip()), "")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + _ELLIPSIS


def _code(line: str, limit: int = CODE_CHARS) -> str:
    """A line of code as quoted in a sentence: one line, stripped, clipped, no backticks."""
    return _clip(" ".join(line.split()).replace("`", "'"), limit)


def _focus(old: str, new: str, limit: int = CODE_CHARS) -> tuple[str, str]:
    """Two versions of a line, each clipped around where they start to differ."""
    old, new = " ".join(old.split()).replace("`", "'"), " ".join(new.split()).replace("`", "'")
    if len(old) <= limit and len(new) <= limit:
        return old, new
    same = 0
    for x, y in zip(old, new):
        if x != y:
            break
        same += 1
    start = max(0, same - limit // 3)
    if start < 12:  # clipping a few characters off the start only hides what the line is
        start = 0

    def window(text: str) -> str:
        part = text[start : start + limit - 2]
        return (_ELLIPSIS if start else "") + part + (_ELLIPSIS if start + limit - 2 < len(text) else "")

    return window(old), window(new)


def to_prompt(ev: Evidence) -> str:
    """The redacted pair as a model sees it when it writes the suggestion (``llm.suggest_lesson``)."""
    parts = ["Error:", "\n".join(ev.diagnosis) or f"{ev.ename}: {ev.evalue}", "", "Failed cell (its end):", ev.excerpt]
    fix = ev.fix
    if fix is not None:
        where = f" in [{fix.execution_count}]" if fix.execution_count is not None else ""
        if fix.diff:
            parts += ["", f"The edit that made it run{where} (unified diff, failed -> fixed):", fix.diff]
        else:
            parts += ["", f"It ran unchanged{where}" + (f", after this cell ran: {fix.after}" if fix.after else ".")]
    if ev.suggestion:
        parts += ["", "A plain draft of the lesson:", ev.suggestion]
    return "\n".join(parts)
