"""What the secret scan costs: per ordinary statement, and on the worst inputs we know.

    python benchmarks/bench_secrets.py [--passes 9] [--runs 5] [--base REV] [--json]

``find_secrets`` runs on every field of every record, every shared line and every
failed cell, so its cost on ordinary prose is what users pay most often. Reported:

* ``english_us``: microseconds per line of ``tests/data/english_statements.txt``
  (ordinary notebook statements), the median of ``--passes`` passes over the file;
* ``secret_talk_us``: the same over ``tests/data/secret_talk_statements.txt``
  (statements that talk about passwords, keys and tokens without holding one: the
  prose that wakes the most rules), when the file exists;
* ``english_median_us``: the median over the lines of that file of each line's own time
  (the fastest of ``--passes`` scans of it, wall clock): what one ordinary statement costs;
* ``hostile_worst_ms``: 16 KB of one repeated unit each (``bench_inputs.SECRET_UNITS``),
  the median of ``--runs`` runs of the slowest unit: a rule that backtracked would show here.

``--base REV`` measures the scan of that git revision too, in the same process and the
same minutes (``secret_baseline.load_scan``), its figures under ``base_...``: a change to
the rules is reported against the scan it replaces, not against a figure from another day.

Times are the process's CPU time (``time.process_time``): on a shared machine the
wall clock also counts the time other processes held the CPU. Timings live here,
never in the unit tests (they only check answers).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_inputs import SECRET_UNITS as HOSTILE_UNITS  # noqa: E402 - the same hostile units


def _per_statement_us(find: Callable[[str], Any], lines: list[str], passes: int) -> float:
    samples = []
    for _ in range(passes):
        t = time.process_time()
        for line in lines:
            find(line)
        samples.append((time.process_time() - t) / len(lines) * 1e6)
    return statistics.median(samples)


def _median_each_us(find: Callable[[str], Any], lines: list[str], passes: int) -> float:
    best = []
    for line in lines:
        samples = []
        for _ in range(passes):
            t = time.perf_counter_ns()
            find(line)
            samples.append(time.perf_counter_ns() - t)
        best.append(min(samples))
    return statistics.median(best) / 1e3


def _lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("# ")]


def measure(passes: int, runs: int, base: str | None = None) -> dict[str, Any]:
    from jupymem.intake.secrets_scan import find_secrets

    out: dict[str, Any] = {}
    if base is not None:
        from secret_baseline import load_scan

        old = load_scan(base).find_secrets
        # alternately, twice each, the better of the two: the machine's load falls on both alike
        rounds = [(_measure(find_secrets, passes, runs), _measure(old, passes, runs)) for _ in range(2)]
        ours, theirs = (_better(r[i] for r in rounds) for i in (0, 1))
        out.update(ours)
        out["base"] = base
        out.update({f"base_{k}": v for k, v in theirs.items() if k not in ("english_lines", "secret_talk_lines")})
        return out
    return _measure(find_secrets, passes, runs)


def _better(reports: Any) -> dict[str, Any]:
    """Per figure, the lower of several reports (a unit's name goes with its time)."""
    best: dict[str, Any] = {}
    for report in reports:
        for key, value in report.items():
            if key == "hostile_worst_unit":
                continue
            if key not in best or (isinstance(value, float) and value < best[key]):
                best[key] = value
                if key == "hostile_worst_ms":
                    best["hostile_worst_unit"] = report["hostile_worst_unit"]
    return best


def _measure(find_secrets: Callable[[str], Any], passes: int, runs: int) -> dict[str, Any]:
    from jupymem.intake.capture import MAX_STATEMENT_BYTES

    english = _lines(DATA / "english_statements.txt")
    out: dict[str, Any] = {"english_lines": len(english)}
    out["english_us"] = _per_statement_us(find_secrets, english, passes)
    out["english_median_us"] = _median_each_us(find_secrets, english, passes)
    talk_path = DATA / "secret_talk_statements.txt"
    if talk_path.exists():
        talk = _lines(talk_path)
        out["secret_talk_lines"] = len(talk)
        out["secret_talk_us"] = _per_statement_us(find_secrets, talk, passes)
    worst, worst_unit = 0.0, ""
    for unit in HOSTILE_UNITS:
        text = (unit * (MAX_STATEMENT_BYTES // len(unit) + 1))[:MAX_STATEMENT_BYTES]
        samples = []
        for _ in range(runs):
            t = time.process_time()
            find_secrets(text)
            samples.append(time.process_time() - t)
        if statistics.median(samples) > worst:
            worst, worst_unit = statistics.median(samples), unit
    out["hostile_worst_ms"] = worst * 1e3
    out["hostile_worst_unit"] = worst_unit
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=9)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--base", help="a git revision whose scan to measure beside today's")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = measure(args.passes, args.runs, args.base)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:<22} {value:.2f}" if isinstance(value, float) else f"{key:<22} {value!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
