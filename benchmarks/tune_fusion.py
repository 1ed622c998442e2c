"""Choose the fusion weights and gates on data held apart from what we report.

    python benchmarks/tune_fusion.py dump --suite FILE --out features.json
    python benchmarks/tune_fusion.py tune features.json [--split tune|report|all]

``dump`` loads a gold suite into real projects (as ``jupymem eval`` does) and records,
for every query, what each leg saw: the lexical candidates (BM25, relevance) and the
dense cosines of those and of the dense leg's nearest neighbours. ``tune`` replays
fusion and abstention over those features for a grid of settings. Queries are split
by a hash of their id: one third ("tune") chooses the settings, the other two thirds
("report") are only ever scored with the settings already chosen.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path


def split_of(query_id: str) -> str:
    return "tune" if int(hashlib.sha1(query_id.encode()).hexdigest(), 16) % 3 == 0 else "report"


def dump(suite_path: str, out: str, encoder: str | None, limit: int | None) -> None:

    from jupymem.retrieval import retrieve
    from jupymem.config import Settings
    from jupymem.evaluate import _make_repo, _safe, load_suite
    from jupymem.opening import close_all, init_project

    suite = load_suite(suite_path, limit=limit)
    base = Path(tempfile.mkdtemp(prefix="jupymem-tune-"))
    settings = Settings(home=base / "home", encoder=encoder, language="source")
    rows = []
    for scope in sorted({q.scope for q in suite.queries}):
        project = init_project(_make_repo(base / _safe(scope)), settings)
        items = suite.memories.get(scope, [])
        got = project.remember_many({"statement": m["text"], "kind": m["kind"]} for m in items)
        assert len(got) == len(items), "duplicate statements in the suite"
        ids = {m["id"]: g.id for m, g in zip(items, got)}
        project.prepare_dense()
        rev = project.revision()
        leg = project._dense_leg(rev)
        for q in (q for q in suite.queries if q.scope == scope):
            relevant = {ids[r] for r in q.relevant}
            qq = retrieve._plan(project.conn, q.query, project._n_docs(rev), "lexical", project._vocab)
            cands = retrieve.lexical_candidates(project.conn, qq.plan, depth=100, include_inactive=False, kinds=None)
            retrieve.materialize(project.conn, cands)
            qv = leg.embedder.embed_batch([q.query])[0]
            near = leg.index.nearest(qv, 20, revision=rev, include_inactive=False)
            cos = leg.index.cosines(qv, [c.rid for c in cands])
            by_rid = {c.rid: c.memory.id for c in cands}
            near_ids = retrieve._memories(project.conn, [r for r, _ in near])
            rows.append({
                "id": q.id, "category": q.category, "relevant": sorted(relevant),
                "lex": [[c.memory.id, c.bm25, c.relevance, cos.get(c.rid, 0.0)] for c in cands],
                "near": [[near_ids[r].id, s, by_rid.get(r) is not None] for r, s in near if r in near_ids],
            })
    close_all()
    Path(out).write_text(json.dumps(rows))
    print(f"{len(rows)} queries -> {out}")


NORM = "raw"


def _norm(values, how):
    if not values:
        return []
    if how == "raw":
        return values
    lo, hi = min(values), max(values)
    if how == "minmax":
        return [(v - lo) / (hi - lo) if hi > lo else 1.0 for v in values]
    mu = statistics.fmean(values)
    sd = statistics.pstdev(values) or 1.0
    return [(v - mu) / sd for v in values]


def rank(row, w, depth, only_cos, only_margin):
    lex = row["lex"][:depth]
    best = max((c[1] for c in lex), default=0.0) or 1.0
    if NORM == "raw":
        scored = {mid: w * (b / best) + (1 - w) * max(0.0, cs) for mid, b, rel, cs in lex}
    else:
        bs = _norm([c[1] for c in lex], NORM)
        cs = _norm([c[3] for c in lex], NORM)
        scored = {c[0]: w * b + (1 - w) * x for c, b, x in zip(lex, bs, cs)}
    near = row["near"]
    background = statistics.median([s for _, s, _ in near]) if near else 0.0
    gated = False
    for mid, s, _ in near:
        if mid not in scored and s >= only_cos and s - background >= only_margin:
            scored[mid] = (1 - w) * s
            gated = True
    ranked = sorted(scored, key=lambda m: (-scored[m], m))
    rel_max = max((c[2] for c in lex), default=0.0)
    return ranked, rel_max, gated, near[0][1] if near else 0.0, background


def metrics(ranked, relevant):
    top = ranked[:10]
    hits = [i for i, r in enumerate(top) if r in relevant]
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    first = next((i for i, r in enumerate(ranked) if r in relevant), None)
    return (len(hits) / len(relevant), 1 / (first + 1) if first is not None else 0.0,
            sum(1 / math.log2(i + 2) for i in hits) / ideal)


def evaluate(rows, w, depth=100, only_cos=0.6, only_margin=0.2, abstain=0.0, dense_match=9.0):
    sums = [0.0, 0.0, 0.0]
    n = n_empty = ok_empty = false_abstain = 0
    for row in rows:
        ranked, rel_max, gated, top_cos, bg = rank(row, w, depth, only_cos, only_margin)
        answer = rel_max >= abstain or gated or (top_cos >= dense_match)
        if not row["relevant"]:
            n_empty += 1
            ok_empty += not answer
            continue
        n += 1
        if not answer:
            false_abstain += 1
            continue
        for i, v in enumerate(metrics(ranked, set(row["relevant"]))):
            sums[i] += v
    return {"recall@10": sums[0] / max(n, 1), "mrr": sums[1] / max(n, 1), "ndcg@10": sums[2] / max(n, 1),
            "abstain_accuracy": ok_empty / n_empty if n_empty else None, "false_abstain": false_abstain / max(n, 1)}


def tune(path: str, split: str) -> None:
    rows = json.loads(Path(path).read_text())
    pick = [r for r in rows if split == "all" or split_of(r["id"]) == split]
    print(f"{len(pick)} queries ({split})")
    base = evaluate(pick, 1.0)
    print("lexical alone        ", {k: round(v, 4) for k, v in base.items() if v is not None})
    global NORM
    for NORM in ("raw", "minmax", "z"):
        for w in (0.9, 0.8, 0.7, 0.6, 0.5, 0.4):
            for depth in (20, 50, 100):
                r = evaluate(pick, w, depth)
                print(f"{NORM:6} w={w:<5} depth={depth:<4}", {k: round(v, 4) for k, v in r.items() if v is not None})


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--suite", required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--encoder")
    d.add_argument("--limit", type=int)
    t = sub.add_parser("tune")
    t.add_argument("features")
    t.add_argument("--split", default="tune", choices=("tune", "report", "all"))
    a = p.parse_args(argv)
    if a.cmd == "dump":
        dump(a.suite, a.out, a.encoder, a.limit)
    else:
        tune(a.features, a.split)
    return 0


if __name__ == "__main__":
    sys.exit(main())
