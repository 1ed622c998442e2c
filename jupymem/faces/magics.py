"""The IPython face: ``%memory``, ``%%remember`` and the failed-cell hook.

Thin on purpose: every operation is one ``Project`` call, every error a
``JupymemError`` turned into ``UsageError`` in one place, every output built by
``render``. Two things here are hot and kept cheap:

* loading the extension imports no numpy, model2vec, sqlite-vec or litellm
  (the core is stdlib; the dense leg and models load on first need);
* the ``post_run_cell`` hook returns at once when a cell succeeded. Only a
  failure does work: it is diagnosed, kept in this session's window of 64,
  and staged in the project database when the repository already has memory
  (staging never creates memory).
"""

from __future__ import annotations

import collections
import io
import logging
import os
import shlex
import uuid
from argparse import REMAINDER
from pathlib import Path
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser, argument, magic_arguments, parse_argstring
from IPython.core.error import UsageError

from ..config import Settings
from ..errors import JupymemError, NoMemory
from ..models import KINDS, Evidence, Provenance

# Loading the extension imports only this module and the records: the core,
# rendering and failure diagnosis are imported when a magic or a failure first
# needs them (``%load_ext jupymem`` adds well under 150 ms to a kernel).

log = logging.getLogger("jupymem")

WINDOW = 64
_OWN_CELLS = ("%memory", "%%remember", "%%ask", "%%memory")


# -- where this kernel is ----------------------------------------------------------


def current_path(shell: Any) -> Path:
    """The kernel's notebook (``JPY_SESSION_NAME`` / ``__session__``), else the cwd."""
    name = os.environ.get("JPY_SESSION_NAME") or (getattr(shell, "user_ns", {}) or {}).get("__session__")
    cwd = Path.cwd()
    if isinstance(name, str) and name.strip():
        p = Path(name).expanduser()
        # Jupyter gives the path relative to the server root, while the kernel
        # runs in the notebook's directory: try it as given, then by its name.
        for candidate in (p, cwd / p, cwd / p.name) if not p.is_absolute() else (p,):
            if candidate.exists():
                return candidate.resolve()
    return cwd


def _cell_id(shell: Any) -> str | None:
    get_parent = getattr(shell, "get_parent", None)
    try:
        parent = get_parent() if callable(get_parent) else None
    except Exception:  # outside a kernel there is no parent message
        return None
    meta = (parent or {}).get("metadata") or {}
    cell_id = meta.get("cellId")
    return cell_id if isinstance(cell_id, str) else None


def _execution_count(shell: Any) -> int | None:
    # The running cell's result is the reliable source: IPython 9 bumps
    # shell.execution_count before running a cell, IPython 8 after.
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) else getattr(shell, "execution_count", None)


class _State:
    """Per-shell: the session id, the window of staged failures, the hook."""

    def __init__(self, shell: Any):
        self.shell = shell
        kernel = getattr(shell, "kernel", None)
        session = getattr(getattr(kernel, "session", None), "session", None)
        self.session: str = session if isinstance(session, str) and session else uuid.uuid4().hex
        self.window: collections.deque[Evidence] = collections.deque(maxlen=WINDOW)

    def settings(self) -> Settings:
        return Settings.from_env()

    def notebook(self) -> str | None:
        p = current_path(self.shell)
        return str(p) if p.is_file() else None

    def project(self, create: bool = False) -> Any:
        import jupymem

        path = current_path(self.shell)
        return jupymem.init(path) if create else jupymem.project(path)

    def provenance(self) -> Provenance:
        return Provenance(
            recorder="person",
            notebook=self.notebook(),
            cell_id=_cell_id(self.shell),
            execution_count=_execution_count(self.shell),
            session=self.session,
        )

    # The hook. Kept to one attribute test on success.
    def post_run_cell(self, result: Any) -> None:
        if result.error_in_exec is None and result.error_before_exec is None:
            return
        try:
            self._stage(result)
        except Exception as exc:  # a broken hook must never break the user's cell
            log.warning("jupymem: could not stage this failure: %s", exc)

    def _stage(self, result: Any) -> None:
        exc = result.error_in_exec or result.error_before_exec
        info = getattr(result, "info", None)
        source = getattr(info, "raw_cell", "") or ""
        if source.lstrip().startswith(_OWN_CELLS):
            return  # memory's own operations are never evidence
        from ..capture import evidence_from_exception

        ev = evidence_from_exception(
            exc,
            source=source,
            session=self.session,
            cell_id=getattr(info, "cell_id", None),
            execution_count=getattr(result, "execution_count", None),
            notebook=self.notebook(),
        )
        if ev is None:
            return
        self.window.appendleft(ev)
        proj = self.project()
        if proj is not None:
            proj.stage_failure(ev)

    def resolve_evidence(self, handles: list[str]) -> list[Evidence | str]:
        """Handles -> this session's Evidence where we hold it (the project may not
        have existed when it failed); ``last`` is the newest failure."""
        by_handle = {e.handle: e for e in self.window}
        out: list[Evidence | str] = []
        for h in handles:
            if h == "last":
                if not self.window:
                    raise UsageError("No failure staged in this session yet; nothing to cite as `last`.")
                out.append(self.window[0])
            else:
                out.append(by_handle.get(h, h))
        return out


