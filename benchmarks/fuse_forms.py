"""The fusions ``fuse_select.py`` chooses among, each a function of a suite's arrays and a setting.

Every form sees only what a query shows before its answer is known: the candidates' BM25,
both tiers' cosines and backgrounds, the query's own IDF weight, and the query's text.

* ``peak``: the per-query fusion tried first (issue 18): a lexical weight that moves with how
  much of the question the best lexical candidate covers and how far the transformer's best
  stands above its fifth, each cosine over the query's own range.
* ``rrf``: reciprocal-rank fusion of the three legs (BM25, the static cosine, the
  transformer's cosine), each leg weighted: robust to each leg's scale.
* ``zsum``: the three legs' scores as z-scores over the query's candidates, summed with
  weights, plus the covered share of the question.
* ``select``: per query, the ranking of whichever of the transformer's hybrid and the static
  hybrid is surer of its best (its best's z-score over its candidates), with a bias.
* ``names``: the transformer's fusion as shipped before, with the words' weight raised per
  query by ``retrieve.words_weight``: how far the lexical best stands above its runner-up,
  and the share of capitalised words past the first (``retrieve.names_share``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from jupymem.retrieval import retrieve

Arrays = dict[str, np.ndarray]


def add_query_features(a: Arrays, queries: list[str]) -> None:
    """What the query's text and its candidates show before its answer is known."""
    a["names"] = np.array([retrieve.names_share(q[: retrieve.MAX_QUERY_CHARS]) for q in queries])
    lexical = np.sort(np.where(a["bm25"] > 0, a["bm25"], 0.0), axis=1)[:, ::-1]
    second = lexical[:, 1] if lexical.shape[1] > 1 else np.zeros(len(lexical))
    a["lead"] = np.where(lexical[:, 0] > 0, 1.0 - second / np.where(lexical[:, 0] > 0, lexical[:, 0], 1.0), 1.0)
    tx = np.where(a["has_tx"], a["tx"], -np.inf)
    st = np.where(a["has_st"], a["st"], -np.inf)
    a["rank_bm25"] = _ranks(np.where(a["bm25"] > 0, a["bm25"], -np.inf))
    a["rank_tx"] = _ranks(tx)
    a["rank_st"] = _ranks(st)
    a["z_bm25"] = _zscores(a["bm25"], a["bm25"] > 0)
    a["z_tx"] = _zscores(a["tx"], a["has_tx"])
    a["z_st"] = _zscores(a["st"], a["has_st"])


def _ranks(score: np.ndarray) -> np.ndarray:
    """Each candidate's 1-based rank in its leg; inf where the leg did not see it."""
    order = np.argsort(-score, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1, score.shape[1] + 1), score.shape), axis=1)
    return np.where(score > -np.inf, ranks.astype(float), np.inf)


