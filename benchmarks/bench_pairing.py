"""Pairing failed cells with their fixes: how well, and what it costs a kernel.

    python benchmarks/bench_pairing.py [--json] [--runs 7]

* ``quality``: the session in tests/fix_pairs.py is run once, top to bottom, in an
  in-process IPython shell without cell ids (as nbclient and terminal IPython run
  it); its failures and successes are then replayed into ``Pairing`` at each
  threshold of the sweep. Reported per threshold: pairing precision and recall
  over the failures, unrelated successes that were paired, and how many
  suggestions name both the error and the change. (tests/test_pairing_kernel.py
  checks the chosen threshold end to end in a real kernel.)
* ``hook``: the post_run_cell hook on a successful cell that fixes nothing, in
  µs per call: with nothing staged; with a full window of 64 staged failures
  sent with cell ids (a dict lookup); and with 64 sent without (a comparison
  with the few newest). Also the cost of a success that does pair (diff,
  suggestion and the database row), in ms.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

SWEEP = (0.6, 0.65, 0.7, 0.74, 0.77, 0.8, 0.85, 0.9)


@dataclass
class Ran:
    index: int
    source: str
    error: BaseException | None
    line: int | None
    execution_count: int | None


def run_session(cells: list[Any], workdir: Path) -> list[Ran]:
    """Every cell of a session run once in a plain shell (no jupymem), checked against its label."""
    from IPython.core.interactiveshell import InteractiveShell

    from jupymem.intake.capture import raising_line

    old = os.getcwd()
    os.chdir(workdir)
    try:
        ip = InteractiveShell.instance()
        out = []
        for i, cell in enumerate(cells):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                result = ip.run_cell(cell.source, store_history=True, silent=False)
            error = result.error_in_exec or result.error_before_exec
            if (error is None) != (cell.expect == "ok"):
                raise SystemExit(f"cell {i} should {cell.expect}: {cell.source!r} ({error!r})")
            out.append(Ran(i, cell.source, error, raising_line(error, ip.user_ns) if error else None, result.execution_count))
        return out
    finally:
        os.chdir(old)
        InteractiveShell.clear_instance()


def replay(cells: list[Any], ran: list[Ran], threshold: float) -> dict[str, Any]:
    """Feed a session to a Pairing at ``threshold``; score it against the session's labels."""
    from fix_pairs import true_pairs
    from jupymem.intake.capture import evidence_from_exception
    from jupymem.intake.pairing import Pairing

    pairing = Pairing(threshold)
    by_handle: dict[str, int] = {}
    predicted: dict[int, int] = {}  # failure index -> fixing index
    suggestions: dict[int, str] = {}
    for r in ran:
        if r.error is not None:
            ev = evidence_from_exception(r.error, session="bench", source=r.source, execution_count=r.execution_count)
            by_handle[ev.handle] = r.index
            pairing.failed(ev, r.source, r.line)
        else:
            for ev in pairing.succeeded(r.source, None, r.execution_count):
                predicted[by_handle[ev.handle]] = r.index
                suggestions[by_handle[ev.handle]] = ev.suggestion or ""
    truth = true_pairs(cells)
    correct = sum(1 for f, s in predicted.items() if truth.get(f) == s)
    unrelated = sorted({s for s in predicted.values() if cells[s].pair is None})
    named = [
        f for f, text in suggestions.items()
        if truth.get(f) == predicted[f] and cells[f].change and cells[f].change in text
        and type(next(r.error for r in ran if r.index == f)).__name__ in text
    ]
    return {
        "threshold": threshold,
        "failures_with_a_fix": len(truth),
        "pairs": len(predicted),
        "correct": correct,
        "precision": correct / len(predicted) if predicted else 1.0,
        "recall": correct / len(truth) if truth else 1.0,
        "unrelated_paired": len(unrelated),
        "suggestions_naming_error_and_change": f"{len(named)}/{correct}",
        "missed": [cells[f].pair for f in truth if predicted.get(f) != truth[f]],
        "wrong": [(cells[f].pair, cells[s].source[:40]) for f, s in predicted.items() if truth.get(f) != s],
    }


def quality(cells: list[Any]) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        ran = run_session(cells, Path(tmp))
    return [replay(cells, ran, t) for t in SWEEP]


# -- hook cost ---------------------------------------------------------------------------

FAILED_SOURCES = [
    'total_{i} = sum(sales["amt_{i}"])',
    "grid_{i} = np.arange(10).reshape(3, {i})",
    'rows_{i} = list(csv.DictReader(open("data/part-{i}.csv")))\nprint(len(rows_{i}))',
    'by_id_{i} = {{c["id_{i}"]: c for c in customers}}',
]
OK_SOURCE = 'summary = {"rows": len(rows), "customers": len(customers)}\nsummary'


