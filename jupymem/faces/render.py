"""Core records -> text for people (terminals), HTML (notebooks) and plain JSON.

This is the one place that decides how memory looks, so the magics, the CLI
and the REST API show the same things the same way. Three families, one per
audience:

* ``*_text``: plain text for a terminal. Control characters are dropped so a
  stored statement can never drive the terminal (colours, cursor moves).
* ``*_html``: compact HTML for a notebook output. Every piece of record text
  goes through ``html.escape``; layout is inline. Colour is not: a kind is
  marked with the class ``jp-jupymem-kind-<kind>`` (``kind_class``), whose
  colour the sidebar's stylesheet defines once for every face
  (labextension/style/base.css), from the theme's variables, so it reads in
  light and dark themes. Where that stylesheet is not loaded (VS Code,
  nbviewer) the mark keeps the text colour.
JSON is not made here: every face uses ``models.to_json``.

Lists clip long statements (the full text is in ``show``); the block is never
altered: ``block_text`` returns it byte for byte. Stdlib only, cheap to import.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..intake.text import strip_control
from ..models import (
    KINDS, UNCONFIRMED, Block, Evidence, Fix, HistoryEntry, Hit, Memory, Recorded, SearchResult, Similar,
    kind_rank,
)

__all__ = [
    "Output",
    "memory_line",
    "said_text",
    "said_html",
    "recorded_text",
    "recorded_html",
    "similar_text",
    "staged_text",
    "staged_html",
    "memory_text",
    "memory_html",
    "memories_text",
    "memories_html",
    "search_text",
    "search_html",
    "history_text",
    "history_html",
    "evidence_text",
    "evidence_html",
    "fixed_in",
    "status_text",
    "status_html",
    "verify_text",
    "gc_text",
    "import_text",
    "block_text",
    "block_html",
    "confidence_word",
]

LINE_CHARS = 100  # a statement's share of a one-line listing in a terminal
HTML_CLIP_CHARS = 240  # a statement's share of a table cell in a notebook


@dataclass(frozen=True)
class Output:
    """Text and HTML of one result; IPython shows the HTML, terminals the text."""

    text: str
    html: str | None = None  # None: front ends show the text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str | None:
        return self.html

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text)


# -- small helpers ------------------------------------------------------------


def _clean(text: str | None) -> str:
    """Drop control characters (keeping newlines and tabs) for terminal output."""
    return strip_control(text or "")


def _one_line(text: str | None) -> str:
    return " ".join(_clean(text).split())  # str.split() splits at every line break


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def when(at: str | None) -> str:
    """``2026-11-29T19:46:10.791885Z`` -> ``2026-11-29 19:46:10 UTC``."""
    if not at:
        return ""
    if len(at) >= 19 and at[10] == "T":
        return f"{at[:10]} {at[11:19]} UTC"
    return at


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def kind_class(kind: str) -> str:
    """The class that gives a kind its colour in every face (labextension/style/base.css)."""
    return f"jp-jupymem-kind-{kind}" if kind in KINDS else "jp-jupymem-kind-note"


def _badge(kind: str) -> str:
    return (
        f'<span class="{kind_class(kind)}" style="display:inline-block;padding:0 .4em;'
        f'border:1px solid currentColor;border-radius:.6em;font-size:.85em;white-space:nowrap">{_e(kind)}</span>'
    )


_UNCONFIRMED_HTML = '<em class="jp-jupymem-unconfirmed" style="white-space:nowrap">(unconfirmed)</em>'
_TABLE = '<table style="border-collapse:collapse;font-size:.9em;margin:.2em 0">'
_TD = '<td style="padding:.15em .6em .15em 0;vertical-align:top;text-align:left">'
_TH = '<th style="padding:.15em .6em .15em 0;text-align:left;font-weight:600;vertical-align:top">'
_MUTED = '<span style="opacity:.65">'
_ID = '<code style="font-size:.85em;white-space:nowrap">'


def _replacement_mark(m: Memory) -> str | None:
    """``(replaced 2 ways)`` on a memory two people superseded differently, ``(1 of 2
    replacements)`` on each of its replacements; None when nothing is disputed."""
    if not m.replacements:
        return None
    n = len(m.replacements)
    return f"(1 of {n} replacements)" if m.id in m.replacements else f"(replaced {n} ways)"


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


def _marks_html(m: Memory) -> str:
    out = []
    if m.standing == UNCONFIRMED:
        out.append(_UNCONFIRMED_HTML)
    if m.private:
        out.append(f"{_MUTED}(private)</span>")
    mark = _replacement_mark(m)
    if mark:
        out.append(f'<b style="color:#b9770e;white-space:nowrap">{_e(mark)}</b>')
    if m.status != "active":
        out.append(f"{_MUTED}[{_e(m.status)}]</span>")
    return " ".join(out)


def author_name(m: Memory) -> str | None:
    """The recorder's name for one-line listings (``Ana López <ana@…>`` -> ``Ana López``)."""
    author = m.provenance.author
    if not author:
        return None
    return author.split(" <", 1)[0] if not author.startswith("<") else author


