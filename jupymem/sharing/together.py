"""The writers' files put together: each event once, and what only the files together show.

An event id (uid) that two files give to different events is a conflict, named in both,
and both events are kept (each under its file's name), so that no file can make another
writer's memory vanish.
"""

from __future__ import annotations

import hashlib

from .sharelog import Entry, Problem, Reading, writer_of

__all__ = ["combine", "conflict_uid"]


def _tag(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:10]


def conflict_uid(uid: str, name: str) -> str:
    """The id under which a file's event is kept when another file gives its uid to another event."""
    return f"{uid}:{_tag(name)}"


def combine(readings: dict[str, Reading]) -> tuple[list[tuple[Entry, str, str]], list[Problem]]:
    """Every accepted entry of every file, once: ``(entry, file, uid to store it under)``,
    and the problems only the files together show.

    A uid is an event's identity. The same event in two files (an import copied it) is
    one event. Two *different* events under one uid are a conflict, named in both files
    on every clone: both are applied, each under its file's name, so a file that reuses
    the uid of someone's record cannot make that memory vanish, and every clone, reading
    the same files, keeps the same. Two files claiming one writer are named too.
    """
    first: dict[str, tuple[Entry, str]] = {}
    clash: dict[str, list[tuple[Entry, str]]] = {}
    owners: dict[str, list[str]] = {}
    for name in sorted(readings):
        wid = writer_of(name)
        if wid is not None and readings[name].lines:
            owners.setdefault(wid, []).append(name)
        for e in readings[name].entries:
            if e.uid not in first:
                first[e.uid] = (e, name)
            elif not first[e.uid][0].same_event(e):
                clash.setdefault(e.uid, [first[e.uid]]).append((e, name))
    problems = []
    out = []
    for uid, (e, name) in first.items():
        copies = clash.get(uid)
        if copies is None:
            out.append((e, name, uid))
            continue
        distinct: list[tuple[Entry, str]] = []
        for c in copies:
            if not any(c[0].same_event(d[0]) for d in distinct):
                distinct.append(c)
        for e2, name2 in distinct:
            others = ", ".join(f"{n} line {x.line}" if x.line > 0 else f"a line taken out of {n}"
                               for x, n in distinct if (x, n) != (e2, name2))
            out.append((e2, name2, conflict_uid(uid, name2)))
            problems.append(Problem(
                name2, e2.line, f"reuses the event id {uid[:12]}… of another event ({others}): both are applied, "
                "and one of the two lines was forged or edited", applied=True))
    for wid, names in sorted(owners.items()):
        if len(names) > 1:
            for name in names:
                problems.append(Problem(
                    name, 0, f"claims writer {wid}, as {', '.join(n for n in names if n != name)} does: "
                    "one writer writes one file", applied=True))
    return out, problems