def _per_call(fn: Any, n: int, runs: int) -> tuple[float, float]:
    """Median seconds per call over ``runs`` batches of ``n``: wall clock, and this
    thread's CPU time (which a busy shared machine does not inflate)."""
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.thread_time()
        for _ in range(n):
            fn()
        cpu.append((time.thread_time() - c) / n)
        wall.append((time.perf_counter() - t) / n)
    return statistics.median(wall), statistics.median(cpu)


def _us(name: str, seconds: tuple[float, float]) -> dict[str, float]:
    return {f"{name}_us": seconds[0] * 1e6, f"{name}_cpu_us": seconds[1] * 1e6}


def hook(repo: Path, runs: int) -> dict[str, float]:
    from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult, InteractiveShell

    import jupymem
    from jupymem.faces.kernel import session_state
    from jupymem.intake.pairing import Pairing

    old = os.getcwd()
    os.chdir(repo)
    try:
        jupymem.init(repo)
        ip = InteractiveShell.instance()
        ip.run_line_magic("load_ext", "jupymem")
        state = session_state(ip)

        def result(source: str, cell_id: str | None, error: BaseException | None = None) -> Any:
            r = ExecutionResult(ExecutionInfo(source, False, False, True, cell_id))
            r.error_in_exec = error
            return r

        ok_no_id, ok_other_id = result(OK_SOURCE, None), result(OK_SOURCE, "cell-unrelated")
        out = _us("nothing_staged", _per_call(lambda: state.post_run_cell(ok_no_id), 200_000, runs))

        def stage(with_ids: bool) -> None:
            for i in range(64):
                source = FAILED_SOURCES[i % len(FAILED_SOURCES)].format(i=i)
                try:
                    raise KeyError(f"amt_{i}")
                except KeyError as exc:
                    state.post_run_cell(result(source, f"cell-{i}" if with_ids else None, exc))

        stage(with_ids=True)
        out.update(_us("window_64_cell_ids", _per_call(lambda: state.post_run_cell(ok_other_id), 200_000, runs)))
        # The worst case: failures that never stop waiting (by default they do after
        # HORIZON cells), so every success is compared with the CANDIDATES newest.
        state.pairing = Pairing(horizon=10**9)
        stage(with_ids=False)
        out.update(_us("window_64_no_ids", _per_call(lambda: state.post_run_cell(ok_no_id), 20_000, runs)))
        # A success that pairs: a fresh failure each time, then its fix (with the database row).
        pair_times = []
        for i in range(50):
            try:
                raise KeyError("amt")
            except KeyError as exc:
                state.post_run_cell(result(f'total_x{i} = sum(sales["amt"])', f"fix-{i}", exc))
            fixed = result(f'total_x{i} = sum(sales["amount"])', f"fix-{i}")
            t = time.perf_counter()
            state.post_run_cell(fixed)
            pair_times.append(time.perf_counter() - t)
        out["pairing_success_ms"] = statistics.median(pair_times) * 1e3
        return out
    finally:
        os.chdir(old)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        os.environ["JUPYMEM_HOME"] = str(Path(tmp) / "home")
        os.environ["JUPYMEM_ENCODER"] = "none"
        os.environ.pop("JUPYMEM_MODEL", None)
        from fix_pairs import HELD_OUT, SESSION

        report = {
            "quality": quality(SESSION),
            "held_out": quality(HELD_OUT),
            "hook": hook(repo, args.runs),
            "load_average": os.getloadavg()[0],
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    from jupymem.intake.pairing import THRESHOLD

    for name in ("quality", "held_out"):
        rows = report[name]
        print(f"{'tuning session' if name == 'quality' else 'held-out session'}: "
              f"{rows[0]['failures_with_a_fix']} failures with a fix (chosen threshold {THRESHOLD})")
        print("threshold  pairs  precision  recall  unrelated paired  suggestions naming error+change  missed")
        for q in rows:
            print(
                f"{q['threshold']:>9.2f}  {q['pairs']:>5}  {q['precision']:>9.3f}  {q['recall']:>6.3f}  "
                f"{q['unrelated_paired']:>16}  {q['suggestions_naming_error_and_change']:>31}  "
                f"{', '.join(sorted(set(map(str, q['missed'])))) or '-'}"
            )
    h = report["hook"]
    for key, label in (
        ("nothing_staged", "hook, success, nothing staged          "),
        ("window_64_cell_ids", "hook, success, 64 staged with cell ids "),
        ("window_64_no_ids", "hook, success, 64 staged without ids   "),
    ):
        print(f"{label} {h[key + '_us']:.3f} µs wall, {h[key + '_cpu_us']:.3f} µs CPU")
    print(f"hook, success that pairs (with the db)  {h['pairing_success_ms']:.3f} ms")
    print(f"load average                            {report['load_average']:.1f}")


if __name__ == "__main__":
    main()