def _statement_cell(m: Memory, limit: int = HTML_CLIP_CHARS) -> str:
    flat = _one_line(m.statement)
    if len(flat) <= limit:
        return _e(flat)
    # Clipped in the table; the whole statement is in the tooltip and in `show`.
    return f'<span title="{_e(m.statement)}">{_e(_clip(flat, limit))}</span> {_MUTED}(show {_e(m.id)})</span>'


def _table(rows: Iterable[Sequence[str]], header: Sequence[str] | None = None) -> str:
    parts = [_TABLE]
    if header:
        parts.append("<tr>" + "".join(f"{_TH}{h}</th>" for h in header) + "</tr>")
    for row in rows:
        parts.append("<tr>" + "".join(f"{_TD}{cell}</td>" for cell in row) + "</tr>")
    parts.append("</table>")
    return "".join(parts)


def _fields_text(fields: Sequence[tuple[str, str]]) -> str:
    width = max((len(label) for label, _ in fields), default=0)
    lines = []
    for label, value in fields:
        first, *rest = value.split("\n") or [""]
        lines.append(f"  {label.ljust(width)}  {first}".rstrip())
        lines.extend(f"  {' ' * width}  {line}".rstrip() for line in rest)
    return "\n".join(lines)


# -- one memory ---------------------------------------------------------------


def memory_line(m: Memory, width: int = LINE_CHARS) -> str:
    """``m-3f9a2c1d4e5f  decision    (unconfirmed) Use customer_id as the join key``."""
    marks = " ".join(_marks(m))
    statement = _clip(_one_line(m.statement), width)
    return f"{m.id}  {m.kind:<10}  {marks + ' ' if marks else ''}{statement}"


SAID_CHARS = 72  # the statement's share of a one-line answer to a record


def said_text(m: Memory, verb: str) -> str:
    """One line after a change: ``Remembered m-3f9a2c1d4e5f (decision): Join df_sales…``."""
    marks = " ".join(_marks(m))
    return f"{verb} {m.id} ({m.kind}{' ' + marks if marks else ''}): {_clip(_one_line(m.statement), SAID_CHARS)}"


def said_html(m: Memory, verb: str) -> str:
    marks = _marks_html(m)
    return (
        f"{_e(verb)} {_ID}{_e(m.id)}</code> {_badge(m.kind)}{' ' + marks if marks else ''} "
        f"{_e(_clip(_one_line(m.statement), SAID_CHARS))}"
    )


def _verb(done: Recorded) -> str:
    m = done.memory
    if m.supersedes and done.changed:
        return f"{m.supersedes} superseded by"
    return "Remembered" if done.changed else "Already remembered"


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


def recorded_html(done: Recorded) -> str:
    near = ""
    if done.similar:
        first = done.similar[0]
        others = "".join(f", {_ID}{_e(s.id)}</code>" for s in done.similar[1:])
        near = (
            f' — <span class="jp-jupymem-similar">similar to <span title="{_e(first.statement)}">{_ID}'
            f"{_e(first.id)}</code></span>{others}; supersede it with {_ID}--supersedes {_e(first.id)}</code></span>"
        )
    return f'<div class="jupymem-recorded">{said_html(done.memory, _verb(done))}{near}</div>'


def staged_text(e: Evidence) -> str:
    """The one line under a failed cell's traceback."""
    return (
        f"jupymem staged this {_one_line(e.ename)} as {e.handle}: cite it with "
        f"%%remember --evidence {e.handle} (%memory quiet hides this line)"
    )


