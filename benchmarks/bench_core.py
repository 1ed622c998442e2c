"""Core speed: recording, bulk ingest and import, block build, lexical search.

    python benchmarks/bench_core.py            # full run (builds a 100,000-memory project)
    python benchmarks/bench_core.py --quick    # 20,000 instead of 100,000
    python benchmarks/bench_core.py --json     # one JSON object on stdout
    python benchmarks/bench_core.py --only capture --only bulk   # just some sections

Every figure is the median (and p95 where a distribution matters) of several
runs on real SQLite files in a temporary JUPYMEM_HOME, through ``Project``, the
API every face calls. Search runs with the dense leg off (``encoder="none"``):
these are the lexical figures. The corpus is synthetic and deterministic (fixed
seed): data-science notebook statements built from templates and a few hundred
words drawn with a Zipf-like distribution, so common words are very common and
identifiers are rare, as in real memory.

Targets (issue 2): recording < 5 ms at 10,000; 5,000 in one call < 2 s; block
< 2 ms at 1,000; lexical p50 < 5 ms at 100,000 for a 40-word question and
< 1 ms at 1,000.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupymem.config import Settings  # noqa: E402
from jupymem.core.opening import close_all, init_project  # noqa: E402
from jupymem.core.project import Project

SEED = 20260401

COLUMNS = """customer_id order_id store_id sku region country channel segment cohort signup_date
order_date ship_date amount revenue margin discount quantity price cost churned tenure_days
sessions clicks impressions conversion basket_size ltv arpu refund_amount vat currency fx_rate
lat lon zip_code age gender device browser campaign utm_source product_line category brand
week_start fiscal_month fiscal_year is_test is_internal payment_method""".split()
TABLES = """orders customers stores products sessions events refunds payments campaigns inventory
shipments returns forecasts targets budget ledger crm_export web_logs app_events survey""".split()
VERBS = """use join filter drop keep convert cast aggregate group dedupe impute clip winsorize
normalize standardize bucket parse merge split sample reweight backfill recompute validate""".split()
WORDS = """the data table column row rows value values null nulls missing duplicate duplicates key
keys join joins before after when always never only per by on in for with without from to
daily weekly monthly quarterly yearly timezone utc local timestamp timestamps date dates
model models training train test validation holdout split fold folds feature features target
leakage baseline metric metrics auc rmse mae accuracy precision recall threshold calibration
forecast forecasts seasonality trend outlier outliers distribution skew log scale scaling
pipeline notebook cell kernel memory gpu cpu parquet csv json sql query queries warehouse
schema extract export import upstream downstream job nightly batch stream cache cached
report reports dashboard chart plot plots figure label labels category categories encoding
one-hot embedding vector sparse dense matrix sample samples weight weights bias variance
random seed deterministic reproducible version versions release config settings default
slow fast large small big tiny exact approximate correct wrong stale fresh raw clean
customers orders stores refunds revenue sales price prices currency euros dollars percent
because since unless until while instead rather than also still again first last next
must should can cannot needs requires expects returns breaks fails works changes keeps""".split()


def zipf_choice(rng: random.Random, items: list[str], s: float = 1.1) -> str:
    # Rank r is drawn with weight 1/r^s: a few words dominate, most are rare.
    weights = _WEIGHTS.get((len(items), s))
    if weights is None:
        weights = [1.0 / (r**s) for r in range(1, len(items) + 1)]
        _WEIGHTS[(len(items), s)] = weights
    return rng.choices(items, weights=weights, k=1)[0]


_WEIGHTS: dict[tuple[int, float], list[float]] = {}

TEMPLATES = [
    "{Verb} {col} {w1} {w2} {table} {w3} {w4}",
    "The {table} table has {w1} {col} {w2} {w3}; {verb} them {w4} the {table2} {w5}",
    "{Verb} on {col} and {col2} when joining {table} to {table2}, {w1} {w2} {w3}",
    "{col} in {table} is {w1} {w2}: {verb} it {w3} {w4} {w5}",
    "Never {verb} {col} {w1} the {table} {w2}; it {w3} {w4} {w5} {w6}",
    "The {w1} {table} job {w2} {w3} {col} {w4} {w5}; {verb} {col2} first",
]


def statement(rng: random.Random) -> str:
    t = rng.choice(TEMPLATES)
    w = {f"w{i}": zipf_choice(rng, WORDS) for i in range(1, 7)}
    verb = zipf_choice(rng, VERBS)
    text = t.format(
        Verb=verb.capitalize(), verb=verb, col=zipf_choice(rng, COLUMNS), col2=zipf_choice(rng, COLUMNS),
        table=zipf_choice(rng, TABLES), table2=zipf_choice(rng, TABLES), **w,
    )
    # A few memories carry a number or an identifier of their own, as real ones do.
    if rng.random() < 0.5:
        text += f" ({zipf_choice(rng, COLUMNS)}_{rng.randrange(1000)})"
    return text


def corpus(n: int, seed: int = SEED) -> list[dict[str, str]]:
    rng = random.Random(seed)
    kinds = ["decision", "constraint", "fact", "note", "procedure", "failure", "correction", "preference"]
    seen: set[str] = set()
    out = []
    while len(out) < n:
        s = statement(rng)
        if s.lower() in seen:
            continue
        seen.add(s.lower())
        out.append({"statement": s, "kind": zipf_choice(rng, kinds, 0.8), "topic": zipf_choice(rng, TABLES)})
    return out


def prompt_question(rng: random.Random, words: int = 40) -> str:
    parts = ["I am working in the notebook and", zipf_choice(rng, VERBS), "the", zipf_choice(rng, COLUMNS), "column of",
             zipf_choice(rng, TABLES)]
    while len(" ".join(parts).split()) < words - 1:
        parts.append(zipf_choice(rng, WORDS) if rng.random() < 0.8 else zipf_choice(rng, COLUMNS))
    return " ".join(" ".join(parts).split()[: words - 1]) + " — what should I watch out for?"


def short_query(rng: random.Random) -> str:
    return f"{zipf_choice(rng, COLUMNS)} {zipf_choice(rng, TABLES)} {zipf_choice(rng, WORDS)}"


# -- harness ----------------------------------------------------------------------------


class Workspace:
    """A temporary JUPYMEM_HOME and git repositories to bind."""

    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="jupymem-bench-")
        self.base = Path(self.tmp.name)
        self.settings = Settings(home=self.base / "home", encoder="none")
        self.n = 0

    def project(self) -> Project:
        self.n += 1
        root = self.base / f"repo{self.n}"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        return init_project(root, self.settings)

    def close(self) -> None:
        close_all()
        self.tmp.cleanup()


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000.0


def summary(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"p50_ms": round(statistics.median(ordered), 3), "p95_ms": round(p95, 3), "runs": len(ordered)}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build(ws: Workspace, n: int, seed: int = SEED) -> tuple[Project, float]:
    proj = ws.project()
    items = corpus(n, seed)
    t0 = time.perf_counter()
    for i in range(0, n, 5000):
        proj.remember_many(items[i : i + 5000])
    return proj, time.perf_counter() - t0


def fresh_statements(k: int, seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    for i in range(k):
        yield f"{statement(rng)} (bench record {i})"


def bench_capture(results: dict) -> None:
    """Per-statement cost of what every record runs before SQL: the checks, secret scan,
    language detection and id. Median over 7 passes of 2,000 corpus statements, each
    call timed as part of its pass (per-call timers would cost more than the calls);
    the first pass is reported too, since language detection caches what words say."""
    from jupymem.intake import capture, language

    texts = [item["statement"] for item in corpus(2000, seed=7)]
    for name, fn in [
        ("check_statement", capture.check_statement),
        ("find_secrets", capture.find_secrets),
        ("is_english", language.is_english),
        ("memory_id", capture.memory_id),
    ]:
        passes = []
        for _ in range(7):
            t0 = time.perf_counter()
            for text in texts:
                fn(text)
            passes.append((time.perf_counter() - t0) / len(texts) * 1e6)
        results[f"capture_{name}"] = {
            "p50_us": round(statistics.median(passes), 2),
            "first_pass_us": round(passes[0], 2),  # word caches (language) still filling
            "runs": len(passes),
        }


def bench_record(ws: Workspace, results: dict) -> None:
    proj, secs = build(ws, 10_000)
    log(f"built 10,000 memories in {secs:.1f} s")
    runs = [timed(lambda s=s: proj.remember(s, kind="decision")) for s in fresh_statements(60, 1)]
    results["record_one_at_10k"] = summary(runs)


def bench_bulk(ws: Workspace, results: dict) -> None:
    items = corpus(5000, seed=7)
    many, imports = [], []
    for _ in range(3):
        proj = ws.project()
        many.append(timed(lambda proj=proj: proj.remember_many(items)))
        buf = io.StringIO()
        proj.export(buf)
        target = ws.project()
        imports.append(timed(lambda t=target, b=buf: t.import_(io.StringIO(b.getvalue()), other_project=True)))
        assert target.conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 5000
    results["remember_many_5000"] = summary(many)
    results["import_5000"] = summary(imports)


def bench_block(ws: Workspace, results: dict) -> None:
    proj, _ = build(ws, 1000, seed=11)
    cold, warm = [], []
    for s in fresh_statements(30, 2):
        proj.remember(s, kind="fact")  # a change: the next block is built from scratch
        cold.append(timed(proj.block))
        warm.append(timed(proj.block))
    blk = proj.block()
    results["block_1000_cold"] = summary(cold)
    results["block_1000_warm"] = summary(warm)
    results["block_1000_size"] = {"bytes": blk.bytes, "cap": blk.cap, "shown": blk.shown, "omitted": blk.omitted}


def bench_search(ws: Workspace, results: dict, n: int, label: str) -> None:
    proj, secs = build(ws, n, seed=13)
    log(f"built {n:,} memories in {secs:.1f} s")
    results[f"build_{label}_s"] = round(secs, 2)
    rng = random.Random(99)
    prompts = [prompt_question(rng) for _ in range(150)]
    shorts = [short_query(rng) for _ in range(150)]
    proj.prepare_lexical(timeout=600)  # steady state: the in-memory index and the typo names are built
    for q in prompts[:5] + shorts[:5]:
        proj.search(q, mode="lexical")  # warm the page cache and the statement cache
    outcome = {"ok": 0, "abstained": 0}

    def run(q: str) -> None:
        outcome[proj.search(q, mode="lexical").status] += 1

    results[f"search_{label}_prompt40"] = summary([timed(lambda q=q: run(q)) for q in prompts])
    results[f"search_{label}_short"] = summary([timed(lambda q=q: run(q)) for q in shorts])
    results[f"search_{label}_outcomes"] = dict(outcome)


TARGETS = {
    "record_one_at_10k": 5.0,
    "remember_many_5000": 2000.0,
    "import_5000": 2000.0,
    "block_1000_cold": 2.0,
    "search_1k_prompt40": 1.0,
    "search_1k_short": 1.0,
    "search_100k_prompt40": 5.0,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--quick", action="store_true", help="20,000 memories instead of 100,000 for the big search")
    ap.add_argument("--only", choices=["capture", "record", "bulk", "block", "search"], action="append")
    args = ap.parse_args(argv)
    big = 20_000 if args.quick else 100_000
    big_label = "20k" if args.quick else "100k"
    only = set(args.only or ["capture", "record", "bulk", "block", "search"])
    results: dict = {}
    ws = Workspace()
    try:
        if "capture" in only:
            bench_capture(results)
        if "record" in only:
            bench_record(ws, results)
        if "bulk" in only:
            bench_bulk(ws, results)
        if "block" in only:
            bench_block(ws, results)
        if "search" in only:
            bench_search(ws, results, 1000, "1k")
            bench_search(ws, results, big, big_label)
    finally:
        ws.close()
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for name, value in results.items():
        if isinstance(value, dict) and "p50_us" in value:
            print(f"{name:28} p50 {value['p50_us']:9.2f} us per statement (first pass {value['first_pass_us']:.2f})")
        elif isinstance(value, dict) and "p50_ms" in value:
            target = TARGETS.get(name)
            verdict = "" if target is None else ("  ok" if value["p50_ms"] < target else f"  MISSES {target} ms")
            print(f"{name:28} p50 {value['p50_ms']:9.3f} ms   p95 {value['p95_ms']:9.3f} ms{verdict}")
        else:
            print(f"{name:28} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
