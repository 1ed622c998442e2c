"""The IPython face: ``%memory``, ``%%remember`` and the failed-cell hook.

Thin on purpose: every operation is one ``Project`` call, every error a
``JupymemError`` turned into ``UsageError`` in one place, every output built by
``render``. Two things here are hot and kept cheap:

* loading the extension imports no numpy, model2vec, sqlite-vec or litellm
  (the core is stdlib; the dense leg and models load on first need);
* the ``post_run_cell`` hook returns at once when a cell succeeded and no
  failure waits for its fix. A failure is diagnosed, kept in this session's
  window of 64, and staged in the project database when the repository
  already has memory (staging never creates memory); it then waits for the
  run that fixes it (``pairing``): while something waits, a success costs a
  dict lookup by cell id, or without cell ids a comparison with the few
  newest waiting failures. A pair is written back to the window and the
  database; with ``JUPYMEM_MODEL`` set, a model rewrites its suggested lesson
  in a background thread, never holding up a cell.
"""

from __future__ import annotations

import collections
import dataclasses
import io
import logging
import os
import re
import shlex
import threading
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
# Memory's own cells: never evidence, and never the fix of a failure.
_OWN_CELL = re.compile(r"\s*(?:%memory|%%memory|%%remember|%%ask)\b")


class _NothingWaits:
    """Stands in for ``pairing.Pairing`` until the first failure imports it."""

    waiting = False


_NOTHING_WAITS = _NothingWaits()


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
        # This session's failures waiting for their fix (pairing.Pairing, made on the first failure).
        self.pairing: Any = _NOTHING_WAITS
        self._lock = threading.Lock()  # the window is also written by the suggestion thread
        self._suggesting: list[threading.Thread] = []

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

    # The hook. On success: one attribute test, or two while a failure waits for its fix.
    def post_run_cell(self, result: Any) -> None:
        if result.error_in_exec is None and result.error_before_exec is None:
            if self.pairing.waiting:
                self._succeeded(result)
            return
        try:
            self._stage(result)
        except Exception as exc:  # a broken hook must never break the user's cell
            log.warning("jupymem: could not stage this failure: %s", exc)

    def _succeeded(self, result: Any) -> None:
        try:
            info = result.info
            source = info.raw_cell or ""
            if _OWN_CELL.match(source):
                return  # memory's own operations fix nothing
            paired = self.pairing.succeeded(source, getattr(info, "cell_id", None), result.execution_count)
            if paired:
                self._keep_pairs(paired)
        except Exception as exc:  # a broken hook must never break the user's cell
            log.warning("jupymem: could not pair this cell with the failure it fixed: %s", exc)

    def _keep_pairs(self, paired: list[Evidence]) -> None:
        """Write fixed failures back to the window and, where memory exists, the database."""
        self._replace(paired)
        proj = self.project()
        if proj is not None:
            proj.stage_failure(*paired)
        model = self.settings().model
        if model:
            thread = threading.Thread(
                target=self._model_suggestions, args=(paired, model), name="jupymem-suggest", daemon=True
            )
            self._suggesting.append(thread)
            thread.start()

    def _replace(self, changed: list[Evidence]) -> None:
        by_handle = {e.handle: e for e in changed}
        with self._lock:
            for i, e in enumerate(self.window):
                if e.handle in by_handle:
                    self.window[i] = by_handle[e.handle]

    def _model_suggestions(self, paired: list[Evidence], model: str) -> None:
        """In a background thread: the model rewrites each pair's suggested lesson."""
        from ..llm import suggest_lesson

        for ev in paired:
            try:
                text = suggest_lesson(ev, model)
                with self._lock:
                    current = next((e for e in self.window if e.handle == ev.handle), ev)
                better = dataclasses.replace(current, suggestion=text, suggested_by=model)
                self._replace([better])
                proj = self.project()
                if proj is not None:
                    proj.stage_failure(better)
            except Exception as exc:  # the pair keeps its own suggestion; say why once
                log.warning("jupymem: the model could not suggest a lesson for %s: %s", ev.handle, exc)
                return

    def wait_for_suggestions(self, timeout: float | None = None) -> bool:
        """Wait for the model's suggestions in flight; True when none is left running."""
        for thread in list(self._suggesting):
            thread.join(timeout)
        self._suggesting = [t for t in self._suggesting if t.is_alive()]
        return not self._suggesting

    def _stage(self, result: Any) -> None:
        exc = result.error_in_exec or result.error_before_exec
        info = getattr(result, "info", None)
        source = getattr(info, "raw_cell", "") or ""
        if _OWN_CELL.match(source):
            return  # memory's own operations are never evidence
        from ..capture import evidence_from_exception, raising_line

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
        if self.pairing is _NOTHING_WAITS:
            from ..pairing import Pairing

            self.pairing = Pairing()
        earlier = self.pairing.failed(ev, source, raising_line(exc, getattr(self.shell, "user_ns", None)))
        with self._lock:
            self.window.appendleft(ev)
        if earlier is not None:
            self._replace([earlier])
        proj = self.project()
        if proj is not None:
            proj.stage_failure(ev, *([earlier] if earlier is not None else []))

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


def session_state(shell: Any) -> _State:
    """This shell's jupymem state: its session id, window of staged failures, the
    ``pairing`` that finds their fixes (replaceable, e.g. with another threshold), and
    ``wait_for_suggestions`` for lessons a model is still writing."""
    return _state(shell)


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
    r.add_argument("--private", action="store_true", help="keep it on this machine: never written to .jupymem/")
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
    parsers["share"] = p("share", "Share this repository's memory through git (.jupymem/); --off stops writing there.")
    parsers["share"].add_argument("--off", action="store_true", help="stop writing there; the files stay as history")
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
    @argument("--private", action="store_true",
              help="keep it in this machine's store only: never written to the shared .jupymem/ folder")
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
                private=args.private,
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
            evidence=state.resolve_evidence(args.evidence), provenance=state.provenance(), private=args.private,
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

    def _share(self, args: Any) -> None:
        report = _state(self.shell).project(create=True).share(on=not args.off)
        _display(report["message"])

    def _browse(self, args: Any) -> None:
        from IPython.display import display

        from .browse import browser

        display(browser(self._need(), shell=self.shell))


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
