"""What ``jupymem mcp`` serves for one repository: its tools, their arguments, the
question it asks the person before a record counts as theirs, and the block.

The tools are the Jupyter MCP tools (``memory_search``, ``memory_record``,
``memory_status``; ``tools.py`` does the work) without ``path``: a stdio server is
started for one repository and serves nothing else. Only the process that started it
can reach it (its standard input and output are the only way in), so it serves that
user's memory, private memories included.

Where "the user's current message" comes from. MCP shows a server nothing of the
conversation: the model writes every argument, ``user_quote`` included, and a quote
checked against words the model also wrote proves nothing. So the server asks the
person, through the client (MCP elicitation: a form the client shows the person and the
person answers, not the model): the statement, its kind, and the words the assistant
attributes to them, offered for them to accept or correct. Their answer is the current
message, and the rule is the one every face applies (``tools.quote_standing``): the
record is supported only when the quote occurs in it verbatim and is about the
statement. Declined: nothing is recorded. Dismissed, not answered within
``ASK_SECONDS``, or a client that cannot ask (it declares no elicitation capability):
the record is kept as unconfirmed, as a record without a quote is, and a person can
confirm it later (``jupymem confirm``, ``%memory confirm``, the sidebar).

This is a check of honesty, not a wall: an agent that can run shell commands as the user
can run ``jupymem remember`` too, which records as the person. What it stops is a model
promoting its own paraphrase to the person's word through this server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import InvalidField, JupymemError
from . import tools

ASK_SECONDS = 600  # how long a record waits for the person's answer before it is kept unconfirmed
WORDS = "words"  # the one field of the question: the person's words
BLOCK_URI = "jupymem://block"

# How a record's question was answered (``run``'s ``asked``).
NOT_ASKED = "not asked"  # no quote given: nothing to check
CANNOT_ASK = "cannot ask"  # the client offers no elicitation
DISMISSED = "dismissed"  # cancelled, or no answer in time
ANSWERED = "answered"
DECLINED = "declined"


@dataclass(frozen=True)
class Tool:
    """One tool as an MCP client lists it."""

    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool


def _schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


_SEARCH = tools.SEARCH_SCHEMA["function"]
_RECORD = tools.RECORD_SCHEMA["function"]

TOOLS: tuple[Tool, ...] = (
    Tool("memory_search", _SEARCH["description"], _schema(
        {k: v for k, v in _SEARCH["parameters"]["properties"].items()}, ("query",)), read_only=True),
    # No ``evidence``: a stdio server has no kernel session whose staged failures a lesson could cite.
    Tool("memory_record", _RECORD["description"] + (
        " The user is asked to confirm a quote in their client before the memory counts as theirs."),
        _schema({k: v for k, v in _RECORD["parameters"]["properties"].items() if k != "evidence"}, ("statement",)),
        read_only=False),
    Tool("memory_status", "What jupymem knows about this repository: whether it has memory, how many memories of "
         "each kind, and the size of the memory block. Never writes anything.", _schema({}), read_only=True),
)
BY_NAME = {t.name: t for t in TOOLS}


# -- arguments ------------------------------------------------------------------------


def check_arguments(name: str, raw: Any) -> dict[str, Any]:
    """``raw`` checked against tool ``name``'s schema, defaults filled in; raises a
    ``JupymemError`` that says what is wrong and what is allowed."""
    tool = BY_NAME.get(name)
    if tool is None:
        raise JupymemError(f"There is no tool {name!r}; use one of: {', '.join(BY_NAME)}.")
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise JupymemError(f"The arguments of {name} must be a JSON object.")
    props: dict[str, Any] = tool.schema["properties"]
    unknown = sorted(str(k) for k in raw if k not in props)
    if unknown:
        known = ", ".join(props) or "none"
        raise InvalidField(unknown[0], f"{name} takes no argument {unknown[0]!r} (it takes: {known}).")
    out: dict[str, Any] = {}
    for key, spec in props.items():
        if key not in raw or raw[key] is None:
            if key in tool.schema["required"]:
                raise InvalidField(key, f"{name} needs `{key}`: {spec.get('description', 'a value')}.")
            if "default" in spec:
                out[key] = spec["default"]
            continue
        out[key] = _value(name, key, spec, raw[key])
    return out


def _value(tool: str, key: str, spec: Mapping[str, Any], value: Any) -> Any:
    from ..storage.validate import quoted  # names a secret instead of echoing it

    kind = spec.get("type")
    if kind == "string":
        if not isinstance(value, str):
            raise InvalidField(key, f"{tool}: `{key}` must be text, not {quoted(value)}.")
        if "enum" in spec and value not in spec["enum"]:
            raise InvalidField(key, f"{tool}: `{key}` {quoted(value)} is not one of: {', '.join(spec['enum'])}.")
        if key in ("query", "statement") and not value.strip():
            raise InvalidField(key, f"{tool}: `{key}` is empty.")
        return value
    if kind == "integer":
        low, high = spec.get("minimum"), spec.get("maximum")
        whole = isinstance(value, int) and not isinstance(value, bool) or (isinstance(value, float) and value.is_integer())
        if not whole or (low is not None and value < low) or (high is not None and value > high):
            raise InvalidField(key, f"{tool}: `{key}` must be a whole number from {low} to {high}, not {quoted(value)}.")
        return int(value)
    if kind == "boolean":
        if not isinstance(value, bool):
            raise InvalidField(key, f"{tool}: `{key}` must be true or false, not {quoted(value)}.")
        return value
    raise InvalidField(key, f"{tool}: `{key}` has a type this server does not know.")  # a schema above is wrong


# -- calls ----------------------------------------------------------------------------


def context(root: Path, settings: Settings, prompt: str | None = None) -> tools.ToolContext:
    """What a tool call may use: the served repository, and the person's words when they answered."""
    from ..intake.llm import translator_for

    return tools.ToolContext(path=root, settings=settings, prompt=prompt, translator=translator_for(settings))


