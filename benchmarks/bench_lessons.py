"""Lessons delivered: does the context an assistant receives carry the lesson a request needs?

    python benchmarks/bench_lessons.py [--suite benchmarks/suites/own/lessons.gold.jsonl] [--encoder E]

The suite (``benchmarks/suites/own/lessons.gold.jsonl``, written by hand and never used
to fit or tune anything): 46 lessons of the kind a data scientist records ("Join sales to
customers on customer_id; email is not unique across accounts.") among 855 other memories
of every kind, and later requests phrased as a person asks an assistant for code ("write
the pandas code to merge the orders table with the client table"), one per lesson, plus
20 requests no lesson concerns. Each request's context is built exactly as every
assistant gets it (``jupymem.context``: the block, then what is retrieved for the
prompt) in a project whose encoders are loaded and whose memories are embedded (a kernel
after its first searches). Reported: the share of requests whose context carries the
needed lesson, where it came from (block or retrieved), the context's bytes against the
cap, and for the requests no lesson concerns, how many lessons were handed over anyway.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "benchmarks" / "suites" / "own" / "lessons.gold.jsonl"


def run(suite_path: Path, encoder: str | None) -> dict:
    from jupymem.assistants import inject
    from jupymem.config import Settings
    from jupymem.core.block import memory_line
    from jupymem.core.opening import close_all
    from jupymem.measure.evaluate import load_suite, open_scope

    suite = load_suite(suite_path)
    base = Path(tempfile.mkdtemp(prefix="jupymem-lessons-"))
    settings = Settings(home=base / "home", encoder=encoder, language="source")
    scope = next(iter(suite.memories))
    project, ids = open_scope(suite, scope, base, settings)
    project.prepare_lexical()
    status = project.prepare_dense(timeout=600)
    by_id = {m.id: m for m in project.list()}
    lessons = {ids[r] for q in suite.queries for r in q.relevant}
    rows, misses = [], []
    for q in suite.queries:
        block = project.block()
        retrieved = inject.retrieved_section(project, block, q.query)
        context = "\n".join(p for p in (block.text, retrieved) if p)
        needed = [ids[r] for r in q.relevant]
        where = []
        for mid in needed:
            line = memory_line(by_id[mid])
            where.append("block" if line in block.text else "retrieved" if _shows(retrieved, mid) else None)
        handed = sum(1 for mid in lessons if _shows(retrieved, mid))
        rows.append({"id": q.id, "needed": bool(needed), "where": where, "bytes": len(context.encode()),
                     "cap": block.cap, "lessons_retrieved": handed})
        if needed and not all(where):
            misses.append({"id": q.id, "request": q.query, "lesson": by_id[needed[0]].statement})
    close_all()
    asked = [r for r in rows if r["needed"]]
    none = [r for r in rows if not r["needed"]]
    delivered = [r for r in asked if all(r["where"])]
    return {
        "requests": len(asked), "delivered": len(delivered), "share": round(len(delivered) / max(1, len(asked)), 3),
        "from_block": sum(1 for r in asked if r["where"] and r["where"][0] == "block"),
        "from_retrieved": sum(1 for r in asked if r["where"] and r["where"][0] == "retrieved"),
        "context_bytes": {"p50": statistics.median(r["bytes"] for r in rows), "max": max(r["bytes"] for r in rows)},
        "block_cap": rows[0]["cap"] if rows else None,
        "unrelated_requests": len(none),
        "lessons_handed_to_unrelated": sum(r["lessons_retrieved"] for r in none),
        "dense": {k: getattr(status, k, None) for k in ("dense", "tier", "model")},
        "misses": misses,
    }


def _shows(retrieved: str, memory_id: str) -> bool:
    """Whether the retrieved sections show this memory: every line there ends with its id
    (``[id]``, or ``[id; ...]`` for a clear winner's full record), whatever its format."""
    return f"[{memory_id}]" in retrieved or f"[{memory_id};" in retrieved


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", type=Path, default=SUITE)
    p.add_argument("--encoder", help="a JUPYMEM_ENCODER value (default: both tiers, the transformer answering)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--margin", type=float, help="replace engine.LESSON_MARGIN (for choosing it)")
    a = p.parse_args(argv)
    if a.margin is not None:
        from jupymem.retrieval import engine

        engine.LESSON_MARGIN = a.margin
    r = run(a.suite, a.encoder)
    if a.json:
        print(json.dumps(r, indent=1))
        return 0
    print(f"lessons delivered: {r['delivered']} of {r['requests']} requests ({r['share']:.0%}); "
          f"{r['from_block']} in the block, {r['from_retrieved']} retrieved for the prompt")
    print(f"context bytes: p50 {r['context_bytes']['p50']}, max {r['context_bytes']['max']} (block cap {r['block_cap']})")
    print(f"requests no lesson concerns: {r['unrelated_requests']}, lessons handed to them: {r['lessons_handed_to_unrelated']}")
    print(f"dense leg: {r['dense']}")
    for m in r["misses"]:
        print(f"  missed {m['id']}: {m['request']!r} needs {m['lesson']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
