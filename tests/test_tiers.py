"""The two dense tiers (``retrieval/tiers.py``): the static model answers first, the bundled
transformer takes over once every memory has its vector; a one-shot command searches
with the transformer where a long-lived process made its vectors; an abstention still
shows people the closest memories, and assistants none of them.

Real models (the bundled model2vec and the int8 ONNX transformer), real sqlite-vec,
real subprocesses for the command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from jupymem.assistants import tools
from jupymem.config import Settings
from jupymem.core.opening import close_all, init_project
from jupymem.retrieval import index, retrieve, tiers
from jupymem.retrieval.embed import HashEmbedder
from jupymem.retrieval.transformer import TRANSFORMER_NAME

pytestmark = pytest.mark.usefixtures("transformer_encoder")

ROOT = Path(__file__).resolve().parents[1]

STATEMENTS = [
    "The goal of Project Linnet is to summarize weekly safety inspections.",
    "Ana Ruiz owns the churn model; ask her before changing features.",
    "Join sales to customers on customer_id; email is not unique across accounts.",
    "The warehouse stores timestamps in UTC; the app export is in local device time.",
    "Book the two shared A10 GPUs in the team calendar before any run longer than an hour.",
    "Negative invoice amounts are credit notes; exclude them from average revenue per user.",
    "Model cards in docs/model_cards list the training window, features and metrics by segment.",
    "The retention campaign may reach at most 5,000 customers a week, the call centre's capacity.",
    "Plots use the team palette from plotting/style.py and always label the y axis with units.",
    "Missing usage values are imputed with zero because a missing row means no usage that day.",
    "Never upsample churners with SMOTE; use class weights instead.",
    "The events parquet dataset is partitioned by event_date and region.",
]


@pytest.fixture
def project(repo: Path):
    proj = init_project(repo, Settings.from_env())
    proj.remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS)
    return proj


def test_the_plan_each_encoder_value_names() -> None:
    assert tiers.plan(None) == tiers.Plan(None, transformer=True)
    assert tiers.plan(" Transformer ") == tiers.Plan(None, transformer=True)
    assert tiers.plan("static") == tiers.Plan(None)
    assert tiers.plan("none").off
    assert tiers.plan("/models/potion") == tiers.Plan("/models/potion")


def test_the_transformer_takes_over_and_keeps_its_own_vectors(project) -> None:
    status = project.prepare_dense(timeout=60)
    assert status.dense == "on" and status.tier == "transformer", status
    assert status.model == TRANSFORMER_NAME and status.vectors == len(STATEMENTS)
    # The static tier's vectors stay beside the transformer's (a model change re-embeds one slot only).
    assert index.vector_counts(project.conn, index.STATIC)[1] == len(STATEMENTS)
    assert index.vector_counts(project.conn, index.TRANSFORMER) == (TRANSFORMER_NAME, len(STATEMENTS))
    fmt = project.conn.execute("SELECT value FROM meta WHERE key = 'vector_format_transformer'").fetchone()[0]
    assert fmt == "int8"
    result = project.search("Which project exists to condense the hazard walkthroughs done every seven days?")
    shown = result.hits or result.closest
    assert shown[0].memory.statement.startswith("The goal of Project Linnet")
    assert result.tier == "transformer" and "dense" in result.legs
    # Each tier can still be asked for by name (evaluation compares them).
    assert project.search("GPU booking", mode="static").tier == "static"
    dense = project.search("reserve graphics cards", mode="dense")
    assert dense.hits[0].memory.statement.startswith("Book the two shared A10 GPUs")


def test_static_alone_never_loads_the_transformer(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYMEM_ENCODER", "static")
    proj = init_project(repo, Settings.from_env())
    proj.remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS)
    status = proj.prepare_dense(timeout=60)
    assert (status.tier, status.transformer) == ("static", "off")
    assert index.vector_counts(proj.conn, index.TRANSFORMER) == (None, 0)
    assert proj.search("GPU booking", mode="transformer").tier is None  # that tier is not in use


def test_int8_vectors_keep_the_cosine() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(200, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    q = index.quantize(vectors).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    exact = vectors @ vectors[0]
    rounded = q @ vectors[0]
    assert np.abs(exact - rounded).max() < 0.01
    assert not index.quantize(np.zeros((1, 384), dtype=np.float32)).any()


class _Watching:
    """A real Embedder (hashing) that notes the index's progress each time it is called."""

    def __init__(self, dense: index.DenseIndex):
        self.inner = HashEmbedder(32)
        self.name, self.dimensions = "watching-32", 32
        self.dense = dense
        self.seen: list[tuple[int, int]] = []

    def embed_batch(self, texts: Sequence[str]):
        self.seen.append(self.dense.progress)
        return self.inner.embed_batch(texts)


