"""A memory as a record or supersede event carries it, built from what a person or an assistant gave.

The statement is cleaned and checked (``capture``), put into English under the language
policy (``intake.translate``; the words as said are kept and key the memory's id), the
kind, topic and standing checked as ``storage.validate`` says, notebooks made relative
to the repository, and the author taken from git when provenance does not name one.
``validate.check_payload`` then checks the whole event, as it does for every door.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..config import Settings
from ..models import Evidence, Provenance
from .staged import relative

# The write path's modules (the secret scan's patterns, the language tables, validation,
# git identity) are imported by the functions below, when something is recorded: a
# command that only reads (`jupymem status`, `block`) never pays for them.

_PROVENANCE_FIELDS = tuple(f.name for f in dataclasses.fields(Provenance))


def author(root: Path, home: Path | None = None) -> str | None:
    """Who records here: the git identity of ``root``'s repository, or None."""
    from ..sharing.identity import identity

    who = identity(root, home)
    return str(who) if who else None


def resolve_evidence(evidence: Iterable[str | Evidence], lookup: Callable[[str], Evidence]) -> list[Evidence]:
    """The failures cited, cleaned, one per handle (a handle is found with ``lookup``)."""
    from ..intake import capture

    out: dict[str, Evidence] = {}
    for e in evidence or ():
        item = e if isinstance(e, Evidence) else lookup(str(e))
        out[item.handle] = capture.clean_evidence(item)
    return list(out.values())


def memory_payload(
    statement: str | bytes,
    kind: str,
    topic: str | None,
    evidence: Iterable[str | Evidence],
    provenance: Provenance | None,
    standing: str | None,
    private: bool,
    *,
    root: Path,
    settings: Settings,
    translator: Any,
    lookup: Callable[[str], Evidence],
    who: str | None = None,
    owner: str | None = None,
) -> dict[str, Any]:
    """The ``memory`` of a record event; raises ``InvalidStatement``, ``SecretRefused`` or
    ``LanguageRefused`` for what cannot be stored. ``who``: the author when provenance
    names none (asked of git when not given); ``lookup`` finds a cited handle's failure."""
    from ..intake import capture, translate
    from ..storage import validate

    text = capture.check_statement(statement)
    validate.check_kind(kind)
    topic = validate.check_topic(topic)
    prov = provenance or Provenance()
    standing = validate.check_standing(standing, prov.recorder)
    stored, original = translate.english(text, settings, translator)
    prov_dict = {name: getattr(prov, name) for name in _PROVENANCE_FIELDS}  # to_dict(), without the recursion
    prov_dict["notebook"] = relative(prov.notebook, root)
    if prov.quote is not None:
        prov_dict["quote"] = capture.check_statement(prov.quote, "quote")
    if prov.author is None:  # who recorded it: the git identity of whoever writes here
        prov_dict["author"] = who or author(root, settings.home)
    payload: dict[str, Any] = {
        # Identity is keyed on the words as said (and, for a private memory on the team
        # engine, on whose it is: ``owner``).
        "id": capture.memory_id(text, owner if private else None),
        "kind": kind,
        "topic": topic,
        "statement": stored,
        "original": original,
        "standing": standing,
        "provenance": {k: v for k, v in prov_dict.items() if v is not None},
        # A failure's notebook relative to the repository, as provenance's: the
        # evidence travels with the lesson, and a path on this machine means nothing elsewhere.
        "evidence": [
            {**e.to_dict(), "notebook": relative(e.notebook, root)} for e in resolve_evidence(evidence, lookup)
        ],
    }
    if private:
        payload["private"] = True
        if owner is not None:
            payload["owner"] = owner
    return payload


def reason(text: str | None) -> str | None:
    """A retirement's reason, checked as a statement is (no secrets, nothing hidden)."""
    from ..intake import capture

    return None if text is None else capture.check_statement(text, "reason")
