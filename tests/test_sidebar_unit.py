"""Runs the sidebar's TypeScript unit tests (vitest) so that `pytest` covers them too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LABEXTENSION = Path(__file__).resolve().parent.parent / "labextension"


def jlpm() -> str:
    beside = Path(sys.executable).parent / "jlpm"
    found = str(beside) if beside.exists() else shutil.which("jlpm")
    if not found:
        pytest.fail("jlpm is missing; it comes with jupyterlab / jupyter-builder (`pip install -e '.[test]'`).")
    return found


def test_typescript_unit_tests_pass() -> None:
    if not (LABEXTENSION / "node_modules" / ".bin" / "vitest").exists():
        pytest.fail(
            "labextension/node_modules is missing: `pip install -e '.[test]'` installs it while building "
            "the sidebar (or run `jlpm install` in labextension/)."
        )
    run = subprocess.run([jlpm(), "test"], cwd=LABEXTENSION, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