def staged_html(e: Evidence) -> str:
    return (
        f'<div class="jupymem-staged" style="opacity:.6;font-size:.85em">jupymem staged this '
        f"{_e(_one_line(e.ename))} as {_ID}{_e(e.handle)}</code>: cite it with "
        f"{_ID}%%remember --evidence {_e(e.handle)}</code> ({_ID}%memory quiet</code> hides this line)</div>"
    )


def _provenance(m: Memory) -> str:
    p = m.provenance
    parts = [f"recorded by {p.recorder}" + (f" ({p.author})" if p.author else "")]
    if p.notebook:
        parts.append(f"notebook {p.notebook}")
    if p.cell_id:
        parts.append(f"cell {p.cell_id}")
    if p.execution_count is not None:
        parts.append(f"execution [{p.execution_count}]")
    if p.session:
        parts.append(f"session {p.session}")
    return ", ".join(parts)


def _validity(m: Memory) -> str:
    end = when(m.valid_to) if m.valid_to else "now"
    return f"{when(m.valid_from)} -> {end}"


def _memory_fields(m: Memory) -> list[tuple[str, str]]:
    standing = m.standing + (f" (confirmed {when(m.confirmed_at)})" if m.confirmed_at else "")
    fields = [
        ("kind", m.kind),
        ("standing", standing),
        ("status", m.status),
        ("valid", _validity(m)),
    ]
    if m.topic:
        fields.append(("topic", m.topic))
    fields.append(("provenance", _provenance(m)))
    fields.append(("recorded", when(m.created_at)))
    if m.original:
        fields.append(("original", m.original))
    if m.provenance.quote:
        fields.append(("quote", m.provenance.quote))
    if m.supersedes:
        fields.append(("supersedes", m.supersedes))
    if m.superseded_by:
        fields.append(("superseded by", m.superseded_by))
    if m.replacements:
        settle = "retire one, or supersede it again, to settle it"
        if m.id in m.replacements:
            others = ", ".join(r for r in m.replacements if r != m.id)
            fields.append(("disputed", f"one of {len(m.replacements)} replacements of {m.supersedes} "
                                       f"(also {others}); {settle}"))
        else:
            fields.append(("disputed", f"two people replaced it differently: {', '.join(m.replacements)} are "
                                       f"all active; {settle}"))
    if m.private:
        fields.append(("private", "kept on this machine only; never written to .jupymem/"))
    if m.retire_reason:
        fields.append(("retired because", m.retire_reason))
    return [(label, _clean(value)) for label, value in fields]


def _evidence_head(e: Evidence) -> str:
    parts = [e.handle, when(e.created_at), e.ename]
    if e.cell_id:
        parts.append(f"cell {e.cell_id}")
    if e.execution_count is not None:
        parts.append(f"[{e.execution_count}]")
    if e.notebook:
        parts.append(e.notebook)
    return "  ".join(_one_line(p) for p in parts if p)


def fixed_in(fix: Fix) -> str:
    """``fixed in [7]`` (or by cell id, or just ``fixed``), and how the pair was found
    when it was a guess from similar sources."""
    where = f" in [{fix.execution_count}]" if fix.execution_count is not None else (
        f" in cell {fix.cell_id}" if fix.cell_id else ""
    )
    how = f" ({fix.paired_by})" if fix.paired_by != "cell id" else ""
    return f"fixed{where}{how}"


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


def memory_html(m: Memory, history: Sequence[HistoryEntry] = ()) -> str:
    statement = _e(_clean(m.statement)).replace("\n", "<br>")
    head = f"<div>{_ID}{_e(m.id)}</code> {_badge(m.kind)} {_marks_html(m)}</div>"
    body = f'<div style="margin:.3em 0;white-space:pre-wrap">{statement}</div>'
    fields = _table((f"{_MUTED}{_e(label)}</span>", _e(value).replace("\n", "<br>")) for label, value in _memory_fields(m))
    evidence = ""
    if m.evidence:
        rows = []
        for e in m.evidence:
            diag = "<br>".join(_e(_one_line(d)) for d in e.diagnosis)
            rows.append((f"{_ID}{_e(e.handle)}</code>", _e(e.ename), diag + _fix_html(e),
                         f"{_MUTED}{_e(_evidence_where(e))}</span>"))
        evidence = f"<div>{_MUTED}evidence</span></div>" + _table(rows)
    if history:
        rows = ((_e(when(h.at)), f"<b>{_e(h.action)}</b>", _e(_detail(h))) for h in history)
        evidence += f"<div>{_MUTED}history</span></div>" + _table(rows)
    return f'<div class="jupymem-memory">{head}{body}{fields}{evidence}</div>'


