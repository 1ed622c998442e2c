"""What rendering memory for people needs in both forms, text and HTML: the shared part of ``render``.

The ``Output`` that carries both, the cleaning every piece of record text goes through
before it is shown (control characters dropped, lines joined, long statements clipped),
and what both forms say in the same words: a memory's fields and marks, a history
entry's detail, which search legs ran, the status lines. ``render_text`` and
``render_html`` lay these out; ``render`` gathers both for the faces. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..models import _Record
from ..intake.text import strip_control
from ..models import (
    KINDS, Fix, Hit, HistoryEntry, Memory, Recorded, SearchResult, kind_rank,
)

if TYPE_CHECKING:
    from ..reports import DenseStatus, RepositoryStatus, SharingStatus

LINE_CHARS = 100  # a statement's share of a one-line listing in a terminal


@dataclass(frozen=True, eq=False, repr=False)
class Output(_Record):
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


def kind_class(kind: str) -> str:
    """The class that gives a kind its colour in every face (labextension/style/base.css)."""
    return f"jp-jupymem-kind-{kind}" if kind in KINDS else "jp-jupymem-kind-note"


def _replacement_mark(m: Memory) -> str | None:
    """``(replaced 2 ways)`` on a memory two people superseded differently, ``(1 of 2
    replacements)`` on each of its replacements; None when nothing is disputed."""
    if not m.replacements:
        return None
    n = len(m.replacements)
    return f"(1 of {n} replacements)" if m.id in m.replacements else f"(replaced {n} ways)"


def author_name(m: Memory) -> str | None:
    """The recorder's name for one-line listings (``Ana López <ana@…>`` -> ``Ana López``)."""
    author = m.provenance.author
    if not author:
        return None
    return author.split(" <", 1)[0] if not author.startswith("<") else author


SAID_CHARS = 72  # the statement's share of a one-line answer to a record


def _verb(done: Recorded) -> str:
    m = done.memory
    if m.supersedes and done.changed:
        return f"{m.supersedes} superseded by"
    return "Remembered" if done.changed else "Already remembered"


def _provenance(m: Memory) -> str:
    p = m.provenance
    parts = [f"recorded by {p.recorder}" + (f" ({p.author})" if p.author else "")]
    line = p.cell_id[1:] if p.cell_id and p.cell_id[:1] == "L" and p.cell_id[1:].isdigit() else None
    if p.notebook and line and not p.notebook.endswith(".ipynb"):  # a rule imported from an instruction file
        parts.append(f"{p.notebook} line {line}")
    else:
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


def fixed_in(fix: Fix) -> str:
    """``fixed in [7]`` (or by cell id, or just ``fixed``), and how the pair was found
    when it was a guess from similar sources."""
    where = f" in [{fix.execution_count}]" if fix.execution_count is not None else (
        f" in cell {fix.cell_id}" if fix.cell_id else ""
    )
    how = f" ({fix.paired_by})" if fix.paired_by != "cell id" else ""
    return f"fixed{where}{how}"


def _grouped(memories: Sequence[Memory]) -> list[tuple[str, list[Memory]]]:
    groups: dict[str, list[Memory]] = {}
    for m in sorted(memories, key=lambda m: (kind_rank(m.kind), m.created_at, m.id)):
        groups.setdefault(m.kind, []).append(m)
    return list(groups.items())


def confidence_word(confidence: float, *, answered: bool = True) -> str:
    """strong / likely / weak: how sure search is that a hit answers the query.

    ``answered``: whether the search's verdict answered (``SearchResult.status`` "ok"). When
    it abstained, the closest memories it still shows are "weak" whatever their score: the
    heading above them says no memory answers confidently, and a row under it that read
    "likely" would say the opposite. Every face (text, HTML, REST for the sidebar) words a
    hit through this, so they agree with each other and with the verdict."""
    from ..retrieval.answerable import level  # retrieval's thresholds; a light module

    return level(confidence) if answered else "weak"


def hit_words(result: SearchResult) -> list[tuple[Hit, str]]:
    """The hits a person sees (the closest ones when it abstained), each with its word."""
    answered = not result.abstained
    return [(h, confidence_word(h.confidence, answered=answered)) for h in (result.hits if answered else result.closest)]


