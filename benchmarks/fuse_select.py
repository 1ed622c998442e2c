"""A fusion chosen per query from what the query itself shows, fitted leave one suite out.

    python benchmarks/tune_fusion.py dump --suite FILE --out DIR/NAME.json --mode both --cache DIR
    python benchmarks/fuse_select.py DIR [--json report.json]

Each dump (``tune_fusion.py dump --mode both``) holds, per query, every candidate either leg
saw: its BM25, the transformer's cosine and the static model's, and the query's dense
background in both tiers and its own IDF weight. From those this replays, per suite and
without any abstention (the verdict is ``verdict_suites.py``'s business), every leg a
person can get:

* ``lexical``: BM25 alone;
* ``static``: the static tier's hybrid, ``0.45 bm25/best + 0.55 cosine``;
* ``dense``: the transformer's cosine alone;
* ``transformer``: the transformer's hybrid as shipped before this (``cos + 0.05 bm25/best
  + 0.3 covered^2``);

and the per-query fusion (``retrieve.fused_score``), whose weights move with two things the
query shows before any answer is known:

* how far the transformer's best cosine stands above its fifth best (``peak``): a question
  the encoder reads well (a paraphrase) has one memory standing out, while a conversation's
  turns all sit close to a question that names their speaker;
* how much of the question the best lexical candidate covers (``cover``, BM25 over the
  query's own IDF weight): a question whose words memory holds (a conversation turn, a
  rare term) is better ranked by them.

``score = (1 - lam) * (mu * tx' + (1 - mu) * static') + lam * bm25/best + delta * covered^2``,
``lam = clip(a + b * cover - c * peak, 0, 1)``, where ``tx'`` and ``static'`` are each cosine
over the query's own range (0 at its dense background, 1 at its best), so that the words'
weight means the same for a query whose cosines all sit close together as for one whose
answer stands out. The parameters are chosen on a grid
leave one suite out: for each suite, the setting whose worst margin over the training
suites (fused nDCG@10 minus the best leg's, the worst of nDCG@10 and Recall@10) is
largest; that setting's figures on the held-out suite are the only ones reported for it.
WikiQA and SQuAD 2.0 are never in a training set. The best setting chosen on every other
suite is below the best leg somewhere held out (LoCoMo's turns want the words and the static
tier, the paraphrases and WikiQA the transformer alone, and nothing a query shows before its
answer tells them apart well enough), so it is not shipped: search keeps the transformer's
fusion of ``retrieve._transformer_score`` (the ``transformer`` leg here), and the README says
by how much each suite misses its best leg.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np

K = 10
LEGS = ("lexical", "static", "dense", "transformer")
HELD_OUT = ("wikiqa", "squad2")  # never in a training set: reported only


def arrays(rows: list[dict]) -> dict[str, np.ndarray]:
    """A suite's answerable queries as padded arrays [query, candidate]."""
    rows = [r for r in rows if r["relevant"]]
    width = max(len(r["candidates"]) for r in rows)
    shape = (len(rows), width)
    out = {k: np.zeros(shape) for k in ("bm25", "tx", "st", "rel")}
    out["has_tx"] = np.zeros(shape, bool)
    out["has_st"] = np.zeros(shape, bool)
    out["valid"] = np.zeros(shape, bool)
    out["ideal"] = np.zeros(len(rows))
    out["nrel"] = np.zeros(len(rows))
    out["tx_bg"] = np.zeros(len(rows))
    out["st_bg"] = np.zeros(len(rows))
    out["qweight"] = np.zeros(len(rows))
    for i, r in enumerate(rows):
        rel = set(r["relevant"])
        for j, (mid, bm, tx, st) in enumerate(r["candidates"]):
            out["valid"][i, j] = True
            out["bm25"][i, j] = bm
            out["tx"][i, j] = tx if tx is not None else 0.0
            out["st"][i, j] = st if st is not None else 0.0
            out["has_tx"][i, j] = tx is not None
            out["has_st"][i, j] = st is not None
            out["rel"][i, j] = mid in rel
        out["nrel"][i] = len(rel)
        out["ideal"][i] = sum(1 / math.log2(k + 2) for k in range(min(len(rel), K)))
        bg = r["background"]
        out["tx_bg"][i] = bg["transformer"] or 0.0
        out["st_bg"][i] = bg["static"] or 0.0
        out["qweight"][i] = r["qweight"] or 0.0
    best = out["bm25"].max(axis=1, keepdims=True)
    out["norm"] = np.where(best > 0, out["bm25"] / np.where(best > 0, best, 1.0), 0.0)
    q = out["qweight"][:, None]
    out["cover"] = np.where(q > 0, np.minimum(1.0, out["bm25"] / np.where(q > 0, q, 1.0)), 0.0)
    tx = np.where(out["has_tx"], out["tx"], -1.0)
    top = np.sort(tx, axis=1)[:, ::-1]
    out["peak"] = top[:, 0] - top[:, min(4, top.shape[1] - 1)]
    out["best_cover"] = out["cover"].max(axis=1)
    out["txn"] = _own_range(tx, out["tx_bg"])
    out["stn"] = _own_range(np.where(out["has_st"], out["st"], -1.0), out["st_bg"])
    return out


def _own_range(cos: np.ndarray, background: np.ndarray) -> np.ndarray:
    """Each cosine over the query's own range: 0 at its background, 1 at its best."""
    best = cos.max(axis=1, keepdims=True)
    bg = background[:, None]
    return np.clip((cos - bg) / np.maximum(best - bg, 1e-6), 0.0, 1.0)


