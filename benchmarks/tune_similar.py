"""Choose how close a new statement must be to an active memory to be named a near-duplicate.

    python benchmarks/tune_similar.py dump --out similar.json
    python benchmarks/tune_similar.py tune similar.json [--split tune|report|all]

The suite: ``tests/gold/near_duplicates.jsonl`` holds 79 statements a person might
record later about a gold memory (every fourth one of ``tests/gold/notebook_memory.gold.jsonl``):
63 restatements in other words and 16 updates (the same subject with a new value, what
``--supersedes`` is for). Each is recorded into a project holding all 315 gold memories
of its scope, and must name its original (a positive pair) and nothing else. Then
every gold memory is recorded again into its project *as if new* (its own row left out):
each is a different statement, so anything it names is a false positive; these include
the hard cases, memories on the same subject that say different things (the gold
queries with several relevant memories). About one record in five is a near-duplicate,
the rate audits of assistant memories found.

``dump`` records, for every statement, what ``retrieval/similar.py`` sees of each
candidate (both lexical shares and the cosine of the bundled model); ``tune`` replays
the score for a grid of weights and thresholds, in both modes (fused, and lexical alone
as when the encoder is not loaded). Statements are split by a hash of their id, as
``tune_fusion.py`` does: one third chooses, the other two thirds are only reported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "gold" / "notebook_memory.gold.jsonl"
DUPLICATES = ROOT / "tests" / "gold" / "near_duplicates.jsonl"
LIMIT = 3


def split_of(item_id: str) -> str:
    return "tune" if int(hashlib.sha1(item_id.encode()).hexdigest(), 16) % 3 == 0 else "report"


def dump(out: str, encoder: str | None) -> None:
    from jupymem.config import Settings
    from jupymem.core.opening import close_all, init_project
    from jupymem.measure.evaluate import _make_repo
    from jupymem.retrieval import similar

    rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    gold = [r for r in rows if r["type"] == "memory"]
    dups = [json.loads(line) for line in DUPLICATES.read_text(encoding="utf-8").splitlines() if line.strip()]
    base = Path(tempfile.mkdtemp(prefix="jupymem-similar-"))
    settings = Settings(home=base / "home", encoder=encoder, language="source")
    items = []
    for scope in sorted({m["scope"] for m in gold}):
        project = init_project(_make_repo(base / scope), settings)
        members = [m for m in gold if m["scope"] == scope]
        got = project.remember_many({"statement": m["text"], "kind": m["kind"]} for m in members)
        gold_of = {g.id: m["id"] for m, g in zip(members, got)}
        own = {m["id"]: g.id for m, g in zip(members, got)}
        project.prepare_dense()
        rev = project.revision()
        leg = project.engine.dense_leg(rev)
        assert leg is not None, project.dense_status()
        n = project.engine.n_docs(rev)

        def features(text: str, exclude: set[str], project=project, n=n, leg=leg, gold_of=gold_of) -> list[list[object]]:
            found = similar.pairs(project.conn, text, n_docs=n, dense=leg, exclude=exclude)
            return [[gold_of[p.candidate.memory.id], p.statement_share, p.memory_share, p.cosine] for p in found]

        for d in dups:
            if d["of"] in own:
                items.append({"id": d["id"], "of": d["of"], "how": d["how"], "pairs": features(d["text"], set())})
        for m in members:
            items.append({"id": m["id"], "of": None, "how": "new", "pairs": features(m["text"], {own[m["id"]]})})
    close_all()
    Path(out).write_text(json.dumps(items))
    print(f"{len(items)} statements -> {out}")


def _lexical(a: float, b: float, how: str) -> float:
    if how == "harmonic":
        return 2 * a * b / (a + b) if a + b else 0.0
    if how == "min":
        return min(a, b)
    if how == "geometric":
        return (a * b) ** 0.5
    return max(a, b)


def score(pair: list, *, share: float | None, how: str) -> float:
    _, a, b, cos = pair
    lex = _lexical(a, b, how)
    return lex if share is None else share * lex + (1 - share) * max(0.0, cos)


def evaluate(items: list[dict], *, share: float | None, how: str, threshold: float) -> dict[str, float]:
    tp = fp = found = 0
    positives = [i for i in items if i["of"]]
    for item in items:
        named = sorted(
            ((score(p, share=share, how=how), p[0]) for p in item["pairs"]), reverse=True
        )
        named = [g for s, g in named if s >= threshold][:LIMIT]
        for g in named:
            if g == item["of"]:
                tp += 1
            else:
                fp += 1
        found += item["of"] in named if item["of"] else 0
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": found / len(positives) if positives else 0.0,
        "false_named": fp,
        "statements": len(items),
    }


def tune(path: str, split: str) -> None:
    items = json.loads(Path(path).read_text())
    if split != "all":
        items = [i for i in items if split_of(i["id"]) == split]
    print(f"{split}: {sum(1 for i in items if i['of'])} near-duplicates, {sum(1 for i in items if not i['of'])} new")
    for share in (None, 0.3, 0.4, 0.5, 0.6, 0.7):
        for how in ("harmonic", "min", "geometric"):
            best = None
            for t in [x / 100 for x in range(20, 91, 5)]:
                r = evaluate(items, share=share, how=how, threshold=t)
                f1 = 2 * r["precision"] * r["recall"] / (r["precision"] + r["recall"] or 1)
                if best is None or f1 > best[0]:
                    best = (f1, t, r)
            f1, t, r = best
            mode = "lexical" if share is None else f"fused {share}"
            print(f"  {mode:<11} {how:<9} best F1 {f1:.3f} at {t:.2f}: precision {r['precision']:.3f} "
                  f"recall {r['recall']:.3f} false {r['false_named']}")


def table(path: str, split: str, share: float | None, how: str) -> None:
    items = json.loads(Path(path).read_text())
    if split != "all":
        items = [i for i in items if split_of(i["id"]) == split]
    mode = "lexical" if share is None else f"fused {share}"
    print(f"{split}, {mode}, {how}")
    print("| threshold | precision | recall | restatements | updates | false named |")
    print("|---|---|---|---|---|---|")
    for t in [x / 100 for x in range(30, 81, 5)]:
        r = evaluate(items, share=share, how=how, threshold=t)
        by = {
            how_: evaluate([i for i in items if i["how"] in (how_, "new")], share=share, how=how, threshold=t)
            for how_ in ("restate", "update")
        }
        print(f"| {t:.2f} | {r['precision']:.3f} | {r['recall']:.3f} | {by['restate']['recall']:.3f} | "
              f"{by['update']['recall']:.3f} | {r['false_named']} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--out", required=True)
    d.add_argument("--encoder", default=None, help="JUPYMEM_ENCODER (default: the bundled model)")
    t = sub.add_parser("tune")
    t.add_argument("features")
    t.add_argument("--split", choices=("tune", "report", "all"), default="tune")
    tb = sub.add_parser("table")
    tb.add_argument("features")
    tb.add_argument("--split", choices=("tune", "report", "all"), default="report")
    tb.add_argument("--share", type=float, default=None, help="lexical share of the fused score (none: lexical alone)")
    tb.add_argument("--how", default="harmonic")
    args = parser.parse_args(argv)
    if args.command == "dump":
        dump(args.out, args.encoder)
    elif args.command == "tune":
        tune(args.features, args.split)
    else:
        table(args.features, args.split, args.share, args.how)
    return 0


if __name__ == "__main__":
    sys.exit(main())
