"""What naming near-duplicates adds to a person's record.

    python benchmarks/bench_similar.py [--documents 10000] [--records 200] [--json]

Every face records through ``Project.record``: ``remember`` (or ``supersede``) and then
``similar``, the lexical candidates of the statement (and the dense leg's nearest, once
it answers) scored against it. This records ``--records`` new statements of the
synthetic corpus (``jupymem bench``'s) into a project of ``--documents`` memories, each
way, side by side in one process, and reports the medians; lexical only (the dense leg
is off until memory outgrows the block, and never waited for).
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


def measure(documents: int, records: int) -> dict[str, float]:
    from jupymem.config import Settings
    from jupymem.core.opening import close_all, init_project
    from jupymem.measure.bench import corpus

    statements = corpus(documents + 2 * records)
    base, fresh = statements[:documents], statements[documents:]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        settings = Settings(home=Path(tmp) / "home", encoder="none", language="source")
        proj = init_project(repo, settings)
        proj.remember_many({"statement": s, "kind": "fact"} for s in base)
        remember, record = [], []
        for i in range(records):  # alternate, so load on a shared machine hits both alike
            t = time.perf_counter()
            proj.remember(fresh[2 * i], kind="fact")
            remember.append(time.perf_counter() - t)
            t = time.perf_counter()
            proj.record(fresh[2 * i + 1], "fact")
            record.append(time.perf_counter() - t)
        close_all()
    return {
        "remember_p50_ms": statistics.median(remember) * 1e3,
        "record_p50_ms": statistics.median(record) * 1e3,
        "similar_p50_ms": (statistics.median(record) - statistics.median(remember)) * 1e3,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = {**measure(args.documents, args.records), "load_average": os.getloadavg()[0]}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{args.documents:,} memories, {args.records} records each way (lexical)")
        print(f"remember                p50 {report['remember_p50_ms']:.2f} ms")
        print(f"record (+ similar)      p50 {report['record_p50_ms']:.2f} ms")
        print(f"load average            {report['load_average']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
