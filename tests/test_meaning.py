"""Meaning, on the examples that were found wrong outside the project: a paraphrase found
first among 800 other memories, and confident answers to questions memory does not hold
labelled for what they are. Real models, real projects, ``Project.search`` as every face.
(Whole suites are scored by ``jupymem eval`` and ``benchmarks/fit_answerability.py``.)"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from jupymem.measure import bench
from jupymem.config import Settings
from jupymem.measure.evaluate import load_suite, open_scope
from jupymem.core.opening import close_all, init_project

# eval: both tiers over the 864-statement paraphrase suite, and answerability over 1,000 notes.
pytestmark = [pytest.mark.eval, pytest.mark.usefixtures("transformer_encoder")]

PARAPHRASE = Path(__file__).resolve().parents[1] / "benchmarks" / "suites" / "own" / "paraphrase.gold.jsonl"


@pytest.fixture(scope="module")
def sentences():
    """The paraphrase suite's one project: 864 short statements, both tiers ready."""
    suite = load_suite(PARAPHRASE)
    base = Path(tempfile.mkdtemp(prefix="jupymem-meaning-"))
    project, ids = open_scope(suite, "sentences", base, Settings(home=base / "home", language="source"))
    project.prepare_lexical()
    assert project.prepare_dense(timeout=600).tier == "transformer"
    yield project, ids
    close_all()


def _first(result):
    shown = result.hits or result.closest
    return shown[0] if shown else None


def test_a_paraphrase_is_found_first_among_800_others(sentences) -> None:
    project, ids = sentences
    result = project.search("Which project exists to condense the hazard walkthroughs done every seven days?")
    assert _first(result).memory.id == ids["s-linnet"]
    # The static tier and the words alone do not find it: this is the transformer's doing.
    lexical = project.search("Which project exists to condense the hazard walkthroughs done every seven days?",
                             mode="lexical")
    assert _first(lexical) is None or _first(lexical).memory.id != ids["s-linnet"]


# Not yet: answerability's signals take "forecasting model" against "churn model" for a
# paraphrase ("forecasting" reads as a participle memory does not know), and no refit,
# in-sample or leave-one-suite-out (benchmarks/answerability.md), moves it below 0.5.
# strict: the day it passes, this mark must go.
@pytest.mark.xfail(strict=True, reason="answerability does not tell a swapped -ing word from a paraphrase yet")
@pytest.mark.parametrize("mode", ["transformer", "static", "lexical"])
def test_a_question_about_a_model_nobody_owns_is_not_answered_with_confidence(sentences, mode: str) -> None:
    project, ids = sentences
    result = project.search("who owns the forecasting model?", mode=mode)
    assert result.abstained or result.hits[0].confidence < 0.5, [(h.memory.statement, h.confidence) for h in result.hits[:3]]


# Three of the query's four words ("revenue", "forecast", "quarter") are in such notes; a
# "strong" that holds 90% precision on every held-out suite (benchmarks/answerability.md)
# is not given to them.
@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_one_shared_word_is_never_a_strong_answer(repo: Path, mode: str) -> None:
    from jupymem.retrieval.answerable import STRONG

    project = init_project(repo, Settings.from_env())
    project.remember_many({"statement": s, "kind": "note"} for s in bench.corpus(1000))
    project.prepare_lexical()
    project.prepare_dense(timeout=600)
    result = project.search("quarterly revenue forecast methodology", mode=mode)
    strong = [h for h in result.hits if h.confidence >= STRONG]
    assert not strong, [(h.memory.statement, h.confidence) for h in strong]


GOAL_PROJECT = [
    "Weekly sales forecasts are published every Tuesday morning on the planning dashboard.",
    "Greta Olsen owns the demand planning notebooks and reviews every new feature.",
    "We measure forecast accuracy with WAPE per store and category, never MAPE.",
    "Promotions come from the marketing calendar, exported each Friday to data/promos.csv.",
    "New stores borrow the profile of their cluster for their first eight weeks.",
    "Never train on the lockdown weeks of 2020; they are flagged in config/exclusions.yaml.",
    "The goal of this project is to cut stock-outs by forecasting next week's demand for every store.",
]


# Not yet: the transformer puts the goal first, but its cosine stands only 0.12 above the
# query's background and 0.08 above the next memory (the static tier's word vectors find
# "achieve" close to "goal"); no rule that answers it kept "how do I request a new laptop?"
# (0.21 above its background here) from being answered too. strict: the day it passes, this
# mark must go.
@pytest.mark.xfail(strict=True, reason="the transformer ranks the goal first without the confidence to answer")
def test_the_goal_paraphrase_is_answered_with_the_transformer(repo: Path) -> None:
    project = init_project(repo, Settings.from_env())
    project.remember_many({"statement": s, "kind": "fact"} for s in GOAL_PROJECT)
    project.prepare_lexical()
    assert project.prepare_dense(timeout=600).tier == "transformer"
    result = project.search("what are we trying to achieve with this work?")
    assert _first(result).memory.statement == GOAL_PROJECT[-1]
    assert not result.abstained and result.tier == "transformer"
