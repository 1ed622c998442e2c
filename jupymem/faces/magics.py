"""The IPython face: ``%memory ACTION ...`` and ``%%remember``.

Thin on purpose: every action is one ``Project`` call, every error a
``JupymemError`` turned into ``UsageError`` in one place (``memory``), every
output built by ``render``. The actions and their options come from the table
the CLI uses too (``commands.ACTIONS``), so ``%memory remember --supersedes``
means what ``jupymem remember --supersedes`` means. This kernel's state (its
session, staged failures and the post-run hook) is ``kernel.py``'s.

A record answers in one line (id, kind, the statement clipped, and the active
memories it nearly repeats, with the ``--supersedes`` that would replace them);
``%memory show ID`` has the details.

Loading the extension imports no numpy, model2vec, sqlite-vec or litellm: the
core, rendering and the assistant face are imported when first needed.
"""

from __future__ import annotations

import shlex
from argparse import REMAINDER
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import MagicArgumentParser, argument, magic_arguments, parse_argstring

from ..errors import JupymemError, NoMemory
from . import commands
from .kernel import current_path, forget, session_evidence, session_state, state
from .magic_options import options

__all__ = ["MemoryMagics", "SUBCOMMANDS", "load", "unload", "session_evidence", "session_state"]


def _subparsers() -> dict[str, MagicArgumentParser]:
    parsers = {}
    for action in commands.actions(commands.MAGIC):
        p = MagicArgumentParser(prog=f"%memory {action.name}", description=action.help, add_help=False)
        commands.add_options(p, action, commands.MAGIC)
        parsers[action.name] = p
    return parsers


SUBCOMMANDS = _subparsers()
_SUMMARY = "\n".join(f"  {name:<10} {parser.description}" for name, parser in SUBCOMMANDS.items())
_REMEMBER = commands.BY_NAME["remember"]


def _render() -> Any:
    from . import render

    return render


def _usage_error(exc: Exception) -> Exception:
    """What the person sees: a ``JupymemError`` (or a driver error that means a damaged
    database, a read-only home or a full disk) as a ``UsageError``; anything else is a
    bug and keeps its traceback."""
    if isinstance(exc, UsageError):
        return exc
    if not isinstance(exc, JupymemError):
        from ..storage.damage import storage_error

        err = storage_error(exc)
        if err is None:
            return exc
        exc = err
    return UsageError(exc.message)


def _display(text: str, html: str | None = None) -> None:
    from IPython.display import display

    from .render import Output

    display(Output(text, html))


def _remember_options(func: Any) -> Any:
    """``%%remember``'s options: ``remember``'s from the table, but the cell is the text."""
    for opt in reversed([o for o in _REMEMBER.options if not o.positional]):
        kwargs: dict[str, Any] = {"help": opt.help}
        if opt.form == "list":
            kwargs.update(action="append", default=[])
        elif opt.form == "flag":
            kwargs["action"] = "store_true"
        if opt.choices:
            kwargs["choices"] = opt.choices
        if opt.metavar:
            kwargs["metavar"] = opt.metavar
        func = argument(opt.name, **kwargs)(func)
    return func


