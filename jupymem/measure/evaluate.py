"""``jupymem eval --suite FILE``: score retrieval on a gold suite, through the real search path.

A suite is JSONL (``shared/data/README.md``): memory lines and query lines, each with an
optional ``scope``. Every scope becomes a real project (a git repository in a temporary
directory, a database under a temporary ``JUPYMEM_HOME``), loaded with
``Project.remember_many``, and every query is answered by ``Project.search``, the method
every face calls. Three methods, each a search mode users can get: ``fts`` is plain FTS5
BM25 (the baseline the others must beat), ``bm25`` the lexical leg, ``hybrid`` the default
with the dense leg. Before anything is timed or scored each project is brought to the
state a long-lived process reaches after its first searches: the typo vocabulary read
and, for ``hybrid``, the encoder loaded and every memory embedded, at any project size
(interactive searches load the dense leg in the background at any size too). Nothing
here rewrites a query or peeks at the gold answers.

Metrics, with binary gains, over the queries that have relevant memories: Recall@10,
MRR, nDCG@10 and hit@1 (an abstention scores zero). ``abstain_accuracy`` is the share of
unanswerable queries (empty ``relevant``) that abstained, the correct abstentions;
``false_abstain`` the share of answerable ones that did. Each also per ``category`` and
per project size (``by_size``); ``search_ms`` gives each method's latency.

``--negatives cross-scope`` adds unanswerable queries: each answerable query asked in
another scope of the suite (the next one in name order), category ``cross-scope``. A
query line with ``"cross_scope": false`` is left out of that (its answer is memory that
every scope of the suite holds).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..config import Settings
from ..errors import JupymemError
from ..intake.text import strip_control

# method -> search mode: plain FTS5, the lexical leg, the default (best tier ready), each
# tier's hybrid, and the transformer's ranking alone.
METHODS = {
    "fts": "fts", "bm25": "lexical", "hybrid": "hybrid", "static": "static", "transformer": "transformer",
    "dense": "dense",
}
DEFAULT_METHODS = ("fts", "bm25", "hybrid")
# ``jupymem eval`` compares every method a person or a tier can get, side by side.
COMPARED = ("fts", "bm25", "static", "transformer", "dense")
DENSE_METHODS = frozenset({"hybrid", "static", "transformer", "dense"})
RANKING_ONLY = frozenset({"fts", "dense"})  # rankings without a verdict: no labels to score
K = 10
NEGATIVES = ("cross-scope",)
SIZES = ((10, "1-10"), (1000, "11-1000"), (None, ">1000"))  # project sizes reported apart


class SuiteError(JupymemError, code="invalid_suite"):
    """Raised when a gold suite file cannot be read; the message names the line."""


@dataclass
class Query:
    id: str
    query: str
    relevant: tuple[str, ...]
    scope: str
    category: str | None = None
    cross_scope: bool = True  # may be asked in another scope as an unanswerable query
    origin: str | None = None  # the query this one was made from (generated negatives)


@dataclass
class Suite:
    memories: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    queries: list[Query] = field(default_factory=list)


def load_suite(path: str | os.PathLike[str], *, limit: int | None = None) -> Suite:
    """Read a suite; ``limit`` keeps the first N queries (and every memory)."""
    suite = Suite()
    p = Path(path)
    try:
        fp = p.open(encoding="utf-8")
    except OSError as err:
        raise SuiteError(f"cannot read the suite {p}: {err.strerror}") from None
    with fp:
        for number, line in enumerate(fp, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                kind = obj["type"]
                scope = str(obj.get("scope") or "")
                if kind == "memory":
                    # Public corpora carry stray C1 control characters that no person types;
                    # memory refuses them as binary, so they become spaces here.
                    text = strip_control(obj["text"], " ")
                    suite.memories[scope].append({"id": str(obj["id"]), "text": text, "kind": obj.get("kind") or "fact"})
                elif kind == "query":
                    if limit is None or len(suite.queries) < limit:
                        suite.queries.append(
                            Query(str(obj["id"]), obj["query"], tuple(map(str, obj.get("relevant") or ())), scope,
                                  obj.get("category"), bool(obj.get("cross_scope", True)))
                        )
                else:
                    raise KeyError("type")
            except (ValueError, KeyError, TypeError):
                raise SuiteError(f"{p}:{number} is not a suite line (need type memory or query; see the format)") from None
    if not suite.queries:
        raise SuiteError(f"{p} has no queries")
    return suite


def cross_scope_negatives(suite: Suite, per_query: int = 1) -> list[Query]:
    """Each answerable query asked in ``per_query`` other scopes (the next ones in name
    order, among scopes with memories), where it should abstain."""
    scopes = sorted(s for s in suite.memories if suite.memories[s])
    out = []
    for q in suite.queries:
        if not q.relevant or not q.cross_scope or q.scope not in scopes or len(scopes) < 2:
            continue
        at = scopes.index(q.scope)
        for step in range(1, min(per_query, len(scopes) - 1) + 1):
            other = scopes[(at + step) % len(scopes)]
            out.append(Query(f"{q.id}@{other}", q.query, (), other, "cross-scope", False, q.id))
    return out


# -- metrics ----------------------------------------------------------------------


def score_ranking(ranked: Sequence[str], relevant: set[str]) -> dict[str, float]:
    top = list(ranked[:K])
    hits = [i for i, r in enumerate(top) if r in relevant]
    dcg = sum(1.0 / math.log2(i + 2) for i in hits)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), K)))
    first = next((i for i, r in enumerate(ranked) if r in relevant), None)
    return {
        "recall@10": len(hits) / len(relevant),
        "mrr": 1.0 / (first + 1) if first is not None else 0.0,
        "ndcg@10": dcg / ideal if ideal else 0.0,
        "hit@1": 1.0 if top and top[0] in relevant else 0.0,
    }


def summarize(rows: Iterable[tuple[dict[str, float] | None, bool]]) -> dict[str, float | None]:
    """rows: (metrics or None for an abstain-expected query, abstained)."""
    sums: dict[str, float] = defaultdict(float)
    n_real = n_empty = abstained_empty = abstained_real = 0
    for metrics, abstained in rows:
        if metrics is None:
            n_empty += 1
            abstained_empty += abstained
        else:
            n_real += 1
            abstained_real += abstained
            for k, v in metrics.items():
                sums[k] += v
    out: dict[str, float | None] = {k: (round(sums[k] / n_real, 4) if n_real else None) for k in ("recall@10", "mrr", "ndcg@10", "hit@1")}
    out["abstain_accuracy"] = round(abstained_empty / n_empty, 4) if n_empty else None
    out["false_abstain"] = round(abstained_real / n_real, 4) if n_real else None
    return out


# -- running ----------------------------------------------------------------------


def _make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(path)], check=False, capture_output=True)
    (path / ".git").mkdir(exist_ok=True)
    return path


def _safe(scope: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in scope) or "default"


# How ``run_suite`` gets a scope's loaded project: (suite, scope, work folder, settings) ->
# (Project, suite id -> memory id). ``open_scope`` by default; another engine's opener
# (tests/test_pg_quality.py: a project in a team database) makes the project and hands
# it to ``load_scope``.
Opener = Callable[[Suite, str, Path, Settings], tuple[Any, dict[str, str]]]


def open_scope(suite: Suite, scope: str, base: Path, settings: Settings) -> tuple[Any, dict[str, str]]:
    """A fresh project holding ``scope``'s memories: (Project, suite id -> memory id)."""
    from ..core.opening import init_project

    return load_scope(init_project(_make_repo(base / "repos" / _safe(scope)), settings), suite, scope)