_states: dict[int, _State] = {}


def _state(shell: Any) -> _State:
    state = _states.get(id(shell))
    if state is None:
        state = _states[id(shell)] = _State(shell)
    return state


def session_evidence(shell: Any) -> list[Evidence]:
    """This kernel session's staged failures, newest first."""
    return list(_state(shell).window)


# -- output ------------------------------------------------------------------------


class Output:
    """Shows HTML in a notebook and plain text in a terminal."""

    def __init__(self, text: str, html: str | None = None):
        self.text, self.html = text, html

    def _repr_html_(self) -> str | None:
        return self.html

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text)

    def __repr__(self) -> str:
        return self.text


def _render() -> Any:
    from . import render

    return render


def _check_first_record(statement: str, settings: Settings) -> None:
    from ..core import check_first_record

    check_first_record(statement, settings)


def _usage_error(exc: Exception) -> Exception:
    """What the person sees: a ``JupymemError`` (or a driver error that means a damaged
    database, a read-only home or a full disk) as a ``UsageError``; anything else is a
    bug and keeps its traceback."""
    if isinstance(exc, UsageError):
        return exc
    if not isinstance(exc, JupymemError):
        from ..damage import storage_error

        err = storage_error(exc)
        if err is None:
            return exc
        exc = err
    return UsageError(exc.message)


def _display(text: str, html: str | None = None) -> None:
    from IPython.display import display

    display(Output(text, html))


# -- argument parsing for %memory's subcommands ----------------------------------


def _subparsers() -> dict[str, MagicArgumentParser]:
    def p(name: str, help_: str) -> MagicArgumentParser:
        return MagicArgumentParser(prog=f"%memory {name}", description=help_, add_help=False)

    parsers = {}
    parsers["init"] = p("init", "Bind this repository and start (or adopt) its memory.")
    parsers["status"] = p("status", "What jupymem knows about this repository. Never writes.")
    r = parsers["remember"] = p("remember", "Record a statement as a person (supported).")
    r.add_argument("--kind", choices=KINDS, default="note")
    r.add_argument("--topic")
    r.add_argument("--evidence", action="append", default=[], metavar="ev-...")
    r.add_argument("text", nargs=REMAINDER)
    s = parsers["search"] = p("search", "Search memory; abstains when nothing really matches.")
    s.add_argument("--limit", type=int, default=10)
    s.add_argument("--all", action="store_true", help="include retired and superseded memories")
    s.add_argument("--kind", choices=KINDS, action="append")
    s.add_argument("query", nargs=REMAINDER)
    parsers["block"] = p("block", "Show the <project_memory> block exactly as assistants receive it.")
    parsers["block"].add_argument("--cap", type=int)
    lst = parsers["list"] = p("list", "List memories by kind, in block order.")
    lst.add_argument("--kind", choices=KINDS)
    lst.add_argument("--all", action="store_true")
    parsers["evidence"] = p("evidence", "Show staged failures that a lesson can cite.")
    for name, help_ in (("show", "Show one memory in full."), ("history", "Show a memory's history."),
                        ("confirm", "Confirm a memory (it becomes supported).")):
        parsers[name] = p(name, help_)
        parsers[name].add_argument("id")
    sup = parsers["supersede"] = p("supersede", "Replace a memory with a new statement.")
    sup.add_argument("id")
    sup.add_argument("text", nargs=REMAINDER)
    ret = parsers["retire"] = p("retire", "Retire a memory (it leaves the block, stays in history).")
    ret.add_argument("id")
    ret.add_argument("--reason", nargs="+", help="why (the rest of the line)")
    parsers["verify"] = p("verify", "Check the hash-chained history and the tables derived from it.")
    parsers["rebuild"] = p("rebuild", "Recreate every table and index from the history.")
    parsers["gc"] = p("gc", "Drop what retention rules allow (never a supported decision, ...).")
    parsers["gc"].add_argument("--dry-run", action="store_true")
    parsers["export"] = p("export", "Write the history as JSONL (for sharing through git).")
    parsers["export"].add_argument("--out")
    parsers["import"] = p("import", "Verify and merge an exported history, without duplicates.")
    parsers["import"].add_argument("file")
    parsers["browse"] = p("browse", "Browse memory with widgets (for front ends without the sidebar).")
    return parsers


