"""``jupymem mcp``: a stdio MCP server for one repository, for coding agents (Claude Code,
VS Code's agent mode, Cursor, Codex) working in it.

The wiring of the MCP SDK (``pip install "jupymem[mcp]"``, imported only here, when the
command runs) around ``assistants.served``, which holds what is served and the rule a
record follows. Decisions worth knowing:

* Standard output is the protocol: anything else written there (a library's print, a
  warning from a native extension) would corrupt it. So the protocol gets its own copy
  of the descriptor and file descriptor 1 is pointed at standard error for the rest of
  the process.
* Every tool result is JSON (text and ``structuredContent``); a refusal or an error is
  a result with ``isError`` and one message that says what to do, never a traceback. A
  bug is logged on standard error in one line and answered as an internal error.
* Memory is read and written on one worker thread, one call at a time: the searches and
  the encoders loading in the background share one project, and the event loop stays
  free to answer the client (and to ask the person about a quote) meanwhile.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

from ..assistants import served
from ..config import Settings
from ..errors import JupymemError

log = logging.getLogger("jupymem")

NAME = "jupymem"
INSTRUCTIONS = (
    "jupymem is this git repository's memory: decisions, constraints, corrections, preferences, procedures, "
    "failure lessons, facts and notes recorded by its people and assistants. Search it (memory_search) before "
    "relying on an assumption about the data or the code; the resource jupymem://block holds the memories every "
    "assistant here is given. Record (memory_record) only what the user stated, passing their exact words as "
    "user_quote; they are asked to confirm them. Never record secrets."
)


def serve(root: Path, settings: Settings) -> int:
    """Serve ``root``'s memory on standard input and output until the client closes them."""
    try:
        import anyio
    except ImportError:
        raise _missing_sdk() from None
    server = build(root, settings)
    protocol = _protocol_streams()
    anyio.run(_run, server, protocol)
    return 0


def _missing_sdk() -> JupymemError:
    return JupymemError('`jupymem mcp` needs the MCP SDK: pip install "jupymem[mcp]" (or run it with '
                        "`uvx --from 'jupymem[mcp]' jupymem mcp`).")


def _protocol_streams() -> tuple[Any, Any]:
    """Standard input, and a private copy of standard output, as the SDK's text streams;
    descriptor 1 then writes to standard error."""
    import anyio
    from io import TextIOWrapper

    out = os.dup(sys.stdout.fileno())
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    stdin = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(TextIOWrapper(os.fdopen(out, "wb"), encoding="utf-8"))
    return stdin, stdout


async def _run(server: Any, protocol: tuple[Any, Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server(*protocol) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def build(root: Path, settings: Settings) -> Any:
    """The MCP server (the SDK's low-level ``Server``) for ``root``'s memory."""
    # The SDK imports jsonschema, and jsonschema imports rfc3987_syntax where it is installed
    # (jupyter_server's event schemas bring it): 39 grammars compiled, two seconds of CPU
    # before the server can answer, where clients give a server ten seconds to start (Codex's
    # default). Without it jsonschema leaves the "iri" formats unchecked, which nothing here
    # uses (the tools' arguments are checked by ``served.check_arguments``).
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    try:
        import anyio
        from mcp import types
        from mcp.server.lowlevel import Server
        from mcp.server.lowlevel.helper_types import ReadResourceContents
        from mcp.shared.exceptions import McpError
    except ImportError:
        raise _missing_sdk() from None

    server: Any = Server(NAME, version=_version(), instructions=INSTRUCTIONS)
    one_at_a_time = anyio.CapacityLimiter(1)

    async def work(fn: Any, *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args, limiter=one_at_a_time)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [
            types.Tool(name=t.name, description=t.description, inputSchema=t.schema,
                       annotations=types.ToolAnnotations(readOnlyHint=t.read_only, destructiveHint=False,
                                                         openWorldHint=False))
            for t in served.TOOLS
        ]

    @server.call_tool(validate_input=False)  # checked by ``served.check_arguments``, whose messages say more
    async def call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        try:
            args = served.check_arguments(name, arguments)
            asked, prompt = served.NOT_ASKED, None
            if name == "memory_record" and args.get("user_quote"):
                await work(served.before_asking, served.context(root, settings), args)
                asked, prompt = await _ask(server, root, args)
                if asked == served.DECLINED:
                    return _result(served.DECLINED_RESULT)
            result = await work(served.run, served.context(root, settings, prompt), name, args, asked)
        except Exception as exc:
            result = {"error": _message(exc, name)}
        return _result(result)

    def _result(result: dict[str, Any]) -> types.CallToolResult:
        import json

        failed = "error" in result
        text = result["error"] if failed else json.dumps(result, ensure_ascii=False, indent=2)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structuredContent=None if failed else result, isError=failed)

    @server.list_resources()
    async def list_resources() -> list[types.Resource]:
        from pydantic import AnyUrl

        return [types.Resource(
            uri=AnyUrl(served.BLOCK_URI), name="project_memory", title=f"{root.name}'s memory block", mimeType="text/plain",
            description="The <project_memory> block every assistant in this repository is given: its active "
                        "memories, capped and byte-stable until memory changes (empty without memory).",
        )]

    @server.read_resource()
    async def read_resource(uri: Any) -> list[ReadResourceContents]:
        if str(uri) != served.BLOCK_URI:
            raise McpError(types.ErrorData(code=types.INVALID_PARAMS,
                                           message=f"There is no resource {str(uri)!r}; this server has {served.BLOCK_URI}."))
        try:
            text = await work(served.block_text, root, settings)
        except Exception as exc:
            raise McpError(types.ErrorData(code=types.INTERNAL_ERROR, message=_message(exc, "the block"))) from None
        return [ReadResourceContents(content=text, mime_type="text/plain")]

    return server


async def _ask(server: Any, root: Path, args: dict[str, Any]) -> tuple[str, str | None]:
    """Ask the person, through the client, whether the quoted words are theirs
    (``served.question``): (how it was answered, their words)."""
    import anyio

    ctx = server.request_context
    params = ctx.session.client_params
    if params is None or params.capabilities.elicitation is None:
        return served.CANNOT_ASK, None
    message, form = served.question(root.name, args)
    with anyio.move_on_after(served.ASK_SECONDS):
        reply = await ctx.session.elicit(message, form, related_request_id=ctx.request_id)
        return served.answer(reply.action, reply.content)
    return served.DISMISSED, None


def _message(exc: BaseException, what: str) -> str:
    """One line for the client: jupymem's own message, a storage failure said plainly, or
    (a bug) the kind of error, with its details on standard error only."""
    if isinstance(exc, JupymemError):
        return " ".join(exc.message.split())
    from ..storage.damage import storage_error

    err = storage_error(exc)
    if err is not None:
        return " ".join(err.message.split())
    log.error("jupymem mcp: %s failed: %s: %s", what, type(exc).__name__, exc)
    return (f"jupymem could not complete {what}: an internal error ({type(exc).__name__}); its details are in the "
            "server's log (its standard error). Try again, or report it.")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jupymem")
    except PackageNotFoundError:  # run from a source tree
        return "0"
