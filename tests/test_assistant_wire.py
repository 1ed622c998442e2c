"""What litellm actually sends, checked on the wire against a fake OpenAI server on loopback.

The block rides in the system message and is byte-identical from one turn to
the next until memory changes; retrieved memory sits after its closing tag;
a conversation is folded at 26 messages keeping 5; tool calls record with the
right standing; %%ask works in a real InteractiveShell.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from fake_openai import SUMMARY, FakeOpenAI, system_prompt
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import jupymem
from jupymem.assistants.assistant import ask_turn, conversation_for
from jupymem.assistants.conversation import HEADINGS
from jupymem.config import Settings
from jupymem.intake.capture import evidence_from_exception
from jupymem.models import SUPPORTED, UNCONFIRMED

from conftest import shell_in

MODEL = "openai/fake"
BLOCK = re.compile(r'<project_memory trust="untrusted" revision="[0-9a-f]+">\n.*?\n</project_memory>', re.DOTALL)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    with FakeOpenAI() as server:
        yield server


def _ask(prompt: str, repo: Path, settings: Settings, fake: FakeOpenAI, **kw):
    turn = ask_turn(prompt, model=MODEL, path=repo, settings=settings, api_base=fake.url, **kw)
    if turn.compaction is not None:
        turn.compaction.join(30)
    return turn


def _overflowing_project(repo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Settings, object]:
    monkeypatch.setenv("JUPYMEM_BLOCK_CAP", "1024")
    settings = Settings.from_env()
    proj = jupymem.init(repo, settings=settings)
    proj.remember_many(
        [{"statement": f"Table warehouse.t{i:02d} is read-only for notebooks; write to scratch.t{i:02d}.",
          "kind": "constraint"} for i in range(20)]
        + [{"statement": "The churn dashboard reads fecha_alta as UTC timestamps.", "kind": "note", "topic": "churn"}]
    )
    return settings, proj


def test_block_is_byte_identical_across_turns_and_retrieved_memory_sits_after_it(
    repo: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
):
    settings, proj = _overflowing_project(repo, monkeypatch)
    assert proj.block().omitted > 0
    fake.say("It is UTC.", "Write to scratch.")
    _ask("Which timezone does the churn dashboard use for fecha_alta?", repo, settings, fake)
    _ask("Where may I write tables?", repo, settings, fake)

    first, second = (system_prompt(r) for r in fake.chat_requests())
    assert first.startswith("You are an assistant working in a Jupyter notebook")
    (block1,), (block2,) = BLOCK.findall(first), BLOCK.findall(second)
    assert block1 == block2 == proj.block().text  # byte-identical, so it stays in the provider's cache
    stable = first[: first.index("</project_memory>") + len("</project_memory>")]
    assert second.startswith(stable)

    # The matching memory did not fit in the block: it is retrieved, after the block, for this prompt only.
    note = "The churn dashboard reads fecha_alta as UTC timestamps."
    assert note not in block1
    retrieved = first.index("<retrieved_memory trust=")
    assert retrieved > first.index("</project_memory>")
    assert first.index(note) > retrieved
    assert note not in second

    # Until memory changes: a new memory changes the block (and its revision).
    proj.remember("Never write to warehouse tables from notebooks.", kind="correction")
    _ask("And now?", repo, settings, fake)
    third = system_prompt(fake.chat_requests()[-1])
    assert BLOCK.findall(third)[0] != block1


def test_compaction_happens_at_26_messages_and_keeps_5(repo: Path, fake: FakeOpenAI, settings: Settings):
    jupymem.init(repo)
    for i in range(12):
        _ask(f"Question {i} about the churn model", repo, settings, fake)
    assert fake.compaction_requests() == []
    conv = conversation_for(jupymem.project(repo), repo)
    assert conv.count() == 24

    turn = _ask("Question 12 about the churn model", repo, settings, fake)
    assert turn.answer == "ok", "the answer came first; the fold runs after it"
    (request,) = fake.compaction_requests()
    assert all(f"## {h}" in request["messages"][0]["content"] for h in HEADINGS)
    assert "[user] Question 0 about the churn model" in request["messages"][1]["content"]
    assert conv.count() == 5
    assert [m.content for m in conv.messages()][-2:] == ["Question 12 about the churn model", "ok"]
    assert conv.summary() == SUMMARY

    _ask("What is the next move?", repo, settings, fake)
    latest = system_prompt(fake.chat_requests()[-1])
    assert "Summary of the earlier conversation:\n## Objective" in latest
    assert latest.index("<conversation_memory>") > latest.index("</project_memory>")


def test_tool_calls_record_with_the_right_standing(repo: Path, fake: FakeOpenAI, settings: Settings):
    jupymem.init(repo)
    try:
        {"customer_id": 1}["email"]
    except KeyError as exc:
        ev = evidence_from_exception(exc, session="s1", source='row["email"]', execution_count=3)
    prompt = "From now on join sales to customers on customer_id, never on email."
    fake.say(
        {"tool_calls": [
            ("memory_record", {"statement": "Join sales to customers on customer_id, never on email.",
                               "kind": "decision", "user_quote": "join sales to customers on customer_id, never on email",
                               "evidence": [ev.handle]}),
            ("memory_record", {"statement": "Customers have unique emails.", "kind": "fact",
                               "user_quote": "emails are unique"}),
        ], "text": "Recording that."},
        {"tool_calls": [("memory_search", {"query": "customer_id join"})]},
        "Done: joins use customer_id.",
    )
    turn = _ask(prompt, repo, settings, fake, evidence=[ev])
    assert turn.answer == "Recording that.\n\nDone: joins use customer_id."

    supported, unconfirmed = turn.recorded
    assert (supported.standing, supported.kind) == (SUPPORTED, "decision")
    assert supported.provenance.quote == "join sales to customers on customer_id, never on email"
    assert supported.provenance.recorder == "assistant"
    assert [e.handle for e in supported.evidence] == [ev.handle]
    assert unconfirmed.standing == UNCONFIRMED and unconfirmed.provenance.quote is None
    assert "- fact (unconfirmed): Customers have unique emails." in jupymem.project(repo).block().text

    # The tool results went back to the model as tool messages, and memory_search saw the new record.
    second, third = fake.chat_requests()[1:3]
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert [json.loads(m["content"])["standing"] for m in tool_messages] == [SUPPORTED, UNCONFIRMED]
    assert second["messages"][2]["tool_calls"][0]["function"]["name"] == "memory_record"
    found = json.loads([m for m in third["messages"] if m["role"] == "tool"][-1]["content"])
    assert found["status"] == "ok" and found["hits"][0]["id"] == supported.id
    # Memory's own tool results are never staged as evidence.
    assert jupymem.project(repo).staged_evidence() == []


def test_only_loopback_is_contacted(repo: Path, fake: FakeOpenAI, settings: Settings, monkeypatch: pytest.MonkeyPatch):
    jupymem.init(repo).remember("Join on customer_id.", kind="decision")
    contacted: list[object] = []
    real_connect = socket.socket.connect

    def spy(self: socket.socket, address: object) -> object:
        contacted.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", spy)
    _ask("remember that plots use seaborn", repo, settings, fake)
    assert contacted and all(isinstance(a, tuple) and a[0] == "127.0.0.1" for a in contacted), contacted


# -- %%ask in a real InteractiveShell -----------------------------------------------------


@pytest.fixture
def shell(repo: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_BASE", fake.url)
    monkeypatch.setenv("JUPYMEM_MODEL", MODEL)
    yield from shell_in(repo, monkeypatch)


def test_ask_magic_streams_into_a_real_shell(shell: InteractiveShell, repo: Path, fake: FakeOpenAI, capsys):
    assert shell.user_ns.get("jupymem_context", "") == ""
    result = shell.run_cell("%%remember --kind decision\nJoin sales to customers on customer_id.")
    assert result.success, result.error_in_exec
    proj = jupymem.project(repo)
    assert shell.user_ns["jupymem_context"] == proj.block().text  # %%remember refreshed it

    # A change from elsewhere: ordinary cells leave the variable alone (the hook
    # costs them one string test); an %%ai cell refreshes it with its prompt.
    proj.remember("Plot revenue on a log scale.", kind="preference")
    shell.run_cell("x = 1")
    assert "log scale" not in shell.user_ns["jupymem_context"]
    shell.run_cell("%%ai openai:gpt-4o\nHow should I plot revenue?")  # no such magic here; the hook still runs
    assert shell.user_ns["jupymem_context"].startswith(proj.block().text)
    assert "log scale" in shell.user_ns["jupymem_context"]

    capsys.readouterr()
    fake.say("Join on **customer_id**, never on email.")
    result = shell.run_cell("%%ask\nHow do I join sales to customers?")
    assert result.success, result.error_in_exec
    assert "Join on **customer_id**, never on email." in capsys.readouterr().out
    system = system_prompt(fake.chat_requests()[-1])
    assert proj.block().text in system

    # A declaration through %%ask updates memory and jupymem_context at once.
    fake.say("Noted.")
    result = shell.run_cell("%%ask --full\nremember that we always plot with seaborn")
    assert result.success, result.error_in_exec
    out = capsys.readouterr().out
    assert "Noted." in out and "remembered constraint" in out
    assert "- constraint: We always plot with seaborn" in shell.user_ns["jupymem_context"]


def test_ask_magic_without_a_model_says_how_to_set_one(
    shell: InteractiveShell, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("JUPYMEM_MODEL")
    result = shell.run_cell("%%ask\nhello")
    assert isinstance(result.error_in_exec, UsageError)
    assert "JUPYMEM_MODEL" in str(result.error_in_exec) and "--model" in str(result.error_in_exec)
    assert fake.requests == []
    result = shell.run_cell("%%ask --model openai/fake\n   \n")
    assert isinstance(result.error_in_exec, UsageError) and "needs a prompt" in str(result.error_in_exec)
    result = shell.run_cell("%%ask --model openai/fake --no-memory\nhello")
    assert result.success and fake.requests[-1]["messages"][0]["content"].startswith("You are an assistant")
    assert "tools" not in fake.requests[-1]


def test_ask_without_an_api_key_names_the_missing_key(
    shell: InteractiveShell, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
):
    """The OpenAI client refuses to start without a key, and litellm files that under
    InternalServerError: it read "the provider had a server error. Ask again in a moment."""
    monkeypatch.delenv("OPENAI_API_KEY")
    result = shell.run_cell("%%ask --model openai/fake\nWhat currency is revenue reported in?")
    assert isinstance(result.error_in_exec, UsageError)
    said = str(result.error_in_exec)
    assert "no API key is set" in said and "OPENAI_API_KEY" in said, said
    assert "server error" not in said and "Ask again" not in said, said
    assert fake.requests == []  # nothing left the machine


