"""``benchmarks/bench_team.py --scale small`` runs end to end and its counts hold: every
record a writer was told succeeded is in the database after the restart in the middle of
the load, none twice, and ``verify`` passes. Its timings are the benchmark's to report,
never a test's to assert (a shared machine makes them noise here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.postgres, pytest.mark.eval]  # a benchmark run, end to end

ROOT = Path(__file__).resolve().parents[1]


def test_the_team_benchmark_at_small_scale_loses_nothing_and_doubles_nothing() -> None:
    pytest.importorskip("pgserver", reason="pgserver is not installed: pip install -e '.[test]'")
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[team]'")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_team.py"), "--scale", "small", "--json"],
                          capture_output=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    counts = report["load"]["counts"]
    sc = report["scale"]
    assert counts["crashed_workers"] == {}
    assert counts["acknowledged"] == counts["distinct_acknowledged"] == counts["expected"] == sc["writers"] * sc["per_writer"]
    assert counts["lost"] == 0 and counts["duplicated"] == 0 and counts["verify_ok"] is True
    assert counts["events"] == counts["memories"] == counts["expected"]
    assert report["load"]["restart"]["retries"] > 0  # the writers met the restart, and came through it
    assert report["targets"]["none_lost_none_duplicated_verify_ok"] is True
    assert report["spread"]["memories"] == sc["projects"] * sc["per_project"]
    assert report["one_project"]["queries"] == 2 * sc["queries"]
