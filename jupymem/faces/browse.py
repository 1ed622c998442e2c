"""``%memory browse``: an ipywidgets browser for front ends without the sidebar.

VS Code and the classic notebook render ipywidgets but not JupyterLab
extensions, so this gives them the sidebar's core: search (the same search
the kernel uses), the list in block order, a detail view with provenance,
evidence and history, and confirm / retire. It calls the ``Project`` API
directly; ipywidgets is imported here only, when someone asks to browse.

Memory also changes elsewhere (another cell, another kernel, the CLI). The
browser re-reads the project's revision, one cheap query, whenever someone
uses it, after each cell the kernel runs while it is open, and on "Refresh";
when the revision moved, its header and list are redrawn.

Words, times and kind colours are the notebook output's (``render``): the
kinds carry the classes whose colours the sidebar's stylesheet defines.
"""

from __future__ import annotations

import html
import weakref
from typing import TYPE_CHECKING, Any

from ..errors import JupymemError
from ..models import KINDS, UNCONFIRMED, Hit, Memory
from .render import author_name, hit_words, kind_class, when

if TYPE_CHECKING:
    import ipywidgets

    from ..core.project import Project

ROWS = 500  # list entries shown without a search
LABEL_CHARS = 96


def _label(m: Memory, sure: str = "") -> str:
    """One row of the list: the hit's confidence first when it is a search hit (``sure``,
    as the sidebar and ``%memory search`` word it), the kind, the statement, who recorded it."""
    marks = "" if m.standing != UNCONFIRMED else " (unconfirmed)"
    if m.status != "active":
        marks += f" [{m.status}]"
    text = " ".join(m.statement.split())
    if len(text) > LABEL_CHARS:
        text = text[: LABEL_CHARS - 1] + "…"
    who = author_name(m)
    return f"{sure + ' · ' if sure else ''}{m.kind}{marks}: {text}{' — ' + who if who else ''}"


def _sure(hit: Hit, word: str) -> str:
    """"likely 87%": the word every face prints for the verdict, and the confidence."""
    return f"{word} {round(max(0.0, min(1.0, hit.confidence)) * 100)}%"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _kind(kind: str) -> str:
    return f"<span class='{kind_class(kind)}' style='font-weight:600'>{_e(kind)}</span>"


def _error(message: str) -> str:
    return f"<span class='jp-jupymem-kind-correction'>{_e(message)}</span>"


def header_html(project: Project) -> str:
    """Repository, active memories by kind (in the kind colours) and the block's size."""
    counts = {k: n for k, n in project.counts().items() if n}
    block = project.block()
    chips = ", ".join(f"{_kind(k)} {n}" for k, n in counts.items()) or "no active memories"
    if block.shown or block.omitted:
        size = f"block {block.bytes:,} of {block.cap:,} bytes ({_plural(block.shown, 'memory', 'memories')})"
        if block.omitted:
            size += f", {block.omitted} more searched per prompt"
    else:
        size = "block empty"
    return f"<b>{_e(project.name)}</b> — {chips} — {size}"


def detail_html(project: Project, m: Memory, sure: str | None = None) -> str:
    """The full record, escaped: a statement can never inject markup. ``sure``: how sure
    the search that listed it is ("likely 87%"), when it came from a search."""
    p = m.provenance
    rows = [
        ("Confidence", _e(sure) if sure else None),
        ("Kind", _kind(m.kind)),
        ("Standing", _e(m.standing)),
        ("Status", _e(m.status + (f" ({m.retire_reason})" if m.retire_reason else ""))),
        ("Topic", _e(m.topic) if m.topic else None),
        ("Recorded by", _e(p.recorder + (f" ({p.author})" if p.author else ""))),
        ("Notebook", _e((p.notebook or "") + (f" · cell {p.cell_id}" if p.cell_id else "")) or None),
        ("Execution", f"[{p.execution_count}]" if p.execution_count is not None else None),
        ("Quote", _e(p.quote) if p.quote else None),
        ("Valid", _e(f"{when(m.valid_from)} – {when(m.valid_to) if m.valid_to else 'now'}")),
        ("Supersedes", _e(m.supersedes) if m.supersedes else None),
        ("Superseded by", _e(m.superseded_by) if m.superseded_by else None),
        ("Id", _e(m.id)),
    ]
    table = "".join(
        f"<tr><th style='text-align:left;padding-right:1em;vertical-align:top'>{_e(k)}</th><td>{v}</td></tr>"
        for k, v in rows
        if v
    )
    evidence = "".join(
        f"<li><code>{_e(ev.handle)}</code>: "
        + "<br>".join(_e(line) for line in (ev.diagnosis or (f"{ev.ename}: {ev.evalue}",)))
        + "</li>"
        for ev in m.evidence
    )
    history = "".join(f"<li>{_e(when(h.at))} — {_e(h.action)}</li>" for h in project.history(m.id))
    return (
        f"<div style='white-space:pre-wrap;font-size:1.1em;margin:4px 0 8px'>{_e(m.statement)}</div>"
        f"<table>{table}</table>"
        + (f"<b>Evidence</b><ul>{evidence}</ul>" if evidence else "")
        + f"<b>History</b><ul>{history}</ul>"
    )


