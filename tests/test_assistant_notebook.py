"""notebooks/assistant.ipynb, executed in a real kernel against the fake model on loopback.

The kernel inherits the environment: JUPYMEM_MODEL=openai/fake and
OPENAI_API_BASE pointing at the fake server (litellm reads OPENAI_API_BASE and
OPENAI_BASE_URL), with a dummy OPENAI_API_KEY. Nothing leaves the machine.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from fake_openai import FakeOpenAI, system_prompt
from nbclient import NotebookClient

import jupymem

pytestmark = pytest.mark.kernel

NOTEBOOK = Path(__file__).parent.parent / "notebooks" / "assistant.ipynb"
ANSWER = "Join on **customer_id** (email is not unique) and save the result under `scratch/`."


def _markdown(cell) -> str:
    return "".join(o.get("data", {}).get("text/markdown", "") for o in cell.get("outputs", []))


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def test_assistant_notebook_runs_against_the_fake_model(repo: Path, monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAI() as fake:
        monkeypatch.setenv("JUPYMEM_MODEL", "openai/fake")
        monkeypatch.setenv("OPENAI_API_BASE", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
        fake.say(ANSWER, "Noted: calendar months in UTC.")
        nb_path = repo / "assistant.ipynb"
        shutil.copy(NOTEBOOK, nb_path)
        nb = nbformat.read(nb_path, as_version=4)
        client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(repo)}})
        client.execute()
        requests = fake.chat_requests()

    proj = jupymem.project(repo)
    assert proj is not None
    kinds = sorted(m.kind for m in proj.list())
    assert kinds == ["constraint", "constraint", "decision"]
    declared = next(m for m in proj.list() if m.statement.startswith("Monthly reports"))
    assert declared.provenance.quote == "Remember that monthly reports always use calendar months in UTC."

    first, second = requests
    assert "Join df_sales to df_customers on customer_id" in system_prompt(first)
    assert re.search(r"<project_memory trust=\"untrusted\" revision=\"\w+\">", system_prompt(first))
    assert "[user] How should I join df_sales to df_customers" in system_prompt(second)

    ask_cells = [c for c in nb.cells if c.source.startswith("%%ask")]
    assert ANSWER in _markdown(ask_cells[0])
    assert ANSWER in ask_cells[0].outputs[-1]["data"]["text/plain"]  # readable in exports too
    assert "remembered constraint" in _markdown(ask_cells[1])
    context_cell = next(c for c in nb.cells if c.source.strip() == "print(jupymem_context)")
    assert _text(context_cell) == proj.block().text + "\n"