def before_asking(ctx: tools.ToolContext, args: Mapping[str, Any]) -> None:
    """Refuse what recording would refuse (a secret, an unknown kind, a language nothing can
    translate) before the person is asked to confirm it: a question about a statement that
    cannot be kept wastes their attention."""
    from ..intake import capture
    from ..intake.translate import needs_translation
    from ..storage import validate

    statement = capture.check_statement(args["statement"])
    validate.check_kind(args.get("kind") or "note")
    validate.check_topic(args.get("topic") or None)
    if args.get("user_quote"):
        capture.check_statement(args["user_quote"], "quote")
    needs_translation(statement, ctx.settings, ctx.translator)


def run(ctx: tools.ToolContext, name: str, args: Mapping[str, Any], asked: str = NOT_ASKED) -> dict[str, Any]:
    """Call tool ``name`` with checked ``args``; ``asked`` says how the person answered a record's question."""
    if name == "memory_search":
        # This user's own memory: private memories included (see the module's docstring).
        return tools.memory_search(ctx, args["query"], limit=args["limit"], include_inactive=args["include_inactive"])
    if name == "memory_status":
        return tools.memory_status(ctx)
    out = tools.memory_record(ctx, args["statement"], kind=args.get("kind") or "note",
                              user_quote=args.get("user_quote") or None, topic=args.get("topic") or None)
    if out.get("standing") == "unconfirmed" and asked in (CANNOT_ASK, DISMISSED):
        why = ("this client cannot ask the user to confirm their words (it offers no MCP elicitation)"
               if asked == CANNOT_ASK else "the user did not confirm their words")
        out["note"] = f"{why}: kept as unconfirmed; they can confirm it with `jupymem confirm {out['recorded']}`"
    return out


# -- the question ---------------------------------------------------------------------


def question(repository: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the message, the form) that asks the person whether these are their words."""
    from ..intake.text import one_line

    kind = args.get("kind") or "note"
    # On one line: a statement's own line breaks could lay out a question of the model's making.
    message = (
        f"An assistant wants to keep this in {repository}'s memory as your own statement:\n\n"
        f"  {kind}: {one_line(args['statement'])}\n\n"
        "It says these are your words. Accept them (correct them if you said it otherwise) to record it as yours; "
        "decline to record nothing; dismiss to keep it as the assistant's unconfirmed note."
    )
    form = {
        "type": "object",
        "properties": {WORDS: {"type": "string", "title": "Your words",
                               "description": "what you said, as you said it", "default": args["user_quote"]}},
        "required": [WORDS],
    }
    return message, form


def answer(action: str, content: Mapping[str, Any] | None) -> tuple[str, str | None]:
    """(how the question was answered, the person's words when they accepted)."""
    if action == "decline":
        return DECLINED, None
    words = (content or {}).get(WORDS)
    if action == "accept" and isinstance(words, str) and words.strip():
        return ANSWERED, words
    return DISMISSED, None


DECLINED_RESULT = {"declined": True, "note": "The user declined: these are not their words, and nothing was recorded."}


# -- the resource ---------------------------------------------------------------------


def block_text(root: Path, settings: Settings) -> str:
    """The ``<project_memory>`` block as assistants receive it (this user's private memories
    included), or "" where the repository has no memory: reading never creates any."""
    from ..core.opening import find_project

    proj = find_project(root, settings)
    return "" if proj is None else proj.block().text