def browser(project: Project, shell: Any = None) -> ipywidgets.Widget:
    """Search, list and detail for one project's memory, with confirm and retire.

    With ``shell`` (an IPython shell), it also catches up after every cell run
    while it is open.
    """
    import ipywidgets as w

    # width "auto" and stretch, never "100%": a widget's own margin on top of
    # 100% pushes its right border out of the output area.
    full = {"width": "auto", "align_self": "stretch"}
    # A long header wraps; "Refresh" never shrinks (a flex item squeezed beside it read "Refr…").
    header = w.HTML(layout=w.Layout(flex="1 1 auto", width="auto", min_width="0"))
    refresh = w.Button(description="Refresh", tooltip="Read memory again", layout=w.Layout(width="auto", flex="0 0 auto"))
    search = w.Text(placeholder="Search memory", continuous_update=True, layout=w.Layout(flex="1 1 auto", width="auto"))
    kind = w.Dropdown(options=[("every kind", "")] + [(k, k) for k in KINDS], value="", layout=w.Layout(width="12em"))
    past = w.Checkbox(value=False, description="past versions", indent=False, layout=w.Layout(width="10em"))
    listing = w.Select(options=[], rows=12, layout=w.Layout(**full))
    note = w.HTML()
    detail = w.HTML()
    # Our own dark green and orange behind white text (7.9:1 and 7.2:1): ipywidgets' success
    # and warning styles put white on light green and orange (under 3:1) in every theme.
    confirm = w.Button(description="Confirm", disabled=True, style={"button_color": "#1b5e20", "text_color": "white"})
    reason = w.Text(placeholder="why it no longer holds", layout=w.Layout(flex="1 1 auto", width="auto"))
    retire = w.Button(description="Retire", disabled=True, style={"button_color": "#8a4500", "text_color": "white"})
    actions = w.HBox([confirm, reason, retire], layout=w.Layout(**full))
    seen: dict[str, int | None] = {"revision": None}
    sure: dict[str, str] = {}  # the listed search hits' confidence, by memory id

    def refresh_header() -> None:
        header.value = header_html(project)

    def refresh_list(*_: Any) -> None:
        query = search.value.strip()
        sure.clear()
        try:
            if query:
                result = project.search(
                    query, 50, include_inactive=past.value, kinds=[kind.value] if kind.value else None
                )
                if result.abstained:
                    # A verdict never hides memory from a person: the nearest, said to be unsure.
                    note.value = (
                        "<i>No memory answers this confidently. Closest memories:</i>"
                        if result.closest
                        else f"<i>Abstained: nothing in memory really matches “{_e(query)}”.</i>"
                    )
                else:
                    note.value = _plural(len(result.hits), "match", "matches")
                # How sure each hit is, in the words of the verdict (weak under an abstention).
                sure.update({h.memory.id: _sure(h, word) for h, word in hit_words(result)})
                options: list[tuple[str, str]] = [(_label(h.memory, sure[h.memory.id]), h.memory.id)
                                                  for h, _ in hit_words(result)]
            else:
                memories = project.list(kind=kind.value or None, include_inactive=past.value)
                note.value = (
                    _plural(len(memories), "memory", "memories")
                    if len(memories) <= ROWS
                    else f"first {ROWS} of {len(memories)}; search for the rest"
                )
                options = [(_label(m), m.id) for m in memories[:ROWS]]
        except JupymemError as exc:
            note.value = _error(exc.message)
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
            detail.value = _error(exc.message)
            return
        detail.value = detail_html(project, m, sure.get(m.id))
        confirm.disabled = not (m.active and m.standing == UNCONFIRMED)
        retire.disabled = not m.active

    def redraw() -> None:
        seen["revision"] = project.revision()
        refresh_header()
        refresh_list()
        show()

    def catch_up(*_: Any) -> None:
        """Redraw if memory changed since the last look (elsewhere, or in another cell)."""
        if project.revision() != seen["revision"]:
            redraw()

    def act(fn: Any) -> None:
        try:
            fn()
        except JupymemError as exc:
            note.value = _error(exc.message)
            return
        reason.value = ""
        redraw()

    def interacted(handler: Any) -> Any:
        def run(change: Any) -> None:
            catch_up()
            handler(change)

        return run

    confirm.on_click(lambda _: act(lambda: project.confirm(listing.value)))
    retire.on_click(lambda _: act(lambda: project.retire(listing.value, reason.value.strip() or None)))
    refresh.on_click(lambda _: redraw())
    search.observe(interacted(refresh_list), names="value")
    kind.observe(interacted(refresh_list), names="value")
    past.observe(interacted(refresh_list), names="value")
    listing.observe(interacted(show), names="value")

    redraw()
    top = w.HBox([header, refresh], layout=w.Layout(justify_content="space-between", align_items="center", **full))
    box = w.VBox(
        [top, w.HBox([search, kind, past], layout=w.Layout(**full)), note, listing, detail, actions],
        layout=w.Layout(width="auto", max_width="100%"),
    )
    if shell is not None:
        _follow_cells(shell, box, catch_up)
    # Handles for tests and for callers that want to drive it.
    box.jupymem = {  # type: ignore[attr-defined]
        "search": search, "kind": kind, "past": past, "list": listing, "note": note, "detail": detail,
        "confirm": confirm, "reason": reason, "retire": retire, "header": header, "refresh": refresh,
    }
    return box


def _follow_cells(shell: Any, box: Any, catch_up: Any) -> None:
    """After each cell, catch up while the browser is open; unhook once it is closed.

    Only a weak reference is kept, so the hook never keeps a closed browser alive.
    """
    alive = weakref.ref(box)

    def after_cell(*_: Any) -> None:
        b = alive()
        if b is None or b.comm is None:  # closed: this hook has nothing left to do
            shell.events.unregister("post_run_cell", after_cell)
            return
        catch_up()

    shell.events.register("post_run_cell", after_cell)