def _zscores(x: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Per query, over the candidates the leg saw; the others half a deviation below its least."""
    n = np.maximum(seen.sum(axis=1, keepdims=True), 1)
    mean = np.where(seen, x, 0.0).sum(axis=1, keepdims=True) / n
    sd = np.sqrt(np.where(seen, (x - mean) ** 2, 0.0).sum(axis=1, keepdims=True) / n) + 1e-9
    z = (x - mean) / sd
    least = np.where(seen, z, np.inf).min(axis=1, keepdims=True)
    return np.where(seen, z, np.where(np.isfinite(least), least, 0.0) - 0.5)


def _gate(a: Arrays, score: np.ndarray) -> np.ndarray:
    """Search's own admission: a dense-only candidate enters above the query's background."""
    ok = a["has_tx"] & ((a["bm25"] > 0) | (a["tx"] - a["tx_bg"][:, None] >= 0))
    return np.where(ok, score, -np.inf)


def _transformer(a: Arrays, extra: np.ndarray | float = 0.0) -> np.ndarray:
    """``retrieve._transformer_score`` over the arrays, ``extra`` per query."""
    lexical = a["bm25"] > 0
    extra = np.asarray(extra, dtype=float).reshape(-1, 1) if np.ndim(extra) else extra
    bonus = (retrieve.TX_BEST_WEIGHT + extra) * a["norm"] + retrieve.TX_COVER_WEIGHT * a["cover"] ** retrieve.TX_COVER_POWER
    return _gate(a, np.maximum(a["tx"], 0) + np.where(lexical, bonus, 0.0))


def peak(a: Arrays, p: dict) -> np.ndarray:
    lam = np.clip(p["a"] + p["b"] * a["best_cover"] - p["c"] * a["peak"], 0.0, 1.0)[:, None]
    lexical = a["bm25"] > 0
    dense = p["mu"] * a["txn"] + (1 - p["mu"]) * a["stn"]
    return _gate(a, (1 - lam) * dense + lam * a["norm"] + p["delta"] * np.where(lexical, a["cover"] ** 2, 0))


def rrf(a: Arrays, p: dict) -> np.ndarray:
    k = p["k"]
    return _gate(a, 1 / (k + a["rank_tx"]) + p["lex"] / (k + a["rank_bm25"]) + p["st"] / (k + a["rank_st"]))


def zsum(a: Arrays, p: dict) -> np.ndarray:
    covered = np.where(a["bm25"] > 0, a["cover"], 0.0)
    return _gate(a, a["z_tx"] + p["lex"] * a["z_bm25"] + p["st"] * a["z_st"] + p["cover"] * covered)


def select(a: Arrays, p: dict) -> np.ndarray:
    tx = _transformer(a)
    lexical = a["bm25"] > 0
    ok = a["has_st"] & (lexical | (a["st"] - a["st_bg"][:, None] >= 0))
    static = np.where(ok, 0.45 * a["norm"] + 0.55 * np.maximum(a["st"], 0), -np.inf)
    static_surer = _sureness(static) > _sureness(tx) + p["bias"]
    return np.where(static_surer[:, None], static, tx)


def _sureness(score: np.ndarray) -> np.ndarray:
    """How far a ranking's best stands above its candidates' mean, in deviations."""
    seen = score > -np.inf
    z = _zscores(np.where(seen, score, 0.0), seen)
    return np.where(seen, z, -np.inf).max(axis=1)


def names(a: Arrays, p: dict) -> np.ndarray:
    extra = np.clip(p["base"] + p["lead"] * a["lead"] + p["names"] * a["names"], 0.0, 1.0)
    return _transformer(a, extra)


def _grid(**axes: tuple) -> list[dict]:
    keys = list(axes)
    return [dict(zip(keys, values)) for values in itertools.product(*(axes[k] for k in keys))]


FORMS: dict[str, tuple[Callable[[Arrays, dict], np.ndarray], list[dict]]] = {
    "peak": (peak, _grid(a=(0.0, 0.2, 0.4, 0.6), b=(0.0, 0.2, 0.4, 0.6), c=(0.0, 2.0, 4.0, 8.0),
                         mu=(1.0, 0.7, 0.4), delta=(0.0, 0.15, 0.3))),
    "rrf": (rrf, _grid(k=(1, 5, 20, 60), lex=(0.0, 0.2, 0.4, 0.6, 0.8, 1.0), st=(0.0, 0.2, 0.4, 0.6, 1.0))),
    "zsum": (zsum, _grid(lex=(0.0, 0.1, 0.2, 0.3, 0.5, 1.0), st=(0.0, 0.1, 0.2, 0.3), cover=(0.0, 0.5, 1.0, 2.0))),
    "select": (select, _grid(bias=(-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.0, 4.0))),
    "names": (names, _grid(base=(-0.3, -0.2, -0.1, 0.0, 0.1, 0.2), lead=(0.0, 0.25, 0.5, 1.0),
                           names=(0.0, 0.5, 1.0, 2.0, 3.0))),
}
# The setting search ships (``retrieve.words_weight``); fuse_select.py checks that it is
# the one the guarded rule chooses on every fitted suite.
SHIPPED = {"base": retrieve.TX_WORDS_BASE, "lead": retrieve.TX_WORDS_LEAD, "names": retrieve.TX_WORDS_NAMES}
