"""jupymem inside Jupyter AI 3, with the real packages (the test extra installs them).

The persona is found through its entry point by a real PersonaManager and
composes Jupyternaut's system prompt with the chat repository's memory; the
MCP tools are discovered through ``jupyter_server_mcp.tools`` and called over
HTTP on a real MCP server, where a record's quote is checked against the
message the persona is processing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from traitlets.config import Config

import jupymem

from conftest import make_repo

if TYPE_CHECKING:
    from jupyter_ai_persona_manager import PersonaManager
    from jupyterlab_chat.models import Message

pytest_plugins = ["pytest_jupyter.jupyter_server"]

# Jupyter AI's packages are imported by the tests that use them, the persona module first
# (it keeps Jupyternaut's litellm import offline): Jupyternaut imports litellm, seconds of
# CPU, and every pytest-xdist worker collects every module, whichever worker runs these.


def _manager(root: Path, chat_path: str, config: Config | None = None) -> PersonaManager:
    import jupymem.faces.jupyter_ai_persona  # noqa: F401  (first: see above)
    from jupyter_ai_persona_manager import PersonaManager
    from jupyterlab_chat.ychat import YChat

    chat = YChat()
    chat.initial_path = chat_path
    (root / chat_path).parent.mkdir(parents=True, exist_ok=True)
    return PersonaManager(chat=chat, root_dir=str(root), event_loop=asyncio.new_event_loop(), config=config or Config())


def _message(body: str) -> Message:
    from jupyterlab_chat.models import Message

    return Message(id="m1", time=0.0, body=body, sender="alice")


def test_entry_points_are_registered():
    personas = {e.name: e.value for e in entry_points(group="jupyter_ai.personas")}
    assert personas["jupymem"] == "jupymem.faces.jupyter_ai_persona:JupymemPersona"
    tools = {e.name: e for e in entry_points(group="jupyter_server_mcp.tools")}
    assert tools["jupymem"].load() == [
        "jupymem.faces.mcp_tools:memory_search", "jupymem.faces.mcp_tools:memory_record", "jupymem.faces.mcp_tools:memory_status"
    ]


def test_the_readme_gives_the_chat_a_model_with_settings_the_installed_packages_have():
    """The persona is useless without a model: the README's ways to give one must exist."""
    import re
    import sys

    import jupymem.faces.jupyter_ai_persona  # noqa: F401  (first: see above)
    from jupyter_ai_jupyternaut.extension_app import JupyternautExtension
    from jupyter_ai_persona_manager import PersonaManager

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    named = {cls: set(re.findall(rf"c\.{cls}\.(\w+)", readme)) for cls in ("JupyternautExtension", "PersonaManager")}
    assert named["JupyternautExtension"] == {"initial_language_model"}
    assert named["JupyternautExtension"] <= set(JupyternautExtension.class_trait_names(config=True))
    assert named["PersonaManager"] <= set(PersonaManager.class_trait_names(config=True))
    # The menu path the README walks: Settings -> Jupyternaut settings -> Add a custom model.
    assert "Settings → Jupyternaut settings → Add a custom model" in readme
    bundles = Path(sys.prefix, "share", "jupyter", "labextensions", "@jupyter-ai", "jupyternaut", "static")
    ui = "".join(p.read_text(encoding="utf-8", errors="replace") for p in bundles.glob("*.js"))
    assert '"Jupyternaut settings"' in ui and '"Add a custom model"' in ui


def test_default_persona_id_setting_selects_the_memory_persona(tmp_path: Path):
    from jupymem.faces.jupyter_ai_persona import PERSONA_ID, JupymemPersona

    config = Config({"PersonaManager": {"default_persona_id": PERSONA_ID}})
    manager = _manager(tmp_path, "team.chat", config)
    assert isinstance(manager.default_persona, JupymemPersona)
    assert manager.default_persona.id == PERSONA_ID


