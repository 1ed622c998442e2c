"""One ``%%ask`` turn, without IPython: memory context, model, tools, conversation.

``ask_turn`` is the whole flow that the ``%%ask`` magic (``faces/ask.py``) shows: the
system prompt is built by ``context.build`` (instructions + block, then retrieved
memory, this session's staged failures and the notebook's conversation memory);
the model may call ``memory_search`` and ``memory_record`` (``tools.py``). After
the answer, the turn joins the notebook's conversation memory, a prompt beginning
with "remember" / "recuerda" / "acuérdate" is stored as the person's declaration,
and, when the conversation has grown past 25 messages, it is folded into its
summary in a background thread: the person never waits for that.

Some models (small local ones behind a server that does not parse their calls) write a
tool call out as text, a JSON object naming ``memory_record``. That is never run and
never shown: the start of each reply is held back while it may still be such a call
(``_Holdback``); if it was one, the model is asked again without tools, and the turn
says what happened (``Turn.written_calls``) instead of showing JSON.

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
    written_calls: list[str] = field(default_factory=list)  # tool calls the model wrote as text (not run)


class _Holdback:
    """Passes a streamed reply on, except its start while that may still be a tool call
    written as text (``tools.written_calls``): a reply beginning ```` ```python ```` or a
    word flows at once; one beginning ```` ```json ````, ``{``, ``[`` or ``<tool_call>`` is
    held to its end, then shown unless it was a call."""

    STARTS = ("```json", "```JSON", "```tool_call", "```\n{", "{", "[", "<tool_call>")

    def __init__(self, show: Callable[[str], None]):
        self.show = show
        self.held = ""
        self.passing = False

    def __call__(self, piece: str) -> None:
        if self.passing:
            self.show(piece)
            return
        self.held += piece
        start = self.held.lstrip()
        if any(m.startswith(start) or start.startswith(m) for m in self.STARTS):
            return
        self.passing = True
        self.show(self.held)
        self.held = ""

    def end(self, *, drop: bool) -> None:
        if self.held and not drop:
            self.show(self.held)
        self.held, self.passing = "", False


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

    written: list[str] = []
    for round_ in range(MAX_TOOL_ROUNDS + 1):
        last = round_ == MAX_TOOL_ROUNDS
        state["new_round"] = round_ > 0
        extra: dict[str, Any] = {"tool_choice": "none"} if last else {}
        hold = _Holdback(show)
        reply = llm.complete(model, list(messages), tools=tools.SCHEMAS, on_text=hold, **extra, **llm_kw)
        as_text = () if reply.tool_calls else tools.written_calls(reply.text, any_name=True)
        hold.end(drop=bool(as_text))
        if as_text:
            # Not run, not shown: ask once more without tools, so that the model answers.
            written.extend(as_text)
            hold = _Holdback(show)
            reply = llm.complete(model, list(messages), on_text=hold, **llm_kw)
            again = tools.written_calls(reply.text)
            hold.end(drop=bool(again))
            written.extend(again)
            if not again:
                parts.append(reply.text)
            break
        parts.append(reply.text)
        if not reply.tool_calls or last:
            break
        messages.append(reply.message())
        for call in reply.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": tools.run(tctx, call.name, call.arguments)})
    answer = "\n\n".join(p for p in parts if p)
    turn = Turn(answer=answer, recorded=list(tctx.recorded), messages=messages, written_calls=written)

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