def _evidence_where(e: Evidence) -> str:
    parts = [when(e.created_at)]
    if e.notebook:
        parts.append(e.notebook)
    if e.cell_id:
        parts.append(f"cell {e.cell_id}")
    if e.execution_count is not None:
        parts.append(f"[{e.execution_count}]")
    return ", ".join(p for p in parts if p)


# -- lists --------------------------------------------------------------------


def _grouped(memories: Sequence[Memory]) -> list[tuple[str, list[Memory]]]:
    groups: dict[str, list[Memory]] = {}
    for m in sorted(memories, key=lambda m: (kind_rank(m.kind), m.created_at, m.id)):
        groups.setdefault(m.kind, []).append(m)
    return list(groups.items())


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


def memories_html(memories: Sequence[Memory], empty: str = "No memories.") -> str:
    if not memories:
        return f"<div>{_e(empty)}</div>"
    rows = []
    for _kind, group in _grouped(memories):
        for m in group:
            marks = _marks_html(m)
            rows.append((_badge(m.kind), f"{_ID}{_e(m.id)}</code>", (marks + " " if marks else "") + _statement_cell(m),
                         f"{_MUTED}{_e(author_name(m) or '')}</span>"))
    return _table(rows, header=("kind", "id", "statement", "by"))


# -- search -------------------------------------------------------------------


def confidence_word(confidence: float) -> str:
    """strong / likely / weak: how sure search is that a hit answers the query."""
    from ..retrieval.answerable import level  # retrieval's thresholds; a light module

    return level(confidence)


def _legs_note(result: SearchResult) -> str:
    """Which legs ran: said when the dense leg did not (a one-shot command before a kernel
    made the transformer's vectors, the encoder still loading, or turned off)."""
    if result.legs and "dense" not in result.legs and "fts" not in result.legs:
        return " (words only: the semantic leg did not run; status says why)"
    if result.tier:
        return f" (words and meaning: {result.tier} encoder)"
    return ""


NOT_CONFIDENT = "No memory answers this confidently."


def _hit_lines(hits: Sequence[Hit]) -> list[str]:
    lines = []
    for hit in hits:
        m = hit.memory
        marks = " ".join(_marks(m))
        lines.append(
            f"  {m.id}  {m.kind:<10}  {confidence_word(hit.confidence):<6} {hit.confidence:.2f}  "
            f"{marks + ' ' if marks else ''}{_clip(_one_line(m.statement), LINE_CHARS)}"
        )
    return lines


def search_text(result: SearchResult) -> str:
    if result.abstained:
        if not result.closest:
            return f"No match (abstained): {result.reason or 'nothing matches closely enough'}."
        # A verdict never hides memory from a person: the nearest ones, said to be unsure.
        return "\n".join([f"{NOT_CONFIDENT} Closest memories{_legs_note(result)}:", *_hit_lines(result.closest)])
    n = len(result.hits)
    lines = [f"{n} {'match' if n == 1 else 'matches'}{_legs_note(result)}:", *_hit_lines(result.hits)]
    if result.full is not None:
        lines += ["", "Best match:", memory_text(result.full)]
    return "\n".join(lines)


def _confidence_bar(confidence: float) -> str:
    width = round(max(0.0, min(1.0, confidence)) * 40)
    word = confidence_word(confidence)
    return (
        f"<span title='confidence {confidence:.2f}' style='white-space:nowrap'>"
        f"<span style='display:inline-block;width:40px;height:.55em;border:1px solid currentColor;"
        f"opacity:.8;vertical-align:middle'><span style='display:block;height:100%;width:{width}px;"
        f"background:currentColor'></span></span> {word}</span>"
    )


def search_html(result: SearchResult) -> str:
    if result.abstained:
        if not result.closest:
            return f"<div><b>No match</b> (abstained): {_e(result.reason or 'nothing matches closely enough')}.</div>"
        note = _legs_note(result)
        return (
            f"<div><b>{_e(NOT_CONFIDENT)}</b> Closest memories{_e(note)}:</div>"
            + _hits_table(result.closest)
        )
    out = _hits_table(result.hits)
    note = _legs_note(result)
    if note:
        out = f"<div style='opacity:.7'>{_e(note.strip(' ()'))}</div>" + out
    if result.full is not None:
        out += f"<div style='margin-top:.4em'><b>Best match</b></div>{memory_html(result.full)}"
    return out


