"""A notebook's conversation with ``%%ask``: short, rolling, and searchable.

Each request carries a little of what was said before, chosen so that it stays
small however long the conversation grows (SPEC 7):

* the newest messages verbatim: 4 normally, 12 with ``--full`` (the most that
  is ever injected verbatim);
* up to 3 older messages that share words with the new prompt, found with FTS5
  (BM25) over this notebook's older messages;
* once the notebook holds more than 25 messages, the ones before the 5 newest
  are folded into an anchored summary (Objective / Important Details / Work
  State / Next Move / Relevant Files), merged with the previous summary, and
  deleted. The summary rides along instead.

The messages live in the project database (``storage/conversations.py``), keyed by
the notebook's path inside the repository, but outside the event log: they are a
working set, like staged evidence, not history to export. Messages are
redacted before they are stored, so a key pasted into a prompt is not kept.

Folding needs a model call, which the caller supplies (``summarize``): this
module never imports litellm, and ``start_compaction`` runs the fold in a
background thread so the person never waits for it. The fold deletes only the
messages it summarized, so a turn recorded meanwhile is never lost.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..intake import clock
from ..storage import database
from ..storage.conversations import ConversationStore
from ..storage.reads import store_for
from ..retrieval import lexical
from ..intake.capture import redact

log = logging.getLogger("jupymem")

RECENT = 4
RECENT_FULL = 12
RECALLED = 3
COMPACT_ABOVE = 25
KEEP_AFTER_COMPACTION = 5
MAX_STORED_CHARS = 12_000  # per message; long answers are clipped when stored
ROLES = ("user", "assistant")

HEADINGS = (
    "Objective",
    "Important Details",
    "Work State (Completed / Active / Blocked)",
    "Next Move",
    "Relevant Files",
)

COMPACTION_PROMPT = (
    "You keep the running summary of a conversation between a person working in a Jupyter "
    "notebook and their assistant. Merge the previous summary (if any) with the messages below "
    "into one updated summary. Keep decisions, constraints, names of columns, variables, files "
    "and errors exactly as written; drop small talk. Answer with exactly these Markdown "
    "sections, in this order, and nothing else:\n\n"
    + "\n".join(f"## {h}" for h in HEADINGS)
)


@dataclass(frozen=True)
class Message:
    id: int
    role: str
    content: str
    created_at: str


class Conversation:
    """One notebook's messages in one project's store."""

    def __init__(self, store: Any, notebook: str):
        """``store``: a ``reads.Store`` (``Project.store``) or a connection to wrap in one."""
        self.store: ConversationStore = store_for(store).conversations()
        self.notebook = notebook

    @classmethod
    def in_memory(cls, notebook: str = "") -> Conversation:
        """For a notebook whose repository has no memory: kept for this process only."""
        return cls(database.memory_database(), notebook)

    # -- reading ------------------------------------------------------------------

    def count(self) -> int:
        return self.store.count(self.notebook)

    def messages(self) -> list[Message]:
        """Every message still held, oldest first."""
        return [Message(*r) for r in self.store.messages(self.notebook)]

    def recent(self, n: int = RECENT) -> list[Message]:
        """The ``n`` newest messages, oldest first."""
        return [Message(*r) for r in reversed(self.store.recent(self.notebook, n))]

    def recall(self, prompt: str, before: int | None, limit: int = RECALLED) -> list[Message]:
        """Older messages (id < ``before``) that really share words with ``prompt``, oldest first.

        "Really" means at least two of the prompt's content words, or its only
        one: one ordinary word in common is not a reason to repeat a message.
        """
        terms = lexical.content_terms(prompt or "")
        if not terms or before is None:
            return []
        # The rarest words say the most; without a vocabulary here, longer words stand in for rarer.
        picked = sorted(terms, key=lambda t: (-len(t), t))[: lexical.MAX_TERMS]
        rows = self.store.recall(self.notebook, picked, before, 4 * limit)
        need = min(2, len(picked))
        wanted = set(picked)
        found = [Message(*r) for r in rows if len(wanted.intersection(lexical.tokens(r[2]))) >= need]
        return sorted(found[:limit], key=lambda m: m.id)

    def summary(self) -> str | None:
        return self.store.summary(self.notebook)[0]

    # -- writing ------------------------------------------------------------------

    def append(self, role: str, content: str) -> Message:
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {role!r}")
        text = redact(content or "").strip()
        if len(text) > MAX_STORED_CHARS:
            text = text[: MAX_STORED_CHARS - 1] + "…"
        at = clock.now_at()
        return Message(self.store.append(self.notebook, role, text, at), role, text, at)

    def clear(self) -> None:
        self.store.clear(self.notebook)

    # -- compaction -----------------------------------------------------------------

    def compaction_due(self) -> bool:
        return self.count() > COMPACT_ABOVE

    def compact(self, summarize: Callable[[list[dict[str, str]]], str]) -> bool:
        """Fold all but the 5 newest messages into the summary. True if it folded.

        ``summarize`` gets chat messages (``compaction_messages``) and returns the
        new summary; it runs outside any lock, as it is a slow model call. If
        another fold finished meanwhile, this one's result is dropped.
        """
        held = self.messages()
        if len(held) <= COMPACT_ABOVE:
            return False
        fold = held[:-KEEP_AFTER_COMPACTION]
        previous, folded = self.store.summary(self.notebook)
        text = redact((summarize(compaction_messages(previous, fold)) or "").strip())
        if not text:
            raise ValueError("the model returned an empty summary")
        # False: another fold won; its summary already covers these
        return self.store.fold(self.notebook, (previous, folded), text, folded + len(fold), fold[-1].id, clock.now_at())


def compaction_messages(previous: str | None, fold: Sequence[Message]) -> list[dict[str, str]]:
    """The request that asks a model to merge ``previous`` with ``fold``."""
    parts = []
    if previous:
        parts.append("Previous summary:\n" + previous)
    parts.append("Messages to fold in, oldest first:")
    parts.extend(f"[{m.role}] {m.content}" for m in fold)
    return [{"role": "system", "content": COMPACTION_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]


# -- folding in the background -------------------------------------------------------

_running: set[tuple[int, str]] = set()
_running_lock = threading.Lock()


def start_compaction(
    conversation: Conversation, summarize: Callable[[list[dict[str, str]]], str]
) -> threading.Thread | None:
    """Fold ``conversation`` in a daemon thread if it is due and no fold of it is
    running. Returns the thread (tests join it) or None. A failed fold logs one
    line and leaves the messages as they were; the next turn tries again."""
    if not conversation.compaction_due():
        return None
    key = (id(conversation.store), conversation.notebook)  # one store per connection
    with _running_lock:
        if key in _running:
            return None
        _running.add(key)

    def run() -> None:
        try:
            conversation.compact(summarize)
        except Exception as exc:  # a background fold must never surface in a cell
            log.warning("jupymem: could not summarize the conversation of %s: %s", conversation.notebook or "this session", exc)
        finally:
            with _running_lock:
                _running.discard(key)

    thread = threading.Thread(target=run, name="jupymem-compaction", daemon=True)
    thread.start()
    return thread
