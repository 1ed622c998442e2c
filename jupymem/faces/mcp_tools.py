"""Memory tools for every Jupyter AI persona, through Jupyter's MCP server.

``jupyter-server-mcp`` collects tools from the ``jupyter_server_mcp.tools``
entry point group (``TOOLS`` below, named in pyproject.toml) and serves them to
every persona of Jupyter AI. These are plain typed functions, because the MCP
server derives each tool's schema from the signature and its description from
the docstring; each is a thin call into ``tools.py``.

Where a tool runs, the repository is found from ``path`` (relative to the
server root, and confined to it by the REST API's own rule, ``paths.resolve_path``:
no absolute paths, no ``~``, no ``..``), else from the chat the call comes from,
else the server root. The honesty rule is the one ``%%ask`` follows: a record is
``supported`` only when ``user_quote`` occurs in the person's current message.
That message is read from the persona that is processing it (the persona
manager sends its chat and persona ids as headers with every tool call); where
it cannot be seen, records are ``unconfirmed``.

Who may call them: jupyter-server-mcp serves its tools on a port of its own
(3001), outside the Jupyter server's authentication, to any process that can
reach it (on a shared host: any other user). So every call here first checks
that the request carries the Jupyter server's own token (``Authorization:
token <token>`` or ``Bearer <token>``, compared in constant time with the
running server's); without it a call gets one refusal and no memory content,
and with the server's authentication turned off (no token) every call is
refused. Chat and persona headers prove nothing: anyone can send them. Private
memories are never served here (the caller holds the server's token, which says
nothing of whose private words they may read), and ``memory_record`` writes
only when ``JUPYMEM_MCP_WRITES=1`` is set for the server. Jupyter AI's persona
manager sends the token once it is configured to (README, "Assistant endpoints").
"""

from __future__ import annotations

import hmac
import logging
import os
from pathlib import Path
from typing import Any

from ..assistants import tools
from ..config import Settings
from ..errors import JupymemError
from ..models import KINDS
from .paths import PathOutsideRoot, inside, resolve_path

log = logging.getLogger("jupymem")

TOOLS = [
    "jupymem.faces.mcp_tools:memory_search",
    "jupymem.faces.mcp_tools:memory_record",
    "jupymem.faces.mcp_tools:memory_status",
]

WRITES_ENV = "JUPYMEM_MCP_WRITES"  # "1": memory_record may write (off by default)
REFUSED = ("jupymem's memory tools need the Jupyter server's token with each call (an Authorization header: "
           "token <the server's token>); this call had none that matches, so nothing was read or written.")
CHAT_ID_HEADER = "x-jupyter-chat-id"
PERSONA_ID_HEADER = "x-jupyterai-persona-id"


def memory_search(query: str, path: str = "", limit: int = 5, include_inactive: bool = False) -> dict[str, Any]:
    """Search the jupymem memory of the git repository holding `path` (a notebook or folder,
    relative to the Jupyter root; default: the chat's folder): decisions, constraints, corrections,
    preferences, procedures, failure lessons, facts and notes recorded by its people and assistants.
    Returns matching memories, or status 'abstained' when nothing really matches."""
    # Private memories are never served here (see the module's docstring).
    return _call(path, lambda ctx: tools.memory_search(ctx, query, limit=limit, include_inactive=include_inactive,
                                                        public_only=True))


def memory_record(statement: str, kind: str = "note", user_quote: str = "", topic: str = "", path: str = "") -> dict[str, Any]:
    """Keep one short English statement in the jupymem memory of the git repository holding `path`.
    kind is one of: {kinds}.
    Record only what the user stated; pass user_quote, the user's exact words from their current
    message that state it: with it the memory is 'supported', without it 'unconfirmed'.
    Never include secrets."""
    if os.environ.get(WRITES_ENV, "").strip() != "1":
        if not _authorized():
            return {"error": REFUSED}
        return {"error": f"Recording through MCP is off on this server (set {WRITES_ENV}=1 for it to turn it on); "
                         "nothing was recorded."}
    return _call(
        path,
        lambda ctx: tools.memory_record(ctx, statement, kind=kind or "note", user_quote=user_quote or None,
                                        topic=topic or None, public_only=True),
    )


