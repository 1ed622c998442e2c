"""Core records -> plain text for a terminal (``*_text``): the text half of ``render``.

Control characters are dropped (``render_common._clean``) so a stored statement can never
drive the terminal (colours, cursor moves). Lists clip long statements (the full text is
in ``show``); the block is never altered: ``block_text`` returns it byte for byte. Each
function has an HTML twin in ``render_html``; they look alike on purpose, one per
audience. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..models import (
    UNCONFIRMED, Block, Evidence, HistoryEntry, Hit, Memory, Recorded, SearchResult, Similar,
)
from .render_common import (
    LINE_CHARS, NOT_CONFIDENT, SAID_CHARS, _clean, _clip, _detail, _grouped, _legs_note, _memory_fields, _one_line,
    _replacement_mark, _status_fields, _verb, author_name, confidence_word, fixed_in, when,
)

if TYPE_CHECKING:
    from ..reports import RepositoryStatus


def _marks(m: Memory) -> list[str]:
    out = []
    if m.standing == UNCONFIRMED:
        out.append("(unconfirmed)")
    if m.private:
        out.append("(private)")
    mark = _replacement_mark(m)
    if mark:
        out.append(mark)
    if m.status != "active":
        out.append(f"[{m.status}]")
    return out


def _fields_text(fields: Sequence[tuple[str, str]]) -> str:
    width = max((len(label) for label, _ in fields), default=0)
    lines = []
    for label, value in fields:
        first, *rest = value.split("\n") or [""]
        lines.append(f"  {label.ljust(width)}  {first}".rstrip())
        lines.extend(f"  {' ' * width}  {line}".rstrip() for line in rest)
    return "\n".join(lines)


def memory_line(m: Memory, width: int = LINE_CHARS) -> str:
    """``m-3f9a2c1d4e5f  decision    (unconfirmed) Use customer_id as the join key``."""
    marks = " ".join(_marks(m))
    statement = _clip(_one_line(m.statement), width)
    return f"{m.id}  {m.kind:<10}  {marks + ' ' if marks else ''}{statement}"


def said_text(m: Memory, verb: str) -> str:
    """One line after a change: ``Remembered m-3f9a2c1d4e5f (decision): Join df_sales…``."""
    marks = " ".join(_marks(m))
    return f"{verb} {m.id} ({m.kind}{' ' + marks if marks else ''}): {_clip(_one_line(m.statement), SAID_CHARS)}"


def similar_text(similar: Sequence[Similar]) -> str:
    """``similar to m-…; supersede it with --supersedes m-…`` (empty when nothing is)."""
    if not similar:
        return ""
    ids = ", ".join(s.id for s in similar)
    return f"similar to {ids}; supersede it with --supersedes {similar[0].id}"


def recorded_text(done: Recorded) -> str:
    """A record in one line: what was kept, and what it nearly repeats (``show`` has the rest)."""
    near = similar_text(done.similar)
    return said_text(done.memory, _verb(done)) + (f" — {near}" if near else "")


def staged_text(e: Evidence) -> str:
    """The one line under a failed cell's traceback."""
    return (
        f"jupymem staged this {_one_line(e.ename)} as {e.handle}: cite it with "
        f"%%remember --evidence {e.handle} (%memory quiet hides this line)"
    )


def _evidence_head(e: Evidence) -> str:
    parts = [e.handle, when(e.created_at), e.ename]
    if e.cell_id:
        parts.append(f"cell {e.cell_id}")
    if e.execution_count is not None:
        parts.append(f"[{e.execution_count}]")
    if e.notebook:
        parts.append(e.notebook)
    return "  ".join(_one_line(p) for p in parts if p)


def _fix_lines(e: Evidence) -> list[str]:
    """What followed a failure: the next failure of the same cell, the fix and its diff,
    the suggested lesson. Empty for a failure nothing has fixed yet."""
    lines = []
    if e.next_failure:
        lines.append(f"failed again as {e.next_failure}")
    fix = e.fix
    if fix is not None:
        if fix.diff:
            lines.append(f"{fixed_in(fix)}:")
            lines.extend(f"  {_clean(line)}" for line in fix.diff.split("\n"))
        else:
            after = f" after `{_one_line(fix.after)}` ran" if fix.after else ""
            lines.append(f"{fixed_in(fix)}: it ran unchanged{after}")
    if e.suggestion:
        lines.append(f"suggested lesson: {_one_line(e.suggestion)}")
    return lines


