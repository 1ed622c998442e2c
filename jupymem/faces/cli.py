"""The ``jupymem`` command line: a thin face over ``Project`` for scripts, CI and people.

Every subcommand is a few lines: find the project, call one core method, hand
the result to ``render``. Decisions worth knowing:

* ``--path`` selects the repository (default: the working directory) and
  ``--json`` prints machine-readable output; both go before or after the
  subcommand.
* Reading commands never create anything: without memory, ``status`` says so
  and exits 0; search, block, list, show, history, evidence, verify, rebuild,
  gc and export say so on stderr and exit 2. ``init``, ``remember`` and
  ``import`` initialize; they check their input first, so a refused statement
  or an invalid file creates nothing.
* ``block`` writes the block byte for byte as assistants receive it. It ends
  in ``</project_memory>``; one newline is added only when stdout is a
  terminal, so ``jupymem block > f`` holds exactly the block.
* ``search`` exits 0 when it abstains: abstaining is an answer (``status``
  says which). ``verify`` exits 1 when it finds problems; ``status`` exits 1
  when the registry is corrupt or the database lost or damaged (and prints the
  ``jupymem doctor`` hint); ``doctor`` exits 1 when a database still needs a person.
* ``-`` as the statement (``remember``, ``supersede``), the query or the
  import file reads standard input; a statement must be UTF-8. ``import``
  refuses an export of another repository unless given ``--other-project``.
* ``migrate --to URL`` moves a repository's SQLite memory to the team database and binds
  it there; ``migrate --to sqlite`` brings it back to a file (``core.migrate``). It exits 1
  when the memory moved does not verify where it went.
* ``share`` turns sharing through git on (``--off``: off) and says what it did;
  ``remember --private`` keeps a memory out of the shared files.
* ``eval`` and ``bench`` are the evaluation faces (``evaluate.py``, ``bench.py``),
  mounted here with their own options.
* Exit codes: 0 ok, 1 a failed check, 2 a usage or input error. Every
  ``JupymemError`` is translated in one place (``main``) into one line on
  stderr, ``jupymem: <message>``, and its ``exit_code``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

# A terminal is shown text only: render_html (and the html module) is never needed here.
from . import commands
from . import render_text as render
from ..config import Settings
from ..errors import JupymemError
from ..models import Provenance, to_json

# Nothing from core, retrieval, sharing or intake at import: every command imports what it
# needs when it runs (mostly through ``Context.project``), so `jupymem status` does not pay
# for search, `block` not for the secret scan. Importing them all made up 0.35 s of a 0.45 s
# command (tests/test_cli.py checks what `status` and `block` leave unimported).

PERSON = Provenance(recorder="person")
MIN_CAP = 512


class Context:
    """What every command needs: settings from the environment, the path, the output mode."""

    def __init__(self, args: argparse.Namespace, out: IO[str]):
        self.args = args
        # One-shot: a search here would end before the encoder loaded, so none is started.
        self.settings = Settings.from_env().with_(interactive=False)
        self.path = Path(getattr(args, "path", None) or os.getcwd()).expanduser()
        self.json = bool(getattr(args, "json", False))
        self.out = out

    def emit(self, data: Any, text: str) -> None:
        if self.json:
            # Characters the output's encoding cannot write (a Windows console's code page)
            # are escaped as JSON escapes them, so the JSON stays whole and exact.
            ascii_only = not _writes_unicode(self.out)
            self.out.write(json.dumps(data, indent=2, ensure_ascii=ascii_only, sort_keys=False) + "\n")
        else:
            self.out.write(text + "\n")

    def project(self) -> Any:
        """The existing project, or NoMemory / NotAGitRepository. Never creates."""
        from ..core.opening import require_project

        self._check_path()
        return require_project(self.path, self.settings)

    def project_or_init(self) -> Any:
        """The existing project, else a new binding. A corrupt registry is an error here:
        only ``init`` and ``doctor`` repair it."""
        from ..core.opening import find_project, init_project
        from ..storage.registry import require_git_root

        self._check_path()
        require_git_root(self.path)
        return find_project(self.path, self.settings) or init_project(self.path, self.settings)

    def _check_path(self) -> None:
        if not self.path.exists():
            raise JupymemError(f"{self.path} does not exist; give --path a directory or notebook inside a repository.")


# -- input ----------------------------------------------------------------------


def _stdin_bytes() -> bytes:
    return sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")


def _statement(text: str) -> str:
    """TEXT, or standard input for ``-``; checked (UTF-8, size, secrets) before anything is created."""
    from ..intake import capture

    raw: str | bytes = _stdin_bytes() if text == "-" else text
    return capture.check_statement(raw)


def _refuse_language(ctx: Context, text: str) -> None:
    # Refused up front (as the project would refuse it) so that a refused first
    # record initializes nothing; with JUPYMEM_MODEL set the core translates it.
    from ..intake.translate import needs_translation

    needs_translation(text, ctx.settings)


def _read_file(name: str) -> str:
    try:
        data = _stdin_bytes() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise JupymemError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise JupymemError(f"{name} is not UTF-8 text; it is not a jupymem export.") from None


# -- commands -------------------------------------------------------------------


def cmd_init(ctx: Context) -> int:
    from ..core import overview
    from ..core import team
    from ..core.opening import init_project

    ctx._check_path()
    before = overview.status(ctx.path, ctx.settings) if ctx.settings.home.exists() else None
    proj = init_project(ctx.path, ctx.settings, database_url=ctx.args.database)
    engine = team.engine_of(proj)
    if proj.team:
        msg = f"{proj.name}'s memory is in the team database at {engine.where} (project {proj.id})."
    elif before is not None and before.memory:
        msg = f"{proj.name} already has memory (project {proj.id})."
    elif before is not None and before.matches:
        msg = f"{proj.name} adopted the memory of project {proj.id} (same repository, moved or re-cloned)."
    else:
        msg = f"{proj.name} has memory now (project {proj.id}, {proj.database})."
    ctx.emit({"project_id": proj.id, "root": str(proj.root), "database": str(proj.database),
              "engine": engine.to_dict()}, msg)
    return 0


def cmd_status(ctx: Context) -> int:
    from ..core import overview

    s = overview.status(ctx.path, ctx.settings)
    # The dict only for --json: a repository of 20,000 shared files makes it 20,000 rows.
    ctx.emit(s.to_dict() if ctx.json else None, render.status_text(s))
    if not s.git:
        return 2
    return 1 if s.registry == "corrupt" or s.damage else 0


def cmd_remember(ctx: Context) -> int:
    a = ctx.args
    text = _statement(a.text)
    _refuse_language(ctx, text)
    if a.evidence or a.supersedes:
        proj = ctx.project()  # evidence and the superseded memory live in an existing project
    else:
        proj = ctx.project_or_init()
    done = proj.record(text, a.kind, a.topic, a.evidence or (), a.supersedes, provenance=PERSON, private=a.private)
    ctx.emit(to_json(done), render.recorded_text(done))
    return 0


def cmd_supersede(ctx: Context) -> int:
    a = ctx.args
    text = _statement(a.text)
    _refuse_language(ctx, text)
    done = ctx.project().record(text, a.kind, a.topic, supersedes=a.id, provenance=PERSON)
    ctx.emit(to_json(done), render.recorded_text(done))
    return 0


def cmd_retire(ctx: Context) -> int:
    m = ctx.project().retire(ctx.args.id, reason=ctx.args.reason)
    ctx.emit(to_json(m), render.said_text(m, "Retired"))
    return 0


def cmd_confirm(ctx: Context) -> int:
    m = ctx.project().confirm(ctx.args.id, by="person")
    ctx.emit(to_json(m), render.said_text(m, "Confirmed"))
    return 0


def cmd_search(ctx: Context) -> int:
    a = ctx.args
    query = _stdin_bytes().decode("utf-8", "replace") if a.query == "-" else a.query
    result = ctx.project().search(query, limit=a.limit, include_inactive=a.all, kinds=a.kind)
    ctx.emit(to_json(result), render.search_text(result))
    return 0


def cmd_block(ctx: Context) -> int:
    cap = ctx.args.cap
    if cap is not None and cap < MIN_CAP:
        raise JupymemError(f"--cap {cap} is too small; the block needs at least {MIN_CAP} bytes.")
    block = ctx.project().block(cap)
    if ctx.json:
        ctx.emit(to_json(block), "")
        return 0
    text = render.block_text(block)
    ctx.out.flush()
    stream = getattr(ctx.out, "buffer", None)
    if stream is not None:
        stream.write(text.encode("utf-8"))
        stream.flush()
    else:
        ctx.out.write(text)
    if ctx.out.isatty():
        ctx.out.write("\n")
    return 0


def cmd_list(ctx: Context) -> int:
    a = ctx.args
    memories = ctx.project().list(kind=a.kind, include_inactive=a.all)
    ctx.emit(to_json(memories), render.memories_text(memories))
    return 0


def cmd_evidence(ctx: Context) -> int:
    items = ctx.project().staged_evidence()
    ctx.emit(to_json(items), render.evidence_text(items))
    return 0


def cmd_show(ctx: Context) -> int:
    proj = ctx.project()
    m = proj.get(ctx.args.id)
    ctx.emit(to_json(m), render.memory_text(m, proj.history(m.id)))
    return 0


def cmd_history(ctx: Context) -> int:
    entries = ctx.project().history(ctx.args.id)
    ctx.emit(to_json(entries), render.history_text(entries))
    return 0


def cmd_verify(ctx: Context) -> int:
    report = ctx.project().verify()
    ctx.emit(to_json(report), render.verify_text(report))
    return 0 if report.ok else 1


def cmd_rebuild(ctx: Context) -> int:
    proj = ctx.project()
    n = proj.rebuild()
    report = proj.verify()
    ctx.emit({"events": n, "verify": to_json(report)}, f"rebuilt from {n} events; {render.verify_text(report)}")
    return 0 if report.ok else 1


def cmd_gc(ctx: Context) -> int:
    report = ctx.project().gc(dry_run=ctx.args.dry_run)
    ctx.emit(to_json(report), render.gc_text(report))
    return 0


def cmd_export(ctx: Context) -> int:
    proj = ctx.project()
    out = ctx.args.out
    if not out or out == "-":
        proj.export(ctx.out)
        return 0
    n = proj.export_to(out)
    ctx.emit({"events": n, "out": out}, f"exported {n} events to {out}")
    return 0


def cmd_import(ctx: Context) -> int:
    from ..core.opening import import_into

    name = ctx.args.file
    text = _read_file(name)
    ctx._check_path()
    report = import_into(ctx.path, text, ctx.settings, source=name, other_project=ctx.args.other_project)
    ctx.emit(to_json(report), render.import_text(report))
    return 0


def cmd_migrate(ctx: Context) -> int:
    from ..core.migrate import TO_FILE, migrate

    if not ctx.args.to:
        raise JupymemError(f"migrate needs --to: a postgresql:// URL (the team database) or `{TO_FILE}` (back to a "
                           "file of the repository's own). Nothing was moved.")
    ctx._check_path()
    report = migrate(ctx.path, ctx.args.to, ctx.settings)
    ctx.emit(to_json(report), render.migrate_text(report))
    return 0 if report.verified else 1


def cmd_share(ctx: Context) -> int:
    report = ctx.project_or_init().share(on=not ctx.args.off)
    ctx.emit(report.to_dict(), report.message)
    return 0


def cmd_doctor(ctx: Context) -> int:
    from ..core.doctor import doctor

    if not ctx.settings.home.exists():
        ctx.emit({"registry": "none", "home": str(ctx.settings.home)},
                 f"No jupymem home at {ctx.settings.home}; nothing to check.")
        return 0
    report = doctor(ctx.settings, accept_loss=ctx.args.accept_loss)
    rebuilt = report.registry != "ok"
    lines = [f"registry: {report.registry}{' (repaired from the project databases)' if rebuilt else ''}",
             f"projects: {report.projects}, bindings: {report.bindings}"]
    if report.problem:
        lines.append(f"problem was: {report.problem}")
    for db in report.databases or ():
        detail = f": {db['message']}" if db.get("message") else ""
        lines.append(f"{db['project_id']} {db['state']}{detail}")
    ctx.emit(report.to_dict(), "\n".join(lines))
    return 1 if report.problems else 0


def cmd_team(ctx: Context) -> int:
    from ..core import team

    args = ctx.args
    password = _read_file("-").rstrip("\n") if args.password_stdin else None
    url = args.database or ctx.settings.database_url
    said = team.administer(args.step, url, args.name, ctx.path, password, label=args.label)
    ctx.emit({"step": args.step, "name": args.name, "database": team.where(url) if url else None}, said)
    return 0


def cmd_instructions(ctx: Context) -> int:
    from ..assistants import instructions

    report = instructions.run(_root(ctx), ctx.settings, check=ctx.args.check, rules=getattr(ctx.args, "import"))
    ctx.emit(report.to_dict(), render.instructions_text(report))
    return 1 if report.checked and report.stale else 0


def _root(ctx: Context) -> Path:
    from ..storage.registry import require_git_root

    ctx._check_path()
    return require_git_root(ctx.path)


def cmd_mcp(ctx: Context) -> int:
    from ..storage.registry import require_git_root
    from .mcp_server import serve

    # Claude Code starts a project's servers where it was started (a subfolder, or the home
    # folder in its desktop app) and tells them the project in CLAUDE_PROJECT_DIR.
    given = ctx.args.repo or getattr(ctx.args, "path", None) or os.environ.get("CLAUDE_PROJECT_DIR")
    where = Path(given).expanduser() if given else ctx.path
    if not where.exists():
        raise JupymemError(f"{where} does not exist; give --repo a directory inside a git repository.")
    # A server stays up: searches use the encoders it loads in the background.
    return serve(require_git_root(where), ctx.settings.with_(interactive=True))


def cmd_eval(ctx: Context) -> int:
    from ..measure.evaluate import eval_command

    return eval_command(ctx.args, stdout=ctx.out)


def cmd_bench(ctx: Context) -> int:
    from ..measure.bench import bench_command

    return bench_command(ctx.args, stdout=ctx.out)


# -- parser -----------------------------------------------------------------------


class _Formatter(argparse.HelpFormatter):
    """argparse's help, as wide as the terminal. Every parser makes a formatter as it is
    built (to check its arguments), and argparse's own imports shutil (with its
    compressors) just to ask the terminal's width: ~3 ms of every command."""

    def __init__(self, prog: str, **kwargs: Any) -> None:
        if kwargs.get("width") is None:
            try:
                columns = int(os.environ.get("COLUMNS") or os.get_terminal_size(sys.__stdout__.fileno()).columns)  # type: ignore[union-attr]
            except (ValueError, OSError, AttributeError):
                columns = 80
            kwargs["width"] = max(columns - 2, 20)  # what argparse does with shutil's answer
        super().__init__(prog, **kwargs)


