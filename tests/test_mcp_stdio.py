"""``jupymem mcp`` driven by a real MCP client: the SDK's own ``stdio_client`` and
``ClientSession`` start the server in a process of its own, as Claude Code, VS Code,
Cursor or Codex would, in a real repository with a real SQLite memory.

Each test starts one server (a Python process importing jupymem and the SDK, about a
second) and does everything it checks in that one session. None starts IPython.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from cli_run import ROOT, jm
from conftest import make_repo

SECRET = "ghp_" + "Q7rT2mVx9LkP4sWz8NcB6yHd3FgJ1aE5uK0o"  # a GitHub token's shape, split so no scanner flags this file


def _run(argv: list[str], cwd: Path, body: Callable[[ClientSession], Awaitable[None]],
         elicit: Any = None, env: dict[str, str] | None = None) -> None:
    """Start ``argv`` as an MCP stdio server in ``cwd`` and run ``body`` with a session on it."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(cwd),
                                   env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})

    async def main() -> None:
        with open(os.devnull, "w") as errlog:  # the server's stderr: its log, not the test's output
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, elicitation_callback=elicit) as session:
                    await session.initialize()
                    await body(session)

    anyio.run(main)


def _server(*args: str) -> list[str]:
    return [sys.executable, "-m", "jupymem", "mcp", *args]