def load_scope(project: Any, suite: Suite, scope: str) -> tuple[Any, dict[str, str]]:
    """Record ``scope``'s memories in the empty ``project``: (project, suite id -> memory id)."""
    from ..intake.capture import check_statement, memory_id

    items = suite.memories.get(scope, [])
    ids: dict[str, str] = {}
    for i in range(0, len(items), 2000):
        chunk = items[i : i + 2000]
        got = project.remember_many({"statement": m["text"], "kind": m["kind"]} for m in chunk)
        if len(got) == len(chunk):  # one memory per line, in order
            ids.update((m["id"], g.id) for m, g in zip(chunk, got))
        else:  # some lines repeat a statement: derive each id as the store does
            ids.update((m["id"], memory_id(check_statement(m["text"]))) for m in chunk)
    return project, ids


def size_band(n: int) -> str:
    return next(name for top, name in SIZES if top is None or n <= top)


def run_suite(
    suite: Suite,
    *,
    methods: Sequence[str] = DEFAULT_METHODS,
    encoder: str | None = None,
    negatives: str | None = None,
    workdir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    details: list[dict[str, Any]] | None = None,
    opener: Opener = open_scope,
) -> dict[str, Any]:
    """Load every scope into a fresh project and score ``methods``; the JSON report.

    ``encoder`` is a ``JUPYMEM_ENCODER`` value (None: the bundled model). ``negatives``
    "cross-scope" adds ``cross_scope_negatives``. ``details``, when given, receives one
    record per query and method (for error analysis). ``opener`` makes each scope's
    loaded project (``Opener``: another engine's, to compare engines on one suite).
    """
    from ..core.opening import close_all

    owned = workdir is None
    base = Path(tempfile.mkdtemp(prefix="jupymem-eval-")) if owned else workdir
    assert base is not None
    settings = Settings(home=base / "home", encoder=encoder, language="source")
    queries = list(suite.queries)
    if negatives == "cross-scope":
        queries += cross_scope_negatives(suite)
    per_method: dict[str, list[tuple[dict[str, float] | None, bool]]] = {m: [] for m in methods}
    per_cat: dict[str, dict[str, list[Any]]] = defaultdict(lambda: {m: [] for m in methods})
    per_size: dict[str, dict[str, list[Any]]] = defaultdict(lambda: {m: [] for m in methods})
    latency: dict[str, list[float]] = {m: [] for m in methods}
    # Per method and label (strong / likely / weak): the answered searches whose first hit
    # wore that label, and how many of those first hits were right (``label_precision``).
    labels: dict[str, dict[str, list[int]]] = {m: defaultdict(lambda: [0, 0]) for m in methods}
    timings: dict[str, Any] = {"load_seconds": 0.0, "dense_seconds": 0.0}
    dense_state: dict[str, Any] = {}
    total = len(queries) * len(methods)
    done = 0
    try:
        for scope in sorted({q.scope for q in queries}):
            t0 = time.perf_counter()
            project, ids = opener(suite, scope, base, settings)
            project.prepare_lexical()
            timings["load_seconds"] += time.perf_counter() - t0
            if DENSE_METHODS.intersection(methods):
                t0 = time.perf_counter()
                dense_state[scope or "(default)"] = project.prepare_dense().to_dict()  # the report is JSON
                timings["dense_seconds"] += time.perf_counter() - t0
            band = size_band(len(suite.memories.get(scope, [])))
            for q in (q for q in queries if q.scope == scope):
                relevant = {ids.get(r, "?" + r) for r in q.relevant}
                for method in methods:
                    t0 = time.perf_counter()
                    result = project.search(q.query, limit=K, mode=METHODS[method])
                    latency[method].append(time.perf_counter() - t0)
                    ranked = [h.memory.id for h in result.hits]
                    metrics = score_ranking(ranked, relevant) if relevant else None
                    row = (metrics, result.abstained)
                    per_method[method].append(row)
                    if result.hits and METHODS[method] not in RANKING_ONLY:
                        tally = labels[method][level(result.hits[0].confidence)]
                        tally[0] += 1
                        tally[1] += bool(relevant) and ranked[0] in relevant
                    per_cat[q.category or "uncategorized"][method].append(row)
                    per_size[band][method].append(row)
                    if details is not None:
                        details.append({"query": q.id, "method": method, "category": q.category, "scope": scope,
                                        "text": q.query, "abstained": result.abstained, "metrics": metrics,
                                        "ranked": ranked[:K], "relevant": sorted(relevant),
                                        "confidence": [h.confidence for h in result.hits]})
                    done += 1
                    if progress:
                        progress(done, total)
    finally:
        close_all()
        if owned:
            shutil.rmtree(base, ignore_errors=True)
    report: dict[str, Any] = {
        "queries": len(queries),
        "methods": {m: summarize(per_method[m]) for m in methods},
        "by_category": {c: {m: summarize(rows[m]) for m in methods} for c, rows in sorted(per_cat.items())},
        "by_size": {b: {m: summarize(rows[m]) for m in methods} for b, rows in per_size.items()},
        "search_ms": {m: _percentiles(latency[m]) for m in methods},
        "label_precision": {
            m: {lab: {"n": n, "precision": round(ok / n, 4)} for lab, (n, ok) in sorted(labels[m].items())}
            for m in methods if labels[m]
        },
        "memories": sum(len(v) for v in suite.memories.values()),
        "scopes": len({q.scope for q in queries}),
        "load_seconds": round(timings["load_seconds"], 2),
    }
    if negatives:
        report["negatives"] = negatives
    if DENSE_METHODS.intersection(methods):
        report["dense_seconds"] = round(timings["dense_seconds"], 2)
        report["dense"] = dense_state
    return report