class _Subcommand(argparse.ArgumentParser):
    """A subcommand's parser that takes its options only when it is chosen. One command
    runs per process, and building all twenty-odd parsers' options (argparse translating
    every help string) cost each command ~10 ms; ``eval`` and ``bench`` get theirs from
    their modules (``arguments_from``), which import statistics, tempfile and more."""

    def __init__(self, *args: Any, add_later: Callable[[argparse.ArgumentParser], None] | None = None,
                 **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)
        self._add_later = add_later

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._add_later is not None:  # chosen (its -h included): now its options are needed
            add, self._add_later = self._add_later, None
            add(self)
        return super().parse_known_args(args, namespace)


def _chosen(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names, when that is plain before parsing (None: ask for
    help, or let argparse say what is wrong)."""
    words = iter(argv)
    for word in words:
        if word in ("-h", "--help"):
            return None
        if word == "--path":
            next(words, None)  # its value
        elif not word.startswith("-"):
            return word
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser; given ``argv``, only the parser of the subcommand it
    names is made (twenty-odd ArgumentParsers cost a command-line start ~5 ms)."""
    common = argparse.ArgumentParser(add_help=False, formatter_class=_Formatter)
    # SUPPRESS on both levels, so the option works before or after the subcommand.
    common.add_argument("--path", default=argparse.SUPPRESS, help="a directory or notebook inside the repository (default: cwd)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")
    parser = argparse.ArgumentParser(
        formatter_class=_Formatter,
        prog="jupymem", parents=[common],
        description="Durable memory for the notebooks of a git repository.",
        epilog="Exit codes: 0 ok, 1 a failed check, 2 a usage or input error.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Subcommand)
    handlers: dict[str, Callable[[Context], int]] = {
        name[len("cmd_"):]: func for name, func in globals().items() if name.startswith("cmd_")
    }
    actions = commands.actions(commands.CLI)
    chosen = _chosen(argv) if argv is not None else None
    if any(action.name == chosen for action in actions):
        actions = [action for action in actions if action.name == chosen]
    for action in actions:
        help_ = action.help[0].lower() + action.help[1:].rstrip(".")
        # eval and bench bring their own --json; every other action shares --path and --json.
        parents: list[Any] = [] if action.arguments_from else [common]  # (typeshed wants _Subcommand parents)
        p = sub.add_parser(action.name, parents=parents, help=help_, description=action.help,
                           add_later=lambda p, a=action: commands.add_options(p, a, commands.CLI))
        p.set_defaults(func=handlers[action.name])
    return parser


def _writes_unicode(stream: IO[str]) -> bool:
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
    return encoding in ("utf8", "utf8sig", "utf16", "utf32")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for stream in (sys.stdout, sys.stderr):
        # A memory's emoji or zero-width space written to a legacy code page (a Windows
        # redirect is cp1252) shows as an escape instead of ending the command with a traceback.
        if not _writes_unicode(stream) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args = build_parser(argv).parse_args(argv)
    try:
        ctx = Context(args, sys.stdout)
        return args.func(ctx)
    except BrokenPipeError:  # `jupymem export | head`: the reader left, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # the one place errors become messages and exit codes
        err = _as_error(exc)
        if err is None:
            raise
        sys.stderr.write(f"jupymem: {' '.join(err.message.split())}\n")  # always one line
        return err.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("jupymem: interrupted\n")
        return 130


def _as_error(exc: BaseException) -> JupymemError | None:
    """A ``JupymemError``, or a driver error that means damage, a read-only home or a
    full disk (met while reading rows, past ``database.Connection``'s own translation)."""
    if isinstance(exc, JupymemError):
        return exc
    from ..storage.damage import storage_error

    return storage_error(exc)


if __name__ == "__main__":
    sys.exit(main())
