"""Recall@5 of one category of a gold suite, per method (abstentions count as misses).

    python benchmarks/paraphrase_recall.py [--suite benchmarks/suites/own/paraphrase.gold.jsonl] [--category paraphrase]

The paraphrase suite's ``paraphrase`` questions share no content word with their memory
(``suites/own/check_overlap.py``); issue 18's target for them is Recall@5 >= 0.80.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jupymem.measure import evaluate

HERE = Path(__file__).resolve().parent


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", default=str(HERE / "suites" / "own" / "paraphrase.gold.jsonl"))
    p.add_argument("--category", default="paraphrase")
    p.add_argument("--methods", default="fts,bm25,static,transformer,dense")
    a = p.parse_args()
    suite = evaluate.load_suite(a.suite)
    suite.queries = [q for q in suite.queries if q.category == a.category]
    details: list[dict] = []
    evaluate.run_suite(suite, methods=tuple(a.methods.split(",")), details=details)
    out = {}
    for method in a.methods.split(","):
        rows = [d for d in details if d["method"] == method and d["relevant"]]
        hit = sum(bool(set(d["ranked"][:5]) & set(d["relevant"])) for d in rows)
        out[method] = {"questions": len(rows), "recall@5": round(hit / len(rows), 4) if rows else None}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