def _legs_note(result: SearchResult) -> str:
    """Which legs ran: said when the dense leg did not (a one-shot command before a kernel
    made the transformer's vectors, the encoder still loading, or turned off)."""
    if result.legs and "dense" not in result.legs and "fts" not in result.legs:
        return " (words only: the semantic leg did not run; status says why)"
    if result.tier:
        return f" (words and meaning: {result.tier} encoder)"
    return ""


NOT_CONFIDENT = "No memory answers this confidently."


# What a history detail's keys mean, per action ("by" is the replacement of a superseded
# memory, and the kind of confirmer of a confirmation; "who" wrote the event).
_DETAIL_LABELS = {("superseded", "by"): "replaced by", ("supersedes", "old"): "replaces",
                  ("confirmed", "by"): "as", ("recorded", "supersedes"): "replaces",
                  ("reopened", "supersedes"): "replaces"}


def _detail(h: HistoryEntry) -> str:
    """Who did it first (the event's writer), then what the event says."""
    parts = [f"by {_one_line(str(h.detail['who']))}"] if h.detail.get("who") else []
    parts += [f"{_DETAIL_LABELS.get((h.action, k), k)}: {_one_line(str(v))}"
              for k, v in sorted(h.detail.items()) if k != "who"]
    return "; ".join(parts)


def _status_fields(s: RepositoryStatus) -> list[tuple[str, str]]:
    fields = [("repository", f"{s.name} ({s.root})" if s.root else s.path)]
    if s.memory:
        by_kind = ", ".join(f"{k} {n}" for k, n in s.counts.items() if n)
        fields.append(("memories", f"{s.total} active" + (f" ({by_kind})" if by_kind else "")))
        blk = s.block
        if blk:
            omitted = f", {blk.omitted} searched per prompt" if blk.omitted else ""
            fields.append(
                ("block", f"{blk.bytes}/{blk.cap} bytes, {blk.shown} shown{omitted}, revision {blk.revision}")
            )
        fields.append(("staged", f"{s.staged} failed cells"))
        if s.retrieval:
            fields.append(("search", _search_line(s.retrieval)))
        sharing = s.sharing
        if sharing is not None and sharing.state != "none":
            fields.append(("sharing", _sharing_line(sharing)))
            for problem in sharing.problems:
                fields.append(("problem", problem))
        fields.append(("project", str(s.project_id)))
        fields.append(("database", str(s.database)))
    if s.engine is not None:
        fields.append(("engine", f"{s.engine.name} at {s.engine.where}"))
    if not s.memory:
        fields.append(("home", s.home))
    if s.registry != "ok":
        fields.append(("registry", s.registry))
    return [(label, _clean(value)) for label, value in fields]


def _search_line(r: DenseStatus) -> str:
    """Which legs answer a search now, and what is still being built."""
    legs = " + ".join(r.legs or ["lexical"])
    if r.dense == "on":
        said = f"{legs} ({r.tier or 'static'} encoder)"
        if r.reason:  # the static tier answers while the transformer gets ready
            said += f"; {r.reason}"
    else:
        said = f"{legs} (no dense leg: {r.reason or 'off'})"
    parts = ["in this process " + said]
    if r.embedding and r.embedding.total:
        parts.append(f"embedding {r.embedding.done:,} of {r.embedding.total:,} memories")
    parts.append(f"index {r.index}")
    parts.append(f"typo names {r.typos}")
    return "; ".join(parts)


def _sharing_line(sharing: SharingStatus) -> str:
    files = sharing.files
    parts = [f"{sharing.state} ({len(files)} file{'s' if len(files) != 1 else ''} in {sharing.folder}/, "
             f"{sharing.shared_events} shared events)"]
    if sharing.state == "on":
        who = sharing.identity or "nobody: git has no user.name/user.email here"
        parts.append(f"writing as {who}" + (f" to {sharing.writer}" if sharing.writer else ""))
        if sharing.writer_damaged:
            parts.append("that file ends in a line that is not applied, so the next memory starts a new one")
    if sharing.private_memories:
        parts.append(f"{sharing.private_memories} private memories stay here")
    if sharing.local_events:
        parts.append(f"{sharing.local_events} events not shared yet (`jupymem share` writes them)")
    return "; ".join(parts)
