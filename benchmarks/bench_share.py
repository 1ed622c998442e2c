"""Reading a repository that shares its memory through git (``.jupymem/``).

    python benchmarks/bench_share.py                 # 1,000 shared memories, 7 rounds
    python benchmarks/bench_share.py --memories 10000 --json

A repository whose ``.jupymem/log/`` holds N memories recorded by another clone (the
synthetic corpus of ``bench_core.py``), read by a clone that has no local cache yet,
and then read again and again, side by side with the same memories in a repository
that does not share. Measured through the code users get (``jupymem.project`` and
``Project``) in fresh homes; medians of several rounds (the machine is shared).

* ``first_read``: ``jupymem.project(path)`` plus ``block()`` with an empty home: the
  cache is built from the files (target: under 1 s at 1,000 memories);
* ``first_read_cli``: the same as a person runs it, ``jupymem block`` in a subprocess
  (interpreter start included), and ``cli_baseline``, ``jupymem block`` in the
  repository that does not share;
* ``later_read`` vs ``later_read_unshared``: ``jupymem.project(path)`` plus ``block()``
  once the cache is warm, nothing changed: the price of noticing nothing changed
  (target: as fast as today); ``follow_unchanged_us`` is that price alone;
* ``pull_one``: the next read after one new line arrived (applied, not rebuilt) and
  ``pull_interleaved``: after a line that sorts before what is applied (a rebuild);
* ``record_shared`` vs ``record_unshared``: one ``remember`` (the shared one appends
  to the writer's file and fsyncs it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import Workspace, corpus, log  # noqa: E402

import jupymem  # noqa: E402
from jupymem.core.opening import close_all, find_project  # noqa: E402
from jupymem.intake import capture, clock  # noqa: E402
from jupymem.sharing import sharelog  # noqa: E402
from jupymem.storage import eventlog  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000.0, 3)


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "Ana"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "ana@example.com"], check=True)
    return path.resolve()


def cli_block(repo: Path, home: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYMEM_HOME": str(home), "JUPYMEM_ENCODER": "none"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jupymem.faces.cli", "block"], cwd=repo, env=env, check=True,
                   capture_output=True)
    return time.perf_counter() - t0


def teammate_line(repo: Path, statement: str, at: str) -> None:
    """One more line in a teammate's file, as a pull would bring it."""
    writer = {"id": "0123456789", "name": "Ben", "email": "ben@example.com"}
    path = sharelog.log_dir(repo) / sharelog.file_name(writer["id"], "Ben")
    last = path.read_text().splitlines()[-1] if path.exists() else None
    prev = json.loads(last)["hash"] if last else eventlog.GENESIS
    memory = {"id": capture.memory_id(statement), "kind": "fact", "topic": None, "statement": statement,
              "original": None, "standing": "supported", "provenance": {"recorder": "person"}, "evidence": []}
    text, _ = sharelog.encode(uuid.uuid4().hex, "record", at, {"memory": memory}, writer, prev)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    ws = Workspace()
    results: dict[str, object] = {"memories": args.memories, "rounds": args.rounds, "load": os.getloadavg()[0]}
    try:
        base = ws.base
        items = corpus(args.memories)
        shared = git_repo(base / "shared")
        unshared = git_repo(base / "unshared")
        settings = ws.settings
        writer = jupymem.init(shared, settings=settings)
        writer.remember_many(items)
        writer.share()
        plain = jupymem.init(unshared, settings=settings)
        plain.remember_many(items)
        close_all()
        lines = sum(1 for _ in next(sharelog.log_dir(shared).glob("*.jsonl")).open())
        log(f"{lines} lines in the writer's file")

        first, first_cli, cli_base = [], [], []
        for r in range(args.rounds):
            home = base / f"reader-{r}"
            t0 = time.perf_counter()
            proj = find_project(shared, settings.with_(home=home))
            assert proj is not None and proj.block().shown > 0
            first.append(time.perf_counter() - t0)
            close_all()
            first_cli.append(cli_block(shared, base / f"cli-reader-{r}"))
            cli_base.append(cli_block(unshared, settings.home))
        results["first_read_ms"] = median_ms(first)
        results["first_read_cli_ms"] = median_ms(first_cli)
        results["cli_baseline_ms"] = median_ms(cli_base)
        log(f"first read {results['first_read_ms']} ms (CLI {results['first_read_cli_ms']} ms, "
            f"CLI on an unshared repository {results['cli_baseline_ms']} ms)")

        reader = settings.with_(home=base / "reader-0")
        later, later_plain, follow = [], [], []
        proj = find_project(shared, reader)
        for _ in range(args.reads):  # interleaved, so both see the same machine load
            t0 = time.perf_counter()
            find_project(shared, reader).block()
            later.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            find_project(unshared, settings).block()
            later_plain.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            proj.follow()
            follow.append(time.perf_counter() - t0)
        results["later_read_ms"] = median_ms(later)
        results["later_read_unshared_ms"] = median_ms(later_plain)
        results["follow_unchanged_us"] = round(statistics.median(follow) * 1e6, 1)
        log(f"later reads {results['later_read_ms']} ms vs {results['later_read_unshared_ms']} ms unshared; "
            f"noticing nothing changed {results['follow_unchanged_us']} µs")

        pull_one, pull_inter = [], []
        for r in range(args.rounds):
            teammate_line(shared, f"Ben's new fact number {r}", clock.now_at())
            t0 = time.perf_counter()
            find_project(shared, reader).block()
            pull_one.append(time.perf_counter() - t0)
            teammate_line(shared, f"Ben's old fact number {r}", f"2025-06-01T00:00:00.{r:06d}Z")
            t0 = time.perf_counter()
            find_project(shared, reader).block()
            pull_inter.append(time.perf_counter() - t0)
        results["pull_one_ms"] = median_ms(pull_one)
        results["pull_interleaved_ms"] = median_ms(pull_inter)
        log(f"after a pull: one new line {results['pull_one_ms']} ms, an interleaved one (rebuild) "
            f"{results['pull_interleaved_ms']} ms")

        rec_shared, rec_plain = [], []
        mine = find_project(shared, reader)
        other = find_project(unshared, settings)
        for i in range(args.reads // 4):
            t0 = time.perf_counter()
            mine.remember(f"Shared bench statement {i} about table t{i}")
            rec_shared.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            other.remember(f"Unshared bench statement {i} about table t{i}")
            rec_plain.append(time.perf_counter() - t0)
        results["record_shared_ms"] = median_ms(rec_shared)
        results["record_unshared_ms"] = median_ms(rec_plain)
        log(f"record: shared {results['record_shared_ms']} ms, unshared {results['record_unshared_ms']} ms")
    finally:
        close_all()
        shutil.rmtree(ws.base, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