def _hits_table(hits: Sequence[Hit]) -> str:
    rows = []
    for hit in hits:
        m = hit.memory
        marks = _marks_html(m)
        rows.append(
            (
                _badge(m.kind),
                f"{_ID}{_e(m.id)}</code>",
                (marks + " " if marks else "") + _statement_cell(m),
                _e(m.standing),
                _confidence_bar(hit.confidence),
            )
        )
    return _table(rows, header=("kind", "id", "statement", "standing", "confidence"))


# -- history and evidence ------------------------------------------------------


# What a history detail's keys mean, per action ("by" is the replacement of a superseded
# memory, and the kind of confirmer of a confirmation; "who" wrote the event).
_DETAIL_LABELS = {("superseded", "by"): "replaced by", ("supersedes", "old"): "replaces",
                  ("confirmed", "by"): "as", ("recorded", "supersedes"): "replaces"}


def _detail(h: HistoryEntry) -> str:
    """Who did it first (the event's writer), then what the event says."""
    parts = [f"by {_one_line(str(h.detail['who']))}"] if h.detail.get("who") else []
    parts += [f"{_DETAIL_LABELS.get((h.action, k), k)}: {_one_line(str(v))}"
              for k, v in sorted(h.detail.items()) if k != "who"]
    return "; ".join(parts)


def history_text(entries: Sequence[HistoryEntry]) -> str:
    if not entries:
        return "No history."
    lines = [f"History of {entries[0].memory_id}:"]
    for h in entries:
        detail = _detail(h)
        lines.append(f"  #{h.seq:<5} {when(h.at)}  {h.action:<11}{'  ' + detail if detail else ''}".rstrip())
    return "\n".join(lines)


def history_html(entries: Sequence[HistoryEntry]) -> str:
    if not entries:
        return "<div>No history.</div>"
    rows = ((f"#{h.seq}", _e(when(h.at)), f"<b>{_e(h.action)}</b>", _e(_detail(h))) for h in entries)
    return f"<div>History of {_ID}{_e(entries[0].memory_id)}</code></div>" + _table(rows)


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


# Diff lines tinted with translucent fills, so they read in light and dark themes.
_DIFF_STYLE = {"+": "background:rgba(46,160,67,.18)", "-": "background:rgba(248,81,73,.18)"}
_PRE = '<pre style="margin:.2em 0;padding:.2em .4em;white-space:pre-wrap;font-size:.9em">'


def _fix_html(e: Evidence) -> str:
    parts = []
    if e.next_failure:
        parts.append(f"<div>{_MUTED}failed again as</span> {_ID}{_e(e.next_failure)}</code></div>")
    fix = e.fix
    if fix is not None:
        if fix.diff:
            rows = "".join(
                f'<div style="{_DIFF_STYLE.get(line[:1], "")}">{_e(_clean(line)) or "&nbsp;"}</div>'
                for line in fix.diff.split("\n")
            )
            parts.append(f"<div><b>{_e(fixed_in(fix))}</b></div>{_PRE}{rows}</pre>")
        else:
            after = f" after <code>{_e(_one_line(fix.after))}</code> ran" if fix.after else ""
            parts.append(f"<div><b>{_e(fixed_in(fix))}</b>: it ran unchanged{after}</div>")
    if e.suggestion:
        parts.append(f"<div>{_MUTED}suggested lesson:</span> <em>{_e(_one_line(e.suggestion))}</em></div>")
    return "".join(parts)


def evidence_html(items: Sequence[Evidence]) -> str:
    if not items:
        return "<div>No staged failures.</div>"
    rows = (
        (
            f"{_ID}{_e(e.handle)}</code>",
            _e(e.ename),
            "<br>".join(_e(_one_line(d)) for d in e.diagnosis) + _fix_html(e),
            f"{_MUTED}{_e(_evidence_where(e))}</span>",
        )
        for e in items
    )
    return _table(rows, header=("handle", "error", "diagnosis", "where"))


# -- status and reports ----------------------------------------------------------


