"""notebooks/assistant.ipynb, executed in a real kernel against the fake model on loopback.

The kernel inherits the environment: JUPYMEM_MODEL=openai/fake and
OPENAI_API_BASE pointing at the fake server (litellm reads OPENAI_API_BASE and
OPENAI_BASE_URL), with a dummy OPENAI_API_KEY. Nothing leaves the machine: a cell
before the notebook's own counts every host name the kernel looks up, the first model use
(which imports litellm, with no price map in the environment) included.
"""

from __future__ import annotations

import json
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


# Before the notebook: every host name looked up from here on is counted (a fetch of
# litellm's remote price map at import would be one).
SPY = """\
import socket
_looked_up = []
_getaddrinfo = socket.getaddrinfo
def _spy(host, *args, **kwargs):
    _looked_up.append(str(host))
    return _getaddrinfo(host, *args, **kwargs)
socket.getaddrinfo = _spy
"""
LOOKED_UP = """\
import json, os, sys
assert "litellm" in sys.modules, "the notebook never used the model"
print(json.dumps({"hosts": sorted(set(_looked_up)), "price_map": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")}))
"""


def _markdown(cell) -> str:
    return "".join(o.get("data", {}).get("text/markdown", "") for o in cell.get("outputs", []))


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def test_assistant_notebook_runs_against_the_fake_model(repo: Path, monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAI() as fake:
        monkeypatch.setenv("JUPYMEM_MODEL", "openai/fake")
        monkeypatch.setenv("OPENAI_API_BASE", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
        # jupymem sets it when it imports litellm: the kernel must not inherit a test's.
        monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
        fake.say(ANSWER, "Noted: calendar months in UTC.")
        nb_path = repo / "assistant.ipynb"
        shutil.copy(NOTEBOOK, nb_path)
        nb = nbformat.read(nb_path, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(SPY))
        nb.cells.append(nbformat.v4.new_code_cell(LOOKED_UP))
        client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(repo)}})
        client.execute()
        requests = fake.chat_requests()
    seen = json.loads(_text(nb.cells.pop()))
    nb.cells.pop(0)
    assert seen["price_map"] == "True", "litellm was imported without its local price map"
    assert seen["hosts"] == ["127.0.0.1"], seen["hosts"]  # the fake model, and nothing else

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
