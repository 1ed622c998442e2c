"""One table of actions and their options, for the ``%memory`` magic and the ``jupymem`` CLI.

Both faces build their parsers from ``ACTIONS`` (``add_options``), so an action takes
the same options, with the same meaning and help, in a notebook and in a shell; a
test parses samples made from this table with both and compares the results. What
still differs between the faces is how words arrive, and the builder handles it:

* free text (``TEXT``, a statement or a query) is the rest of the ``%memory`` line,
  and one or more words on the command line (quote it or not); both end up as one
  string, the words joined by spaces. ``-`` reads standard input (CLI only).
* ``--path`` and ``--json`` belong to the CLI as a whole (``cli.build_parser``), not
  to an action; the magic always works on the kernel's notebook and shows HTML.

An action only one face can do says so in ``faces`` (``browse`` and ``quiet`` need a
kernel; ``doctor``, ``eval`` and ``bench`` are for a shell). ``eval`` and ``bench``
take their options from their own modules (``arguments_from``), which also run alone.

Adding an action is one entry here plus a handler in each face that lists it
(``cmd_<name>`` in ``cli.py``, ``MemoryMagics._<name>`` in ``magics.py``); adding an
option is one ``Opt`` in its action's tuple, read by the handlers as
``args.<dest>``. ``tests/test_commands.py`` fails when a face lacks a handler.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from ..models import _Record
from ..models import KINDS

CLI = "cli"
MAGIC = "magic"
BOTH = frozenset({CLI, MAGIC})


class JoinWords(argparse.Action):
    """Stores one or more words (or the rest of a magic's line) as one string."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, " ".join(values) if isinstance(values, list) else values)


@dataclass(frozen=True, eq=False, repr=False)
class Opt(_Record):
    """One option or positional argument of an action.

    ``form`` says how it is given: ``value`` (one value), ``flag`` (on when present),
    ``list`` (repeatable, collected in a list), ``words`` (one or more words, joined)
    or ``text`` (free text: the rest of the line in the magic; positional only).
    A name without leading dashes is positional; ``optional`` makes it ``nargs="?"``.
    """

    name: str
    help: str = ""
    form: str = "value"
    choices: tuple[str, ...] | None = None
    type: type | None = None
    default: Any = None
    metavar: str | None = None
    optional: bool = False

    @property
    def positional(self) -> bool:
        return not self.name.startswith("-")

    @property
    def dest(self) -> str:
        return self.name.lstrip("-").replace("-", "_")


@dataclass(frozen=True, eq=False, repr=False)
class Action(_Record):
    """One thing a person can ask for, by name, in the faces that offer it."""

    name: str
    help: str
    options: tuple[Opt, ...] = ()
    faces: frozenset[str] = BOTH
    # CLI only: a module whose add_arguments(parser) gives this action's options.
    arguments_from: str | None = None


# Shared options, defined once.
_ID = Opt("id", "the memory's id (a unique prefix will do)", metavar="ID")
_STATEMENT = Opt("text", "the statement ('-' reads standard input in a shell)", form="text", metavar="TEXT")
_TOPIC = Opt("--topic", "a short label, e.g. 'joins' or 'plots'")
_EVIDENCE = Opt("--evidence", "cite a staged failure (repeatable; in a notebook `last` is this session's newest)",
                form="list", metavar="ev-…")
_ALL = Opt("--all", "include retired and superseded memories", form="flag")

ACTIONS: tuple[Action, ...] = (
    Action("init", "Bind this repository and start (or adopt) its memory.", (
        Opt("--database", "keep it in the team's PostgreSQL database at URL (remembered for this repository, "
            "without the password: libpq reads that from PGPASSWORD, ~/.pgpass or a service file)", metavar="URL"),
    )),
    Action("status", "What jupymem knows about this repository (it never writes)."),
    Action("remember", "Record a statement as a person (initializes memory if needed).", (
        _STATEMENT,
        Opt("--kind", "what sort of memory (default: note, or the superseded memory's kind)", choices=KINDS),
        _TOPIC,
        _EVIDENCE,
        Opt("--supersedes", "the memory this statement replaces", metavar="ID"),
        Opt("--private", "keep it in this machine's store only: never written to .jupymem/ (shared through git)",
            form="flag"),
    )),
    Action("search", "Search memory; abstains when nothing really matches.", (
        Opt("query", "what to look for ('-' reads standard input in a shell)", form="text", metavar="QUERY"),
        Opt("--limit", "at most this many hits", type=int, default=10),
        _ALL,
        Opt("--kind", "only memories of this kind (repeatable)", form="list", choices=KINDS),
    )),
    Action("block", "Show the <project_memory> block exactly as assistants receive it.", (
        Opt("--cap", "cap in UTF-8 bytes (default: JUPYMEM_BLOCK_CAP or 4000)", type=int),
    )),
    Action("list", "List memories by kind, in block order.", (
        Opt("--kind", "only memories of this kind", choices=KINDS),
        _ALL,
    )),
    Action("evidence", "Show staged failures that a lesson can cite, newest first."),
    Action("show", "Show one memory in full: provenance, evidence, validity.", (_ID,)),
    Action("history", "Show the events of one memory.", (_ID,)),
    Action("supersede", "Replace a memory with a new statement (it keeps the old kind and topic unless told).", (
        _ID,
        _STATEMENT,
        Opt("--kind", "the new statement's kind (default: the old one's)", choices=KINDS),
        _TOPIC,
    )),
    Action("retire", "Retire a memory: it leaves the block and stays in history.", (
        _ID,
        Opt("--reason", "why it is no longer true (the rest of the line)", form="words"),
    )),
    Action("confirm", "Confirm an assistant's memory (it becomes supported).", (_ID,)),
    Action("verify", "Check the hash-chained history and the tables derived from it."),
    Action("rebuild", "Recreate every table and index from the history."),
    Action("gc", "Drop what retention rules allow (never a supported decision, correction, constraint or preference).", (
        Opt("--dry-run", "report without dropping anything", form="flag"),
    )),
    Action("export", "Write the history as JSONL, for sharing through git (standard output by default).", (
        Opt("--out", "the file to write", metavar="FILE"),
    )),
    Action("import", "Verify and merge an exported history, without duplicates.", (
        Opt("file", "an export ('-' reads standard input in a shell)", metavar="FILE"),
        Opt("--other-project", "merge an export of another repository (another root commit), or one that does not "
            "say which it is of; without it such an import is refused", form="flag"),
    )),
    Action("migrate", "Move this repository's memory to the team's PostgreSQL database, or back to a file of its own "
           "(its chain intact; running it again adds nothing).", (
        Opt("--to", "a postgresql:// URL (the team database; the password from PGPASSWORD, ~/.pgpass or a service "
            "file) or `sqlite` (back to a file of the repository's own)", metavar="URL|sqlite"),
    )),
    Action("instructions", "Write the block into AGENTS.md (and CLAUDE.md, .github/copilot-instructions.md where they "
           "exist) as jupymem's section, only when memory changed; private memories never go there.", (
        Opt("--check", "write nothing; exit 1 (in a shell) when a section is not in step with memory: for CI and "
            "pre-commit", form="flag"),
        Opt("--import", "first record the rules already written in those files as memories (each once, citing file "
            "and line), then write the section", form="flag"),
    )),
    Action("browse", "Browse memory with widgets (for front ends without the sidebar).", faces=frozenset({MAGIC})),
    Action("quiet", "Stop (or with `off`, resume) naming each staged failure under its traceback.", (
        Opt("state", "on (default) or off", choices=("on", "off"), default="on", optional=True),
    ), faces=frozenset({MAGIC})),
    Action("share", "Share this repository's memory through git: a committed .jupymem/ folder every clone "
           "reads (initializes memory).", (
        Opt("--off", "stop writing there; the files stay as history", form="flag"),
    )),
    Action("doctor", "Check the registry and every project database; repair what can be repaired.", (
        Opt("--accept-loss", "start lost or unrecoverable projects afresh (damaged files are kept aside, "
            "never deleted)", form="flag"),
    ), faces=frozenset({CLI})),
    Action("team", "For a team database's administrator: make or upgrade its schema (setup), make a person's "
           "login role (user NAME, with --label for who they are), admit a role to this repository's memory "
           "(admit NAME) or take it away (remove NAME), drop every member's old staged failures in this "
           "repository's memory (gc), or derive its memories and history again from its log (rebuild).", (
        Opt("step", "setup, user, admit, remove, gc or rebuild",
            choices=("setup", "user", "admit", "remove", "gc", "rebuild")),
        Opt("name", "the person's database role (user, admit, remove)", optional=True),
        Opt("--label", "user: who the role is, shown beside it in history and provenance "
            "(\"Ada Lovelace <ada@example.com>\"); the process's own claim never is", metavar="TEXT"),
        Opt("--database", "the team database, as a role that may create roles and bypasses row-level security "
            "(its password from PGPASSWORD, ~/.pgpass or a service file)", metavar="URL"),
        Opt("--password-stdin", "user: the role's password from standard input (else it logs in without one: "
            "peer or certificate authentication)", form="flag"),
    ), faces=frozenset({CLI})),
    Action("mcp", "Serve this repository's memory to coding agents (Claude Code, VS Code, Cursor, Codex) as a stdio "
           "MCP server: memory_search, memory_record, memory_status and the block (needs jupymem[mcp]).", (
        Opt("--repo", "the repository to serve (default: --path, else $CLAUDE_PROJECT_DIR, else the working "
            "directory)", metavar="PATH"),
    ), faces=frozenset({CLI})),
    Action("eval", "Score retrieval on a gold suite (Recall@10, MRR, nDCG@10, abstention): plain FTS5 BM25, "
           "the lexical leg and hybrid.",
           faces=frozenset({CLI}), arguments_from="jupymem.measure.evaluate"),
    Action("bench", "Measure ingest, search latency, block build and size on a synthetic corpus.",
           faces=frozenset({CLI}), arguments_from="jupymem.measure.bench"),
)

BY_NAME = {a.name: a for a in ACTIONS}


def actions(face: str) -> list[Action]:
    """The actions ``face`` offers, in table order."""
    return [a for a in ACTIONS if face in a.faces]


def add_options(parser: argparse.ArgumentParser, action: Action, face: str) -> None:
    """Give ``parser`` the options of ``action`` as ``face`` ("cli" or "magic") takes them."""
    if action.arguments_from:
        import importlib

        importlib.import_module(action.arguments_from).add_arguments(parser)
        return
    for opt in action.options:
        kwargs: dict[str, Any] = {"help": opt.help}
        if opt.metavar:
            kwargs["metavar"] = opt.metavar
        if opt.form == "flag":
            kwargs["action"] = "store_true"
        else:
            if opt.choices:
                kwargs["choices"] = opt.choices
            if opt.type:
                kwargs["type"] = opt.type
            if opt.form == "list":
                kwargs["action"] = "append"
            elif opt.form == "words":
                kwargs.update(action=JoinWords, nargs="+")
            elif opt.form == "text":
                kwargs.update(action=JoinWords, nargs=argparse.REMAINDER if face == MAGIC else "+")
            elif opt.optional:
                kwargs["nargs"] = "?"
            kwargs["default"] = opt.default
        parser.add_argument(opt.name, **kwargs)