SUBCOMMANDS = _subparsers()
_SUMMARY = "\n".join(f"  {name:<10} {parser.description}" for name, parser in SUBCOMMANDS.items())


@magics_class
class MemoryMagics(Magics):
    @magic_arguments()
    @argument("action", choices=list(SUBCOMMANDS), help="what to do (see below)")
    @argument("args", nargs=REMAINDER, help="the action's own arguments; `%%memory ACTION -h` for them")
    @line_magic
    def memory(self, line: str) -> None:
        """Project memory for this notebook's git repository."""
        try:
            words = shlex.split(line, posix=True)
        except ValueError:  # an apostrophe in free text ("don't") is not a quoting error
            words = line.split()
        if not words:
            raise UsageError(f"%memory needs an action:\n{_SUMMARY}")
        parse_argstring(self.memory, shlex.join(words[:1]))  # validates the action name
        action, rest = words[0], words[1:]
        parser = SUBCOMMANDS[action]
        if rest and rest[0] in ("-h", "--help"):
            print(parser.format_help())
            return
        args = parser.parse_args(rest)
        try:
            getattr(self, "_" + action)(args)
        except Exception as exc:
            raise _usage_error(exc) from None
        _after_change(self.shell)

    memory.__doc__ = (memory.__doc__ or "") + "\n\nActions:\n" + _SUMMARY  # type: ignore[operator]

    @magic_arguments()
    @argument("--kind", choices=KINDS, default="note", help="what sort of memory (default: note)")
    @argument("--topic", help="a short label, e.g. 'joins' or 'plots'")
    @argument("--evidence", action="append", default=[], metavar="ev-...",
              help="cite a staged failure (`last`: this session's newest)")
    @argument("--supersedes", metavar="ID", help="this statement replaces memory ID")
    @cell_magic
    def remember(self, line: str, cell: str) -> None:
        """Record the cell body as a memory of this repository (initializes it if needed)."""
        args = parse_argstring(self.remember, line)
        state = _state(self.shell)
        try:
            _check_first_record(cell, state.settings())
            proj = state.project(create=True)
            m = proj.remember(
                cell,
                kind=args.kind,
                topic=args.topic,
                evidence=state.resolve_evidence(args.evidence),
                supersedes=args.supersedes,
                provenance=state.provenance(),
            )
        except Exception as exc:
            raise _usage_error(exc) from None
        _after_change(self.shell)
        _display(_render().memory_text(m), _render().memory_html(m))

    # -- actions --------------------------------------------------------------

    def _need(self) -> Any:
        proj = _state(self.shell).project()
        if proj is None:
            from ..registry import require_git_root

            root = require_git_root(current_path(self.shell))
            raise NoMemory(f"{root.name} has no memory yet. `%%remember` or `%memory init` starts it.")
        return proj

    def _init(self, args: Any) -> None:
        _state(self.shell).project(create=True)
        self._status(args)

    def _status(self, args: Any) -> None:
        import jupymem

        st = jupymem.status(current_path(self.shell))
        _display(_render().status_text(st), _render().status_html(st))

    def _remember(self, args: Any) -> None:
        state = _state(self.shell)
        _check_first_record(" ".join(args.text), state.settings())
        proj = state.project(create=True)
        m = proj.remember(
            " ".join(args.text), kind=args.kind, topic=args.topic,
            evidence=state.resolve_evidence(args.evidence), provenance=state.provenance(),
        )
        _display(_render().memory_text(m), _render().memory_html(m))

    def _search(self, args: Any) -> None:
        result = self._need().search(" ".join(args.query), limit=args.limit, include_inactive=args.all, kinds=args.kind)
        _display(_render().search_text(result), _render().search_html(result))

    def _block(self, args: Any) -> None:
        print(self._need().block(args.cap).text)

    def _list(self, args: Any) -> None:
        memories = self._need().list(kind=args.kind, include_inactive=args.all)
        _display(_render().memories_text(memories), _render().memories_html(memories))

    def _evidence(self, args: Any) -> None:
        state = _state(self.shell)
        proj = state.project()
        staged = {e.handle: e for e in (proj.staged_evidence() if proj else [])}
        staged.update({e.handle: e for e in state.window})
        items = sorted(staged.values(), key=lambda e: e.created_at, reverse=True)
        _display(_render().evidence_text(items), _render().evidence_html(items))

    def _show(self, args: Any) -> None:
        m = self._need().get(args.id)
        _display(_render().memory_text(m), _render().memory_html(m))

    def _history(self, args: Any) -> None:
        proj = self._need()
        entries = proj.history(args.id)
        _display(_render().history_text(entries), _render().history_html(entries))

    def _supersede(self, args: Any) -> None:
        m = self._need().supersede(args.id, " ".join(args.text), provenance=_state(self.shell).provenance())
        _display(_render().memory_text(m), _render().memory_html(m))

    def _retire(self, args: Any) -> None:
        m = self._need().retire(args.id, " ".join(args.reason) if args.reason else None)
        _display(_render().memory_text(m), _render().memory_html(m))

    def _confirm(self, args: Any) -> None:
        m = self._need().confirm(args.id)
        _display(_render().memory_text(m), _render().memory_html(m))

    def _verify(self, args: Any) -> None:
        report = self._need().verify()
        _display(_render().verify_text(report))

    def _rebuild(self, args: Any) -> None:
        n = self._need().rebuild()
        _display(f"Rebuilt every table and index from {n} events.")

    def _gc(self, args: Any) -> None:
        report = self._need().gc(dry_run=args.dry_run)
        _display(_render().gc_text(report))

    def _export(self, args: Any) -> None:
        proj = self._need()
        if args.out:
            with open(args.out, "w", encoding="utf-8") as fh:
                n = proj.export(fh)
            _display(f"Exported {n} events to {args.out}.")
        else:
            buf = io.StringIO()
            proj.export(buf)
            print(buf.getvalue(), end="")

    def _import(self, args: Any) -> None:
        proj = _state(self.shell).project(create=True)
        try:
            with open(args.file, encoding="utf-8") as fh:
                report = proj.import_(fh, source=args.file)
        except OSError as exc:
            raise UsageError(f"Cannot read {args.file}: {exc.strerror}.") from None
        _display(_render().import_text(report))

    def _browse(self, args: Any) -> None:
        from IPython.display import display

        from .browse import browser

        display(browser(self._need()))


# -- loading -------------------------------------------------------------------


def load(shell: Any) -> None:
    state = _state(shell)
    shell.register_magics(MemoryMagics)
    shell.events.register("post_run_cell", state.post_run_cell)
    _load_assistant(shell)


def _after_change(shell: Any) -> None:
    """Keep ``jupymem_context`` (for Jupyter AI's %%ai) in step with this kernel's changes."""
    try:
        from .ask import refresh_context
    except ImportError:  # the assistant face is optional
        return
    refresh_context(shell)


def _load_assistant(shell: Any) -> None:
    try:
        from . import ask
    except ImportError:  # the assistant face is optional
        return
    ask.install(shell)


def unload(shell: Any) -> None:
    state = _states.pop(id(shell), None)
    if state is not None:
        try:
            shell.events.unregister("post_run_cell", state.post_run_cell)
        except ValueError:
            pass  # already gone
    try:
        from . import ask
    except ImportError:
        return
    ask.uninstall(shell)
