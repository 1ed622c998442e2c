"""One ``%%ask`` turn, without IPython: memory context, model, tools, conversation.

``ask_turn`` is the whole flow that the ``%%ask`` magic (``faces/ask.py``) shows: the
system prompt is built by ``context.build`` (instructions + block, then retrieved
memory, this session's staged failures and the notebook's conversation memory);
the model may call ``memory_search`` and ``memory_record`` (``tools.py``). After
the answer, the turn joins the notebook's conversation memory, a prompt beginning
with "remember" / "recuerda" / "acuérdate" is stored as the person's declaration,
and, when the conversation has grown past 25 messages, it is folded into its
summary in a background thread: the person never waits for that.

It is kept apart from the magic so that loading the extension imports none of
it; litellm itself is imported on the first model call (``llm.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..intake import llm
from . import tools
from ..config import Settings
from .inject import PLAIN_INSTRUCTIONS, build as build_context
from .conversation import Conversation, start_compaction
from ..errors import JupymemError
from ..models import Evidence, Memory, Provenance

MAX_TOOL_ROUNDS = 4


@dataclass
class Turn:
    answer: str
    recorded: list[Memory] = field(default_factory=list)  # by the model's tool calls
    declared: Memory | None = None  # a "remember ..." prompt
    problem: str | None = None  # why a declaration was not stored
    compaction: threading.Thread | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)  # the last request sent


_ephemeral: dict[str, Conversation] = {}
_ephemeral_lock = threading.Lock()


def conversation_for(project: Any, path: Path) -> Conversation:
    """The notebook's conversation: in the project database when the repository has
    memory, else kept in this process only (nothing is written anywhere)."""
    if project is not None:
        key = ""
        if path.is_file():
            try:
                key = path.resolve().relative_to(project.root).as_posix()
            except ValueError:
                key = path.as_posix()
        return Conversation(project.store, key)
    with _ephemeral_lock:
        conv = _ephemeral.get(str(path))
        if conv is None:
            conv = _ephemeral[str(path)] = Conversation.in_memory(str(path))
        return conv


def _move_conversation(old: Conversation, new: Conversation, path: Path) -> Conversation:
    for m in old.messages():
        new.append(m.role, m.content)
    with _ephemeral_lock:
        _ephemeral.pop(str(path), None)
    return new


def ask_turn(
    prompt: str,
    *,
    model: str,
    path: Path,
    settings: Settings,
    evidence: Sequence[Evidence] = (),
    provenance: Provenance | None = None,
    full: bool = False,
    memory: bool = True,
    on_text: Callable[[str], None] | None = None,
    **llm_kw: Any,
) -> Turn:
    """Ask ``model`` about ``prompt`` with the memory of ``path``'s repository.

    ``llm_kw`` goes to every model call of the turn (tests pass ``mock_response``
    or ``api_base``). Raises ``JupymemError`` (``ModelError`` ...) when the model
    cannot answer; what memory refuses (a secret, a language) is reported in the
    turn, never raised after the answer has been shown.
    """
    from ..core.opening import find_project
    from ..storage.registry import find_git_root

    if not memory:
        plain = [{"role": "system", "content": PLAIN_INSTRUCTIONS}, {"role": "user", "content": prompt}]
        reply = llm.complete(model, plain, on_text=on_text, **llm_kw)
        return Turn(answer=reply.text, messages=plain)

    translator = llm.translator_for(settings.with_(model=model), **llm_kw)
    project = find_project(path, settings)
    if project is not None and project.translator is None:
        project.translator = translator
    conv = conversation_for(project, path)
    root = find_git_root(path)
    mem = build_context(
        project, prompt, evidence=evidence, conversation=conv, full=full,
        repository=root.name if root is not None else None,
    )
    tctx = tools.ToolContext(
        path=path, settings=settings, prompt=prompt, evidence=tuple(evidence),
        provenance=provenance or Provenance(recorder="assistant"), translator=translator,
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": mem.system_prompt},
        {"role": "user", "content": prompt},
    ]
    parts: list[str] = []
    # A later round's text (after tool calls) starts a new paragraph of the shown answer.
    state = {"shown": False, "new_round": False}

    def show(piece: str) -> None:
        if on_text is None:
            return
        if state["new_round"] and state["shown"]:
            on_text("\n\n")
        state["shown"], state["new_round"] = True, False
        on_text(piece)

    for round_ in range(MAX_TOOL_ROUNDS + 1):
        last = round_ == MAX_TOOL_ROUNDS
        state["new_round"] = round_ > 0
        extra: dict[str, Any] = {"tool_choice": "none"} if last else {}
        reply = llm.complete(model, list(messages), tools=tools.SCHEMAS, on_text=show, **extra, **llm_kw)
        parts.append(reply.text)
        if not reply.tool_calls or last:
            break
        messages.append(reply.message())
        for call in reply.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": tools.run(tctx, call.name, call.arguments)})
    answer = "\n\n".join(p for p in parts if p)
    turn = Turn(answer=answer, recorded=list(tctx.recorded), messages=messages)

    # After the answer: conversation memory, the declaration, then the fold.
    if tools.declaration(prompt) is not None:
        try:
            turn.declared = tools.record_declaration(tctx, prompt)
        except JupymemError as exc:
            turn.problem = exc.message
    if project is None and (turn.declared is not None or turn.recorded):
        # This turn started the repository's memory: the conversation moves there.
        project = find_project(path, settings)
        if project is not None:
            conv = _move_conversation(conv, conversation_for(project, path), path)
    conv.append("user", prompt)
    if answer:
        conv.append("assistant", answer)

    def summarize(request: list[dict[str, str]]) -> str:
        return llm.complete(model, request, stream=False, **llm_kw).text

    turn.compaction = start_compaction(conv, summarize)
    return turn
