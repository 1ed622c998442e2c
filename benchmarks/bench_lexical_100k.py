"""The lexical leg against plain FTS5 BM25 at 105,183 memories: quality and speed, side by side.

    python benchmarks/bench_lexical_100k.py                  # 100,000 notes, every SciFact train query
    python benchmarks/bench_lexical_100k.py --notes 20000 --queries 200 --no-hybrid   # quicker
    python benchmarks/bench_lexical_100k.py --json

The corpus (issue 8): SciFact train's 5,183 abstracts plus 100,000 distractor notes drawn
from the abstracts' own word distribution (unigram frequencies over their tokens, every
word kept, stopwords included; 8 to 40 words a note; fixed seed), so the distractors
share the real documents' vocabulary and make every common word ~20 times commoner.
Queries: SciFact train's 809 claims, relevance as in the suite; and each claim again
inside a ~40-word prompt (a fixed opener and closer around it), since a whole prompt is
a query too.

Every search goes through ``Project.search`` in a temporary ``JUPYMEM_HOME``, the code users
get, with three methods measured in one run, each query asked of each method in turn
(the order rotates) so that a busy moment of the shared machine falls on all of them:

* ``fts``: plain FTS5 BM25, the OR of the query's words, stopwords removed (``mode="fts"``);
* ``lexical``: the lexical leg (``mode="lexical"``): stems, camelCase parts, typo fixes,
  scored by the in-memory index (``retrieval/postings.py``);
* ``static`` and ``transformer``: hybrid with each dense tier (unless ``--no-hybrid``); the
  transformer's figures include encoding the query.

Timing starts once the index, the typo vocabulary and (for hybrid) the vectors are
ready; the index's build time and first-search latency are reported apart. Reported:
nDCG@10, Recall@10, MRR (binary gains, abstentions score zero), p50/p95 wall clock and
p50 CPU time of this process (which other processes on a shared machine do not inflate),
and the same speed figures on a 1,000-memory project (the first 1,000 notes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupymem.config import Settings  # noqa: E402
from jupymem.core.opening import close_all, init_project  # noqa: E402
from jupymem.measure.evaluate import load_suite, score_ranking  # noqa: E402
from jupymem.retrieval.tokenize import tokens  # noqa: E402

SEED = 20260501
SUITE = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact-train.gold.jsonl"
OPENER = "I am drafting the related work section tonight and want to check one claim against what we have read so far:"
CLOSER = "Which papers support or contradict it, and which one should I cite first?"


def notes(abstracts: list[str], count: int, seed: int = SEED) -> list[str]:
    """``count`` notes drawn from the abstracts' word distribution (fixed seed)."""
    freq: Counter[str] = Counter()
    for text in abstracts:
        freq.update(tokens(text))
    words = sorted(freq)
    cum, total = [], 0
    for w in words:
        total += freq[w]
        cum.append(total)
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        drawn = rng.choices(words, cum_weights=cum, k=rng.randint(8, 40))
        out.append(" ".join(drawn).capitalize() + ".")
    return out


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _speed(wall: list[float], cpu: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(wall), 3), "p95_ms": round(_pct(wall, 0.95), 3),
            "cpu_p50_ms": round(statistics.median(cpu), 3)}


def _timed(fn: Any) -> tuple[Any, float, float]:
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000


