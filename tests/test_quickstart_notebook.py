"""The quickstart notebook, executed in a real kernel inside a temporary git repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import jupymem

pytestmark = pytest.mark.kernel

NOTEBOOK = Path(__file__).parent.parent / "notebooks" / "quickstart.ipynb"


def _text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out["text"])
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
        elif out.get("output_type") == "error":
            parts.append(f"{out['ename']}: {out['evalue']}")
    return "".join(parts)


def test_quickstart_runs_and_records(repo: Path):
    nb_path = repo / "quickstart.ipynb"
    shutil.copy(NOTEBOOK, nb_path)
    nb = nbformat.read(nb_path, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(repo)}})
    client.execute()

    proj = jupymem.project(repo)
    assert proj is not None, "the notebook's %memory init bound the repository"
    memories = {m.kind: m for m in proj.list()}
    assert set(memories) == {"decision", "failure"}
    failure = memories["failure"]
    (ev,) = failure.evidence
    assert ev.ename == "KeyError" and ev.diagnosis == ("KeyError: 'custid'",)
    assert proj.staged_evidence()[0].handle == ev.handle  # staged because memory existed

    sources = [c.source for c in nb.cells]
    block_cell = nb.cells[next(i for i, s in enumerate(sources) if s.strip() == "%memory block")]
    assert _text(block_cell) == proj.block().text + "\n"
    search_cell = nb.cells[next(i for i, s in enumerate(sources) if s.startswith("%memory search"))]
    assert memories["decision"].id in _text(search_cell)
    evidence_cell = nb.cells[next(i for i, s in enumerate(sources) if s.strip() == "%memory evidence")]
    assert ev.handle in _text(evidence_cell)
    # The edited cell ran: the failure was paired with it, and the lesson keeps the fix.
    fixed_cell = nb.cells[next(i for i, s in enumerate(sources) if s.endswith('sales["customer_id"]'))]
    assert ev.fix is not None and ev.fix.execution_count == fixed_cell.execution_count
    assert f"fixed in [{fixed_cell.execution_count}]" in _text(evidence_cell)
    assert "suggested lesson: `sales[\"custid\"]` raised KeyError 'custid'" in _text(evidence_cell)
    assert proj.verify().ok
