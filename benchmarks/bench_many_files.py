"""`jupymem status` in a repository whose ``.jupymem/log/`` holds many writer files.

    python benchmarks/bench_many_files.py                  # 20,000 files, 7 rounds
    python benchmarks/bench_many_files.py --files 5000 --base b116c79 --json

A pull can bring thousands of one-line writer files (a team over years, or an attack).
Once the cache has read them, every later command still lists the folder to notice
what changed. Measured, with the cache warm and nothing changed:

* ``status_cli``: ``jupymem status`` as a person runs it (a subprocess: interpreter and
  imports included), median of the rounds;
* ``status_in_process``: the same command's work in this process (``cli.main``, the
  process's open projects closed first, as a new process finds them);
* ``listing``: the plain baseline, ``os.scandir`` of the folder and a ``stat`` of each
  entry, which any reader of the files must do; the ratio is ``status_in_process`` over it.

``--base REV`` runs ``status_cli`` on that git revision's code too (a worktree in a
temporary folder, its own memory home), in the same run, for a before/after ratio.
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
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupymem.intake import capture  # noqa: E402
from jupymem.sharing import sharelog  # noqa: E402
from jupymem.storage import eventlog  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAST = "2025-06-01T00:00:00.000000Z"


def make_repo(path: Path, files: int, home: Path, code: Path) -> None:
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["config", "user.name", "Ana"], ["config", "user.email", "ana@example.com"],
                 ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", "-C", str(path), *args], check=True)
    run_cli(code, path, home, "remember", "Join sales to customers on customer_id")
    run_cli(code, path, home, "share")
    log = sharelog.log_dir(path)
    for i in range(files):
        writer_id = f"{i:010x}"
        statement = f"Teammate {i} notes that report {i} is weekly"
        memory = {"id": capture.memory_id(statement), "kind": "fact", "topic": None, "statement": statement,
                  "original": None, "standing": "supported",
                  "provenance": {"recorder": "person", "author": f"W{i} <w{i}@example.com>"}, "evidence": []}
        fields = {"id": writer_id, "name": f"W{i}", "email": f"w{i}@example.com"}
        line, _ = sharelog.encode(uuid.uuid4().hex, "record", PAST, {"memory": memory}, fields, eventlog.GENESIS)
        (log / sharelog.file_name(writer_id, f"W{i}")).write_text(line, encoding="utf-8")


def run_cli(code: Path, cwd: Path, home: Path, *args: str) -> float:
    env = {**os.environ, "JUPYMEM_HOME": str(home), "JUPYMEM_ENCODER": "none", "PYTHONPATH": str(code)}
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "jupymem", *args], cwd=cwd, env=env, capture_output=True)
    took = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"jupymem {' '.join(args)} failed: {proc.stderr.decode()[-2000:]}")
    return took


def listing(path: Path) -> float:
    started = time.perf_counter()
    with os.scandir(sharelog.log_dir(path)) as it:
        for entry in it:
            entry.stat(follow_symlinks=False)
    return time.perf_counter() - started


def in_process(path: Path, home: Path) -> float:
    import contextlib
    import io

    from jupymem.core.opening import close_all
    from jupymem.faces import cli

    os.environ["JUPYMEM_HOME"], os.environ["JUPYMEM_ENCODER"] = str(home), "none"
    cwd = os.getcwd()
    os.chdir(path)
    try:
        close_all()
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            cli.main(["status"])
        return time.perf_counter() - started
    finally:
        os.chdir(cwd)


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000.0, 1)


def measure(files: int, rounds: int, base: str | None) -> dict[str, object]:
    out: dict[str, object] = {"files": files, "rounds": rounds}
    with tempfile.TemporaryDirectory(prefix="jupymem-many-files-") as tmp:
        work = Path(tmp)
        codes = {"now": ROOT}
        if base is not None:
            worktree = work / "base"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(worktree), base],
                           check=True)
            codes["base"] = worktree
        try:
            for name, code in codes.items():
                repo, home = work / f"repo-{name}", work / f"home-{name}"
                make_repo(repo, files, home, code)
                run_cli(code, repo, home, "status")  # the cache reads the files once
                out[f"status_cli_{name}_ms"] = median_ms([run_cli(code, repo, home, "status") for _ in range(rounds)])
                if name == "now":
                    out["status_in_process_ms"] = median_ms([in_process(repo, home) for _ in range(rounds)])
                    out["listing_ms"] = median_ms([listing(repo) for _ in range(rounds)])
        finally:
            if base is not None:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(codes["base"])],
                               check=False)
    out["status_over_listing"] = round(float(out["status_in_process_ms"]) / float(out["listing_ms"]), 1)  # type: ignore[arg-type]
    if base is not None:
        out["now_over_base"] = round(float(out["status_cli_now_ms"]) / float(out["status_cli_base_ms"]), 2)  # type: ignore[arg-type]
    out["load"] = os.getloadavg()[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--base", help="a git revision whose `jupymem status` to time beside today's")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = measure(args.files, args.rounds, args.base)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:24} {value}")


if __name__ == "__main__":
    main()