def memory_text(m: Memory, history: Sequence[HistoryEntry] = ()) -> str:
    """Everything about one memory: full statement, standing, validity, provenance,
    evidence, and (given) its history: who recorded, confirmed, replaced or retired it."""
    marks = " ".join(_marks(m))
    lines = [f"{m.id}  {m.kind}{'  ' + marks if marks else ''}"]
    lines.extend(f"  {line}" for line in _clean(m.statement).split("\n"))
    lines.append("")
    lines.append(_fields_text(_memory_fields(m)))
    if m.evidence:
        lines.append("  evidence")
        for e in m.evidence:
            lines.append(f"    {_evidence_head(e)}")
            lines.extend(f"      {_one_line(d)}" for d in e.diagnosis)
            lines.extend(f"      {line}" for line in _fix_lines(e))
    if history:
        lines.append("  history")
        lines.extend(f"    {when(h.at)}  {h.action}{'  ' + _detail(h) if _detail(h) else ''}" for h in history)
    return "\n".join(lines)


def memories_text(memories: Sequence[Memory], empty: str = "No memories.") -> str:
    """Memories grouped by kind, in block order, one line each."""
    if not memories:
        return empty
    lines = []
    for kind, group in _grouped(memories):
        lines.append(f"{kind} ({len(group)})")
        for m in group:
            marks = " ".join(_marks(m))
            who = author_name(m)
            by = f"  ({_one_line(who)})" if who else ""
            lines.append(f"  {m.id}  {marks + ' ' if marks else ''}{_clip(_one_line(m.statement), LINE_CHARS)}{by}")
    return "\n".join(lines)


def _hit_lines(hits: Sequence[Hit], answered: bool = True) -> list[str]:
    lines = []
    for hit in hits:
        m = hit.memory
        marks = " ".join(_marks(m))
        word = confidence_word(hit.confidence, answered=answered)
        lines.append(
            f"  {m.id}  {m.kind:<10}  {word:<6} {hit.confidence:.2f}  "
            f"{marks + ' ' if marks else ''}{_clip(_one_line(m.statement), LINE_CHARS)}"
        )
    return lines


def search_text(result: SearchResult) -> str:
    if result.abstained:
        if not result.closest:
            return f"No match (abstained): {result.reason or 'nothing matches closely enough'}."
        # A verdict never hides memory from a person: the nearest ones, said to be unsure.
        return "\n".join([f"{NOT_CONFIDENT} Closest memories{_legs_note(result)}:", *_hit_lines(result.closest, answered=False)])
    n = len(result.hits)
    lines = [f"{n} {'match' if n == 1 else 'matches'}{_legs_note(result)}:", *_hit_lines(result.hits)]
    if result.full is not None:
        lines += ["", "Best match:", memory_text(result.full)]
    return "\n".join(lines)


def history_text(entries: Sequence[HistoryEntry]) -> str:
    if not entries:
        return "No history."
    lines = [f"History of {entries[0].memory_id}:"]
    for h in entries:
        detail = _detail(h)
        lines.append(f"  #{h.seq:<5} {when(h.at)}  {h.action:<11}{'  ' + detail if detail else ''}".rstrip())
    return "\n".join(lines)


def evidence_text(items: Sequence[Evidence]) -> str:
    """Staged failures, newest first: handle, when, exception and diagnosis lines, then
    what fixed it (``fixed in [7]:`` and the diff) and the suggested lesson."""
    if not items:
        return "No staged failures."
    lines = []
    for e in items:
        lines.append(_evidence_head(e))
        lines.extend(f"    {_one_line(d)}" for d in e.diagnosis)
        lines.extend(f"    {line}" for line in _fix_lines(e))
    return "\n".join(lines)


def status_text(s: RepositoryStatus) -> str:
    """``jupymem.status``: its message first, then the facts."""
    return f"{_clean(s.message)}\n{_fields_text(_status_fields(s))}"


