"""A teammate's copies cannot bury the memory that answers (``retrieval.repeats``).

Played as the insider: Mallory pushes sixty notes cut from one pattern, each repeating the
question ("Churn model retrained? Someone asked when the churn model is retrained, in
planning thread 7."). Each matches it closely, so before this they took every place of the
search and of the matches handed to assistants: the answer was not among them. Now at most two of one pattern keep their place;
the others follow the distinct hits, and none is dropped.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import jupymem
from hostile import Forger
from jupymem.retrieval import repeats, voices
from team import make_team
from test_applicable_lessons import OTHERS as LESSON_PROJECT_FACTS

QUESTION = "When is the churn model retrained?"
ANSWER = "The churn model is retrained on the first day of every month."
OTHERS = [s for s in LESSON_PROJECT_FACTS if s != ANSWER]  # the same project, the answer recorded apart
COPIES = 60


def copy(i: int) -> str:
    # Each repeats the question's words, so BM25 ranks all sixty above the answer.
    return f"Churn model retrained? Someone asked when the churn model is retrained, in planning thread {i}."


def alice_shares(tmp_path: Path, answer: str) -> tuple[Any, Any, Any]:
    """Alice, Mallory and Bob; Alice has shared ``answer`` among the project's facts."""
    alice, mallory, bob = make_team(tmp_path, ("Alice", "alice@example.com"), ("Mallory", "mallory@example.com"),
                                    ("Bob", "bob@example.com"))
    alice.ok("share")
    alice.remember(answer, "--kind", "fact")
    for statement in OTHERS:
        alice.remember(statement, "--kind", "fact")
    alice.commit("alice: what we know")
    alice.push()
    return alice, mallory, bob


def test_copies_pulled_from_a_teammate_do_not_bury_the_answer(tmp_path: Path) -> None:
    _, mallory, bob = alice_shares(tmp_path, ANSWER)
    mallory.pull()
    flood = Forger(mallory.path)
    for i in range(COPIES):
        flood.record(copy(i), "note")
    flood.write()
    mallory.commit("mallory: planning thread")
    mallory.push()
    bob.pull()

    first = bob.json("search", QUESTION, "--limit", "5")
    statements = [h["memory"]["statement"] for h in first["hits"]]
    assert ANSWER in statements, statements
    assert statements.index(ANSWER) <= repeats.KEPT, statements  # behind two copies at most
    # Moved, not dropped: every copy is still there for a person to see and retire.
    everything = bob.json("search", QUESTION, "--limit", "100")
    listed = {h["memory"]["statement"] for h in everything["hits"]}
    assert {copy(i) for i in range(COPIES)} <= listed


MATCHES = re.compile(r'<retrieved_memory trust="untrusted">\n(.*?)\n</retrieved_memory>', re.DOTALL)


