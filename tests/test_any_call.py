"""Every call of the Python API, with values of every type: a result or a ``JupymemError``.

Random calls (a fixed seed, so a failure repeats) mixing FTS syntax, lone surrogates,
control and invisible characters, secrets, ids, huge text and values that are not text at
all, against a project whose encoders are loaded: the cases found this way (a lone
surrogate reaching the encoders' tokenizers; search(None) and similar(42) raising
Python's own errors) were all past every hand-written list of weird inputs, which ran
without the dense leg.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

import jupymem
from jupymem.errors import JupymemError

ATOMS = ['"', "*", "NEAR(", ")", "AND", "col:", "\x00", "\ufeff", "\u202e", "\U000e0041", "\ud800", "\udcff", "é",
         "ß", "İ", "\U0001f642", "\n", "\t", " ", "x" * 3000, "churn", "table", "[m-0123456789ab]", "ghp_" + "a" * 36,
         "\u200b" * 5, "\x1b[31m", "<project_memory>", "</applicable_lessons>", "../../etc/passwd", "?"]


def text(rng: random.Random) -> str:
    return "".join(rng.choice(ATOMS) if rng.random() < 0.4 else rng.choice("abc xyz 123 ")
                   for _ in range(rng.randint(0, 20)))


def value(rng: random.Random) -> Any:
    return rng.choice([text(rng), None, 0, -1, 10**30, 1.5, float("nan"), [], {}, ["a"], True, b"\xff",
                       "note", "fact", "constraint"])


OPS = ["remember", "remember_many", "search", "search", "explain", "applicable", "context", "similar", "supersede",
       "retire", "confirm", "get", "history", "import"]


def call(p: jupymem.Project, rng: random.Random, op: str) -> None:
    ids = [m.id for m in p.list()]
    mid = rng.choice([*ids, text(rng), "m-000000000000", None])
    if op == "remember":
        p.remember(rng.choice([text(rng), value(rng)]), kind=rng.choice(["note", value(rng)]),
                   topic=rng.choice([None, value(rng)]), private=rng.choice([False, value(rng)]))
    elif op == "remember_many":
        p.remember_many([rng.choice([{"statement": text(rng), "kind": value(rng)}, {"statement": value(rng)}, {},
                                     value(rng), {"statement": "Plain words here.", "kind": "note", "x": value(rng)}])
                         for _ in range(rng.randint(0, 4))])
    elif op == "search":
        p.search(rng.choice([text(rng), value(rng)]), limit=rng.choice([1, 0, -5, 10**9, 5]),
                 kinds=rng.choice([None, [value(rng)], ["note"], value(rng)]), mode=rng.choice(["hybrid", "lexical",
                                                                                                 "fts", value(rng)]))
    elif op == "explain":
        p.explain(text(rng), count=rng.choice([1, 5]))
    elif op == "applicable":
        p.applicable(rng.choice([text(rng), value(rng)]))
    elif op == "context":
        assert jupymem.context(text(rng), p.root).startswith("<project_memory")
    elif op == "similar":
        p.similar(rng.choice([text(rng), value(rng)]))
    elif op == "supersede":
        p.supersede(mid, rng.choice([text(rng), value(rng)]), kind=rng.choice([None, value(rng)]))
    elif op == "retire":
        p.retire(mid, rng.choice([text(rng), value(rng)]))
    elif op == "confirm":
        p.confirm(mid)
    elif op == "get":
        p.get(mid)
    elif op == "history":
        p.history(mid)
    else:
        raw = rng.choice(["\ufffe", json.dumps({"statement": text(rng), "kind": "note"}), "{", "[]", "null",
                          json.dumps([{"statement": value(rng)}], default=str)])
        p.import_(io.StringIO(raw))


@pytest.mark.usefixtures("transformer_encoder")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_call_gives_a_result_or_a_clear_error(repo: Path, seed: int) -> None:
    p = jupymem.init(repo)
    p.remember_many({"statement": f"Table t{i} is partitioned by day and owned by team {i % 3}.", "kind": "fact"}
                    for i in range(30))
    assert p.prepare_dense(timeout=600).tier == "transformer"
    rng = random.Random(seed)
    unexpected = []
    for i in range(250):
        op = rng.choice(OPS)
        try:
            call(p, rng, op)
        except JupymemError:
            pass
        except Exception as err:  # noqa: BLE001 - what this test is for
            unexpected.append(f"call {i} ({op}): {type(err).__name__}: {err}")
    assert not unexpected, unexpected[:5]
    assert p.verify().ok
