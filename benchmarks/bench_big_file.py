"""A teammate's file of 100,000 lines: the first read, in time and memory.

    python benchmarks/bench_big_file.py                  # 100,000 lines, 3 rounds
    python benchmarks/bench_big_file.py --lines 20000 --json

A file under ``.jupymem/log/`` arrives with a pull, and its size is whoever wrote it's
choice. This writes one writer's file of N valid, hash-chained record lines (the
synthetic statements of ``bench_core.py``), then reads the repository from a clone
with no cache yet, ``jupymem block`` in a fresh process each round, and reports the
wall time and the peak resident memory of that process (``ru_maxrss`` of the child).
A writer's file is read up to ``sharelog.MAX_LINES`` lines; the rest is named, not
read. Target: under 10 s and 200 MB, or refused with a clear message.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import corpus, log  # noqa: E402

from jupymem.intake import capture, clock  # noqa: E402
from jupymem.sharing import sharelog  # noqa: E402
from jupymem.storage import eventlog  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def write_file(repo: Path, n: int) -> Path:
    writer = {"id": "0123456789", "name": "Ben", "email": "ben@example.com"}
    folder = sharelog.log_dir(repo)
    folder.mkdir(parents=True)
    path = folder / sharelog.file_name(writer["id"], "Ben")
    start = clock.now() - timedelta(days=30)
    prev = eventlog.GENESIS
    with path.open("w", encoding="utf-8") as fh:
        for i, item in enumerate(corpus(n)):
            statement = item["statement"]
            memory = {"id": capture.memory_id(statement), "kind": item.get("kind", "note"), "topic": item.get("topic"),
                      "statement": statement, "original": None, "standing": "supported",
                      "provenance": {"recorder": "person", "author": "Ben <ben@example.com>"}, "evidence": []}
            at = clock.format_at(start + timedelta(seconds=i))
            text, prev = sharelog.encode(uuid.uuid4().hex, "record", at, {"memory": memory}, writer, prev)
            fh.write(text)
    return path


def first_read(repo: Path, home: Path) -> tuple[float, float, str]:
    """(seconds, peak MB, what the status says) of `jupymem block` with an empty home."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYMEM_HOME": str(home), "JUPYMEM_ENCODER": "none"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jupymem.faces.cli", "block"], cwd=repo, env=env, check=True,
                   capture_output=True)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KB; the largest child so far
    status = subprocess.run([sys.executable, "-m", "jupymem.faces.cli", "status", "--json"], cwd=repo, env=env,
                            check=True, capture_output=True, text=True).stdout
    problems = json.loads(status)["sharing"]["problems"]
    return seconds, max(peak, before) / 1024, problems[0] if problems else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="jupymem-bigfile-"))
    try:
        repo = base / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        t0 = time.perf_counter()
        path = write_file(repo, args.lines)
        log(f"wrote {args.lines:,} lines ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s")
        runs = [first_read(repo, base / f"home-{r}") for r in range(args.rounds)]
        seconds = [r[0] for r in runs]
        results = {
            "lines": args.lines, "file_mb": round(path.stat().st_size / 1e6, 1), "load": os.getloadavg()[0],
            "first_read_s": round(statistics.median(seconds), 2), "runs_s": [round(s, 2) for s in seconds],
            "peak_mb": round(max(r[1] for r in runs), 1), "max_lines": sharelog.MAX_LINES, "said": runs[0][2],
        }
        log(f"first read {results['first_read_s']} s (runs {results['runs_s']}), peak {results['peak_mb']} MB")
        if results["said"]:
            log(f"status says: {results['said']}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