def _json(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.isError, result.content
    data = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert data == result.structuredContent
    return data  # type: ignore[no-any-return]


def _error(result: types.CallToolResult) -> str:
    assert result.isError
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text and 'File "' not in text
    return text


def _accepting(asked: list[str], words: str | None = None) -> Any:
    """A person who accepts the words the form offers (or types ``words``)."""
    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        offered = params.requestedSchema["properties"]["words"]["default"]
        return types.ElicitResult(action="accept", content={"words": words or offered})

    return answer


def test_a_real_client_lists_the_tools_records_searches_and_reads_the_block(repo: Path) -> None:
    assert jm("remember", "--private", "My scratch bucket is s3://tmp-bucket-alpha for quick tests.", cwd=repo).returncode == 0
    (repo / "notebooks").mkdir()
    asked: list[str] = []

    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == {"memory_search", "memory_record", "memory_status"}
        assert "path" not in tools["memory_search"].inputSchema["properties"]  # one repository, nothing else
        assert "evidence" not in tools["memory_record"].inputSchema["properties"]
        assert tools["memory_search"].annotations.readOnlyHint and not tools["memory_record"].annotations.readOnlyHint

        status = _json(await s.call_tool("memory_status", {}))
        assert status["memory"] is True and status["name"] == "repo" and "home" not in status and "root" not in status

        # The person confirms the quoted words through the client: supported.
        said = _json(await s.call_tool("memory_record", {
            "statement": "Never write to data/raw; it is read-only.", "kind": "constraint",
            "user_quote": "never write to data/raw, it's read-only"}))
        assert said["standing"] == "supported" and said["kind"] == "constraint"
        assert len(asked) == 1 and "Never write to data/raw" in asked[0]

        # Without a quote nobody is asked, and the record is the assistant's own.
        guess = _json(await s.call_tool("memory_record", {"statement": "The churn model is retrained weekly."}))
        assert guess["standing"] == "unconfirmed" and len(asked) == 1

        found = _json(await s.call_tool("memory_search", {"query": "may I write into data/raw?", "limit": 3}))
        assert found["status"] == "ok" and found["hits"][0]["id"] == said["recorded"]
        # This user's own server: their private memories are searched too.
        private = _json(await s.call_tool("memory_search", {"query": "scratch bucket for quick tests"}))
        assert "tmp-bucket-alpha" in private["hits"][0]["statement"]

        resources = (await s.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["jupymem://block"]
        block = (await s.read_resource(resources[0].uri)).contents[0].text  # type: ignore[union-attr]
        assert block == jm("block", cwd=repo).stdout.decode()  # byte for byte what every face gives
        assert "- constraint: Never write to data/raw; it is read-only." in block
        assert "- note (unconfirmed): The churn model is retrained weekly." in block

        # Bad arguments: one clear line each, nothing recorded.
        assert "whole number from 1 to 10" in _error(await s.call_tool("memory_search", {"query": "x", "limit": "all"}))
        assert "takes no argument 'path'" in _error(await s.call_tool("memory_search", {"query": "x", "path": "/etc"}))
        assert "needs `statement`" in _error(await s.call_tool("memory_record", {"kind": "note"}))
        assert "is not one of" in _error(await s.call_tool("memory_record", {"statement": "A b c.", "kind": "rule"}))
        assert "no tool 'memory_delete'" in _error(await s.call_tool("memory_delete", {"id": said["recorded"]}))
        # A secret is refused before anyone is asked, and never stored.
        refused = _error(await s.call_tool("memory_record", {
            "statement": f"Use the token {SECRET} for the API.", "user_quote": f"use {SECRET}"}))
        assert "GitHub token" in refused and SECRET not in refused and len(asked) == 1
        with pytest.raises(Exception, match="no resource"):
            await s.read_resource("jupymem://other")  # type: ignore[arg-type]

    _run(_server(), repo / "notebooks", body, elicit=_accepting(asked))  # started in a folder of the repository
    listed = jm("list", "--json", cwd=repo)
    statements = [m["statement"] for m in json.loads(listed.stdout)]
    assert not any(SECRET in s for s in statements) and len(statements) == 3


def test_the_person_decides_what_counts_as_their_words(repo: Path, tmp_path: Path) -> None:
    assert jm("init", cwd=repo).returncode == 0
    answers = iter([("decline", None), ("accept", "I said we join on customer_id only"), ("cancel", None)])

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        action, words = next(answers)
        return types.ElicitResult(action=action, content={"words": words} if words else None)

    async def body(s: ClientSession) -> None:
        declined = _json(await s.call_tool("memory_record", {
            "statement": "Sales data is refreshed hourly.", "user_quote": "sales data is refreshed hourly"}))
        assert declined["declined"] is True and "nothing was recorded" in declined["note"]
        # The person corrected the words: the assistant's quote is not in them.
        corrected = _json(await s.call_tool("memory_record", {
            "statement": "Join orders to customers on email.", "user_quote": "join on email"}))
        assert corrected["standing"] == "unconfirmed" and "does not occur verbatim" in corrected["note"]
        dismissed = _json(await s.call_tool("memory_record", {
            "statement": "Plots use the viridis palette.", "user_quote": "plots use viridis"}))
        assert dismissed["standing"] == "unconfirmed" and "did not confirm" in dismissed["note"]

    # Started where Claude Code's desktop app starts servers (the home folder), told the project.
    home = tmp_path / "home"
    home.mkdir()
    _run(_server(), home, body, elicit=person, env={"CLAUDE_PROJECT_DIR": str(repo)})
    statements = {m["statement"] for m in json.loads(jm("list", "--json", cwd=repo).stdout)}
    assert statements == {"Join orders to customers on email.", "Plots use the viridis palette."}


def test_started_from_elsewhere_with_repo_and_a_client_that_cannot_ask(repo: Path, tmp_path: Path) -> None:
    # What `uvx --from 'jupymem[mcp]' jupymem mcp --repo PATH` runs: the installed console script,
    # started in a folder outside the repository (README, "Every assistant").
    script = Path(sys.executable).parent / "jupymem"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "jupymem"]
    other = make_repo(tmp_path / "other")
    assert jm("remember", "The other repository's plan is a rewrite in Rust.", cwd=other).returncode == 0
    projects = Path(os.environ["JUPYMEM_HOME"]) / "projects"
    before = sorted(projects.iterdir())

    async def body(s: ClientSession) -> None:
        # Nothing to confirm a quote with: a quoted record is the assistant's, and cannot start memory.
        first = _error(await s.call_tool("memory_record", {"statement": "Use pandas 2.", "user_quote": "use pandas 2"}))
        assert "no memory yet" in first
        status = _json(await s.call_tool("memory_status", {}))
        assert status["memory"] is False and status["name"] == "repo"
        block = (await s.read_resource("jupymem://block")).contents[0].text  # type: ignore[arg-type, union-attr]
        assert block == ""  # reading never creates memory
        assert sorted(projects.iterdir()) == before

        assert jm("init", cwd=repo).returncode == 0  # the person starts it
        kept = _json(await s.call_tool("memory_record", {"statement": "Use pandas 2 for every frame.",
                                                         "user_quote": "use pandas 2 for every frame"}))
        assert kept["standing"] == "unconfirmed"
        assert "cannot ask" in kept["note"] and f"jupymem confirm {kept['recorded']}" in kept["note"]
        # One repository's memory, and no other's.
        found = _json(await s.call_tool("memory_search", {"query": "plan rewrite in Rust"}))
        assert all("Rust" not in h["statement"] for h in found.get("hits", []))

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _run([*argv, "mcp", "--repo", str(repo)], elsewhere, body)


def test_outside_a_repository_the_server_says_so_and_stops(tmp_path: Path) -> None:
    done = subprocess.run(_server("--repo", str(tmp_path)), capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and done.stdout == b""
    assert b"is not inside a git repository" in done.stderr and b"Traceback" not in done.stderr
    missing = subprocess.run(_server("--repo", str(tmp_path / "nowhere")), capture_output=True, timeout=60,
                             stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert missing.returncode == 2 and b"does not exist" in missing.stderr


def test_without_the_sdk_the_command_names_the_extra(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # what an install without the extra has
    done = jm("mcp", cwd=repo)
    assert done.returncode == 2 and b'pip install "jupymem[mcp]"' in done.stderr and b"Traceback" not in done.stderr