def measure(project: Any, queries: list[tuple[str, set[str]]], methods: list[str]) -> dict[str, Any]:
    """Each query asked of every method in a rotating order; quality and speed per method."""
    modes = {"fts": "fts", "lexical": "lexical", "hybrid": "hybrid", "static": "static", "transformer": "transformer"}
    for text, _ in queries[:20]:  # warm SQLite's page cache and the impact cache alike for all
        for m in methods:
            project.search(text, mode=modes[m])
    wall: dict[str, list[float]] = {m: [] for m in methods}
    cpu: dict[str, list[float]] = {m: [] for m in methods}
    scores: dict[str, list[dict[str, float]]] = {m: [] for m in methods}
    for i, (text, relevant) in enumerate(queries):
        order = methods[i % len(methods):] + methods[: i % len(methods)]
        for m in order:
            result, w, c = _timed(lambda text=text, m=m: project.search(text, limit=10, mode=modes[m]))
            wall[m].append(w)
            cpu[m].append(c)
            if relevant:
                scores[m].append(score_ranking([h.memory.id for h in result.hits], relevant))
    out: dict[str, Any] = {}
    for m in methods:
        row: dict[str, Any] = _speed(wall[m], cpu[m])
        for metric in ("ndcg@10", "recall@10", "mrr"):
            row[metric] = round(statistics.fmean(s[metric] for s in scores[m]), 4) if scores[m] else None
        out[m] = row
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    suite = load_suite(args.suite)
    abstracts = suite.memories[""]
    queries = suite.queries[: args.queries] if args.queries else suite.queries
    methods = ["fts", "lexical"] + ([] if args.no_hybrid else ["static", "transformer"])
    base = Path(tempfile.mkdtemp(prefix="jupymem-lexical100k-"))
    settings = Settings(home=base / "home", encoder="none" if args.no_hybrid else None, language="source")
    report: dict[str, Any] = {"notes": args.notes, "abstracts": len(abstracts), "queries": len(queries),
                              "seed": args.seed, "load_average": os.getloadavg()[0]}
    try:
        distractors = notes([m["text"] for m in abstracts], args.notes, args.seed)
        project = init_project(_repo(base / "big"), settings)
        t0 = time.perf_counter()
        ids: dict[str, str] = {}
        for i in range(0, len(abstracts), 5000):
            chunk = abstracts[i : i + 5000]
            got = project.remember_many({"statement": m["text"], "kind": "fact"} for m in chunk)
            ids.update((m["id"], g.id) for m, g in zip(chunk, got))
        for i in range(0, len(distractors), 5000):
            project.remember_many({"statement": s, "kind": "note"} for s in distractors[i : i + 5000])
        report["memories"] = project.count()
        report["load_seconds"] = round(time.perf_counter() - t0, 1)
        _log(f"{report['memories']:,} memories in {report['load_seconds']} s")

        _, first_ms, _ = _timed(lambda: project.search(queries[0].query, mode="lexical"))
        report["first_lexical_search_ms"] = round(first_ms, 1)  # FTS5 answers while the index builds
        t0 = time.perf_counter()
        assert project.prepare_lexical(timeout=600), "the in-memory index did not come up"
        report["index_ready_seconds"] = round(time.perf_counter() - t0, 1)
        if not args.no_hybrid:
            t0 = time.perf_counter()
            status = project.prepare_dense(timeout=3600)  # both tiers' vectors, the transformer's last
            report["dense"] = status.dense
            report["dense_tier"] = status.tier
            report["dense_seconds"] = round(time.perf_counter() - t0, 1)
            for tier in ("static", "transformer"):
                if project.search(queries[0].query, mode=tier).tier != tier:
                    methods.remove(tier)
        short = [(q.query, {ids[r] for r in q.relevant if r in ids}) for q in queries]
        prompts = [(f"{OPENER} {text} {CLOSER}", rel) for text, rel in short]
        _log("measuring claims ...")
        report["claims"] = measure(project, short, methods)
        _log("measuring prompts ...")
        report["prompts"] = measure(project, prompts, methods)

        small = init_project(_repo(base / "small"), Settings(home=base / "home", encoder="none", language="source"))
        small.remember_many({"statement": s, "kind": "note"} for s in distractors[:1000])
        small.prepare_lexical(timeout=60)
        report["small_1k"] = {
            "claims": measure(small, [(t, set()) for t, _ in short], ["fts", "lexical"]),
            "prompts": measure(small, [(t, set()) for t, _ in prompts], ["fts", "lexical"]),
        }
    finally:
        close_all()
        if not args.keep:
            import shutil

            shutil.rmtree(base, ignore_errors=True)
    return report


def format_report(r: dict[str, Any]) -> str:
    lines = [
        f"{r['memories']:,} memories ({r['abstracts']:,} SciFact abstracts + {r['notes']:,} notes, seed {r['seed']}), "
        f"{r['queries']} queries; load average {r['load_average']:.1f}",
        f"first lexical search {r['first_lexical_search_ms']} ms (FTS5, index building); index ready after "
        f"{r['index_ready_seconds']} s" + (f"; vectors {r['dense_seconds']} s" if "dense_seconds" in r else ""),
        "",
        f"{'':10}{'method':9}{'nDCG@10':>9}{'R@10':>8}{'MRR':>8}{'p50 ms':>9}{'p95 ms':>9}{'cpu p50':>9}{'vs fts':>8}",
    ]
    for part in ("claims", "prompts"):
        fts = r[part]["fts"]["p50_ms"]
        for m, row in r[part].items():
            lines.append(
                f"{part:10}{m:9}{row['ndcg@10']:9.3f}{row['recall@10']:8.3f}{row['mrr']:8.3f}{row['p50_ms']:9.2f}"
                f"{row['p95_ms']:9.2f}{row['cpu_p50_ms']:9.2f}{fts / row['p50_ms']:7.1f}x"
            )
    for part in ("claims", "prompts"):
        row = r["small_1k"][part]
        lines.append(
            f"1,000 memories, {part}: fts p50 {row['fts']['p50_ms']:.3f} ms (p95 {row['fts']['p95_ms']:.3f}, "
            f"cpu {row['fts']['cpu_p50_ms']:.3f}), lexical p50 {row['lexical']['p50_ms']:.3f} ms "
            f"(p95 {row['lexical']['p95_ms']:.3f}, cpu {row['lexical']['cpu_p50_ms']:.3f})"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default=str(SUITE), help="the SciFact train suite (JSONL)")
    ap.add_argument("--notes", type=int, default=100_000, help="distractor notes (default 100,000)")
    ap.add_argument("--queries", type=int, default=0, help="use only the first N queries (default: all)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--no-hybrid", action="store_true", help="skip the hybrid mode (no encoder, no vectors)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary projects")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--cache", help="a folder of cached transformer vectors (embed_cache.py), so a rerun does not re-embed")
    args = ap.parse_args(argv)
    if args.cache:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import embed_cache

        embed_cache.install(args.cache)
    report = run(args)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