def verify_text(report: Any) -> str:
    """A ``VerifyReport``."""
    head = f"{report.events} events, {report.memories} memories"
    if report.ok:
        return f"verify: ok ({head})"
    lines = [f"verify: {len(report.problems)} problem{'s' if len(report.problems) != 1 else ''} ({head})"]
    lines += [f"  - {_one_line(p)}" for p in report.problems]
    return "\n".join(lines)


def gc_text(report: Any) -> str:
    """A ``GcReport``."""
    verb = "would forget" if report.dry_run else "forgot"
    n = len(report.forgotten)
    lines = [
        f"gc{' (dry run)' if report.dry_run else ''}: {verb} {n} memor{'y' if n == 1 else 'ies'}, "
        f"{'would purge' if report.dry_run else 'purged'} {report.purged_events} event payloads, "
        f"{'would drop' if report.dry_run else 'dropped'} {report.evidence_dropped} staged failures"
    ]
    lines += [f"  {mid}" for mid in report.forgotten]
    if getattr(report, "kept_for_team", 0):
        n = report.kept_for_team
        lines.append(
            f"{n} shared memor{'y' if n == 1 else 'ies'} retention allows {'was' if n == 1 else 'were'} left alone: "
            "on the team database shared memory is the team's, and a member's gc forgets only their own."
        )
    return "\n".join(lines)


def import_text(report: Any) -> str:
    """An ``ImportReport``."""
    return (
        f"import: {report.added} of {report.events} events added, "
        f"{report.skipped} already known or adding nothing"
    )


def migrate_text(report: Any) -> str:
    """A ``MigrateReport``: what moved, what was there already, what stayed, where the file is."""
    there = "the team database at " + report.where if report.to == "postgresql" else report.where
    if report.added == 0 and report.events:
        lines = [f"migrate: nothing new; all {report.events} events were in {there} already (nothing was added)."]
    else:
        lines = [f"migrate: {report.added} of {report.events} events added to {there} "
                 f"({report.skipped} there already or adding nothing; {report.private} private, kept yours)."]
    lines.append(f"project {report.project_id}")
    if report.rekeyed:
        lines.append("private memories keyed " + ("by your role" if report.to == "postgresql" else "by their words")
                     + ": " + ", ".join(f"{a} -> {b}" for a, b in report.rekeyed.items()))
    if report.opened:
        lines.append("recorded privately beside the shared memory they superseded (which stays open for the team): "
                     + ", ".join(report.opened))
    if report.left_behind:
        lines.append(f"{report.left_behind} events stayed behind (gc's, and payloads gc purged).")
    if report.kept:
        lines.append(f"the SQLite file is kept: {report.kept}")
    if report.note:
        lines.append(report.note)
    lines.append("verify: ok" if report.verified else "verify FAILED: " + "; ".join(report.problems))
    return "\n".join(_clean(line) for line in lines)


def block_text(block: Block) -> str:
    """The block exactly as assistants receive it: never altered, never decorated."""
    return block.text


def instructions_text(report: Any) -> str:
    """What ``jupymem instructions`` did: the rules imported (with ``--import``), then each file."""
    lines = []
    if report.imports:
        n = len(report.imported)
        lines.append(f"Imported {n} rule{'' if n == 1 else 's'} as memories" + (":" if n else "."))
        lines += [f"  {i.file}:{i.line}  {i.id} {i.kind}: {_clip(_one_line(i.statement), LINE_CHARS)}" for i in report.imported]
        if report.known:
            lines.append(f"{report.known} already in memory (not recorded again).")
        if report.too_long:
            lines.append(f"{report.too_long} list item{'s' if report.too_long != 1 else ''} too long to be a rule "
                         "(left out).")
        for r in report.refused:
            lines.append(f"Refused {r.file}:{r.line}: {_one_line(r.reason)}")
    for f in report.files:
        was = f" (was {f.revision})" if f.revision and f.state != "up to date" else ""
        state = {"written": "created", "stale": "missing"}.get(f.state, f.state) if f.created else f.state
        lines.append(f"{f.file}: {state}{was}")
    if report.message:
        lines.append(_one_line(report.message))
    return "\n".join(lines)
