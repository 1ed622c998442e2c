"""One table of actions and options drives the ``%memory`` magic and the ``jupymem`` CLI.

Samples are made from the table (``commands.ACTIONS``) and parsed by both faces'
real parsers; every shared action must read them the same way, so the faces
cannot drift apart without a test failing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupymem.faces import cli, commands, magics
from jupymem.faces.commands import CLI, MAGIC, Action, Opt

SHARED = [a for a in commands.ACTIONS if a.faces == commands.BOTH]
# Options of the CLI as a whole, not of an action.
CLI_ONLY_FLAGS = {"-h", "--help", "--path", "--json"}


def sample(opt: Opt) -> tuple[list[str], Any]:
    """Words that give ``opt`` a value, and the value both faces must read from them."""
    if opt.form == "flag":
        return [opt.name], True
    value = opt.choices[-1] if opt.choices else ("7" if opt.type is int else "m-0123abcd")
    parsed: Any = int(value) if opt.type is int else value
    if opt.form in ("text", "words"):
        return ([] if opt.positional else [opt.name]) + ["two", "words"], "two words"
    if opt.form == "list":
        return [opt.name, value, opt.name, value], [parsed, parsed]
    return ([] if opt.positional else [opt.name]) + [value], parsed


def argv_for(action: Action) -> tuple[list[str], dict[str, Any]]:
    words: list[str] = []
    expected: dict[str, Any] = {}
    # Options first (in the magic, free text takes the rest of the line), then positionals,
    # then options that take the rest of the words themselves (retire ID --reason ...).
    optionals = [o for o in action.options if not o.positional and o.form != "words"]
    positionals = [o for o in action.options if o.positional]
    rest = [o for o in action.options if not o.positional and o.form == "words"]
    for opt in optionals + positionals + rest:
        w, expected[opt.dest] = sample(opt)
        words += w
    return words, expected


def parse_cli(action: str, words: list[str]) -> Any:
    return cli.build_parser().parse_args([action, *words])


def parse_magic(action: str, words: list[str]) -> Any:
    return magics.SUBCOMMANDS[action].parse_args(words)


@pytest.mark.parametrize("action", SHARED, ids=lambda a: a.name)
def test_both_faces_read_every_option_of_a_shared_action_alike(action: Action) -> None:
    words, expected = argv_for(action)
    from_cli, from_magic = parse_cli(action.name, words), parse_magic(action.name, words)
    for dest, value in expected.items():
        assert getattr(from_cli, dest) == getattr(from_magic, dest) == value, (action.name, dest)
    # ... and the defaults of what was not given.
    required = [o for o in action.options if o.positional and not o.optional]
    bare = [w for o in required for w in sample(o)[0]]
    from_cli, from_magic = parse_cli(action.name, bare), parse_magic(action.name, bare)
    for opt in action.options:
        if not opt.positional:
            assert getattr(from_cli, opt.dest) == getattr(from_magic, opt.dest), (action.name, opt.dest)


@pytest.mark.parametrize("action", SHARED, ids=lambda a: a.name)
def test_both_faces_offer_exactly_the_tables_options(action: Action, capsys: pytest.CaptureFixture[str]) -> None:
    flags = {o.name for o in action.options if not o.positional}
    with pytest.raises(SystemExit):
        parse_cli(action.name, ["-h"])
    cli_help = capsys.readouterr().out.split("\n\n", 1)[1]  # past the usage line (it quotes the choices)
    cli_flags = set(re.findall(r"(?<![\w-])--?[a-z][\w-]*", cli_help)) - CLI_ONLY_FLAGS
    magic_flags = set(re.findall(r"(?<![\w-])--?[a-z][\w-]*", magics.SUBCOMMANDS[action.name].format_help()))
    assert cli_flags == magic_flags == flags, action.name


def test_an_unknown_option_is_refused_by_both() -> None:
    with pytest.raises(SystemExit):
        parse_cli("list", ["--frobnicate"])
    with pytest.raises(UsageError):
        parse_magic("list", ["--frobnicate"])


def test_every_face_has_a_handler_for_each_action_it_offers() -> None:
    for action in commands.actions(CLI):
        assert callable(getattr(cli, f"cmd_{action.name}", None)), action.name
    for action in commands.actions(MAGIC):
        assert callable(getattr(magics.MemoryMagics, f"_{action.name}", None)), action.name
    assert set(magics.SUBCOMMANDS) == {a.name for a in commands.actions(MAGIC)}
    assert {"browse", "quiet"} <= set(magics.SUBCOMMANDS) and "browse" not in {a.name for a in commands.actions(CLI)}


def test_remember_cell_magic_takes_the_remember_actions_options() -> None:
    # %%remember is `remember` with the cell as its text: the same options, from the same table.
    from IPython.core.magic_arguments import parse_argstring

    args = parse_argstring(magics.MemoryMagics.remember, "--kind decision --topic joins --evidence last "
                                                         "--evidence ev-0123abcd --supersedes m-1")
    assert (args.kind, args.topic, args.evidence, args.supersedes) == ("decision", "joins", ["last", "ev-0123abcd"], "m-1")
    flags = {o.name for o in commands.BY_NAME["remember"].options if not o.positional}
    help_text = magics.MemoryMagics.remember.__doc__ or ""
    assert all(flag in help_text for flag in flags)


def test_a_command_line_builds_only_the_parser_it_names_and_a_wrong_name_lists_every_command() -> None:
    def choices(argv: list[str]) -> list[str]:
        sub = next(a for a in cli.build_parser(argv)._actions if isinstance(a, argparse._SubParsersAction))
        return list(sub.choices)

    every = [a.name for a in commands.actions(commands.CLI)]
    assert choices(["--path", "status", "block", "--json"]) == ["block"]  # --path's value is not the command
    assert choices(["--json", "search", "status"]) == ["search"]
    assert choices(["--help"]) == choices(["stat"]) == choices([]) == every
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
        cli.build_parser(["stat"]).parse_args(["stat"])
    assert "choose from 'init', 'status'" in err.getvalue()
