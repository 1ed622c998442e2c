"""Writing events for ``Project``: a record unless it adds nothing, many in one transaction, or any other.

Each memory is checked as every door checks it (``validate.check_payload``) before
anything is written; a record that adds nothing to memory (the same words, nothing new
cited) writes no event. In a shared repository the events go to this writer's file
too (``share.Sharing.writing``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..storage import database
from ..errors import InvalidTransition
from ..models import ACTIVE, UNCONFIRMED, Memory
from ..storage.projection import Batch, apply, is_private, memories_by_id, own_act

# Validation is imported by the writes themselves: a command that only reads never needs it.
if TYPE_CHECKING:
    from ..sharing import share


def checker(conn: database.Connection) -> Callable[[dict[str, Any]], None]:
    """A check of memories to be recorded together, each as every door checks it."""
    from ..storage import validate

    known = validate.DatabaseKnown(conn)

    def check(memory: dict[str, Any]) -> None:
        validate.check_payload("record", {"memory": memory}, known)

    return check


def never_reopened_unconfirmed(conn: database.Connection, memory: dict[str, Any]) -> None:
    """Refuse an unconfirmed record (an assistant's, without the person's own words) of a
    memory that a person retired or superseded: recording closed words again reopens
    them, supported as they were, and an assistant talked into it by a notebook or a
    data file would bring back exactly what the team had closed. The person's own record,
    or the assistant's with their words as ``user_quote``, still reopens it. (The same
    words reworded are ``Project._never_reworded_back``'s.)"""
    if memory.get("standing") != UNCONFIRMED:
        return
    found = memories_by_id(conn, [memory["id"]]).get(memory["id"])
    if found is None or found.status == ACTIVE:
        return
    raise reopening(found, f"{found.id} says this")


def never_reworded_back(conn: database.Connection, engine: Any, memory: dict[str, Any],
                        replacing: str | None = None) -> None:
    """``never_reopened_unconfirmed`` for the same words reworded: an unconfirmed record
    whose closest memory (``SearchEngine.reopens``, the near-duplicate score) is one a
    person retired or superseded is refused, as its exact words are. A comma dropped, a
    word changed: otherwise a new id, shown in the block as an unconfirmed constraint,
    brings back what the team closed. A record closest to an active memory (restating
    what stands) is not refused, nor one whose own id is known (``never_reopened_unconfirmed``
    says what becomes of it). ``replacing``: the memory a supersede closes, not counted."""
    if memory.get("standing") != UNCONFIRMED or memories_by_id(conn, [memory["id"]]):
        return
    closed = engine.reopens(memory["statement"], exclude=[replacing] if replacing else (),
                            private=bool(memory.get("private")))
    if closed is not None:
        raise reopening(closed, f"This says again in other words what {closed.id} said (\u201c{closed.statement}\u201d)")


def reopening(closed: Memory, says: str) -> InvalidTransition:
    """The refusal of an unconfirmed record that would bring ``closed`` back."""
    why = (f"superseded by {closed.superseded_by}" if closed.superseded_by
           else "retired" + (f" ({closed.retire_reason})" if closed.retire_reason else ""))
    return InvalidTransition(
        f"{says}, and was {why} on {(closed.valid_to or '')[:10]}. An unconfirmed record cannot "
        "bring it back; nothing was recorded. If the user wants it back, record it with their exact words as "
        "user_quote, or they can record it themselves."
    )


def record(conn: database.Connection, sharing: share.Sharing, memory: dict[str, Any], engine: Any = None) -> bool:
    """Write one record event for ``memory``; False when it would add nothing (no event).
    ``engine``: the project's search engine, which finds a closed memory reworded."""
    checker(conn)(memory)
    never_reopened_unconfirmed(conn, memory)
    if engine is not None:
        never_reworded_back(conn, engine, memory)
    # A Batch of one: a new memory's rows need no read before they are written (on the
    # team engine, every read under the project's write lock is a round trip others wait for).
    with sharing.writing() as log, Batch(conn, [memory["id"]]) as batch:
        if batch.adds_nothing(memory):
            return False
        _append(conn, log, batch, memory)
    return True