def test_persona_composes_jupyternauts_prompt_with_the_block_and_retrieved_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from jupymem.faces.jupyter_ai_persona import PERSONA_ID  # isort: skip  (first: see above)
    from jupyter_ai_jupyternaut.jupyternaut.jupyternaut import JupyternautPersona

    monkeypatch.setenv("JUPYMEM_BLOCK_CAP", "1024")
    repo = make_repo(tmp_path / "repo")
    proj = jupymem.init(repo)
    proj.remember_many(
        [{"statement": f"Table warehouse.t{i:02d} is read-only; write to scratch.t{i:02d}.", "kind": "constraint"}
         for i in range(20)]
        + [{"statement": "The churn dashboard reads fecha_alta as UTC timestamps.", "kind": "note"}]
    )
    manager = _manager(repo, "chats/team.chat")
    persona = manager.personas[PERSONA_ID]
    assert isinstance(persona, JupyternautPersona)  # Jupyternaut in every other respect

    first = persona.get_system_prompt(model_id="openai/fake", message=_message("Which timezone is fecha_alta in?"))
    second = persona.get_system_prompt(model_id="openai/fake", message=_message("Where do I write tables?"))
    block = proj.block().text
    # The block sits after Jupyternaut's instructions and before its per-message context.
    assert first.index("</instructions>") < first.index(block) < first.index("<context>")
    # Stable prefix: byte-identical across messages.
    assert first[: first.index(block) + len(block)] == second[: second.index(block) + len(block)]
    # Retrieved memory for this message comes last, after the context, outside the block.
    note = "The churn dashboard reads fecha_alta as UTC timestamps."
    assert note not in block
    assert first.index("</context>") < first.index('<retrieved_memory trust="untrusted">') < first.index(note)
    assert note not in second

    # A chat outside any repository with memory gets Jupyternaut's prompt unchanged.
    elsewhere = _manager(tmp_path / "elsewhere", "team.chat").personas[PERSONA_ID]
    message = _message("hello")
    assert elsewhere.get_system_prompt(model_id="openai/fake", message=message) == \
        JupyternautPersona.get_system_prompt(elsewhere, model_id="openai/fake", message=message)


# -- MCP tools over HTTP ------------------------------------------------------------------


def _server_token(app: Any) -> str:
    token = app.identity_provider.token
    assert token, "the test server must require a token"
    return str(token)


@contextlib.asynccontextmanager
async def _mcp_server() -> Any:
    """A real jupyter-server-mcp server on a free loopback port, with jupymem's tools from its entry point."""
    from jupymem.faces import jupyter_ai_persona  # noqa: F401  (first: see above)
    from jupyter_server_mcp.extension import MCPExtensionApp
    from jupyter_server_mcp.mcp_server import MCPServer

    server = MCPServer(name="test", port=0, host="127.0.0.1")
    ext = MCPExtensionApp()
    ext.mcp_server_instance = server
    ext._register_tools(ext._discover_entrypoint_tools(), source="entrypoints")
    task = asyncio.create_task(server.start_server())
    await server.wait_until_bound(timeout=20)
    try:
        yield f"http://127.0.0.1:{server.port}/mcp"
    finally:
        await server.stop_server()
        await asyncio.wait_for(task, 10)


async def _call_tool(url: str, headers: dict[str, str], name: str, **args: Any) -> dict[str, Any]:
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    async with Client(StreamableHttpTransport(url, headers=headers)) as client:
        result = await client.call_tool(name, args)
        return dict(json.loads(result.content[0].text))


