"""``%%ask``: a chat with a language model that carries this repository's memory.

The cell body is the prompt; the answer streams into the cell's output as
Markdown (plain text in a terminal). Each request's system prompt is built by
``context.build`` (instructions + block, then retrieved memory, this session's
staged failures and the notebook's conversation memory); the model may call
``memory_search`` and ``memory_record`` (``tools.py``). After the answer, the
turn joins the notebook's conversation memory, a prompt beginning with
"remember" / "recuerda" / "acuérdate" is stored as the person's declaration,
and, when the conversation has grown past 25 messages, it is folded into its
summary in a background thread: the person never waits for that.

``ask_turn`` is the whole flow without IPython; ``AskMagics`` only parses the
line, shows the stream and turns errors into ``UsageError``. ``install`` also
keeps ``jupymem_context`` (the block) current in the user namespace for
Jupyter AI's ``%%ai``: write ``{jupymem_context}`` in its prompt.

The model comes from ``--model`` or ``JUPYMEM_MODEL``; credentials only from
the provider's own environment variables, read by litellm. litellm itself is
imported on the first ``%%ask`` (``llm.load``), not when the extension loads.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from . import llm, tools
from .context import PLAIN_INSTRUCTIONS, build as build_context
from .config import Settings
from .conversation import Conversation, start_compaction
from .errors import JupymemError
from .models import Evidence, Memory, Provenance

log = logging.getLogger("jupymem")

MAX_TOOL_ROUNDS = 4
CONTEXT_VARIABLE = "jupymem_context"
NO_MODEL = (
    "%%ask needs a language model. Set JUPYMEM_MODEL to a litellm model name, e.g. "
    "`%env JUPYMEM_MODEL=openai/gpt-4o-mini` (with the provider's key, such as OPENAI_API_KEY, in the "
    "environment the kernel was started from), or pass one: `%%ask --model anthropic/claude-3-5-haiku-latest`."
)


# -- one turn, without IPython ---------------------------------------------------------


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
        return Conversation(project.conn, key)
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
    from .project import find_project
    from .registry import find_git_root

    if not memory:
        messages = [{"role": "system", "content": PLAIN_INSTRUCTIONS}, {"role": "user", "content": prompt}]
        reply = llm.complete(model, messages, on_text=on_text, **llm_kw)
        return Turn(answer=reply.text, messages=messages)

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
        extra = {"tool_choice": "none"} if last else {}
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


# -- the magic ------------------------------------------------------------------------------


class _Stream:
    """Shows an answer as it arrives: updated Markdown in a notebook, text in a terminal."""

    INTERVAL = 0.08  # seconds between display updates; keeps the front end responsive

    def __init__(self, rich: bool):
        self.rich = rich
        self.text = ""
        self.handle: Any = None
        self.last = 0.0

    def __call__(self, piece: str) -> None:
        self.text += piece
        if not self.rich:
            sys.stdout.write(piece)
            sys.stdout.flush()
            return
        now = time.monotonic()
        if now - self.last >= self.INTERVAL:
            self._show()
            self.last = now

    def _show(self) -> None:
        from IPython.display import display

        if self.handle is None:
            self.handle = display(_Answer(self.text), display_id=True)
        else:
            self.handle.update(_Answer(self.text))

    def finish(self, footer: str = "") -> None:
        if footer:
            self.text += ("\n\n" if self.text else "") + footer
            if not self.rich:
                sys.stdout.write(("\n\n" if self.text != footer else "") + footer)
        if self.rich:
            self._show()
        elif self.text:
            sys.stdout.write("\n")
            sys.stdout.flush()


class _Answer:
    """Markdown for notebooks, the same text for plain-text front ends and exports."""

    def __init__(self, text: str):
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def _footer(turn: Turn) -> str:
    lines = []
    for m in turn.recorded + ([turn.declared] if turn.declared else []):
        mark = "" if m.standing == "supported" else " (unconfirmed)"
        lines.append(f"- remembered {m.kind}{mark} `{m.id}`: {m.statement}")
    if turn.problem:
        lines.append(f"- not remembered: {turn.problem}")
    return ("**Memory**\n" + "\n".join(lines)) if lines else ""


def _session_id(shell: Any) -> str | None:
    session = getattr(getattr(getattr(shell, "kernel", None), "session", None), "session", None)
    return session if isinstance(session, str) and session else None


def _cell_id(shell: Any) -> str | None:
    get_parent = getattr(shell, "get_parent", None)
    try:
        parent = get_parent() if callable(get_parent) else None
    except Exception:  # outside a kernel there is no parent message
        return None
    cell_id = ((parent or {}).get("metadata") or {}).get("cellId")
    return cell_id if isinstance(cell_id, str) else None


@magics_class
class AskMagics(Magics):
    @magic_arguments()
    @argument("--model", "-m", metavar="MODEL", help="litellm model name (default: $JUPYMEM_MODEL)")
    @argument("--full", action="store_true", help="send the 12 newest messages of this notebook's conversation, not 4")
    @argument("--no-memory", action="store_true",
              help="send no memory and keep nothing: no block, tools, failures or conversation")
    @cell_magic
    def ask(self, line: str, cell: str) -> None:
        """Ask a language model; the cell is the prompt, the answer streams as Markdown.

        The request carries this repository's memory block, memories retrieved for
        the prompt, this session's staged failures and the notebook's recent
        conversation; the model can search and record memory. A prompt beginning
        with "remember" (or "recuerda", "acuérdate") is stored as your statement.
        """
        from .magics import current_path, session_evidence

        args = parse_argstring(self.ask, line)
        prompt = (cell or "").strip()
        if not prompt:
            raise UsageError("%%ask needs a prompt: write your question in the cell below the magic.")
        settings = Settings.from_env()
        model = args.model or settings.model
        if not model:
            raise UsageError(NO_MODEL)
        path = current_path(self.shell)
        stream = _Stream(rich=getattr(self.shell, "kernel", None) is not None)
        provenance = Provenance(
            recorder="assistant",
            notebook=str(path) if path.is_file() else None,
            cell_id=_cell_id(self.shell),
            execution_count=getattr(self.shell, "execution_count", None),
            session=_session_id(self.shell),
        )
        try:
            turn = ask_turn(
                prompt, model=model, path=path, settings=settings,
                evidence=session_evidence(self.shell) if not args.no_memory else (),
                provenance=provenance, full=args.full, memory=not args.no_memory, on_text=stream,
            )
        except JupymemError as exc:
            raise UsageError(exc.message) from None
        stream.finish(_footer(turn))
        refresh_context(self.shell)


# -- jupymem_context for %%ai -------------------------------------------------------------


class _ContextState:
    """Per shell: keeps ``jupymem_context`` right for the cells that use it.

    The ``pre_run_cell`` hook runs before *every* cell, so it does one string
    test and returns unless the cell is Jupyter AI's ``%%ai``/``%ai``; for
    those it computes the block plus the memories retrieved for that cell's
    prompt. jupymem's own magics refresh it too (``refresh_context``), so the
    variable is also current after any change made from this kernel.
    """

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def __call__(self, info: Any = None) -> None:  # pre_run_cell hook
        raw = getattr(info, "raw_cell", None)
        if not raw or not raw.lstrip().startswith(_AI_MAGICS):
            return
        self.refresh(_ai_prompt(raw))

    def refresh(self, prompt: str = "") -> None:
        from .context import for_path
        from .magics import current_path

        try:
            text = for_path(prompt, current_path(self.shell)) if prompt else _block_text(self.shell)
        except Exception as exc:  # a hook must never break the user's cell
            log.warning("jupymem: could not refresh %s: %s", CONTEXT_VARIABLE, exc)
            return
        self.shell.user_ns[CONTEXT_VARIABLE] = text


_AI_MAGICS = ("%%ai", "%ai ")


def _ai_prompt(raw: str) -> str:
    """The prompt of an ``%%ai`` cell (its body) or ``%ai`` line (after the model id)."""
    first, _, body = raw.lstrip().partition("\n")
    if first.startswith("%%"):
        return body
    return first.split(None, 2)[2] if len(first.split(None, 2)) == 3 else ""


def _block_text(shell: Any) -> str:
    from .magics import current_path
    from .project import find_project

    proj = find_project(current_path(shell), Settings.from_env())
    return proj.block().text if proj is not None else ""


_context_states: dict[int, _ContextState] = {}


def _context_state(shell: Any) -> _ContextState:
    state = _context_states.get(id(shell))
    if state is None:
        state = _context_states[id(shell)] = _ContextState(shell)
    return state


def refresh_context(shell: Any) -> None:
    """Bring ``jupymem_context`` up to date (the block, or "" without memory)."""
    _context_state(shell).refresh()


def install(shell: Any) -> None:
    """Register ``%%ask`` and keep ``jupymem_context`` current (called on %load_ext)."""
    shell.register_magics(AskMagics)
    state = _context_state(shell)
    shell.events.register("pre_run_cell", state)
    state.refresh()


def uninstall(shell: Any) -> None:
    state = _context_states.pop(id(shell), None)
    if state is not None:
        try:
            shell.events.unregister("pre_run_cell", state)
        except ValueError:
            pass  # already gone
    shell.user_ns.pop(CONTEXT_VARIABLE, None)
