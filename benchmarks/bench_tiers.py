"""The dense tiers in a real kernel: how soon each answers, what embedding costs, what it weighs.

    python benchmarks/bench_tiers.py --memories 1000            # the 1,000-memory figures
    python benchmarks/bench_tiers.py --memories 100000 --json   # the background run at 100,000

A project of ``--memories`` notes (``jupymem.measure.bench.corpus``, fixed seed) is recorded first,
without vectors; then a fresh IPython kernel (jupyter_client, the kernel every notebook
runs) loads the extension in that repository and searches, as a person would, while this
process watches from outside:

* ``static_after_s``: from the first search until a search is answered by the static tier;
* ``transformer_loaded_after_s``: until the transformer has loaded (in the background);
* ``transformer_after_s``: until it answers, i.e. every memory has its transformer vector;
  ``embedding_s`` is that minus the load (the background backfill), with its rate;
* ``progress``: what ``status`` says meanwhile (embedded of total), sampled;
* ``cell_ms``: the round trip of a trivial cell ("1 + 1") while the backfill runs, p50/max:
  the kernel stays responsive;
* ``search_ms_meanwhile``: searches during the backfill (the static tier answers them);
* ``rss_mb``: the kernel's resident memory after ``%load_ext``, after the first search
  (static tier), and once the transformer answers; ``growth_mb`` the last minus the first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUERY = "which table holds the weekly revenue forecast?"

_SETUP = """
import json, os, time
def _rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
get_ipython().run_line_magic("load_ext", "jupymem")
from jupymem.core.opening import require_project
_proj = require_project(os.getcwd(), __import__("jupymem.config", fromlist=["Settings"]).Settings.from_env())
print(json.dumps({"rss": _rss()}))
"""

_SEARCH = """
_t = time.perf_counter()
_r = _proj.search({query!r})
_s = _proj.dense_status()
print(json.dumps({{"tier": _r.tier, "ms": (time.perf_counter() - _t) * 1000, "rss": _rss(),
                  "transformer": _s.transformer, "embedding": _s.embedding.to_dict() if _s.embedding else None}}))
"""


def _repo(base: Path, memories: int) -> Path:
    from jupymem.config import Settings
    from jupymem.core.opening import close_all, init_project
    from jupymem.measure import bench

    repo = base / "repo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    project = init_project(repo, Settings(home=base / "home", encoder="none"))
    texts = bench.corpus(memories)
    for i in range(0, len(texts), 5000):
        project.remember_many({"statement": s, "kind": "note"} for s in texts[i : i + 5000])
    close_all()
    return repo


class Kernel:
    def __init__(self, cwd: Path, env: dict[str, str]):
        from jupyter_client.manager import start_new_kernel

        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(cwd), env=env)

    def run(self, code: str, timeout: float = 600) -> tuple[str, float]:
        out: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            if msg["header"]["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["header"]["msg_type"] == "error":
                out.append("ERROR " + "\n".join(msg["content"]["traceback"]))

        t = time.perf_counter()
        self.kc.execute_interactive(code, timeout=timeout, output_hook=hook)
        return "".join(out), (time.perf_counter() - t) * 1000

    def json(self, code: str) -> dict[str, Any]:
        text, _ = self.run(code)
        try:
            return json.loads(text.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise SystemExit(f"the kernel said: {text}") from None

    def stop(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def run(memories: int, limit_s: float) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="jupymem-tiers-"))
    repo = _repo(base, memories)
    env = {**os.environ, "JUPYMEM_HOME": str(base / "home"), "PYTHONPATH": str(ROOT)}
    env.pop("JUPYMEM_ENCODER", None)  # the default: both tiers
    kernel = Kernel(repo, env)
    report: dict[str, Any] = {"memories": memories, "load_average": round(os.getloadavg()[0], 2)}
    try:
        report["rss_after_load_ext_mb"] = round(kernel.json(_SETUP)["rss"], 1)
        search = _SEARCH.format(query=QUERY)
        start = time.perf_counter()
        first = kernel.json(search)
        report["first_search_ms"] = round(first["ms"], 1)
        samples, cells, meanwhile = [], [], []
        static_at = loaded_at = tx_at = None
        rss_static = None
        while time.perf_counter() - start < limit_s:
            got = kernel.json(search)
            now = time.perf_counter() - start
            if got["tier"] == "static" and static_at is None:
                static_at, rss_static = now, got["rss"]
            if got["transformer"] == "ready" and loaded_at is None:
                loaded_at = now
            if got["tier"] == "transformer":
                tx_at = now
                report["rss_transformer_mb"] = round(got["rss"], 1)
                break
            if got["embedding"]:
                samples.append((round(now, 1), got["embedding"]["done"], got["embedding"]["total"]))
                meanwhile.append(got["ms"])
                _, cell = kernel.run("1 + 1")
                cells.append(cell)
            time.sleep(0.05 if memories <= 5000 else 1.0)
        report["static_after_s"] = round(static_at, 2) if static_at is not None else None
        report["transformer_loaded_after_s"] = round(loaded_at, 2) if loaded_at is not None else None
        report["transformer_after_s"] = round(tx_at, 2) if tx_at is not None else None
        if tx_at is not None and loaded_at is not None:
            report["embedding_s"] = round(tx_at - loaded_at, 2)
            report["embedded_per_s"] = round(memories / max(1e-3, tx_at - loaded_at), 1)
        report["rss_static_mb"] = round(rss_static, 1) if rss_static else None
        if "rss_transformer_mb" in report:
            report["growth_mb"] = round(report["rss_transformer_mb"] - report["rss_after_load_ext_mb"], 1)
        report["progress"] = samples[:: max(1, len(samples) // 12)]
        if cells:
            report["cell_ms"] = {"p50": round(statistics.median(cells), 1), "max": round(max(cells), 1), "n": len(cells)}
            report["search_ms_meanwhile"] = {"p50": round(statistics.median(meanwhile), 1), "max": round(max(meanwhile), 1)}
    finally:
        kernel.stop()
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--memories", type=int, default=1000)
    p.add_argument("--limit", type=float, default=3600, help="give up after this many seconds")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    r = run(a.memories, a.limit)
    print(json.dumps(r, indent=1) if a.json else "\n".join(f"{k}: {v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
