"""The lessons a request for code should follow reach the assistant's context, whatever their kind
of rule: a preference or a decision shapes code as a constraint does ("every chart uses the
colorblind palette", "model log1p(sale_price)"), though the request asks nothing memory answers.
Real project, the bundled transformer, ``jupymem.context`` as any assistant gets it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import jupymem

pytestmark = pytest.mark.usefixtures("transformer_encoder")

OTHERS = [
    "The weekly revenue report is published every Monday at nine.",
    "Greta Olsen owns the demand planning notebooks.",
    "The warehouse replica lags the primary by about ten minutes.",
    "Store 112 closed in March 2024 and has no sales after that.",
    "The marketing calendar is exported every Friday to data/promos.csv.",
    "Survey responses before 2022 used a five-point scale.",
    "The churn model is retrained on the first day of every month.",
    "Invoices in the billing schema are stored in cents.",
]
PREFERENCE = "Every chart uses the colorblind-safe palette: sns.set_palette('colorblind')."
DECISION = "Model log1p(sale_price), not the raw price, in every house price regression."
NOTE = "Line plots of sign-ups were discussed in the March review meeting."

LESSONS = re.compile(r'<applicable_lessons trust="untrusted">\n(.*?)\n</applicable_lessons>', re.DOTALL)


@pytest.fixture
def project(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("JUPYMEM_BLOCK_CAP", "1024")  # memory outgrows the block: lessons are retrieved
    proj = jupymem.init(repo)
    proj.remember_many(
        [{"statement": s, "kind": "fact"} for s in OTHERS]
        + [{"statement": f"Table warehouse.t{i:02d} is read-only for notebooks; write to scratch.t{i:02d}.",
            "kind": "constraint"} for i in range(20)]
        + [{"statement": PREFERENCE, "kind": "preference", "topic": "charts"},
           {"statement": DECISION, "kind": "decision", "topic": "house prices"},
           {"statement": NOTE, "kind": "note"}]
    )
    proj.prepare_lexical()
    assert proj.prepare_dense(timeout=600).tier == "transformer"
    assert proj.block().omitted > 0
    return proj


def _lessons(project, request: str) -> str:
    found = LESSONS.search(jupymem.context(request, project.root))
    return found.group(1) if found else ""


def test_a_preference_and_a_decision_reach_the_requests_they_shape(project) -> None:
    lessons = _lessons(project, "Draw a line plot of weekly sign-ups per channel with seaborn from the signups DataFrame.")
    assert "(preference, charts) Every chart uses the colorblind-safe palette" in lessons, lessons
    # A note is not a rule to follow, however near the request.
    assert "Line plots of sign-ups" not in lessons

    lessons = _lessons(project, "Fit a linear regression that predicts sale_price from the features in housing_df.")
    assert "(decision, house prices) Model log1p(sale_price)" in lessons, lessons


MATCHES = re.compile(r'<retrieved_memory trust="untrusted">\n(.*?)\n</retrieved_memory>', re.DOTALL)


def test_only_memories_that_answer_are_handed_over_as_matches(project) -> None:
    # Search answers "when is the churn model retrained?" with one memory; the rest of its
    # hits are below the answer threshold (the verdict's "no answer"), and an assistant
    # given them applied them as if they were (benchmarks/outcome: a file's read options
    # copied from a look-alike match onto another file).
    from jupymem.retrieval.answerable import ANSWER_AT

    request = "When is the churn model retrained?"
    result = project.search(request, limit=10)
    weak = [h.memory.statement for h in result.hits if h.confidence < ANSWER_AT]
    assert weak, "the search should return hits below the answer threshold for this test to mean anything"
    found = MATCHES.search(jupymem.context(request, project.root))
    assert found, "the memory that answers is handed over"
    matches = found.group(1)
    assert "The churn model is retrained on the first day of every month." in matches
    for statement in weak:
        assert statement[:40] not in matches, (statement, matches)


def test_a_lesson_sharing_the_requests_rare_word_is_not_left_behind_sound_alikes(project) -> None:
    # By meaning alone, MiniLM puts lessons about shops and their predictions ahead of
    # the one about the weather API for "download the weather forecast for each store"; the
    # lexical leg's order of lessons, fused by reciprocal rank, brings it in
    # (``retrieve.nearest_of_kinds``; benchmarks/outcome/README.md for how it was chosen).
    rate_limit = "The weather API allows 60 calls per minute: sleep at least 1 second between requests."
    project.remember_many(
        [{"statement": s, "kind": "procedure"} for s in (
            "Iterate over the shops table with itertuples, never iterrows: it is ten times faster.",
            "Each shop's sales prediction is written to predictions/shop_<id>.parquet.",
            "Shop 112 closed in March 2024; drop it from every per-shop iteration.",
            "Predictions for shops are produced per region, then split by shop share.",
            "Fetch files from the vendor SFTP with paramiko, never with a shell call to scp.",
        )]
        + [{"statement": rate_limit, "kind": "constraint", "topic": "weather API"}]
    )
    assert project.prepare_dense(timeout=600).tier == "transformer"
    request = "Write a loop that downloads the weather forecast for each of our 300 stores."
    assert rate_limit in [m.statement for m in project.applicable(request)]
    assert "The weather API allows 60 calls per minute" in _lessons(project, request)
