"""Quality parity: the project's own gold suites score the same on the team engine as on SQLite.

Each suite runs twice through ``evaluate.run_suite``, the path ``jupymem eval`` takes: once
as it always does (a SQLite project per scope), once with every scope's project in the
team database (``pg_opener``: a repository with a commit, admitted by the administrator,
opened through ``JUPYMEM_DATABASE_URL``'s setting and loaded by ``evaluate.load_scope``).
The lexical leg (the in-process BM25 that must reproduce FTS5's) and each tier's hybrid
(the static model's float32 and the transformer's int8 vectors stored in PostgreSQL,
searched by the same in-process index) must give the same nDCG@10 and the same
abstentions, to 0.005; and, behind the figures, the same ranking for every query.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import make_repo
from jupymem.config import Settings
from jupymem.core.opening import init_project
from jupymem.measure import evaluate
from jupymem.storage import registry
from jupymem.storage.postgres import admin

from pg_server import Team


pytestmark = [pytest.mark.postgres, pytest.mark.eval]

GOLD = Path(__file__).parent / "gold"
SUITES = {
    "gold": (GOLD / "notebook_memory.gold.jsonl", None),
    "small-projects": (GOLD / "small_projects.gold.jsonl", None),
    "heldout": (GOLD / "heldout.gold.jsonl", "cross-scope"),
}
METHODS = ("bm25", "static", "transformer")  # the lexical leg; hybrid with each tier's dense leg
FIGURES = ("ndcg@10", "abstain_accuracy", "false_abstain")


def pg_opener(team: Team, url: str, role: str) -> evaluate.Opener:
    """An ``evaluate.Opener`` that puts each scope's project in the team database."""

    def opener(suite: evaluate.Suite, scope: str, base: Path, settings: Settings) -> tuple[Any, dict[str, str]]:
        root = make_repo(base / "team-repos" / (scope or "default"))
        admin.add_member(team.admin_url, registry.root_commit(root), role)
        project = init_project(root, settings.with_(database_url=url))
        assert project.team
        return evaluate.load_scope(project, suite, scope)

    return opener


@pytest.mark.parametrize("name", list(SUITES))
def test_the_gold_suites_score_alike_on_postgres_and_sqlite(name: str, team: Team, tmp_path: Path) -> None:
    path, negatives = SUITES[name]
    suite = evaluate.load_suite(path)
    url = team.person("eval")
    said: dict[str, list[dict[str, Any]]] = {"sqlite": [], "postgresql": []}
    sqlite = evaluate.run_suite(suite, methods=METHODS, encoder=None, negatives=negatives,
                                workdir=tmp_path / "sqlite", details=said["sqlite"])
    pg = evaluate.run_suite(suite, methods=METHODS, encoder=None, negatives=negatives,
                            workdir=tmp_path / "pg", opener=pg_opener(team, url, team.role("eval")),
                            details=said["postgresql"])
    assert all(state["dense"] == "on" for state in pg["dense"].values()), pg["dense"]
    assert {(s["driver"], s["tier"]) for s in pg["dense"].values()} == {("postgresql", "transformer")}
    figures = {engine: {m: {f: report["methods"][m][f] for f in FIGURES} for m in METHODS}
               for engine, report in (("sqlite", sqlite), ("postgresql", pg))}
    print(f"\n{name}: {json.dumps(figures)}")  # the figures, for the report (pytest -s)
    for method in METHODS:
        for figure in FIGURES:
            want, got = sqlite["methods"][method][figure], pg["methods"][method][figure]
            assert (want is None and got is None) or got == pytest.approx(want, abs=0.005), (method, figure, figures)
    # Behind the figures: every query's ranking and verdict (memory ids are content hashes,
    # the same in both engines), and confidences to rounding.
    differ = [(a["method"], a["text"]) for a, b in zip(said["sqlite"], said["postgresql"], strict=True)
              if (a["ranked"], a["abstained"]) != (b["ranked"], b["abstained"])
              or a["confidence"] != pytest.approx(b["confidence"], abs=1e-6)]
    assert not differ, differ[:5]
