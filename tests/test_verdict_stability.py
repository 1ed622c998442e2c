"""A verdict does not move when unrelated memories are added.

Fifty-seven questions that memory cannot answer (the small-projects suite's swapped entities,
absent attributes and off-topic questions: all of six of its projects'), asked of those
projects at sizes from 3 to 1,000 memories (padded with the synthetic notes of
``measure.bench``); then 1, 6, 36 and 100 unrelated notes (another seed of the same
generator) are recorded, and every question is asked again. Whatever was below the answer
threshold stays below it: project size counts active memories only, no model boundary (the
small projects' models end at ``answerable.SMALL_PROJECT``) flips a verdict, and a note that
shares a word or two with a question does not become its answer. Real projects, the default
search (the transformer tier) and the lexical leg, ``Project.search`` as every face.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import make_repo
from jupymem.config import Settings
from jupymem.core.opening import init_project
from jupymem.measure import bench
from jupymem.measure.evaluate import load_suite
from jupymem.retrieval import answerable

# eval: five projects up to 1,000 memories, each embedded by the transformer and grown four times.
pytestmark = [pytest.mark.eval, pytest.mark.usefixtures("transformer_encoder")]

SMALL = Path(__file__).resolve().parent / "gold" / "small_projects.gold.jsonl"
# (scope, the size its project is padded to; 0: as it is)
PROJECTS = (("pricing", 0), ("timeseries", 0), ("energy", 0), ("llmeval", 60), ("people", 300), ("etl", 1000))
ADDED = (1, 5, 30, 64)  # recorded one batch after another: 1, 6, 36, 100 unrelated notes
MODE = "hybrid"  # the default search (the transformer tier). Lexical mode cannot tell a note that
# shares one word of a question from a paraphrase of its answer, and is not held to this.


def _top(project, query: str) -> float:
    result = project.search(query, mode=MODE)
    shown = result.hits or result.closest
    return max((h.confidence for h in shown[: answerable.ANSWER_K]), default=0.0)


def _lifted(tmp_path: Path, scope: str, size: int, questions: list[str], own: list[str]) -> list[tuple]:
    project = init_project(make_repo(tmp_path / scope), Settings.from_env())
    project.remember_many({"statement": s, "kind": "fact"} for s in own + bench.corpus(max(0, size - len(own))))
    project.prepare_lexical()
    assert project.prepare_dense(timeout=600).tier == "transformer"
    before = {q: _top(project, q) for q in questions}
    unrelated = bench.corpus(sum(ADDED), seed=bench.SEED + 99)
    lifted = []
    done = 0
    for count in ADDED:
        project.remember_many({"statement": s, "kind": "note"} for s in unrelated[done : done + count])
        done += count
        project.prepare_lexical()
        project.prepare_dense(timeout=600)
        for q, was in before.items():
            now = _top(project, q)
            if was < answerable.ANSWER_AT <= now:
                lifted.append((scope, len(own) + max(0, size - len(own)), done, q, round(was, 3), round(now, 3)))
    return lifted


# A note that shares a word with an off-topic question ("how do I request a new laptop?",
# "how do I set up two-factor authentication for email?", "who organises the summer party?")
# lifted 3 of the 57 questions over the threshold until the verdict read them for a subject
# no memory mentions and for the person a "who" question asks for (reading.py, "alien" and
# "untyped"); "which changes does Tom Park review?" (a swapped name; "Lena Park reviews every
# change ...") was lifted by an unrelated note, "Ask Tom before changing region_type ...",
# 0.28 -> 0.56 with 100 notes, until the verdict read a name held in part (Tom without Park,
# while memory writes Park beside Lena: ``Reading.names_partial``).
def test_unrelated_memories_never_lift_an_unanswerable_question_over_the_threshold(tmp_path: Path) -> None:
    suite = load_suite(SMALL)
    asked = {scope: [q.query for q in suite.queries if q.scope == scope and not q.relevant] for scope, _ in PROJECTS}
    total = sum(map(len, asked.values()))
    assert total >= 50
    lifted = []
    for scope, size in PROJECTS:
        own = [m["text"] for m in suite.memories[scope]]
        lifted += _lifted(tmp_path, scope, size, asked[scope], own)
    which = sorted({(scope, q) for scope, _, _, q, _, _ in lifted})
    assert not lifted, f"{len(which)} of {total} questions lifted over the threshold: {which}"