@magics_class
class MemoryMagics(Magics):
    @magic_arguments()
    @argument("action", choices=list(SUBCOMMANDS), help="what to do (see below)")
    @argument("args", nargs=REMAINDER, help="the action's own arguments; `%%memory ACTION -h` for them")
    @no_var_expand  # what a person types is recorded as typed, never with `{expr}`/`$name` filled in
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
    @_remember_options
    @no_var_expand  # `--topic {col}` is the topic "{col}", not the notebook's variable
    @cell_magic
    def remember(self, line: str, cell: str) -> None:
        """Record the cell body as a memory of this repository (initializes it if needed)."""
        args = options(self.remember, line)
        args.text = cell
        try:
            self._remember(args)
        except Exception as exc:
            raise _usage_error(exc) from None
        _after_change(self.shell)

    # -- actions --------------------------------------------------------------

    def _need(self) -> Any:
        proj = state(self.shell).project()
        if proj is None:
            from ..storage.registry import require_git_root

            root = require_git_root(current_path(self.shell))
            raise NoMemory(f"{root.name} has no memory yet. `%%remember` or `%memory init` starts it.")
        return proj

    def _init(self, args: Any) -> None:
        state(self.shell).project(create=True, database_url=getattr(args, "database", None))
        self._status(args)

    def _status(self, args: Any) -> None:
        from ..core.overview import status

        st = status(current_path(self.shell), state(self.shell).settings())
        _display(_render().status_text(st), _render().status_html(st))

    def _remember(self, args: Any) -> None:
        from ..intake.translate import check_first_record

        kernel = state(self.shell)
        text = args.text or ""
        check_first_record(text, kernel.settings())
        evidence = kernel.resolve_evidence(args.evidence or [])
        # Superseding needs the memory it replaces: that is never a first record.
        proj = self._need() if args.supersedes else kernel.project(create=True)
        done = proj.record(
            text, args.kind, args.topic, evidence, args.supersedes, provenance=kernel.provenance(), private=args.private
        )
        _display(_render().recorded_text(done), _render().recorded_html(done))

    def _search(self, args: Any) -> None:
        project = self._need()
        result = project.search(args.query, limit=args.limit, include_inactive=args.all, kinds=args.kind)
        _display(_render().search_text(result), _render().search_html(result))
        from .progress import show_embedding

        show_embedding(project)  # the transformer loading and embedding, from the first search

    def _block(self, args: Any) -> None:
        print(self._need().block(args.cap).text)

    def _list(self, args: Any) -> None:
        memories = self._need().list(kind=args.kind, include_inactive=args.all)
        _display(_render().memories_text(memories), _render().memories_html(memories))

    def _evidence(self, args: Any) -> None:
        kernel = state(self.shell)
        proj = kernel.project()
        staged = {e.handle: e for e in (proj.staged_evidence() if proj else [])}
        staged.update({e.handle: e for e in kernel.window})
        items = sorted(staged.values(), key=lambda e: e.created_at, reverse=True)
        _display(_render().evidence_text(items), _render().evidence_html(items))

    def _show(self, args: Any) -> None:
        proj = self._need()
        m = proj.get(args.id)
        history = proj.history(m.id)
        _display(_render().memory_text(m, history), _render().memory_html(m, history))

    def _history(self, args: Any) -> None:
        entries = self._need().history(args.id)
        _display(_render().history_text(entries), _render().history_html(entries))

    def _supersede(self, args: Any) -> None:
        kernel = state(self.shell)
        done = self._need().record(args.text, args.kind, args.topic, supersedes=args.id, provenance=kernel.provenance())
        _display(_render().recorded_text(done), _render().recorded_html(done))

    def _retire(self, args: Any) -> None:
        m = self._need().retire(args.id, args.reason)
        _display(_render().said_text(m, "Retired"), _render().said_html(m, "Retired"))

    def _confirm(self, args: Any) -> None:
        m = self._need().confirm(args.id)
        _display(_render().said_text(m, "Confirmed"), _render().said_html(m, "Confirmed"))

    def _verify(self, args: Any) -> None:
        _display(_render().verify_text(self._need().verify()))

    def _rebuild(self, args: Any) -> None:
        n = self._need().rebuild()
        _display(f"Rebuilt every table and index from {n} events.")

    def _gc(self, args: Any) -> None:
        _display(_render().gc_text(self._need().gc(dry_run=args.dry_run)))

    def _export(self, args: Any) -> None:
        proj = self._need()
        if args.out:
            n = proj.export_to(args.out)
            _display(f"Exported {n} events to {args.out}.")
        else:
            import io

            buf = io.StringIO()
            proj.export(buf)
            print(buf.getvalue(), end="")

    def _import(self, args: Any) -> None:
        from pathlib import Path

        from ..core.opening import import_into

        # Read first: a file that cannot be read changes nothing, and initializes nothing.
        try:
            text = Path(args.file).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"Cannot read {args.file}: {exc.strerror or exc}. Nothing was imported.") from None
        except UnicodeDecodeError:
            raise UsageError(f"{args.file} is not UTF-8 text; it is not a jupymem export.") from None
        report = import_into(current_path(self.shell), text, state(self.shell).settings(), source=args.file,
                             other_project=args.other_project)
        _display(_render().import_text(report))

    def _migrate(self, args: Any) -> None:
        from ..core.migrate import TO_FILE, migrate

        if not args.to:
            raise UsageError(f"%memory migrate needs --to: a postgresql:// URL (the team database) or `{TO_FILE}` "
                             "(back to a file of the repository's own).")
        report = migrate(current_path(self.shell), args.to, state(self.shell).settings())
        _display(_render().migrate_text(report))

    def _share(self, args: Any) -> None:
        report = state(self.shell).project(create=True).share(on=not args.off)
        _display(report.message)

    def _instructions(self, args: Any) -> None:
        from ..assistants import instructions
        from ..storage.registry import require_git_root

        root = require_git_root(current_path(self.shell))
        report = instructions.run(root, state(self.shell).settings(), check=args.check, rules=getattr(args, "import"))
        _display(_render().instructions_text(report))

    def _browse(self, args: Any) -> None:
        from IPython.display import display

        from .browse import browser

        display(browser(self._need(), shell=self.shell))

    def _quiet(self, args: Any) -> None:
        kernel = state(self.shell)
        kernel.quiet = args.state != "off"
        if kernel.quiet:
            _display("Failed cells are still staged as evidence, without a notice; `%memory evidence` lists them.")
        else:
            _display("Each failed cell staged as evidence is named under its traceback again.")


# -- loading -------------------------------------------------------------------


def load(shell: Any) -> None:
    kernel = state(shell)
    shell.register_magics(MemoryMagics)
    shell.events.register("post_run_cell", kernel.post_run_cell)
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
    kernel = forget(shell)
    if kernel is not None:
        try:
            shell.events.unregister("post_run_cell", kernel.post_run_cell)
        except ValueError:
            pass  # already gone
    try:
        from . import ask
    except ImportError:
        return
    ask.uninstall(shell)