def test_a_tool_call_written_as_text_is_neither_run_nor_shown_and_the_model_answers(
    shell: InteractiveShell, repo: Path, fake: FakeOpenAI, capsys
):
    # What Qwen2.5-Coder writes through llama.cpp's server: the call as a fenced JSON answer.
    proj = jupymem.init(repo)
    proj.remember("Plots use seaborn.", kind="preference")
    before = proj.count()
    written = {"name": "memory_record", "arguments": {"statement": "Read shipments with sep=';'.", "kind": "constraint",
                                                        "user_quote": "Load shipments.csv"}}
    code = "```python\ndf = pd.read_csv('shipments.csv', sep=';')\n```"
    fake.say("```json\n" + json.dumps(written, indent=2) + "\n```", code)
    capsys.readouterr()
    result = shell.run_cell("%%ask\nLoad shipments.csv")
    assert result.success, result.error_in_exec
    out = capsys.readouterr().out
    assert code in out
    assert '"arguments"' not in out and "```json" not in out, out
    assert "the model wrote a `memory_record` call as text instead of calling the tool: nothing was recorded" in out
    assert proj.count() == before
    first, second = fake.chat_requests()[-2:]
    assert first.get("tools") and not second.get("tools"), "asked once more, without tools"
    # The conversation keeps the answer, never the JSON.
    assert [m.content for m in conversation_for(proj, repo).messages()][-1] == code


