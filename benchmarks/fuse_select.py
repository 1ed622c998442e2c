"""A fusion chosen per query from what the query itself shows, fitted leave one suite out.

    python benchmarks/tune_fusion.py dump --suite FILE --out DIR/NAME.json --mode both --cache DIR
    python benchmarks/fuse_select.py DIR [--queries NAME=SUITE ...] [--json report.json]

Each dump (``tune_fusion.py dump --mode both``) holds, per query, every candidate either leg
saw: its BM25, the transformer's cosine and the static model's, and the query's dense
background in both tiers and its own IDF weight (and its text; for dumps made before it
was recorded, ``--queries NAME=SUITE`` reads it from the suite the dump ``NAME.json`` was
made from). From those this replays, per suite and without any abstention (the verdict is
``verdict_suites.py``'s business), every leg a person can get:

* ``lexical``: BM25 alone;
* ``static``: the static tier's hybrid, ``0.45 bm25/best + 0.55 cosine``;
* ``dense``: the transformer's cosine alone;
* ``transformer``: the transformer's hybrid before the per-query words weight (``cos +
  0.05 bm25/best + 0.3 covered^2``),

and each fusion of ``fuse_forms.py`` over a grid of its settings. A form's setting is chosen
leave one suite out, by one of two rules, and only its figures on the suite left out are
reported for that suite (WikiQA and SQuAD 2.0 are never in a training set):

* ``worst``: the setting whose worst margin over the training suites (its nDCG@10 or
  Recall@10, the worse, minus the best leg's) is largest, ties by the mean margin;
* ``guarded``: the setting whose worst difference from the transformer's hybrid over the
  training suites is largest (a replacement must not lose what the shipped fusion finds on
  any suite it was fitted on), ties by the mean margin.

The ``names`` form under ``guarded`` is what search ships (``retrieve.words_weight``): the
setting it chooses on every fitted suite must be ``fuse_forms.SHIPPED`` (checked here). The
other forms and the ``worst`` rule are reported beside it; the README has the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuse_forms  # noqa: E402

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


def best_leg(row: dict[str, tuple[float, float]], m: int, legs: tuple[str, ...] = LEGS) -> float:
    return max(row[leg][m] for leg in legs)


def margin(row: dict[str, tuple[float, float]], got: tuple[float, float], legs: tuple[str, ...] = LEGS) -> float:
    """``got``'s nDCG@10 or Recall@10 (the worse) minus the best of ``legs``'."""
    return min(got[m] - best_leg(row, m, legs) for m in (0, 1))


def versus(row: dict[str, tuple[float, float]], got: tuple[float, float], leg: str) -> float:
    return min(got[m] - row[leg][m] for m in (0, 1))


def objective(rule: str, legs: dict, figures: list[dict], train: list[str], i: int) -> tuple:
    worst = [margin(legs[s], figures[i][s]) for s in train]
    mean = sum(worst) / len(worst)
    if rule == "guarded":
        return (min(versus(legs[s], figures[i][s], "transformer") for s in train), mean)
    return (min(worst), mean)


def choose(rule: str, legs: dict, figures: list[dict], train: list[str]) -> int:
    return max(range(len(figures)), key=lambda i: (objective(rule, legs, figures, train, i), -i))


def read_queries(pairs: list[str]) -> dict[str, dict[str, str]]:
    """NAME=SUITE pairs -> {NAME: {query id: text}} (ids repeat across suites)."""
    out: dict[str, dict[str, str]] = {}
    for pair in pairs:
        name, _, path = pair.partition("=")
        texts = out.setdefault(name, {})
        for line in Path(path).read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if "query" in row:
                texts[row["id"]] = row["query"]
    return out


def load(folder: str, pairs: list[str]) -> dict[str, dict[str, np.ndarray]]:
    queries = read_queries(pairs)
    data = {}
    for f in sorted(Path(folder).glob("*.json")):
        rows = [r for r in json.loads(f.read_text()) if r["relevant"]]
        texts = [r.get("query") or queries.get(f.stem, {}).get(r["id"]) for r in rows]
        if any(t is None for t in texts):
            raise SystemExit(f"{f.name}: no query text; pass --queries {f.stem}=SUITE")
        a = arrays(rows)
        fuse_forms.add_query_features(a, texts)
        data[f.stem] = a
    return data


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dumps", help="folder of tune_fusion.py dumps (--mode both), one a suite")
    p.add_argument("--queries", nargs="*", default=[], metavar="NAME=SUITE",
                   help="the suite a dump NAME.json was made from, for its query texts")
    p.add_argument("--forms", default=",".join(fuse_forms.FORMS), help="comma-separated forms to replay")
    p.add_argument("--json", help="write the report here")
    args = p.parse_args(argv)
    data = load(args.dumps, args.queries)
    suites = sorted(data)
    legs = {s: {leg: metrics(data[s], leg_scores(data[s], leg)) for leg in LEGS} for s in suites}
    report: dict = {"legs": {s: {k: [round(x, 4) for x in v] for k, v in legs[s].items()} for s in suites}, "forms": {}}
    for name in args.forms.split(","):
        form, grid = fuse_forms.FORMS[name]
        print(f"{name}: {len(grid)} settings over {len(suites)} suites", file=sys.stderr)
        figures = [{s: metrics(data[s], form(data[s], setting)) for s in suites} for setting in grid]
        for rule in ("worst", "guarded"):
            entry: dict = {"suites": {}}
            for held in suites:
                i = choose(rule, legs, figures, [s for s in suites if s != held and s not in HELD_OUT])
                got = figures[i][held]
                entry["suites"][held] = {
                    "figures": [round(x, 4) for x in got], "setting": grid[i],
                    "margin": round(margin(legs[held], got, ("lexical", "static", "dense")), 4),
                    "margin_all": round(margin(legs[held], got), 4),
                    "vs_transformer": round(versus(legs[held], got, "transformer"), 4),
                }
            fitted = [s for s in suites if s not in HELD_OUT]
            entry["all_fitted"] = grid[choose(rule, legs, figures, fitted)]
            entry["worst_margin"] = min(e["margin"] for e in entry["suites"].values())
            entry["worst_vs_transformer"] = min(e["vs_transformer"] for e in entry["suites"].values())
            report["forms"][f"{name}/{rule}"] = entry
    print(f"{'suite':11} {'lexical':>12} {'static':>12} {'dense':>12} {'tx hybrid':>12}  margin")
    for s in suites:
        row = legs[s]
        own = margin(row, row["transformer"], ("lexical", "static", "dense"))
        print(f"{s:11} " + " ".join(f"{row[k][0]:.3f}/{row[k][1]:.3f}".rjust(12) for k in LEGS) + f"  {own:+.4f}")
    for key, entry in report["forms"].items():
        print(f"\n{key}: held-out worst margin {entry['worst_margin']:+.4f} (against the three legs), "
              f"worst against the transformer's hybrid {entry['worst_vs_transformer']:+.4f}; "
              f"on every fitted suite: {entry['all_fitted']}")
        for s, e in entry["suites"].items():
            print(f"  {s:11} {e['figures'][0]:.3f}/{e['figures'][1]:.3f}  margin {e['margin']:+.4f}  "
                  f"vs tx hybrid {e['vs_transformer']:+.4f}  {e['setting']}")
    shipped = report["forms"].get("names/guarded", {}).get("all_fitted")
    if shipped is not None and shipped != fuse_forms.SHIPPED:
        print(f"\nsearch ships {fuse_forms.SHIPPED}, the guarded rule chooses {shipped}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
