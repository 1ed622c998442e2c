#!/usr/bin/env python3
"""Check the overlap rule of paraphrase.gold.jsonl (standard library only).

A query of category ``paraphrase`` must share no content word with its relevant
memory. Both texts are lowercased and split into runs of letters and digits; a
crude stem strips a possessive 's and then one of the endings -ing, -ed, -es, -s;
stopwords (function words and question words) are dropped. Named entities are
content words like any other. Exit status 1, with every offending pair listed,
if any paraphrase query breaks the rule.

    python check_overlap.py [paraphrase.gold.jsonl]
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

STOPWORDS = frozenset("""
a about above after again against all am an and any are aren as at be because been
before being below between both but by can cannot could couldn did didn do does doesn
doing don down during each either else ever every few for from further had hadn has
hasn have haven having he her here hers herself him himself his how i if in into is
isn it its itself just let may me might more most must mustn my myself neither no nor
not of off on once only or other ought our ours ourselves out over own same shall shan
she should shouldn so some such than that the their theirs them themselves then there
these they this those through to too under until up upon us very was wasn we were
weren what whatever when whenever where whereas wherever whether which while who whom
whose why will with within without won would wouldn yet you your yours yourself
yourselves s t d ll m o re ve y also
""".split())

# The one exception: q-linnet-para comes verbatim from an external report and says
# "project", which its memory also says ("Project Linnet"). It is kept as written and
# allowed that single word; every other paraphrase query must share nothing.
EXEMPT = {"q-linnet-para": frozenset({"project"})}

TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def stem(word: str) -> str:
    if word.endswith("'s"):
        word = word[:-2]
    word = word.replace("'", "")
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    out = set()
    for token in TOKEN.findall(text.lower()):
        if token.replace("'", "") in STOPWORDS or token.split("'")[0] in STOPWORDS:
            continue
        out.add(stem(token))
    return out - STOPWORDS


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("paraphrase.gold.jsonl")
    memories, queries = {}, []
    with path.open(encoding="utf-8") as fp:
        for line in fp:
            if line.strip():
                row = json.loads(line)
                if row["type"] == "memory":
                    memories[row["id"]] = row["text"]
                elif row.get("category") == "paraphrase":
                    queries.append(row)
    bad = 0
    for q in queries:
        if len(q["relevant"]) != 1 or q["relevant"][0] not in memories:
            print(f"FAIL {q['id']}: a paraphrase query needs exactly one known relevant memory")
            bad += 1
            continue
        shared = content_words(q["query"]) & content_words(memories[q["relevant"][0]])
        if shared and shared <= EXEMPT.get(q["id"], frozenset()):
            print(f"EXEMPT {q['id']}: shares {sorted(shared)} (documented exception)")
            continue
        if shared:
            print(f"FAIL {q['id']}: shares {sorted(shared)}\n  Q: {q['query']}\n  M: {memories[q['relevant'][0]]}")
            bad += 1
    print(f"{len(queries)} paraphrase queries checked, {bad} failing")
    if bad:
        print("OVERLAP RULE BROKEN", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
