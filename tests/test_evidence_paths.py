"""A failure staged by a kernel names its notebook as everything else does: relative
to the repository root (kernels know it by its absolute path)."""

from __future__ import annotations

from pathlib import Path

import pytest

import jupymem

from conftest import loaded_shell


def test_a_staged_failure_names_its_notebook_relative_to_the_repository(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nb = repo / "analysis" / "01_load.ipynb"
    nb.parent.mkdir()
    nb.write_text("{}")
    monkeypatch.chdir(nb.parent)
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb))
    jupymem.init(repo)
    with loaded_shell() as ip:
        assert not ip.run_cell("{}['customer_id']").success
    (staged,) = jupymem.project(repo).staged_evidence()
    assert staged.notebook == "analysis/01_load.ipynb"
    assert staged.diagnosis == ("KeyError: 'customer_id'",)
