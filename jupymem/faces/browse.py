"""``%memory browse``: an ipywidgets browser for front ends without the sidebar.

VS Code and the classic notebook render ipywidgets but not JupyterLab
extensions, so this gives them the sidebar's core: search (the same search
the kernel uses), the list in block order, a detail view with provenance,
evidence and history, and confirm / retire. It calls the ``Project`` API
directly; ipywidgets is imported here only, when someone asks to browse.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from ..errors import JupymemError
from ..models import KINDS, UNCONFIRMED, Memory

if TYPE_CHECKING:
    import ipywidgets

    from ..core import Project

ROWS = 500  # list entries shown without a search
LABEL_CHARS = 96


def _label(m: Memory, score: float | None = None) -> str:
    marks = "" if m.standing != UNCONFIRMED else " (unconfirmed)"
    if m.status != "active":
        marks += f" [{m.status}]"
    text = " ".join(m.statement.split())
    if len(text) > LABEL_CHARS:
        text = text[: LABEL_CHARS - 1] + "…"
    tail = f"  · {score:.2f}" if score is not None else ""
    return f"{m.kind}{marks}: {text}{tail}"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def detail_html(project: Project, m: Memory) -> str:
    """The full record, escaped: a statement can never inject markup."""
    p = m.provenance
    rows = [
        ("Kind", m.kind),
        ("Standing", m.standing),
        ("Status", m.status + (f" ({m.retire_reason})" if m.retire_reason else "")),
        ("Topic", m.topic),
        ("Recorded by", p.recorder),
        ("Notebook", (p.notebook or "") + (f" · cell {p.cell_id}" if p.cell_id else "")),
        ("Execution", f"[{p.execution_count}]" if p.execution_count is not None else None),
        ("Quote", p.quote),
        ("Valid", f"{m.valid_from} – {m.valid_to or 'now'}"),
        ("Supersedes", m.supersedes),
        ("Superseded by", m.superseded_by),
        ("Id", m.id),
    ]
    table = "".join(
        f"<tr><th style='text-align:left;padding-right:1em;vertical-align:top'>{_e(k)}</th><td>{_e(v)}</td></tr>"
        for k, v in rows
        if v
    )
    evidence = "".join(
        f"<li><code>{_e(ev.handle)}</code> <b>{_e(ev.ename)}</b>: "
        + "<br>".join(_e(line) for line in (ev.diagnosis or (f"{ev.ename}: {ev.evalue}",)))
        + "</li>"
        for ev in m.evidence
    )
    history = "".join(f"<li>{_e(h.at)} — {_e(h.action)}</li>" for h in project.history(m.id))
    return (
        f"<div style='white-space:pre-wrap;font-size:1.1em;margin:4px 0 8px'>{_e(m.statement)}</div>"
        f"<table>{table}</table>"
        + (f"<b>Evidence</b><ul>{evidence}</ul>" if evidence else "")
        + f"<b>History</b><ul>{history}</ul>"
    )


def browser(project: Project) -> ipywidgets.Widget:
    """Search, list and detail for one project's memory, with confirm and retire."""
    import ipywidgets as w

    header = w.HTML()
    search = w.Text(placeholder="Search memory", continuous_update=True, layout=w.Layout(flex="1 1 auto"))
    kind = w.Dropdown(options=[("every kind", "")] + [(k, k) for k in KINDS], value="", layout=w.Layout(width="12em"))
    past = w.Checkbox(value=False, description="past versions", indent=False, layout=w.Layout(width="10em"))
    listing = w.Select(options=[], rows=12, layout=w.Layout(width="100%"))
    note = w.HTML()
    detail = w.HTML()
    confirm = w.Button(description="Confirm", button_style="success", disabled=True)
    reason = w.Text(placeholder="why it no longer holds", layout=w.Layout(flex="1 1 auto"))
    retire = w.Button(description="Retire", button_style="warning", disabled=True)
    actions = w.HBox([confirm, reason, retire])

    def refresh_header() -> None:
        counts = project.counts()
        block = project.block()
        chips = ", ".join(f"{k} {n}" for k, n in counts.items() if n) or "no active memories"
        header.value = (
            f"<b>{_e(project.name)}</b> — {_e(chips)} — block {block.bytes}/{block.cap} bytes"
            + (f", {block.omitted} more searched per prompt" if block.omitted else "")
        )

    def refresh_list(*_: Any) -> None:
        query = search.value.strip()
        try:
            if query:
                result = project.search(
                    query, 50, include_inactive=past.value, kinds=[kind.value] if kind.value else None
                )
                if result.abstained:
                    note.value = f"<i>Abstained: nothing in memory really matches “{_e(query)}”.</i>"
                    options: list[tuple[str, str]] = []
                else:
                    note.value = f"{len(result.hits)} matches"
                    options = [(_label(h.memory, h.score), h.memory.id) for h in result.hits]
            else:
                memories = project.list(kind=kind.value or None, include_inactive=past.value)
                note.value = (
                    f"{len(memories)} memories" if len(memories) <= ROWS else f"first {ROWS} of {len(memories)}; search for the rest"
                )
                options = [(_label(m), m.id) for m in memories[:ROWS]]
        except JupymemError as exc:
            note.value = f"<span style='color:var(--jp-error-color1,#c00)'>{_e(exc.message)}</span>"
            options = []
        selected = listing.value
        listing.options = options
        if selected in {v for _, v in options}:
            listing.value = selected

    def show(*_: Any) -> None:
        if not listing.value:
            detail.value = ""
            confirm.disabled = retire.disabled = True
            return
        try:
            m = project.get(listing.value)
        except JupymemError as exc:
            detail.value = _e(exc.message)
            return
        detail.value = detail_html(project, m)
        confirm.disabled = not (m.active and m.standing == UNCONFIRMED)
        retire.disabled = not m.active

    def act(fn: Any) -> None:
        try:
            fn()
        except JupymemError as exc:
            note.value = f"<span style='color:var(--jp-error-color1,#c00)'>{_e(exc.message)}</span>"
            return
        refresh_header()
        refresh_list()
        show()

    confirm.on_click(lambda _: act(lambda: project.confirm(listing.value)))
    retire.on_click(lambda _: act(lambda: project.retire(listing.value, reason.value.strip() or None)))
    search.observe(refresh_list, names="value")
    kind.observe(refresh_list, names="value")
    past.observe(refresh_list, names="value")
    listing.observe(show, names="value")

    refresh_header()
    refresh_list()
    box = w.VBox([header, w.HBox([search, kind, past]), note, listing, detail, actions])
    # Handles for tests and for callers that want to drive it.
    box.jupymem = {  # type: ignore[attr-defined]
        "search": search, "kind": kind, "past": past, "list": listing, "note": note,
        "detail": detail, "confirm": confirm, "reason": reason, "retire": retire, "header": header,
    }
    return box