async def test_an_mcp_caller_without_the_servers_token_reaches_no_memory_and_records_nothing(
    jp_serverapp: Any, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    async with _mcp_server() as mcp_url:
        await _unauthenticated_calls(jp_serverapp, jp_root_dir, monkeypatch, mcp_url)


async def _unauthenticated_calls(jp_serverapp: Any, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                 mcp_url: str) -> None:
    """The MCP port is outside the Jupyter server's authentication: any local process can
    reach it. Without the server's token a call reads nothing and writes nothing, whatever
    other headers it forges; with it, search works and private memories stay out."""
    root = Path(jp_root_dir).resolve()
    repo = make_repo(root / "proj")
    proj = jupymem.init(repo)
    shared = proj.remember("The churn dashboard uses UTC.", kind="decision")
    proj.remember("My churn scratch schema is tmp_ola.", kind="note", private=True)
    before = [m.id for m in proj.list(include_inactive=True)]
    token = _server_token(jp_serverapp)
    forged = {"X-Jupyter-Chat-Id": "chat", "X-JupyterAI-Persona-Id": "jupyternaut"}
    monkeypatch.setenv("JUPYMEM_MCP_WRITES", "1")
    wrong = [{}, forged, {"Authorization": "token x"}, {"Authorization": f"token {token}x"},
             {"Authorization": token}, {"Authorization": f"Basic {token}"}, {"Cookie": f"_xsrf=1; token={token}"}]
    for headers in wrong:
        for name, args in (("memory_search", {"query": "churn", "path": "proj"}), ("memory_status", {"path": "proj"}),
                           ("memory_record", {"statement": "Revenue is in USD.", "kind": "constraint", "path": "proj"})):
            out = await _call_tool(mcp_url, headers, name, **args)
            assert set(out) == {"error"} and "token" in out["error"], (headers, name, out)
            assert "churn" not in json.dumps(out).lower()
    query_token = mcp_url + f"?token={token}"
    out = await _call_tool(query_token, {}, "memory_search", query="churn", path="proj")
    assert set(out) == {"error"}
    assert [m.id for m in proj.list(include_inactive=True)] == before  # nothing recorded

    good = {"Authorization": f"token {token}"}
    found = await _call_tool(mcp_url, good, "memory_search", query="churn scratch schema dashboard", path="proj")
    assert found["status"] == "ok" and [h["id"] for h in found["hits"]] == [shared.id]
    assert "tmp_ola" not in json.dumps(found)  # private memories are never served over MCP
    bearer = await _call_tool(mcp_url, {"Authorization": f"Bearer {token}"}, "memory_status", path="proj")
    assert bearer["memory"] is True
    monkeypatch.delenv("JUPYMEM_MCP_WRITES")
    off = await _call_tool(mcp_url, good, "memory_record", statement="Revenue is in USD.", kind="fact", path="proj")
    assert "off" in off["error"] and [m.id for m in proj.list(include_inactive=True)] == before


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    return {"ServerApp": {"jpserver_extensions": {}}}


async def test_mcp_tools_over_http_check_quotes_against_the_message_being_processed(
    jp_serverapp: Any, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("JUPYMEM_MCP_WRITES", "1")  # writes are off unless the server turns them on
    from jupymem.faces.jupyter_ai_persona import PERSONA_ID  # isort: skip  (first: see above)
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport
    from jupyter_server_mcp.extension import MCPExtensionApp
    from jupyter_server_mcp.mcp_server import MCPServer

    root = Path(jp_root_dir).resolve()
    repo = make_repo(root / "proj")
    manager = _manager(root, "proj/chats/team.chat")
    persona = manager.personas[PERSONA_ID]
    chat_id = manager.chat.get_id()
    jp_serverapp.web_app.settings.setdefault("jupyter-ai", {})["persona-managers"] = {chat_id: manager}

    server = MCPServer(name="test", port=0, host="127.0.0.1")
    ext = MCPExtensionApp()
    ext.mcp_server_instance = server
    ext._register_tools(ext._discover_entrypoint_tools(), source="entrypoints")
    task = asyncio.create_task(server.start_server())
    try:
        await server.wait_until_bound(timeout=20)
        headers = {"X-Jupyter-Chat-Id": chat_id, "X-JupyterAI-Persona-Id": PERSONA_ID,
                   "Authorization": f"token {_server_token(jp_serverapp)}"}
        transport = StreamableHttpTransport(f"http://127.0.0.1:{server.port}/mcp", headers=headers)
        async with Client(transport) as client:
            names = {t.name for t in await client.list_tools()}
            assert {"memory_search", "memory_record", "memory_status"} <= names

            async def call(name: str, **args: Any) -> dict[str, Any]:
                result = await client.call_tool(name, args)
                return json.loads(result.content[0].text)

            status = await call("memory_status", path="proj")
            assert (status["git"], status["memory"], status["name"]) == (True, False, "proj")
            assert not {"home", "database", "engine"} & set(status)  # local paths stay local
            assert jupymem.project(repo) is None

            # The quote occurs in the message the persona is processing: supported, memory starts.
            async with persona.track_processing(_message("Let's always join on customer_id, never on email.")):
                out = await call("memory_record", statement="Always join on customer_id, never on email.",
                                 kind="decision", user_quote="always join on customer_id, never on email")
            assert out["standing"] == "supported", out
            m = jupymem.project(repo).get(out["recorded"])
            assert m.provenance.quote == "always join on customer_id, never on email"

            # No message being processed: the quote cannot be checked, so it is unconfirmed.
            out = await call("memory_record", statement="Emails are unique.", kind="fact",
                             user_quote="emails are unique", path="proj")
            assert out["standing"] == "unconfirmed" and "not visible" in out["note"]

            found = await call("memory_search", query="join customer_id", path="proj/chats")
            assert found["status"] == "ok" and found["hits"][0]["id"] == m.id
            assert 0.5 <= found["hits"][0]["confidence"] <= 1
            # Paths are confined by the REST API's own rule: no '..', no absolute path, no '~'.
            for escape in ("../..", str(repo), "/etc", "~", "~/proj"):
                refused = await call("memory_search", query="join customer_id", path=escape)
                assert "Jupyter server's root" in refused["error"], (escape, refused)
                assert "hits" not in refused
            status = await call("memory_status", path="proj/chats")
            assert status["memory"] is True and status["total"] == 2
    finally:
        await server.stop_server()
        await asyncio.wait_for(task, 10)
