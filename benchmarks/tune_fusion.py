"""Choose the fusion weights and the dense-only gate on data held apart from what we report.

    python benchmarks/tune_fusion.py dump --suite FILE --out features.json
    python benchmarks/tune_fusion.py tune features.json [--split tune|report|all]

``dump`` loads a gold suite into real projects (as ``jupymem eval`` does, through
``evaluate.open_scope``) and records, for every query, what each leg saw through
``Project.explain``: every lexical candidate (BM25, cosine) and every one of the dense
leg's nearest neighbours (cosine), with the query's dense background. ``tune`` replays
fusion over those for a grid of settings and prints ranking quality (nDCG@10, R@10,
MRR; abstention is ``fit_answerability.py``'s business). Queries are split by a hash
of their id: two thirds ("tune") choose the settings, the other third ("report") is
only ever scored with the settings already chosen.

Per-query weighting (``sure`` in the grid) replays a lexical weight that grows with how
sure the lexical leg is, i.e. how far its best BM25 stands above the runner-up's; the
last lines replay how many lexical candidates the dense leg re-scores (``depth``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def split_of(query_id: str) -> str:
    """Two thirds "tune" (settings are chosen there), one third "report" (held apart)."""
    return "report" if int(hashlib.sha1(query_id.encode()).hexdigest(), 16) % 3 == 0 else "tune"


def dump(suite_path: str, out: str, encoder: str | None, limit: int | None, mode: str = "hybrid",
         cache: str | None = None) -> None:
    """``mode`` "both" records each candidate's BM25 with both tiers' cosines (and both
    backgrounds), what ``fuse_select.py`` replays every leg and fusion from."""
    from jupymem.config import Settings
    from jupymem.core.opening import close_all
    from jupymem.measure.evaluate import load_suite, open_scope
    from jupymem.retrieval import retrieve

    if cache:
        import embed_cache

        embed_cache.install(cache)
    retrieve.DENSE_ONLY_MARGIN = -2.0  # record every neighbour; the gate is replayed in tune()
    retrieve.DENSE_K = max(retrieve.DENSE_K, 50)  # and more of them than search takes
    suite = load_suite(suite_path, limit=limit)
    base = Path(tempfile.mkdtemp(prefix="jupymem-tune-"))
    settings = Settings(home=base / "home", encoder=encoder, language="source")
    rows = []
    for scope in sorted({q.scope for q in suite.queries}):
        project, ids = open_scope(suite, scope, base, settings)
        project.prepare_lexical()
        assert project.prepare_dense(timeout=7200).dense == "on"
        by_rid = dict(project.conn.execute("SELECT rid, id FROM memories").fetchall())
        if mode == "both":
            from fit_answerability import static_ready

            static_ready(project)
        for q in (q for q in suite.queries if q.scope == scope):
            relevant = sorted(ids[r] for r in q.relevant if r in ids)
            if mode != "both":
                ranking = project.explain(q.query, 0, mode=mode)
                rows.append({
                    "id": q.id, "category": q.category, "relevant": relevant, "size": len(by_rid),
                    "background": ranking.side.background if ranking.side else None,
                    # The query's own weight (its terms' IDF summed): BM25 over it is about how
                    # much of the query a memory covers, on the same scale for every query.
                    "qweight": next((c.plan.total_weight for c in ranking.candidates if c.plan is not None), None),
                    "candidates": [[by_rid[c.rid], c.bm25, c.cosine] for c in ranking.candidates],
                })
                continue
            tx = project.explain(q.query, 0, mode="transformer")
            st = project.explain(q.query, 0, mode="static")
            assert tx.tier == "transformer" and st.tier == "static", (tx.tier, st.tier)
            merged: dict[str, list] = {}
            for c in tx.candidates:
                merged[by_rid[c.rid]] = [c.bm25, c.cosine, None]
            for c in st.candidates:
                merged.setdefault(by_rid[c.rid], [c.bm25, None, None])[2] = c.cosine
            rows.append({
                "id": q.id, "query": q.query, "category": q.category, "relevant": relevant, "size": len(by_rid),
                "scope": scope,
                "background": {"transformer": tx.side.background if tx.side else None,
                               "static": st.side.background if st.side else None},
                "qweight": next((c.plan.total_weight for c in tx.candidates if c.plan is not None), None),
                "candidates": [[mid, *v] for mid, v in merged.items()],
            })
    close_all()
    Path(out).write_text(json.dumps(rows))
    print(f"{len(rows)} queries -> {out}")


def rank(row: dict, w: float, only_margin: float, sure: float = 0.0, depth: int = 100) -> list[str]:
    """Replay fusion: ``w`` the lexical weight, ``only_margin`` the dense-only gate over the
    query's background; ``sure`` moves weight to the lexical leg when its best BM25 stands
    well above the runner-up's (0: a fixed weight); ``depth`` the lexical candidates the
    dense leg re-scores (a deeper one stays only if it is among the 20 nearest, as a
    dense-only candidate)."""
    lexical = sorted((c for c in row["candidates"] if c[1] > 0), key=lambda c: -c[1])
    if depth < len(lexical):
        kept = {c[0] for c in lexical[:depth]}
        near = {c[0] for c in sorted((c for c in row["candidates"] if c[2] is not None), key=lambda c: -c[2])[:20]}
        row = {**row, "candidates": [
            c if c[1] <= 0 or c[0] in kept else [c[0], 0.0, c[2]]
            for c in row["candidates"] if c[1] <= 0 or c[0] in kept or c[0] in near
        ]}
        lexical = lexical[:depth]
    bm = sorted((c[1] for c in lexical), reverse=True)
    best = bm[0] if bm else 1.0
    if sure and len(bm) > 1:
        lead = 1.0 - bm[1] / best  # 0: a tie, 1: nothing else matches
        w = min(1.0, max(0.0, w + sure * (lead - 0.5)))
    background = row["background"] or 0.0
    scored = {}
    for mid, b, cos in row["candidates"]:
        if b <= 0 and (cos is None or cos - background < only_margin):
            continue
        scored[mid] = w * (b / best) + (1 - w) * max(0.0, cos or 0.0)
    return sorted(scored, key=lambda m: (-scored[m], m))


def metrics(ranked: list[str], relevant: set[str]) -> tuple[float, float, float]:
    top = ranked[:10]
    hits = [i for i, r in enumerate(top) if r in relevant]
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    first = next((i for i, r in enumerate(ranked) if r in relevant), None)
    return (len(hits) / len(relevant), 1 / (first + 1) if first is not None else 0.0,
            sum(1 / math.log2(i + 2) for i in hits) / ideal)


def evaluate(rows: list[dict], w: float, only_margin: float, sure: float = 0.0, depth: int = 100) -> dict[str, float]:
    sums = [0.0, 0.0, 0.0]
    n = 0
    for row in rows:
        if not row["relevant"]:
            continue
        n += 1
        for i, v in enumerate(metrics(rank(row, w, only_margin, sure, depth), set(row["relevant"]))):
            sums[i] += v
    return {"recall@10": sums[0] / max(n, 1), "mrr": sums[1] / max(n, 1), "ndcg@10": sums[2] / max(n, 1)}


def tune(path: str, split: str) -> None:
    rows = json.loads(Path(path).read_text())
    pick = [r for r in rows if split == "all" or split_of(r["id"]) == split]
    print(f"{len(pick)} queries ({split})")
    fmt = lambda r: " ".join(f"{k} {v:.4f}" for k, v in r.items())  # noqa: E731
    print("lexical alone                      ", fmt(evaluate(pick, 1.0, 9.0)))
    for only in (9.0, 0.3, 0.2, 0.1, 0.05, 0.0, -1.0):
        for w in (0.8, 0.7, 0.6, 0.55, 0.5, 0.45, 0.4, 0.35, 0.3):
            for sure in (0.0, 0.2, 0.4, 0.8):
                r = evaluate(pick, w, only, sure)
                print(f"w={w:<4} dense-only>={only:<5} sure={sure:<4}", fmt(r))
    for depth in (100, 60, 40):
        print(f"w=0.45 depth={depth:<4}                    ", fmt(evaluate(pick, 0.45, 0.0, 0.0, depth)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--suite", required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--encoder")
    d.add_argument("--limit", type=int)
    d.add_argument("--mode", default="hybrid", help="hybrid (the best tier ready), static, transformer, or both tiers")
    d.add_argument("--cache", help="a folder of cached transformer vectors (benchmarks/embed_cache.py)")
    t = sub.add_parser("tune")
    t.add_argument("features")
    t.add_argument("--split", default="tune", choices=("tune", "report", "all"))
    a = p.parse_args(argv)
    if a.cmd == "dump":
        dump(a.suite, a.out, a.encoder, a.limit, a.mode, a.cache)
    else:
        tune(a.features, a.split)
    return 0


if __name__ == "__main__":
    sys.exit(main())