# The tool's description (its docstring) names the kinds from the one list, in block order.
memory_record.__doc__ = (memory_record.__doc__ or "").replace("{kinds}", ", ".join(KINDS))


def memory_status(path: str = "") -> dict[str, Any]:
    """What jupymem knows about the git repository holding `path`: whether it has memory, how many
    memories of each kind, and the size of the memory block. Never writes anything."""
    return _call(path, tools.memory_status)


# -- plumbing --------------------------------------------------------------------------


def _authorized() -> bool:
    """Whether this MCP request carries the running Jupyter server's token. Fails closed:
    no server, no token configured, no header, or a wrong one are all a no."""
    try:
        from fastmcp.server.dependencies import get_http_headers
        from jupyter_server.serverapp import ServerApp
    except ImportError:
        return False
    if not ServerApp.initialized():
        return False
    app = ServerApp.instance()
    expected = getattr(getattr(app, "identity_provider", None), "token", None) or getattr(app, "token", None)
    if not isinstance(expected, str) or not expected:
        return False
    given = (get_http_headers(include={"authorization"}) or {}).get("authorization", "")
    scheme, _, value = given.strip().partition(" ")
    if scheme.lower() not in ("token", "bearer") or not value.strip():
        return False
    return hmac.compare_digest(value.strip().encode(), expected.encode())


def _call(path: str, fn: Any) -> dict[str, Any]:
    if not _authorized():
        return {"error": REFUSED}
    try:
        prompt, chat_path = _current_message()
        settings = Settings.from_env()
        from ..intake.llm import translator_for

        ctx = tools.ToolContext(
            path=_resolve(path, chat_path), settings=settings, prompt=prompt, translator=translator_for(settings),
            within=server_root(),
        )
        result: dict[str, Any] = fn(ctx)
        return result
    except JupymemError as exc:
        return {"error": exc.message}


def server_root() -> Path:
    """The Jupyter server's root directory (the working directory outside a server)."""
    try:
        from jupyter_server.serverapp import ServerApp

        if ServerApp.initialized():
            return Path(ServerApp.instance().root_dir).expanduser().resolve()
    except ImportError:
        pass
    return Path.cwd().resolve()


def _resolve(path: str, chat_path: str | None) -> Path:
    """``path`` confined to the root exactly as the REST API confines it (no absolute
    paths, no ``~``, no ``..``); without one, the chat's folder, else the root."""
    root = server_root()
    if path:
        return resolve_path(root, path)
    if chat_path:
        target = Path(chat_path).resolve().parent
        if not inside(root, target):
            raise PathOutsideRoot(f"The chat {chat_path!r} is outside the Jupyter server's root.")
        return target
    return root


def _current_message() -> tuple[str | None, str | None]:
    """(the person's message being answered, the chat file's absolute path), where
    the MCP call carries the persona manager's headers; else (None, None)."""
    try:
        from fastmcp.server.dependencies import get_http_headers
        from jupyter_server.serverapp import ServerApp
    except ImportError:
        return None, None
    try:
        headers = get_http_headers() or {}
        chat_id, persona_id = headers.get(CHAT_ID_HEADER), headers.get(PERSONA_ID_HEADER)
        if not chat_id or not persona_id or not ServerApp.initialized():
            return None, None
        managers = ServerApp.instance().web_app.settings.get("jupyter-ai", {}).get("persona-managers", {})
        manager = managers.get(chat_id)
        persona = manager.personas.get(persona_id) if manager is not None else None
        message = getattr(persona, "processing_message", None)
        body = getattr(message, "body", None)
        return (body if isinstance(body, str) else None), manager.get_chat_path() if manager is not None else None
    except Exception as exc:  # the lookup is a courtesy; without it records are unconfirmed
        log.debug("jupymem: could not find the chat message of this tool call: %s", exc)
        return None, None