def test_a_call_to_a_tool_of_the_models_own_invention_is_not_shown_and_the_model_answers(
    shell: InteractiveShell, repo: Path, fake: FakeOpenAI, capsys
):
    # Qwen2.5-Coder asked for merge_intervals, with tools offered, "called" a tool by that name.
    jupymem.init(repo)
    invented = {"name": "merge_intervals", "arguments": {"intervals": [[1, 3], [2, 6]]}}
    code = "```python\ndef merge_intervals(intervals):\n    return sorted(intervals)\n```"
    fake.say("```json\n" + json.dumps(invented, indent=2) + "\n```", code)
    capsys.readouterr()
    result = shell.run_cell("%%ask\nWrite a Python function merge_intervals(intervals).")
    assert result.success, result.error_in_exec
    out = capsys.readouterr().out
    assert code in out and '"arguments"' not in out, out
    assert "the model wrote a call to `merge_intervals`, a tool that does not exist, as text" in out
    first, second = fake.chat_requests()[-2:]
    assert first.get("tools") and not second.get("tools"), "asked once more, without tools"


def test_json_asked_for_without_tools_is_shown_as_the_answer(
    shell: InteractiveShell, repo: Path, fake: FakeOpenAI, capsys
):
    # Asked again without tools, the same JSON is what the person asked for: it is shown.
    jupymem.init(repo)
    asked = json.dumps({"name": "get_weather", "arguments": {"city": "Lisbon"}})
    fake.say(asked, asked)
    capsys.readouterr()
    result = shell.run_cell("%%ask\nShow me an OpenAI function call for the weather in Lisbon as JSON.")
    assert result.success, result.error_in_exec
    out = capsys.readouterr().out
    assert '"get_weather"' in out, out