def metrics(a: dict[str, np.ndarray], score: np.ndarray) -> tuple[float, float]:
    """(nDCG@10, Recall@10) of ``score`` (-inf: not a candidate), ties by position."""
    order = np.argsort(-score, axis=1, kind="stable")[:, :K]
    taken = np.take_along_axis(score, order, axis=1) > -np.inf
    rel = np.take_along_axis(a["rel"], order, axis=1) * taken
    gains = rel / np.log2(np.arange(2, K + 2))[None, :]
    ndcg = gains.sum(axis=1) / np.maximum(a["ideal"], 1e-9)
    recall = rel.sum(axis=1) / np.maximum(a["nrel"], 1)
    return float(ndcg.mean()), float(recall.mean())


def leg_scores(a: dict[str, np.ndarray], leg: str) -> np.ndarray:
    ninf = -np.inf
    lexical = a["bm25"] > 0
    if leg == "lexical":
        return np.where(lexical, a["bm25"], ninf)
    if leg == "dense":
        return np.where(a["has_tx"], a["tx"], ninf)
    if leg == "static":
        ok = a["has_st"] & (lexical | (a["st"] - a["st_bg"][:, None] >= 0))
        return np.where(ok, 0.45 * a["norm"] + 0.55 * np.maximum(a["st"], 0), ninf)
    ok = a["has_tx"] & (lexical | (a["tx"] - a["tx_bg"][:, None] >= 0))
    s = np.maximum(a["tx"], 0) + np.where(lexical, 0.05 * a["norm"] + 0.3 * a["cover"] ** 2, 0)
    return np.where(ok, s, ninf)


def fused(a: dict[str, np.ndarray], p: dict[str, float]) -> np.ndarray:
    """The per-query fusion (the same arithmetic as ``retrieve.fused_score``)."""
    lam = np.clip(p["a"] + p["b"] * a["best_cover"] - p["c"] * a["peak"], 0.0, 1.0)[:, None]
    lexical = a["bm25"] > 0
    dense = p["mu"] * a["txn"] + (1 - p["mu"]) * a["stn"]
    s = (1 - lam) * dense + lam * a["norm"] + p["delta"] * np.where(lexical, a["cover"] ** 2, 0)
    ok = a["has_tx"] & (lexical | (a["tx"] - a["tx_bg"][:, None] >= 0))
    return np.where(ok, s, -np.inf)


GRID = {
    "a": (0.0, 0.2, 0.4, 0.6),
    "b": (0.0, 0.2, 0.4, 0.6),
    "c": (0.0, 2.0, 4.0, 8.0),
    "mu": (1.0, 0.7, 0.4),
    "delta": (0.0, 0.15, 0.3),
}


def settings() -> list[dict[str, float]]:
    keys = list(GRID)
    return [dict(zip(keys, values)) for values in itertools.product(*(GRID[k] for k in keys))]


def margins(table: dict[str, dict[str, tuple[float, float]]], suites: list[str], key: str) -> float:
    """The worst, over ``suites``, of the fusion ``key``'s nDCG@10 and Recall@10 above the best leg's."""
    worst = math.inf
    for s in suites:
        row = table[s]
        for m in (0, 1):
            worst = min(worst, row[key][m] - max(row[leg][m] for leg in LEGS))
    return worst


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dumps", help="folder of tune_fusion.py dumps (--mode both), one a suite")
    p.add_argument("--json", help="write the report here")
    args = p.parse_args(argv)
    data = {f.stem: arrays(json.loads(f.read_text())) for f in sorted(Path(args.dumps).glob("*.json"))}
    suites = sorted(data)
    grid = settings()
    table: dict[str, dict[str, tuple[float, float]]] = {s: {leg: metrics(data[s], leg_scores(data[s], leg)) for leg in LEGS}
                                                        for s in suites}
    print(f"{len(grid)} settings over {len(suites)} suites", file=sys.stderr)
    for i, setting in enumerate(grid):
        for s in suites:
            table[s][f"g{i}"] = metrics(data[s], fused(data[s], setting))
    report: dict = {"suites": {}, "grid": GRID}
    for held in suites + ["(all)"]:
        train = [s for s in suites if s != held and s not in HELD_OUT]
        best = max(range(len(grid)), key=lambda i: (margins(table, train, f"g{i}"), -i))
        if held == "(all)":
            report["shipped"] = {**grid[best], "train_worst_margin": round(margins(table, train, f"g{best}"), 4)}
            continue
        row = table[held]
        entry = {leg: [round(v, 4) for v in row[leg]] for leg in LEGS}
        entry["fused"] = [round(v, 4) for v in row[f"g{best}"]]
        entry["setting"] = grid[best]
        entry["margin"] = round(margins(table, [held], f"g{best}"), 4)
        report["suites"][held] = entry
    print(f"{'suite':12} {'lexical':>14} {'static':>14} {'dense':>14} {'tx hybrid':>14} {'fused (LOSO)':>14} margin")
    for s, e in report["suites"].items():
        cells = " ".join(f"{e[k][0]:.3f}/{e[k][1]:.3f}".rjust(14) for k in (*LEGS, "fused"))
        print(f"{s:12} {cells} {e['margin']:+.4f}")
    print("shipped:", report["shipped"])
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
