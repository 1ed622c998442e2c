"""Core records -> compact HTML for a notebook output (``*_html``): the HTML half of ``render``.

Every piece of record text goes through ``html.escape``; layout is inline. Colour is not:
a kind is marked with the class ``jp-jupymem-kind-<kind>`` (``kind_class``), whose colour
the sidebar's stylesheet defines once for every face (labextension/style/base.css), from
the theme's variables, so it reads in light and dark themes. Where that stylesheet is not
loaded (VS Code, nbviewer) the mark keeps the text colour. Each function has a text twin
in ``render_text``. Stdlib only.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..models import UNCONFIRMED, Block, Evidence, HistoryEntry, Hit, Memory, Recorded, SearchResult
from .render_common import (
    NOT_CONFIDENT, SAID_CHARS, _clean, _clip, _detail, _grouped, _legs_note, _memory_fields, _one_line,
    _replacement_mark, _status_fields, _verb, author_name, confidence_word, fixed_in, kind_class, when,
)

if TYPE_CHECKING:
    from ..reports import RepositoryStatus


HTML_CLIP_CHARS = 240  # a statement's share of a table cell in a notebook


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


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


def _evidence_where(e: Evidence) -> str:
    parts = [when(e.created_at)]
    if e.notebook:
        parts.append(e.notebook)
    if e.cell_id:
        parts.append(f"cell {e.cell_id}")
    if e.execution_count is not None:
        parts.append(f"[{e.execution_count}]")
    return ", ".join(p for p in parts if p)


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


def said_html(m: Memory, verb: str) -> str:
    marks = _marks_html(m)
    return (
        f"{_e(verb)} {_ID}{_e(m.id)}</code> {_badge(m.kind)}{' ' + marks if marks else ''} "
        f"{_e(_clip(_one_line(m.statement), SAID_CHARS))}"
    )


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


def staged_html(e: Evidence) -> str:
    return (
        f'<div class="jupymem-staged" style="opacity:.6;font-size:.85em">jupymem staged this '
        f"{_e(_one_line(e.ename))} as {_ID}{_e(e.handle)}</code>: cite it with "
        f"{_ID}%%remember --evidence {_e(e.handle)}</code> ({_ID}%memory quiet</code> hides this line)</div>"
    )


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
        lines = ((_e(when(h.at)), f"<b>{_e(h.action)}</b>", _e(_detail(h))) for h in history)
        evidence += f"<div>{_MUTED}history</span></div>" + _table(lines)
    return f'<div class="jupymem-memory">{head}{body}{fields}{evidence}</div>'


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


def _confidence_bar(confidence: float, answered: bool = True) -> str:
    width = round(max(0.0, min(1.0, confidence)) * 40)
    word = confidence_word(confidence, answered=answered)
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
            + _hits_table(result.closest, answered=False)
        )
    out = _hits_table(result.hits)
    note = _legs_note(result)
    if note:
        out = f"<div style='opacity:.7'>{_e(note.strip(' ()'))}</div>" + out
    if result.full is not None:
        out += f"<div style='margin-top:.4em'><b>Best match</b></div>{memory_html(result.full)}"
    return out


def _hits_table(hits: Sequence[Hit], answered: bool = True) -> str:
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
                _confidence_bar(hit.confidence, answered),
            )
        )
    return _table(rows, header=("kind", "id", "statement", "standing", "confidence"))


def history_html(entries: Sequence[HistoryEntry]) -> str:
    if not entries:
        return "<div>No history.</div>"
    rows = ((f"#{h.seq}", _e(when(h.at)), f"<b>{_e(h.action)}</b>", _e(_detail(h))) for h in entries)
    return f"<div>History of {_ID}{_e(entries[0].memory_id)}</code></div>" + _table(rows)


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


def status_html(s: RepositoryStatus) -> str:
    """``jupymem.status``: its message first, then the facts, as a table."""
    msg = f"<div><b>{_e(s.message)}</b></div>"
    return msg + _table((f"{_MUTED}{_e(label)}</span>", _e(value)) for label, value in _status_fields(s))


def block_html(block: Block) -> str:
    caption = (
        f"{_MUTED}revision {_e(block.revision)}, {block.bytes}/{block.cap} bytes, "
        f"{block.shown} shown{f', {block.omitted} searched per prompt' if block.omitted else ''}</span>"
    )
    return f"<div>{caption}</div><pre style='white-space:pre-wrap;margin:.2em 0'>{_e(block.text)}</pre>"