def _append(conn: database.Connection, log: Any, batch: Batch, memory: dict[str, Any]) -> None:
    """Append and apply one record. A private memory of this machine said again without
    ``private`` goes to the files, and only a line this machine wrote may act on a private
    memory (``projection.not_theirs``): it is marked as this machine's first."""
    ev = log.append("record", {"memory": memory}, private=bool(memory.get("private")))
    # Asked only of a shared line about a memory that has a row: no query for the
    # new memories of a bulk record, none in a repository that does not share.
    if ev.source is not None and not batch.has_no_row(memory["id"]) and is_private(conn, memory["id"]):
        own_act(conn, ev.uid)
    batch.apply(ev)


def write(conn: database.Connection, sharing: share.Sharing, type_: str, payload: dict[str, Any], *,
          private: bool = False, active: str | None = None) -> None:
    """Check and write one event of any type (a supersede, a retirement, a confirmation).
    ``active``: a memory that must still be active when the write begins (``still_active``)."""
    from ..storage import validate

    validate.check_payload(type_, payload, validate.DatabaseKnown(conn))
    with sharing.writing() as log:
        if active is not None:
            still_active(conn, active)
        apply(conn, log.append(type_, payload, private=private))


def still_active(conn: database.Connection, memory_id: str) -> None:
    """Raise ``InvalidTransition`` unless ``memory_id`` is active, read inside the write's
    transaction: the caller's own check came before it, and another process (six
    `jupymem supersede` at once, a retire racing a supersede) may have closed the memory
    since. Checked only before, five of six concurrent supersedes of one memory
    succeeded, leaving five active replacements."""
    found = memories_by_id(conn, [memory_id]).get(memory_id)
    if found is None or found.status != ACTIVE:
        state = found.status if found is not None else "gone"
        raise InvalidTransition(f"{memory_id} is {state} now (another writer closed it); nothing was changed.")


def record_many(conn: database.Connection, sharing: share.Sharing, memories: Sequence[dict[str, Any]]) -> None:
    """Write the record events of ``memories``, each already checked, in one transaction;
    those that add nothing are left out."""
    for memory in memories:
        never_reopened_unconfirmed(conn, memory)
    with sharing.writing() as log, Batch(conn, [memory["id"] for memory in memories]) as batch:
        for memory in memories:
            if not batch.adds_nothing(memory):
                _append(conn, log, batch, memory)


def supersede(conn: database.Connection, sharing: share.Sharing, old_id: str, memory: dict[str, Any], *,
              private: bool, engine: Any = None) -> None:
    """Check and write the events that make ``memory`` replace ``old_id``.

    The new statement may already be an active memory of its own: "Supersede instead",
    offered right after a record, or `remember` then `supersede` with the same words. A
    supersede event updates an active row's link only, never its kind or topic (as every
    replay of older logs did), so that row would keep the record's (a form's default
    "note", no topic) where ``memory`` carries the old one's. It is retired first, in the
    same transaction: a supersede of a closed row brings it back with the event's kind and
    topic, which is what a replay of these two events gives too.
    """
    from ..storage import validate

    never_reopened_unconfirmed(conn, memory)  # its new statement may be a closed memory's words
    if engine is not None:
        never_reworded_back(conn, engine, memory, replacing=old_id)
    found = memories_by_id(conn, [memory["id"]]).get(memory["id"])
    events: list[tuple[str, dict[str, Any], bool]] = []
    if found is not None and found.status == ACTIVE and (found.kind, found.topic) != (memory["kind"], memory.get("topic")):
        reason = f"restated as the replacement of {old_id}"
        events.append(("retire", {"id": found.id, "reason": reason}, found.private))
    events.append(("supersede", {"old": old_id, "memory": memory}, private))
    known = validate.DatabaseKnown(conn)
    for type_, payload, _ in events:
        validate.check_payload(type_, payload, known)
    with sharing.writing() as log:
        still_active(conn, old_id)
        for type_, payload, is_private in events:
            apply(conn, log.append(type_, payload, private=is_private))
