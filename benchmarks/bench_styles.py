"""The same questions asked as other people and other suites ask them.

    python benchmarks/bench_styles.py                      # gold, small projects, SciFact
    python benchmarks/bench_styles.py --suites gold,small --json

Our suites are written with care: names capitalised, whole questions. People type into a
search box in lower case, and public retrieval suites ask in other shapes: titles in Title
Case (NFCorpus), a few keywords, a question around a claim. Each style rewrites every query
of a suite (its cross-scope negatives too, made from the rewritten queries) and scores it
through ``jupymem.measure.evaluate.run_suite``, the path ``jupymem eval`` takes: nDCG@10 of the
three methods, false abstention on answerable queries and correct abstention on the others.
A style that moves a figure far from "as written" is a weakness a held-apart suite would
find. Nothing here is fitted or tuned on.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITES = {
    "gold": ROOT / "tests" / "gold" / "notebook_memory.gold.jsonl",
    "small": ROOT / "tests" / "gold" / "small_projects.gold.jsonl",
    "scifact": ROOT.parent / "shared" / "data" / "scifact-train.gold.jsonl",
}
# Short words Title Case leaves in lower case.
_MINOR = frozenset("a an the of in on and or to for with by at is are from as".split())
KEYWORDS = 3  # a keyword query: this many of the query's rarest words


def title(text: str) -> str:
    words = text.rstrip(".?!").split()
    return " ".join(w if i and w.lower() in _MINOR else w[:1].upper() + w[1:] for i, w in enumerate(words))


def question(text: str) -> str:
    text = text.rstrip(".?! ")
    return "Is it true that " + text[:1].lower() + text[1:] + "?"


def keywords_by(df: Counter[str]) -> Callable[[str], str]:
    from jupymem.retrieval import lexical

    def keywords(text: str) -> str:
        words = [w for w in dict.fromkeys(re.findall(r"[\w-]+", text))
                 if len(w) > 2 and lexical.fold(w) not in lexical.STOPWORDS]
        words.sort(key=lambda w: (df.get(lexical.fold(w), 0), w))
        return " ".join(words[:KEYWORDS]) or text

    return keywords


def styles(suite) -> dict[str, Callable[[str], str]]:  # noqa: ANN001 (evaluate.Suite)
    from jupymem.retrieval import lexical

    df: Counter[str] = Counter()
    for memories in suite.memories.values():
        for m in memories:
            df.update(set(lexical.tokens(m["text"])))
    return {"as written": lambda t: t, "lower case": str.lower, "Title Case": title,
            "keywords": keywords_by(df), "claim as a question": question}


def measure(name: str, path: Path, only: list[str] | None) -> list[dict]:
    from jupymem.config import Settings
    from jupymem.measure.evaluate import load_suite, run_suite

    suite = load_suite(path)
    negatives = None if name == "scifact" else "cross-scope"
    rows = []
    for style, rewrite in styles(suite).items():
        if only and style not in only:
            continue
        if style == "claim as a question" and name != "scifact":
            continue  # our suites ask questions already
        asked = [dataclasses.replace(q, query=rewrite(q.query)) for q in suite.queries]
        styled = dataclasses.replace(suite, queries=asked)
        report = run_suite(styled, encoder=Settings.from_env().encoder, negatives=negatives)
        m = report["methods"]
        rows.append({
            "suite": name, "style": style,
            "ndcg@10": {k: m[k]["ndcg@10"] for k in m},
            "false_abstain": {k: m[k]["false_abstain"] for k in ("bm25", "hybrid")},
            "correct_abstain": {k: m[k]["abstain_accuracy"] for k in ("bm25", "hybrid")},
        })
        print(f"{name}: {style} done", file=sys.stderr)
    return rows


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suites", default=",".join(SUITES), help="which of gold, small, scifact (default: all found)")
    p.add_argument("--styles", help="comma-separated style names (default: all)")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    only = [s.strip() for s in a.styles.split(",")] if a.styles else None
    rows = []
    for name in (s.strip() for s in a.suites.split(",") if s.strip()):
        if SUITES[name].exists():
            rows += measure(name, SUITES[name], only)
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("| suite | style | nDCG@10 fts / lexical / hybrid | false abstention lexical / hybrid "
          "| correct abstention lexical / hybrid |")
    print("|---|---|---|---|---|")
    for r in rows:
        n, fa, ca = r["ndcg@10"], r["false_abstain"], r["correct_abstain"]
        print(f"| {r['suite']} | {r['style']} | {n['fts']:.3f} / {n['bm25']:.3f} / {n['hybrid']:.3f} "
              f"| {_pct(fa['bm25'])} / {_pct(fa['hybrid'])} | {_pct(ca['bm25'])} / {_pct(ca['hybrid'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
