"""``jupymem bench --documents N --queries M``: how fast memory is, on a corpus anyone can rebuild.

The corpus is synthetic and deterministic (a fixed seed): statements a data-science team
writes down, composed from a realistic vocabulary of tables, columns, notebooks, tools and
rules, so that term frequencies look like real memory rather than random strings. Every
number comes from the real code path in a temporary ``JUPYMEM_HOME``:

* ingest one at a time (``Project.remember``, a person's record) and batched
  (``Project.remember_many``), then the embedding backfill that follows a batch;
* search latency p50/p95 for short queries and for prompt-length ones (40+ words), in
  lexical and hybrid mode, through ``Project.search``;
* block build (``Project.block`` with a cold cache), database bytes per memory (with and
  without vectors), and encoder load time (in this process, and cold in a new one).
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
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ..config import Settings
from ..errors import JupymemError

SEED = 20240501

# Real memory has a long tail: a few words everywhere, most names rare. The pools below
# are combined into thousands of column, table and notebook names, drawn with Zipf-like
# weights, so term frequencies look like a team's memory rather than a template's.
_STEMS = """
customer account store sku order invoice payment session event ticket campaign promo price stock
shipment return refund discount plan tenure region country currency channel device app web email
call visit basket cart product category brand supplier warehouse route delivery forecast label score
churn uplift margin revenue cost volume demand weather holiday calendar cohort segment cluster survey
""".split()
_SUFFIXES = """
id key date ts count sum mean max min flag pct eur usd 7d 28d 90d rank band type code status level
""".split()
_DOMAINS = "billing crm sales ops finance product marketing supply retail web app support risk hr".split()
_NOUNS = "events history daily weekly snapshot facts dim raw clean agg staging latest".split()
_VERBS = "load clean join features train score explain backtest report export compare inspect audit".split()
_PEOPLE = "Marta Jonas Lucia Pablo Aisha Kenji Olga Tom Ines Ravi Sofia Noah Elena Omar Lea Yuki".split()
_TOOLS = [
    "pandas", "polars", "pyarrow", "duckdb", "LightGBM", "XGBoost", "scikit-learn", "MLflow", "Airflow",
    "papermill", "dbt", "Spark", "matplotlib", "seaborn", "plotly", "Optuna", "SHAP", "statsmodels",
    "Prophet", "CatBoost", "Dask", "Ray", "great_expectations", "nbstripout", "ruff", "mypy",
]
_TOPICS = [
    "time zones", "parquet partitions", "data leakage", "feature flags", "sampling", "GPU quota",
    "model cards", "calibration", "joins", "deduplication", "holidays", "currency conversion",
    "late uploads", "backfills", "drift monitoring", "privacy", "reproducibility", "plot style",
    "class imbalance", "missing values", "outliers", "cold start", "seasonality", "data contracts",
    "schema changes", "cost control", "access rights", "caching", "retries", "alerting",
]
_UNITS = ["rows", "customers", "stores", "series", "minutes", "days", "weeks", "percent", "GB", "files"]
_REASONS = [
    "because the upstream export changed without notice",
    "after the incident in the spring release",
    "since the finance team reconciles against it",
    "as agreed in the planning review",
    "because the warehouse bills us per scanned byte",
    "to keep the backtest honest",
    "so that the numbers match the dashboard",
    "because late uploads arrive up to three days after the fact",
    "which the audit flagged last quarter",
    "because the legacy system truncates to whole minutes",
]

_TEMPLATES = [
    "Join {t1} to {t2} on {c1} and {c2}; {c1} alone is not unique across regions.",
    "Never use {c1} as a feature in {nb}: it is filled in after the outcome and leaks the label.",
    "{t1} is partitioned by {c1}; filter on it in {tool} so that only the needed partitions are read.",
    "Timestamps in {t1} are stored in UTC, while {t2} uses local time; convert before truncating to days.",
    "Merging {f1} with {f2} on {c1} duplicated rows because {f2} has one row per {c2}; aggregate first.",
    "The {topic} check in {nb} runs every week and alerts when more than {n} {unit} change.",
    "We decided to use {tool} for {topic} {reason}.",
    "To rebuild {f1}, run {nb} and then {nb2}; each writes to data/interim with the date in the name.",
    "{tool} failed with a memory error on {t1}; read only the needed columns and sample {n} {unit}.",
    "The {c1} column in {t1} is missing for about {n} {unit}; treat a missing value as zero, not unknown.",
    "Charts about {topic} use the team palette and label the axis in {unit}; no default colours.",
    "The GPU quota for {topic} experiments is {n} hours a week; book it before runs longer than an hour.",
    "Feature flag {flag} switches {nb} to the new {topic} logic; it stays off until the model card is signed.",
    "Model cards must list every input column, such as {c1} and {c2}, with its source table {t1}.",
    "Stratify samples by {c1} and {c2}; a simple random sample under-represents small {unit}.",
    "{f1} has one row per {c1} and {c2}; use it as the grain for {topic} metrics.",
    "Correction: {c1} was read from {t1}, but the source of truth is {t2}, {reason}.",
    "Backfills of {t1} happen at night between {h}:00 and {h2}:00 UTC; reads then may see half-written data.",
    "{tool} and {tool2} disagree on {c1} for {n} {unit}; the difference is how each handles nulls.",
    "Do not call the production API from {nb}; it is rate-limited to {n} requests per second.",
    "{person} owns {t1} and knows why {c1} sometimes jumps {reason}.",
    "Ask {person} before changing {c1} in {t1}; downstream reports depend on it.",
]

_PROMPT_OPENERS = [
    "I'm working on the notebook for the weekly refresh and I have a question before I run anything long.",
    "Quick question before I merge this: the numbers look off and I want to understand why.",
    "I'm writing the data loading cell for a new analysis and want to avoid the mistakes we made before.",
    "A colleague asked me about this in a meeting and I could not remember what we agreed.",
]


class _Pools:
    def __init__(self, rng: random.Random):
        self.columns = sorted({f"{a}_{b}" for a in _STEMS for b in _SUFFIXES})
        rng.shuffle(self.columns)
        self.tables = [f"{d}.{n}_{s}" for d in _DOMAINS for n in _NOUNS for s in rng.sample(_STEMS, 3)]
        rng.shuffle(self.tables)
        self.notebooks = [f"{i:02d}_{v}_{rng.choice(_STEMS)}.ipynb" for i in range(1, 100) for v in rng.sample(_VERBS, 3)]
        self.frames = [f"df_{a}_{b}" for a in _STEMS for b in ("daily", "weekly", "raw", "clean", "labels")]
        rng.shuffle(self.frames)
        self._weights: dict[int, list[float]] = {}

    def pick(self, rng: random.Random, pool: list[str], k: int = 1) -> list[str]:
        cum = self._weights.get(id(pool))
        if cum is None:  # Zipf: the r-th name is drawn with weight 1/r
            total, cum = 0.0, []
            for r in range(1, len(pool) + 1):
                total += 1.0 / r
                cum.append(total)
            self._weights[id(pool)] = cum
        out: list[str] = []
        while len(out) < k:
            item = rng.choices(pool, cum_weights=cum)[0]
            if item not in out:
                out.append(item)
        return out


def _statement(rng: random.Random, pools: _Pools) -> str:
    c1, c2 = pools.pick(rng, pools.columns, 2)
    t1, t2 = pools.pick(rng, pools.tables, 2)
    f1, f2 = pools.pick(rng, pools.frames, 2)
    nb, nb2 = pools.pick(rng, pools.notebooks, 2)
    tool, tool2 = rng.sample(_TOOLS, 2)
    h = rng.randrange(0, 22)
    return rng.choice(_TEMPLATES).format(
        c1=c1, c2=c2, t1=t1, t2=t2, f1=f1, f2=f2, nb=nb, nb2=nb2, tool=tool, tool2=tool2,
        topic=rng.choice(_TOPICS), n=rng.choice([2, 3, 5, 8, 10, 12, 20, 30, 45, 90, 200, 5000]),
        unit=rng.choice(_UNITS), flag=f"{rng.choice(_STEMS)}_v{rng.randrange(2, 9)}",
        h=h, h2=h + 2, person=rng.choice(_PEOPLE), reason=rng.choice(_REASONS),
    )


def corpus(n: int, seed: int = SEED) -> list[str]:
    """``n`` distinct statements; the same ``n`` and seed give the same list."""
    rng = random.Random(seed)
    pools = _Pools(random.Random(seed))
    out: dict[str, None] = {}
    serial = 0
    while len(out) < n:
        text = _statement(rng, pools)
        if text in out:  # the vocabulary is finite: a ticket number keeps statements distinct
            serial += 1
            text = f"{text} (ticket DS-{serial})"
        out[text] = None
    return list(out)


def queries(m: int, seed: int = SEED + 1) -> tuple[list[str], list[str]]:
    """(short, prompt-length) queries, ``m`` of each."""
    rng = random.Random(seed)
    pools = _Pools(random.Random(SEED))
    short = []
    for _ in range(m):
        pick = rng.choice([pools.columns, pools.tables, pools.notebooks, _TOOLS])
        short.append(f"{pools.pick(rng, pick)[0]} {rng.choice(_TOPICS)}")
    prompts = []
    for _ in range(m):
        a, b = _statement(rng, pools), _statement(rng, pools)
        words = f"{rng.choice(_PROMPT_OPENERS)} {a} {b} What should I know before I go ahead?"
        prompts.append(words)
    return short, prompts


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _latency(fn: Any, items: Sequence[str]) -> dict[str, float]:
    """Wall-clock p50/p95, and the CPU time this process spent (``cpu_p50_ms``): on a
    shared machine the wall clock also counts time other processes held the cores."""
    times, cpu = [], []
    for item in items:
        t, c = time.perf_counter(), time.process_time()
        fn(item)
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return {
        "p50_ms": round(statistics.median(times), 3),
        "p95_ms": round(_pct(times, 0.95), 3),
        "cpu_p50_ms": round(statistics.median(cpu), 3),
    }


def _db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _encoders(spec: str | None, texts: Sequence[str], short: Sequence[str]) -> dict[str, Any]:
    """Each tier's encoder on its own: load (here and cold), embedding throughput over
    ``texts`` (at most 1,000 of them, in the backfill's batches) and the cost of encoding
    one short query (p50/p95), the part of a hybrid search that the dense leg adds first."""
    from ..retrieval import tiers
    from ..retrieval.embed import BackgroundEncoder
    from ..retrieval.index import BATCH

    plan = tiers.plan(spec)
    wanted = [] if plan.off else [("static", plan.static)] + ([("transformer", tiers.TRANSFORMER_SPEC)] if plan.transformer else [])
    out: dict[str, Any] = {}
    for tier, key in wanted:
        t = time.perf_counter()
        enc = BackgroundEncoder(key).start()
        enc.wait()
        row: dict[str, Any] = {"state": enc.state, "reason": enc.reason, "load_seconds": round(time.perf_counter() - t, 3),
                               "cold_load_seconds": _cold_load_seconds(key)}
        embedder = enc.embedder
        if enc.ready and embedder is not None:
            sample = list(texts[:1000])
            t = time.perf_counter()
            for i in range(0, len(sample), BATCH):
                embedder.embed_batch(sample[i : i + BATCH])
            row["embed_per_second"] = round(len(sample) / (time.perf_counter() - t), 1)
            row["query_encoding"] = _latency(lambda q, embedder=embedder: embedder.embed_batch([q]), short)
        out[tier] = row
    return out


def _cold_load_seconds(spec: str | None) -> float | None:
    """Encoder load in a fresh interpreter: importing the runtime and reading the model."""
    code = (
        "import time,sys; t=time.perf_counter(); from jupymem.retrieval.embed import resolve_encoder; "
        "e=resolve_encoder(sys.argv[1] if len(sys.argv)>1 else None); print(time.perf_counter()-t)"
    )
    args = [sys.executable, "-c", code] + ([spec] if spec else [])
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
        return round(float(out.stdout.strip().splitlines()[-1]), 3)
    except (subprocess.SubprocessError, ValueError, IndexError, OSError):
        return None


def run_bench(documents: int, n_queries: int, *, encoder: str | None = None, singles: int = 200) -> dict[str, Any]:
    from ..retrieval import index, tiers
    from ..retrieval.embed import BackgroundEncoder
    from .evaluate import _make_repo
    from ..core.opening import close_all, init_project
    from ..storage import database

    base = Path(tempfile.mkdtemp(prefix="jupymem-bench-"))
    settings = Settings(home=base / "home", encoder=encoder)
    report: dict[str, Any] = {"documents": documents, "queries": n_queries, "seed": SEED}
    if hasattr(os, "getloadavg"):
        report["load_average_before"] = round(os.getloadavg()[0], 2)
    try:
        texts = corpus(documents + singles)
        batch, single = texts[:documents], texts[documents:]
        short, prompts = queries(n_queries)
        report["prompt_words_median"] = statistics.median(len(p.split()) for p in prompts)

        # Each tier's encoder alone; then the best tier's (the transformer by default) embeds
        # the whole corpus, as a kernel's background backfill does.
        report["encoders"] = _encoders(encoder, batch, short)
        plan = tiers.plan(encoder)
        best = index.TRANSFORMER if plan.transformer else index.STATIC
        t = time.perf_counter()
        enc = BackgroundEncoder(tiers.TRANSFORMER_SPEC if plan.transformer else plan.static).start()
        enc.wait()
        report["encoder"] = {
            "tier": best, "state": enc.state, "reason": enc.reason,
            "load_seconds": round(time.perf_counter() - t, 3),
            "cold_load_seconds": report["encoders"].get(best, {}).get("cold_load_seconds"),
        }

        project = init_project(_make_repo(base / "repo"), settings)

        t = time.perf_counter()
        for i in range(0, len(batch), 1000):
            project.remember_many({"statement": s, "kind": "fact"} for s in batch[i : i + 1000])
        ingest = time.perf_counter() - t
        report["ingest_batched"] = {"seconds": round(ingest, 3), "per_second": round(len(batch) / ingest, 1)}
        database.checkpoint(project.conn)
        bytes_lexical = _db_bytes(project.database)

        embed_seconds = None
        if enc.ready and enc.embedder is not None:
            dense = index.DenseIndex(project.store, best)
            ok, why = project.store.vector_route()
            if ok:
                t = time.perf_counter()
                dense.sync(enc.embedder, full=True)
                embed_seconds = time.perf_counter() - t
                report["ingest_batched_with_embeddings"] = {
                    "embed_seconds": round(embed_seconds, 3),
                    "per_second": round(len(batch) / (ingest + embed_seconds), 1),
                    "embed_per_second": round(len(batch) / embed_seconds, 1),
                }
            else:
                report["ingest_batched_with_embeddings"] = {"skipped": why}
        database.checkpoint(project.conn)
        size = _db_bytes(project.database)
        report["db_bytes_per_memory"] = {
            "lexical": round(bytes_lexical / len(batch)), "with_vectors": round(size / len(batch)),
        }

        # Block build, cold cache each time.
        times = []
        for _ in range(5):
            project._blocks.last = None
            t0 = time.perf_counter()
            blk = project.block()
            times.append((time.perf_counter() - t0) * 1000)
        report["block_build"] = {"p50_ms": round(statistics.median(times), 3), "bytes": blk.bytes, "omitted": blk.omitted}

        search: dict[str, Any] = {}
        t0 = time.perf_counter()
        project.search(prompts[0], mode="lexical")
        report["first_search_ms"] = round((time.perf_counter() - t0) * 1000, 3)
        for q in short[:3] + prompts[:3]:  # warm caches (vocabulary, statement cache)
            project.search(q, mode="lexical")
        # Steady state: a large project's in-memory index and names for typo correction are
        # built in the background (searches meanwhile use FTS5 and skip typo fixes); let that
        # finish before timing.
        project.prepare_lexical(timeout=600)
        # Plain FTS5 BM25 in the same run: the baseline every other figure is compared with.
        search["fts_short"] = _latency(lambda q: project.search(q, mode="fts"), short)
        search["fts_prompt"] = _latency(lambda q: project.search(q, mode="fts"), prompts)
        search["lexical_short"] = _latency(lambda q: project.search(q, mode="lexical"), short)
        search["lexical_prompt"] = _latency(lambda q: project.search(q, mode="lexical"), prompts)
        t0 = time.perf_counter()
        status = project.prepare_dense()
        report["prepare_dense_seconds"] = round(time.perf_counter() - t0, 3)
        if status.dense == "on":
            for mode in ("static", "transformer"):
                if project.search(short[0], mode=mode).tier != mode:
                    continue  # that tier is not in use (JUPYMEM_ENCODER)
                for q in short[:3] + prompts[:3]:
                    project.search(q, mode=mode)
                search[f"{mode}_short"] = _latency(lambda q, m=mode: project.search(q, mode=m), short)
                search[f"{mode}_prompt"] = _latency(lambda q, m=mode: project.search(q, mode=m), prompts)
        else:
            search["hybrid"] = {"skipped": status.reason}
        report["search"] = search

        # One at a time, as a person records (on top of the corpus, dense leg on): remember
        # never embeds; the next search embeds what is new, a bounded batch inline.
        times, after = [], []
        for i, s in enumerate(single):
            t0 = time.perf_counter()
            project.remember(s, kind="decision")
            times.append((time.perf_counter() - t0) * 1000)
            if i % 10 == 0:
                t0 = time.perf_counter()
                project.search(prompts[i % len(prompts)])
                after.append((time.perf_counter() - t0) * 1000)
        report["ingest_one_at_a_time"] = {
            "count": len(single), "p50_ms": round(statistics.median(times), 3), "p95_ms": round(_pct(times, 0.95), 3),
            "dense": status.dense,
            "next_search_p50_ms": round(statistics.median(after), 3) if after else None,
        }
        report["dense"] = {k: status.to_dict()[k] for k in ("dense", "tier", "reason", "model", "vectors", "driver")}
        if hasattr(os, "getloadavg"):
            report["load_average_after"] = round(os.getloadavg()[0], 2)
    finally:
        close_all()
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return report


def format_report(r: dict[str, Any]) -> str:
    lines = [f"{r['documents']:,} memories, {r['queries']} queries of each length (seed {r['seed']})"]
    if "load_average_before" in r:
        lines.append(f"machine load average: {r['load_average_before']} before, {r.get('load_average_after')} after")
    for tier, enc in (r.get("encoders") or {}).items():
        said = f"{tier} encoder: {enc.get('state')} - load {enc.get('load_seconds')} s here, {enc.get('cold_load_seconds')} s cold"
        if "embed_per_second" in enc:
            q = enc["query_encoding"]
            said += f"; embeds {enc['embed_per_second']:,.0f} texts/s; a short query encodes in p50 {q['p50_ms']} ms"
        lines.append(said)
    lines.append(f"ingest batched: {r['ingest_batched']['per_second']:,.0f} memories/s")
    e = r.get("ingest_batched_with_embeddings", {})
    if "per_second" in e:
        lines.append(f"ingest batched with embeddings: {e['per_second']:,.0f} memories/s (embedding alone {e['embed_per_second']:,.0f}/s)")
    o = r["ingest_one_at_a_time"]
    lines.append(
        f"remember one at a time (dense leg {o['dense']}): p50 {o['p50_ms']} ms, p95 {o['p95_ms']} ms;"
        f" the search after one (embeds it): p50 {o['next_search_p50_ms']} ms"
    )
    lines.append(f"block build: p50 {r['block_build']['p50_ms']} ms")
    b = r["db_bytes_per_memory"]
    lines.append(f"database: {b['lexical']} bytes/memory lexical, {b['with_vectors']} with vectors")
    for name, v in r["search"].items():
        if "p50_ms" in v:
            lines.append(f"search {name}: p50 {v['p50_ms']} ms, p95 {v['p95_ms']} ms (CPU p50 {v['cpu_p50_ms']} ms)")
        else:
            lines.append(f"search {name}: {v}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jupymem bench", description="Measure ingest, search latency, block build and size.")
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    """This command's options; ``json_flag=False`` where a parent parser (the CLI's)
    already defines ``--json``."""
    p.add_argument("--documents", type=int, default=10_000, metavar="N", help="memories in the synthetic corpus")
    p.add_argument("--queries", type=int, default=100, metavar="M", help="queries of each length")
    if json_flag:
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON object")


def run_bench_cli(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return bench_command(args, stdout=stdout)


def bench_command(args: argparse.Namespace, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    if args.documents < 1 or args.queries < 1:
        err.write("jupymem: --documents and --queries must be at least 1\n")
        return 2
    try:
        report = run_bench(args.documents, args.queries, encoder=Settings.from_env().encoder)
    except JupymemError as exc:
        err.write(f"jupymem: {exc.message}\n")
        return exc.exit_code
    out.write((json.dumps(report) if getattr(args, "json", False) else format_report(report)) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(run_bench_cli())