def _status_fields(s: dict[str, Any]) -> list[tuple[str, str]]:
    fields = [("repository", f"{s.get('name')} ({s.get('root')})" if s.get("root") else str(s.get("path")))]
    if s.get("memory"):
        counts = s.get("counts") or {}
        by_kind = ", ".join(f"{k} {n}" for k, n in counts.items() if n)
        fields.append(("memories", f"{s.get('total', 0)} active" + (f" ({by_kind})" if by_kind else "")))
        blk = s.get("block") or {}
        if blk:
            omitted = f", {blk.get('omitted')} searched per prompt" if blk.get("omitted") else ""
            fields.append(
                ("block", f"{blk.get('bytes')}/{blk.get('cap')} bytes, {blk.get('shown')} shown{omitted}, "
                 f"revision {blk.get('revision')}")
            )
        fields.append(("staged", f"{s.get('staged', 0)} failed cells"))
        if s.get("retrieval"):
            fields.append(("search", _search_line(s["retrieval"])))
        sharing = s.get("sharing") or {}
        if sharing.get("state") not in (None, "none"):
            fields.append(("sharing", _sharing_line(sharing)))
            for problem in sharing.get("problems") or []:
                fields.append(("problem", problem))
        fields.append(("project", str(s.get("project_id"))))
        fields.append(("database", str(s.get("database"))))
    else:
        fields.append(("home", str(s.get("home"))))
    if s.get("registry") not in (None, "ok"):
        fields.append(("registry", str(s.get("registry"))))
    return [(label, _clean(value)) for label, value in fields]


def _search_line(r: dict[str, Any]) -> str:
    """Which legs answer a search now, and what is still being built."""
    legs = " + ".join(r.get("legs") or ["lexical"])
    if r.get("dense") == "on":
        said = f"{legs} ({r.get('tier') or 'static'} encoder)"
        if r.get("reason"):  # the static tier answers while the transformer gets ready
            said += f"; {r['reason']}"
    else:
        said = f"{legs} (no dense leg: {r.get('reason') or 'off'})"
    parts = ["in this process " + said]
    embedding = r.get("embedding")
    if embedding and embedding.get("total"):
        parts.append(f"embedding {embedding['done']:,} of {embedding['total']:,} memories")
    parts.append(f"index {r.get('index', 'not built')}")
    parts.append(f"typo names {r.get('typos', 'not read')}")
    return "; ".join(parts)


def _sharing_line(sharing: dict[str, Any]) -> str:
    files = sharing.get("files") or []
    parts = [f"{sharing['state']} ({len(files)} file{'s' if len(files) != 1 else ''} in {sharing.get('folder')}/, "
             f"{sharing.get('shared_events', 0)} shared events)"]
    if sharing["state"] == "on":
        who = sharing.get("identity") or "nobody: git has no user.name/user.email here"
        parts.append(f"writing as {who}" + (f" to {sharing['writer']}" if sharing.get("writer") else ""))
        if sharing.get("writer_damaged"):
            parts.append("that file ends in a line that is not applied, so the next memory starts a new one")
    if sharing.get("private_memories"):
        parts.append(f"{sharing['private_memories']} private memories stay here")
    if sharing.get("local_events"):
        parts.append(f"{sharing['local_events']} older events not shared yet (`jupymem share` writes them)")
    return "; ".join(parts)


def status_text(s: dict[str, Any]) -> str:
    """The dict from ``jupymem.status``: its message first, then the facts."""
    return f"{_clean(s.get('message', ''))}\n{_fields_text(_status_fields(s))}"


def status_html(s: dict[str, Any]) -> str:
    msg = f"<div><b>{_e(s.get('message', ''))}</b></div>"
    return msg + _table((f"{_MUTED}{_e(label)}</span>", _e(value)) for label, value in _status_fields(s))


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
    return "\n".join(lines)


def import_text(report: Any) -> str:
    """An ``ImportReport``."""
    return (
        f"import: {report.added} of {report.events} events added, "
        f"{report.skipped} already known or adding nothing"
    )


def block_text(block: Block) -> str:
    """The block exactly as assistants receive it: never altered, never decorated."""
    return block.text


def block_html(block: Block) -> str:
    caption = (
        f"{_MUTED}revision {_e(block.revision)}, {block.bytes}/{block.cap} bytes, "
        f"{block.shown} shown{f', {block.omitted} searched per prompt' if block.omitted else ''}</span>"
    )
    return f"<div>{caption}</div><pre style='white-space:pre-wrap;margin:.2em 0'>{_e(block.text)}</pre>"
