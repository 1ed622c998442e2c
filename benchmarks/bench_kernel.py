"""What jupymem costs a kernel: loading the extension, a successful cell, a failed one.

    python benchmarks/bench_kernel.py [--runs 15] [--json]

* ``load_ext``: wall time of ``%load_ext jupymem`` in fresh interpreters (IPython
  itself already imported), and which heavy modules it pulled in (must be none);
* ``hook_success``: the post_run_cell hook on a successful cell, per call;
* ``cell_overhead``: ``run_cell("x = 1")`` with the extension loaded minus without;
* ``stage_failure``: the hook on a failed cell in a repository with memory
  (diagnosis, redaction, the session window, the database row and the one-line
  notice naming its handle, printed to a buffer), and the same with the notice
  turned off (``%memory quiet``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("numpy", "model2vec", "sqlite_vec", "litellm", "rapidfuzz")

_LOAD = """
import sys, time
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
before = set(sys.modules)
t = time.perf_counter()
ip.run_line_magic("load_ext", "jupymem")
dt = time.perf_counter() - t
print(dt, [m for m in {heavy!r} if m in sys.modules and m not in before])
"""


def load_ext(runs: int, cwd: Path, env: dict[str, str]) -> dict[str, object]:
    times, heavy = [], set()
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", _LOAD.format(heavy=HEAVY)], cwd=cwd, env=env, capture_output=True, text=True,
            check=True,
        ).stdout.split(None, 1)
        times.append(float(out[0]))
        heavy.update(json.loads(out[1].replace("'", '"')))
    return {"p50_ms": statistics.median(times) * 1e3, "heavy_imported": sorted(heavy)}


def in_process(cwd: Path) -> dict[str, float]:
    from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult, InteractiveShell

    import jupymem
    from jupymem.faces.kernel import state as _state

    home = os.getcwd()
    os.chdir(cwd)
    try:
        return _measure(InteractiveShell.instance(), cwd, ExecutionInfo, ExecutionResult, jupymem, _state)
    finally:
        os.chdir(home)


def _measure(ip, cwd, ExecutionInfo, ExecutionResult, jupymem, _state) -> dict[str, float]:  # noqa: N803

    def cell_time(n: int = 3000) -> float:
        samples = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n):
                ip.run_cell("x = 1", store_history=False)
            samples.append((time.perf_counter() - t) / n)
        return statistics.median(samples)

    bare = cell_time()
    ip.run_line_magic("load_ext", "jupymem")
    loaded = cell_time()
    state = _state(ip)

    ok = ExecutionResult(ExecutionInfo("x = 1", False, False, True, None))
    n = 200_000
    samples = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(n):
            state.post_run_cell(ok)
        samples.append((time.perf_counter() - t) / n)
    hook = statistics.median(samples)

    jupymem.init(cwd)
    failed = ExecutionResult(ExecutionInfo("d = {}\nd['customer_id']", False, False, True, None))
    try:
        {}["customer_id"]
    except KeyError as exc:
        failed.error_in_exec = exc

    def stage_times() -> list[float]:
        times = []
        with contextlib.redirect_stdout(io.StringIO()):  # the notice is printed, into a buffer
            for _ in range(200):
                t = time.perf_counter()
                state.post_run_cell(failed)
                times.append(time.perf_counter() - t)
        return times

    stage = stage_times()
    state.quiet = True
    quiet = stage_times()
    state.quiet = None
    return {
        "hook_success_us": hook * 1e6,
        "cell_overhead_us": (loaded - bare) * 1e6,
        "stage_failure_p50_ms": statistics.median(stage) * 1e3,
        "stage_failure_quiet_p50_ms": statistics.median(quiet) * 1e3,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        env = {**os.environ, "JUPYMEM_HOME": str(Path(tmp) / "home")}
        os.environ["JUPYMEM_HOME"] = env["JUPYMEM_HOME"]
        report = {"load_ext": load_ext(args.runs, repo, env), **in_process(repo)}
        report["load_average"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report, indent=2))
        return
    le = report["load_ext"]
    print(f"%load_ext jupymem       p50 {le['p50_ms']:.1f} ms   heavy modules imported: {le['heavy_imported'] or 'none'}")
    print(f"hook, successful cell   {report['hook_success_us']:.3f} µs per call")
    print(f"run_cell('x = 1')       {report['cell_overhead_us']:+.1f} µs with the extension loaded")
    print(f"hook, failed cell       p50 {report['stage_failure_p50_ms']:.3f} ms (staged in the database, notice shown)")
    if "stage_failure_quiet_p50_ms" in report:
        print(f"hook, failed cell quiet p50 {report['stage_failure_quiet_p50_ms']:.3f} ms")
    print(f"load average            {report['load_average']:.1f}")


if __name__ == "__main__":
    main()