def test_a_backfill_reports_its_progress(project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.remember_many({"statement": f"Note {i}: table t{i} holds column c{i} in schema s{i % 7}.", "kind": "note"}
                          for i in range(1200))
    dense = index.DenseIndex(project.conn, index.TRANSFORMER)
    ok, _ = index.vec_route(project.conn)
    assert ok
    watching = _Watching(dense)
    dense.sync(watching)  # the backfill's call: every row, in batches
    total = 1200 + len(STATEMENTS)
    assert watching.seen[0] == (0, total)
    assert watching.seen[1] == (index.BATCH, total) and watching.seen[-1][0] < total
    assert dense.progress == (0, 0)  # idle again


def test_an_abstention_shows_people_the_closest_and_assistants_nothing(project) -> None:
    project.prepare_dense(timeout=60)
    question = "what colour are the office chairs in Lisbon?"
    result = project.search(question)
    assert result.abstained and not result.hits
    assert 0 < len(result.closest) <= 5
    assert all(h.confidence < 0.5 for h in result.closest)
    from jupymem.faces import render

    text = render.search_text(result)
    assert text.startswith("No memory answers this confidently. Closest memories")
    assert result.closest[0].memory.id in text
    assert "No memory answers this confidently" in render.search_html(result)
    # What a model may call: abstained, and nothing of the closest.
    answer = tools.search_result(result)
    assert answer == {"status": "abstained", "reason": "nothing matches closely enough"}


# Conversation turns, as LoCoMo's are: the transformer's cosine puts chit-chat first ("Ouch,
# that sounds painful!") for a question whose words one longer turn holds.
CONVERSATION = [
    "Priya: Ouch, that sounds painful! Are you okay now?",
    "Tomas: I twisted my ankle at football and it still aches.",
    "Priya: Thanks for the tip, Tomas. I'll read up on it tonight. Also, in October I got hurt on the climbing"
    " wall, so the marathon is off this year after a whole summer of training.",
    "Tomas: Thanks, Priya! I finally finished painting the fence this weekend.",
    "Priya: Haha, that's so true. Walks always clear my head.",
    "Tomas: I signed up for a pottery class on Thursdays.",
    "Priya: My sister visits next month and we plan a road trip to the coast.",
    "Tomas: What a find! Did you take anything home?",
    "Priya: Wow, what an experience! How did it make you feel?",
    "Tomas: My dog loves the new park near the river.",
    "Priya: So sorry to hear about your injury, take it easy!",
]


@pytest.mark.parametrize("question", ["When did Priya get hurt?", "What setback did Priya face in October?"])
def test_a_question_naming_someone_finds_the_turn_that_holds_its_words(repo: Path, question: str) -> None:
    project = init_project(repo, Settings.from_env())
    project.remember_many({"statement": s, "kind": "fact"} for s in CONVERSATION)
    project.prepare_lexical()
    assert project.prepare_dense(timeout=600).tier == "transformer"
    meaning = project.search(question, mode="dense")
    assert "climbing wall" not in (meaning.hits or meaning.closest)[0].memory.statement
    result = project.search(question)
    assert result.tier == "transformer"
    assert "climbing wall" in (result.hits or result.closest)[0].memory.statement


def test_the_words_weigh_more_only_for_a_question_that_names_things() -> None:
    assert retrieve.names_share("When did Priya get hurt?") == 0.25
    assert retrieve.names_share("what did Lucía say about the NPS survey?") == pytest.approx(2 / 7)
    assert retrieve.names_share("what are we trying to achieve with this work?") == 0.0
    assert retrieve.names_share("Priya?") == 0.0
    assert retrieve.words_weight(0.0, 0.0) == 0.0  # the transformer's fusion as it was
    assert retrieve.words_weight(1.0, 0.0) == pytest.approx(0.15)  # no names: a clear lexical best, a little
    assert retrieve.words_weight(1.0, 0.25) == pytest.approx(0.4)
    assert retrieve.words_weight(1.0, 1.0) == 1.0


def _cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    full.pop("JUPYMEM_ENCODER", None)
    return subprocess.run([sys.executable, "-m", "jupymem", *args], cwd=repo, env=full, capture_output=True,
                          text=True, timeout=120)


def test_the_command_line_searches_with_the_transformer_once_its_vectors_exist(project, repo: Path) -> None:
    query = "Which project exists to condense the hazard walkthroughs done every seven days?"
    before = _cli(repo, "search", query, "--json")
    assert before.returncode == 0, before.stderr
    assert "dense" not in json.loads(before.stdout)["legs"]
    status = json.loads(_cli(repo, "status", "--json").stdout)["retrieval"]
    assert "transformer's vectors are not made yet" in status["reason"]
    project.prepare_dense(timeout=60)  # what a kernel or the server does in the background
    close_all()
    after = _cli(repo, "search", query, "--json")
    got = json.loads(after.stdout)
    assert got["tier"] == "transformer" and "dense" in got["legs"]
    shown = got["hits"] or got["closest"]
    assert shown[0]["memory"]["statement"].startswith("The goal of Project Linnet")
    text = _cli(repo, "search", query).stdout
    assert "transformer encoder" in text