@pytest.mark.usefixtures("transformer_encoder")
def test_an_assistant_is_still_handed_the_answer_under_copies(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYMEM_BLOCK_CAP", "1024")  # memory outgrows the block: matches are retrieved
    proj = jupymem.init(repo)
    proj.remember_many(
        [{"statement": s, "kind": "fact"} for s in [ANSWER, *OTHERS]]
        + [{"statement": f"Table warehouse.t{i:02d} is read-only for notebooks; write to scratch.t{i:02d}.",
            "kind": "constraint"} for i in range(20)]
        + [{"statement": copy(i), "kind": "note"} for i in range(COPIES)]
    )
    proj.prepare_lexical()
    assert proj.prepare_dense(timeout=600).tier == "transformer"
    assert proj.block().omitted > 0

    found = MATCHES.search(jupymem.context(QUESTION, proj.root))
    assert found, "matches are handed over"
    assert ANSWER in found.group(1), found.group(1)
    # And the copies, which report the question rather than answer it, are not handed over.
    assert "Someone asked" not in found.group(1), found.group(1)
    # explain() shows the order search gives.
    ranking = proj.explain(QUESTION, count=5)
    assert ANSWER in [c.memory.statement for c in ranking.candidates[:5]]


@pytest.mark.usefixtures("transformer_encoder")
def test_copies_of_one_lesson_leave_a_place_for_the_lesson_that_applies(repo: Path) -> None:
    # Lessons are chosen by meaning alone (``Project.applicable``), three at most: sixty
    # copies of one constraint near the request took all three before.
    proj = jupymem.init(repo)
    proj.remember_many(
        [{"statement": s, "kind": "fact"} for s in OTHERS]
        + [{"statement": "Every chart uses the colorblind-safe palette: sns.set_palette('colorblind').",
            "kind": "preference", "topic": "charts"}]
        + [{"statement": f"Every line plot of sign-ups must be drawn with matplotlib defaults, review {i}.",
            "kind": "constraint"} for i in range(COPIES)]
    )
    assert proj.prepare_dense(timeout=600).tier == "transformer"
    request = "Draw a line plot of weekly sign-ups per channel with seaborn from the signups DataFrame."
    lessons = [m.statement for m in proj.applicable(request, limit=3)]
    assert any("colorblind" in s for s in lessons), lessons
    assert sum("matplotlib defaults" in s for s in lessons) == repeats.KEPT, lessons


@pytest.mark.parametrize(("a", "b", "same"), [
    (copy(1), copy(2), True),  # digits folded
    ("Table warehouse.t01 is read-only for notebooks.", "Table warehouse.t17 is read-only for notebooks.", True),
    # One word apart, a conflict a person must see side by side: 5 of 7 words shared.
    (ANSWER, "The churn model is retrained on the first day of every week.", False),
    (ANSWER, OTHERS[0], False),
])
def test_what_counts_as_one_pattern(a: str, b: str, same: bool) -> None:
    assert repeats.alike(repeats.pattern(a), repeats.pattern(b)) is same


def near_copy(day: int) -> str:
    # One word repeated: BM25 ranks it above the answer; with digits folded, of its pattern.
    return f"The churn model is retrained, retrained on day {day} of every month."


DAY_ANSWER = "The churn model is retrained on day 1 of every month."


@pytest.mark.parametrize(("pulled_before", "files"), [(True, 1), (False, 1), (False, 2)],
                         ids=["bob-had-alices-file", "one-pull", "one-pull-a-file-per-copy"])
def test_planted_near_copies_do_not_take_the_answers_place(tmp_path: Path, pulled_before: bool, files: int) -> None:
    # Two near-copies that differ from the answer only in a number are one pattern with it
    # (digits folded), and outrank it. The first-ranked keeps its place; the other place
    # goes to the most trusted of the rest: a file Bob saw first, or, pulled at once, the
    # file that git's history added first (Mallory built on Alice's commit: hers is its
    # ancestor, whatever dates his commits claim), then the writer who gave the pattern
    # fewer copies.
    _, mallory, bob = alice_shares(tmp_path, DAY_ANSWER)
    if pulled_before:
        bob.pull()
        assert bob.json("search", QUESTION, "--limit", "5")["hits"][0]["memory"]["statement"] == DAY_ANSWER
    mallory.pull()
    planted = [Forger(mallory.path, writer_id=f"{i}123456789", name=f"Mallory{i}") for i in range(files)]
    for i, day in enumerate((3, 5)):
        planted[i % files].record(near_copy(day), "fact")
    for forger in planted:
        forger.write()
    # Commits and lines that claim to come before Alice's: git's graph says otherwise.
    backdated = {**os.environ, "GIT_AUTHOR_DATE": "2001-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z"}
    mallory.git("add", "-A", ".jupymem")
    subprocess.run(["git", "commit", "-q", "-m", "mallory: retraining days"], cwd=mallory.path, env=backdated,
                   check=True, timeout=60)
    mallory.push()
    bob.pull()

    hits = [h["memory"]["statement"] for h in bob.json("search", QUESTION, "--limit", "5")["hits"]]
    assert hits[0] in {near_copy(3), near_copy(5)}, hits  # the planted pair does outrank it
    assert hits.index(DAY_ANSWER) < repeats.KEPT, hits  # and the answer keeps its place beside them


WRONG_SUBJECTS = ("The churn model", "Our churn predictor", "The customer churn model", "The churn classifier",
                  "The attrition model", "The churn scoring model")
WRONG_WHENS = ("every Friday evening", "each Sunday night", "on the last day of each quarter", "every other Wednesday",
               "twice a week, on Tuesdays and Thursdays", "every night at 02:00", "on the 15th of each month",
               "whenever the drift alarm fires", "every Monday morning", "at the end of each sprint")


def test_a_flood_of_wrong_answers_from_one_file_leaves_the_answer_in_sight(tmp_path: Path) -> None:
    # Sixty lines that each claim a wrong day, each worded differently: not one pattern,
    # each an answer by every reading, all ranked above Alice's (15th of 61 before).
    _, mallory, bob = alice_shares(tmp_path, ANSWER)
    mallory.pull()
    flood = Forger(mallory.path)
    for subject in WRONG_SUBJECTS:
        for when in WRONG_WHENS:
            flood.record(f"{subject} is retrained {when}.", "fact")
    flood.write()
    mallory.commit("mallory: retraining")
    mallory.push()
    bob.pull()
    for limit in (3, 5, 10):
        hits = bob.json("search", QUESTION, "--limit", str(limit))["hits"]
        statements = [h["memory"]["statement"] for h in hits]
        assert ANSWER in statements, (limit, statements)  # one of the head's last places
        assert statements.index(ANSWER) >= limit - voices.PLACES, statements  # the flood still ranks first
    assert len(bob.json("search", QUESTION, "--limit", "100")["hits"]) == 61  # nothing dropped
