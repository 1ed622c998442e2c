"""The command line's speed: what `jupymem status`, `block`, `search` and `remember` cost
as whole processes on a 1,000-memory project, and the block rebuilt after a change in a
long-lived process (a kernel, the server).

    python benchmarks/bench_cli.py              # 5 runs per command
    python benchmarks/bench_cli.py --runs 9     # more runs on a busy machine
    python benchmarks/bench_cli.py --json       # one JSON object on stdout

A command is a fresh interpreter, so most of its wall time is importing: each command
is run ``--runs`` times for wall time (``python -m jupymem ...``, output discarded) and
``--runs`` more times under ``-X importtime`` for the import time (the sum of the
top-level imports' cumulative times, ``runpy`` and the interpreter's own start-up
excluded). The child's CPU time (user + system, from ``getrusage``) is reported beside the
wall time: other jobs on a shared machine inflate wall time far more than CPU time.
Modules are compiled once into a bytecode cache in the temporary directory, as an
installed package's are (``--no-bytecode-cache``: compiled in every run, which is what a
checkout run with ``PYTHONDONTWRITEBYTECODE`` set pays). ``remember`` records a distinct
statement each run, so none is refused as a duplicate and every run writes. Figures are medians; the load average is reported with
them, because two shared cores make single runs noisy.

The block rebuild is timed in this process through ``Project``: record one memory (a
change: the cached block is stale), then time ``Project.block()``; median of
``--rebuilds`` changes. Target (issue): status and block < 150 ms wall; the rebuild
< 2 ms at 1,000 memories.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupymem.config import Settings  # noqa: E402
from jupymem.core.opening import close_all, init_project  # noqa: E402
from jupymem.measure.bench import corpus  # noqa: E402

N = 1000
QUERY = "parquet timezone before the join"


def build(root: Path, home: Path) -> None:
    """A git repository with ``N`` memories, in a home of its own."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    proj = init_project(root, Settings.from_env().with_(home=home))
    proj.remember_many({"statement": s} for s in corpus(N))
    close_all()


def _env(home: Path, pycache: Path | None) -> dict[str, str]:
    env = dict(os.environ, JUPYMEM_HOME=str(home))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if pycache is not None:
        # Compiled once, as an installed package is: without a bytecode cache (this machine
        # sets PYTHONDONTWRITEBYTECODE) every command compiles every module it imports, which
        # cost more than the rest of the import. A prefix keeps .pyc files out of the tree.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def import_ms(stderr: str) -> float:
    """Total import time from ``-X importtime``: the top-level imports' cumulative times."""
    total = 0
    for line in stderr.splitlines():
        m = _IMPORT_LINE.match(line)
        if m and len(m.group(3)) == 1:  # one space: a top-level import
            total += int(m.group(2))
    return total / 1000


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_command(argv: list[str], root: Path, env: dict[str, str], importtime: bool) -> tuple[float, float, str]:
    """(wall ms, CPU ms, stderr) of one command in a fresh interpreter."""
    cmd = [sys.executable] + (["-X", "importtime"] if importtime else []) + ["-m", "jupymem", *argv]
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    wall = (time.perf_counter() - t0) * 1000
    cpu = (_children_cpu() - cpu0) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-500:]}")
    return wall, cpu, done.stderr


def bench_commands(root: Path, home: Path, runs: int, pycache: Path | None) -> dict[str, dict[str, float]]:
    env = _env(home, pycache)
    serial = iter(range(10**6))
    commands = {
        "status": lambda: ["status"],
        "block": lambda: ["block"],
        "search": lambda: ["search", QUERY],
        "remember": lambda: ["remember", f"The bench_cli run {next(serial)} keeps its notebooks under notebooks/."],
    }
    out = {}
    for name, argv in commands.items():
        run_command(argv(), root, env, False)  # the page cache warm, bytecode compiled
        timed = [run_command(argv(), root, env, False) for _ in range(runs)]
        walls, cpus = [t[0] for t in timed], [t[1] for t in timed]
        imports = [import_ms(run_command(argv(), root, env, True)[2]) for _ in range(runs)]
        out[name] = {"wall_ms": round(statistics.median(walls), 1), "cpu_ms": round(statistics.median(cpus), 1),
                     "import_ms": round(statistics.median(imports), 1), "wall_min_ms": round(min(walls), 1),
                     "runs": runs}
    # the interpreter alone, for scale: what no change to jupymem can save
    bare, bare_cpu = [], []
    for _ in range(runs):
        cpu0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        bare.append((time.perf_counter() - t0) * 1000)
        bare_cpu.append((_children_cpu() - cpu0) * 1000)
    out["python -c pass"] = {"wall_ms": round(statistics.median(bare), 1), "cpu_ms": round(statistics.median(bare_cpu), 1)}
    return out


def bench_rebuild(root: Path, home: Path, rebuilds: int) -> dict[str, float]:
    """The block rebuilt after one change, in a long-lived process."""
    proj = init_project(root, Settings.from_env().with_(home=home, interactive=False))
    proj.block()
    cold, warm = [], []
    for i in range(rebuilds):
        proj.remember(f"The rebuild bench {i} reads raw files from data/raw only.", kind="fact")
        t0 = time.perf_counter()
        proj.block()
        cold.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        proj.block()
        warm.append((time.perf_counter() - t0) * 1000)
    close_all()
    return {"after_change_ms": round(statistics.median(cold), 3), "unchanged_ms": round(statistics.median(warm), 4),
            "after_change_p90_ms": round(sorted(cold)[int(len(cold) * 0.9)], 3), "rebuilds": rebuilds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per command (default 5)")
    ap.add_argument("--rebuilds", type=int, default=101, help="changes timed for the block rebuild (default 101)")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="compile every module in every run (PYTHONDONTWRITEBYTECODE), as an uninstalled checkout may")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "repo", Path(tmp) / "home"
        build(root, home)
        load_before = os.getloadavg()
        pycache = None if args.no_bytecode_cache else Path(tmp) / "pycache"
        results = {"bytecode_cache": pycache is not None,
                   "commands": bench_commands(root, home, args.runs, pycache),
                   "block_rebuild": bench_rebuild(root, home, args.rebuilds)}
        results["load"] = {"before": [round(x, 2) for x in load_before],
                           "after": [round(x, 2) for x in os.getloadavg()]}
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    cache = "with a bytecode cache" if results["bytecode_cache"] else "compiling every module (no bytecode cache)"
    print(f"{N:,} memories, {cache}; load average before {results['load']['before']}, after {results['load']['after']}")
    for name, r in results["commands"].items():
        extra = f", imports {r['import_ms']} ms (min wall {r['wall_min_ms']})" if "import_ms" in r else ""
        print(f"  {name:<16} wall {r['wall_ms']} ms, CPU {r['cpu_ms']} ms{extra}")
    b = results["block_rebuild"]
    print(f"  block after a change {b['after_change_ms']} ms (p90 {b['after_change_p90_ms']}), "
          f"unchanged {b['unchanged_ms']} ms, {b['rebuilds']} changes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