def level(confidence: float) -> str:
    from ..retrieval.answerable import level as said

    return said(confidence)


def _percentiles(seconds: list[float]) -> dict[str, float | None]:
    if not seconds:
        return {"p50": None, "p95": None}
    ordered = sorted(seconds)
    return {"p50": round(statistics.median(ordered) * 1000, 3),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000, 3)}


class _Bar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        pct = done * 100 // max(total, 1)
        if pct == self.last and done != total:
            return
        self.last = pct
        filled = pct * 30 // 100
        self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {pct:3d}% {done}/{total} searches")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def format_report(report: dict[str, Any]) -> str:
    cols = ("recall@10", "mrr", "ndcg@10", "hit@1", "abstain_accuracy", "false_abstain")

    def fmt(v: Any) -> str:
        return f"{v:.3f}" if isinstance(v, float) else "  -  "

    names = {"abstain_accuracy": "correct_abstain"}
    lines = [f"{report['queries']} queries, {report['memories']} memories, {report['scopes']} scope(s)", ""]
    head = f"{'':24}{'method':8}" + "".join(f"{names.get(c, c):>16}" for c in cols)
    lines.append(head)
    for m, row in report["methods"].items():
        lines.append(f"{'overall':24}{m:8}" + "".join(f"{fmt(row[c]):>16}" for c in cols))
    for group in ("by_size", "by_category"):
        prefix = "size " if group == "by_size" else ""
        for cat, methods in report[group].items():
            for m, row in methods.items():
                lines.append(f"{(prefix + cat)[:23]:24}{m:8}" + "".join(f"{fmt(row[c]):>16}" for c in cols))
    lines.append("search p50 ms: " + ", ".join(f"{m} {v['p50']}" for m, v in report["search_ms"].items()))
    for m, by_label in (report.get("label_precision") or {}).items():
        said = ", ".join(f"{lab} {v['precision']:.3f} of {v['n']}" for lab, v in by_label.items())
        lines.append(f"first hit right, by its label ({m}): {said}")
    for scope, st in (report.get("dense") or {}).items():
        lines.append(f"dense leg ({scope}): {st.get('dense')} ({st.get('reason') or st.get('model')})")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="jupymem eval", description="Score retrieval on a gold suite: plain FTS5 BM25, the lexical leg and hybrid."
    )
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    """This command's options; ``json_flag=False`` where a parent parser (the CLI's)
    already defines ``--json``."""
    p.add_argument("--suite", required=True, metavar="FILE", help="a gold suite (JSONL: memory and query lines)")
    if json_flag:
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON object")
    p.add_argument("--limit", type=int, metavar="N", help="score only the first N queries")
    p.add_argument(
        "--methods", default=",".join(COMPARED), metavar="LIST",
        help=f"comma-separated methods to score, of {','.join(METHODS)} (default: {','.join(COMPARED)})",
    )
    p.add_argument(
        "--negatives", choices=NEGATIVES, help="add generated unanswerable queries: each query asked in another scope"
    )


def run_eval(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return eval_command(args, stdout=stdout, stderr=stderr)


def eval_command(args: argparse.Namespace, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        suite = load_suite(args.suite, limit=args.limit)
        methods = _methods(getattr(args, "methods", None) or ",".join(COMPARED))
        bar = _Bar(err) if err.isatty() else None
        report = run_suite(
            suite, methods=methods, encoder=Settings.from_env().encoder, negatives=getattr(args, "negatives", None),
            progress=bar,
        )
    except JupymemError as exc:
        err.write(f"jupymem: {exc.message}\n")
        return exc.exit_code
    if getattr(args, "json", False):
        out.write(json.dumps(report, sort_keys=False) + "\n")
    else:
        out.write(format_report(report) + "\n")
    return 0


def _methods(text: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    unknown = [m for m in chosen if m not in METHODS]
    if unknown or not chosen:
        raise SuiteError(f"unknown method {', '.join(unknown) or '(none)'}; use some of: {', '.join(METHODS)}")
    return chosen


if __name__ == "__main__":
    sys.exit(run_eval())
