"""A process that ends while jupymem works in the background exits cleanly.

The encoder's loading and the vectors' backfill run in daemon threads; a script that ended
while one was inside onnxruntime died at exit with SIGABRT or SIGSEGV (1 to 2 runs in 6 of
the script below, found by an insider round on 6 December). At exit the backfill stops
after its batch, and exit waits for every such thread (``retrieval/quitting.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

WAITED_FOR = """
import time
from jupymem.retrieval import quitting

def work():
    while not quitting.exiting():
        time.sleep(0.01)
    time.sleep(0.2)  # the batch under way when exit came
    print("stopped after its batch", flush=True)

quitting.started(work, name="jupymem-test")
print("exiting", flush=True)
"""

SCRIPT = """
import sys, jupymem
p = jupymem.init(sys.argv[1])
p.remember_many({"statement": f"Table t{i} joins table u{i} on key k{i}; never on name.", "kind": "fact"}
                for i in range(2000))
print(p.search("can we join t5 on its name?").status, flush=True)
"""


def _run(code: str, *args: str, home: Path, encoder: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYMEM_HOME": str(home)}
    env.pop("JUPYMEM_ENCODER", None)
    if encoder:
        env["JUPYMEM_ENCODER"] = encoder
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=600)


def test_exit_stops_background_work_and_waits_for_it(tmp_path: Path) -> None:
    done = _run(WAITED_FOR, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["exiting", "stopped", "after", "its", "batch"]


@pytest.mark.eval  # three processes that each embed 2,000 memories with the transformer
def test_a_script_that_ends_while_the_transformer_embeds_exits_cleanly(tmp_path: Path) -> None:
    from conftest import make_repo

    for run in range(3):
        repo = make_repo(tmp_path / f"r{run}")
        done = _run(SCRIPT, str(repo), home=tmp_path / f"home{run}")
        assert done.returncode == 0, (run, done.returncode, done.stderr[-600:])
        assert done.stdout.strip() in ("ok", "abstained")
