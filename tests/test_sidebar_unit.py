"""Runs the sidebar's TypeScript unit tests (vitest) so that `pytest` covers them too."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

LABEXTENSION = Path(__file__).resolve().parent.parent / "labextension"


def test_typescript_unit_tests_pass() -> None:
    if not (LABEXTENSION / "node_modules" / ".bin" / "vitest").exists():
        pytest.fail(
            "labextension/node_modules is missing: `pip install -e '.[test]'` installs it while building "
            "the sidebar (or run `jlpm install` in labextension/)."
        )
    # package.json's own test script, run as `jlpm test` would run it (yarn's start, a
    # second of CPU, left out): its command from node_modules/.bin, its arguments.
    command, *args = shlex.split(json.loads((LABEXTENSION / "package.json").read_text())["scripts"]["test"])
    run = subprocess.run([str(LABEXTENSION / "node_modules" / ".bin" / command), *args], cwd=LABEXTENSION,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
