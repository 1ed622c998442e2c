"""``%%ask``: a chat with a language model that carries this repository's memory.

The cell body is the prompt; the answer streams into the cell's output as
Markdown (plain text in a terminal). The turn itself (memory context, model,
tools, conversation memory) is ``assistant.ask_turn``, imported on the first
``%%ask`` so that loading the extension stays light; ``AskMagics`` only parses
the line, shows the stream and turns errors into ``UsageError``. ``install``
also keeps ``jupymem_context`` right for Jupyter AI's ``%%ai``: write
``{jupymem_context}`` in its prompt.

The model comes from ``--model`` or ``JUPYMEM_MODEL``; credentials only from
the provider's own environment variables, read by litellm. litellm itself is
imported on the first ``%%ask`` (``llm.load``), not when the extension loads.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from ..config import Settings
from ..errors import JupymemError
from .kernel import current_path, in_kernel, session_evidence, state
from .magic_options import options

if TYPE_CHECKING:
    from ..assistants.assistant import Turn

log = logging.getLogger("jupymem")

CONTEXT_VARIABLE = "jupymem_context"
NO_MODEL = (
    "%%ask needs a language model. Set JUPYMEM_MODEL to a litellm model name, e.g. "
    "`%env JUPYMEM_MODEL=openai/gpt-4o-mini` (with the provider's key, such as OPENAI_API_KEY, in the "
    "environment the kernel was started from), or pass one: `%%ask --model anthropic/claude-3-5-haiku-latest`."
)


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
    for name in dict.fromkeys(turn.written_calls):
        if name in ("memory_record", "memory_search"):
            what = "nothing was recorded" if name == "memory_record" else "memory was not searched"
            lines.append(f"- the model wrote a `{name}` call as text instead of calling the tool: {what}")
        else:  # a tool of its own invention
            lines.append(f"- the model wrote a call to `{name}`, a tool that does not exist, as text: "
                         "it was not run, and the model was asked again without tools")
    return ("**Memory**\n" + "\n".join(lines)) if lines else ""


@magics_class
class AskMagics(Magics):
    @magic_arguments()
    @argument("--model", "-m", metavar="MODEL", help="litellm model name (default: $JUPYMEM_MODEL)")
    @argument("--full", action="store_true", help="send the 12 newest messages of this notebook's conversation, not 4")
    @argument("--no-memory", action="store_true",
              help="send no memory and keep nothing: no block, tools, failures or conversation")
    @no_var_expand  # the options line as typed: `{expr}` and `$name` are not the notebook's variables
    @cell_magic
    def ask(self, line: str, cell: str) -> None:
        """Ask a language model; the cell is the prompt, the answer streams as Markdown.

        The request carries this repository's memory block, memories retrieved for
        the prompt, this session's staged failures and the notebook's recent
        conversation; the model can search and record memory. A prompt beginning
        with "remember" (or "recuerda", "acuérdate") is stored as your statement.
        """
        from ..assistants.assistant import ask_turn

        args = options(self.ask, line)
        prompt = (cell or "").strip()
        if not prompt:
            raise UsageError("%%ask needs a prompt: write your question in the cell below the magic.")
        settings = Settings.from_env()
        model = args.model or settings.model
        if not model:
            raise UsageError(NO_MODEL)
        path = current_path(self.shell)
        stream = _Stream(rich=in_kernel(self.shell))
        provenance = state(self.shell).provenance("assistant")
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
        from ..assistants.inject import for_path

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
    from ..core.opening import find_project

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
    # Not computed here: finding the project imports the core, and loading the
    # extension must stay light. The first %%ai cell or jupymem magic sets it.
    shell.events.register("pre_run_cell", state)


def uninstall(shell: Any) -> None:
    state = _context_states.pop(id(shell), None)
    if state is not None:
        try:
            shell.events.unregister("pre_run_cell", state)
        except ValueError:
            pass  # already gone
    shell.user_ns.pop(CONTEXT_VARIABLE, None)
