"""``jupymem eval``: suites load into real projects and are scored through Project.search.

Runs with the bundled model (set JUPYMEM_TEST_MODEL to a model2vec folder to use another).
The SciFact slice needs ../shared/data (evaluation data, never shipped); it is skipped
where that folder is absent.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from jupymem.measure import evaluate

GOLD = Path(__file__).parent / "gold" / "notebook_memory.gold.jsonl"
SMALL = Path(__file__).parent / "gold" / "small_projects.gold.jsonl"
HELDOUT = Path(__file__).parent / "gold" / "heldout.gold.jsonl"
SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact-train.gold.jsonl"
METRICS = {"recall@10", "mrr", "ndcg@10", "hit@1", "abstain_accuracy"}


pytestmark = pytest.mark.usefixtures("real_encoder")


def _suite(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


TINY = [
    {"type": "memory", "id": "m1", "text": "Join orders to customers on customer_id and region.", "scope": "a"},
    {"type": "memory", "id": "m2", "text": "Plots always label the y axis with units.", "kind": "preference", "scope": "a"},
    {"type": "memory", "id": "m3", "text": "The forecast is produced every night at 02:30.", "scope": "b"},
    {"type": "query", "id": "q1", "query": "join key for orders", "relevant": ["m1"], "scope": "a", "category": "keyword"},
    {"type": "query", "id": "q2", "query": "custmer_id join", "relevant": ["m1"], "scope": "a", "category": "typo"},
    {"type": "query", "id": "q3", "query": "Kubernetes namespace of the service", "relevant": [], "scope": "a", "category": "abstain"},
    {"type": "query", "id": "q4", "query": "when is the nightly forecast produced", "relevant": ["m3"], "scope": "b"},
]


def test_json_report_has_the_documented_shape(tmp_path: Path) -> None:
    out = io.StringIO()
    argv = ["--suite", str(_suite(tmp_path, TINY)), "--json", "--methods", "fts,bm25,hybrid"]
    assert evaluate.run_eval(argv, stdout=out, stderr=io.StringIO()) == 0
    report = json.loads(out.getvalue())
    assert report["queries"] == 4
    assert list(report["methods"]) == ["fts", "bm25", "hybrid"]  # plain FTS5 BM25 on every suite
    for method in report["methods"].values():
        assert METRICS <= set(method)
    assert set(report["by_category"]) == {"keyword", "typo", "abstain", "uncategorized"}
    assert set(report["by_size"]) == {"1-10"}  # each scope is a project of 1-3 memories
    assert set(report["search_ms"]) == {"fts", "bm25", "hybrid"} and report["search_ms"]["bm25"]["p50"] > 0
    assert all(state["dense"] == "on" for state in report["dense"].values())  # what small projects get
    assert report["by_category"]["abstain"]["bm25"]["abstain_accuracy"] == 1.0
    assert report["by_category"]["abstain"]["bm25"]["recall@10"] is None  # nothing to recall
    assert report["by_category"]["typo"]["bm25"]["hit@1"] == 1.0
    assert report["methods"]["bm25"]["mrr"] == 1.0
    # How often a first hit labelled strong / likely / weak is right, per method with a verdict.
    assert set(report["label_precision"]) <= {"bm25", "hybrid"} and "fts" not in report["label_precision"]
    for by_label in report["label_precision"].values():
        assert set(by_label) <= {"strong", "likely", "weak"}
        assert all(v["n"] > 0 and 0.0 <= v["precision"] <= 1.0 for v in by_label.values())


def test_text_report_and_no_progress_bar_off_a_terminal(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert evaluate.run_eval(["--suite", str(_suite(tmp_path, TINY))], stdout=out, stderr=err) == 0
    # every method side by side: plain FTS5, the lexical leg, each tier's hybrid, the transformer alone
    assert all(m in out.getvalue() for m in ("fts", "bm25", "static", "transformer", "dense", "ndcg@10"))
    assert err.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    err = _Terminal()
    assert evaluate.run_eval(["--suite", str(_suite(tmp_path, TINY))], stdout=io.StringIO(), stderr=err) == 0
    assert "\r[" in err.getvalue() and "100%" in err.getvalue() and "20/20 searches" in err.getvalue()  # 4 queries x 5 methods


def test_cross_scope_negatives_ask_each_question_in_another_project(tmp_path: Path) -> None:
    suite = evaluate.load_suite(_suite(tmp_path, TINY))
    negatives = evaluate.cross_scope_negatives(suite)
    assert {(q.query, q.scope) for q in negatives} == {
        ("join key for orders", "b"), ("custmer_id join", "b"), ("when is the nightly forecast produced", "a")}
    assert all(q.category == "cross-scope" and not q.relevant and q.origin for q in negatives)
    out = io.StringIO()
    code = evaluate.run_eval(["--suite", str(_suite(tmp_path, TINY)), "--negatives", "cross-scope", "--json",
                              "--methods", "bm25"], stdout=out, stderr=io.StringIO())
    report = json.loads(out.getvalue())
    assert code == 0 and report["queries"] == 7 and report["negatives"] == "cross-scope"
    assert list(report["methods"]) == ["bm25"]
    assert report["by_category"]["cross-scope"]["bm25"]["abstain_accuracy"] is not None


def test_a_query_marked_not_cross_scope_is_not_asked_elsewhere(tmp_path: Path) -> None:
    lines = [dict(x) for x in TINY]
    lines[3]["cross_scope"] = False  # q1: its answer is memory every scope holds
    negatives = evaluate.cross_scope_negatives(evaluate.load_suite(_suite(tmp_path, lines)))
    assert "join key for orders" not in {q.query for q in negatives} and len(negatives) == 2


def test_an_unknown_method_is_a_clear_error(tmp_path: Path) -> None:
    err = io.StringIO()
    assert evaluate.run_eval(["--suite", str(_suite(tmp_path, TINY)), "--methods", "bm25,magic"],
                             stdout=io.StringIO(), stderr=err) == 2
    assert "unknown method magic" in err.getvalue()


def test_eval_waits_for_the_typo_vocabulary(repo: Path) -> None:
    """A large project's names are read in the background; eval (and bench) wait for them
    before the first search, so a typo there is corrected as in a warm kernel."""
    import jupymem

    proj = jupymem.init(repo, settings=jupymem.Settings.from_env().with_(language="source"))
    proj.remember_many({"statement": f"Report r{i:05d} reads table t{i % 13}"} for i in range(5001))
    proj.remember("df_revenue holds net revenue per invoice line", kind="fact")
    assert proj.prepare_lexical(timeout=60)
    result = proj.search("what is in df_revnue", mode="lexical")
    assert "fuzzy" in result.hits[0].legs and "df_revenue" in result.hits[0].memory.statement


@pytest.mark.parametrize(
    ("content", "message"),
    [("not json\n", "is not a suite line"), ('{"type": "memory", "id": "x"}\n', "is not a suite line"), ("", "has no queries")],
)
def test_bad_suites_are_clear_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    err = io.StringIO()
    assert evaluate.run_eval(["--suite", str(path)], stdout=io.StringIO(), stderr=err) == 2
    assert message in err.getvalue()


def test_a_missing_suite_is_a_clear_error(tmp_path: Path) -> None:
    err = io.StringIO()
    assert evaluate.run_eval(["--suite", str(tmp_path / "nope.jsonl")], stdout=io.StringIO(), stderr=err) == 2
    assert "cannot read the suite" in err.getvalue()


def test_metrics_by_hand() -> None:
    m = evaluate.score_ranking(["x", "a", "y", "b"], {"a", "b"})
    assert m["recall@10"] == 1.0 and m["mrr"] == 0.5 and m["hit@1"] == 0.0
    assert m["ndcg@10"] == pytest.approx((1 / 1.5849625 + 1 / 2.3219281) / (1 + 1 / 1.5849625), abs=1e-6)


# -- the project's own gold suite ---------------------------------------------------------


def test_the_gold_suite_is_what_it_claims() -> None:
    lines = [json.loads(x) for x in GOLD.read_text(encoding="utf-8").splitlines() if x.strip()]
    memories = [x for x in lines if x["type"] == "memory"]
    queries = [x for x in lines if x["type"] == "query"]
    assert len(memories) >= 300 and len(queries) >= 60
    assert len({m["scope"] for m in memories}) >= 2
    assert len({m["text"] for m in memories}) == len(memories)
    cats = {q["category"] for q in queries}
    assert {"paraphrase", "typo", "multilingual", "prompt", "abstain"} <= cats
    assert all(len(q["query"].split()) >= 40 for q in queries if q["category"] == "prompt")
    assert all(not q["relevant"] for q in queries if q["category"] == "abstain")
    ids = {(m["scope"], m["id"]) for m in memories}
    assert all((q["scope"], r) in ids for q in queries for r in q["relevant"])


# Measured levels (README, "Retrieval, measured"). False abstention meets its target (3%)
# on both suites in both modes; correct abstention on the suites' own unanswerable
# questions (off-topic, swapped entity, absent attribute) is far from its 80% and the
# bounds below are what is measured now, so that getting worse fails. They fell (gold
# 0.34/0.29 to 0.13/0.09) when the verdict's margins were set leave-one-suite-out, so that
# the worst suite held out of the fit abstains falsely on at most 4% of its answerable
# questions (benchmarks/answerability.md): a suite the models never saw is answered.
@pytest.mark.parametrize(
    ("path", "correct_bm25", "correct_hybrid"), [(GOLD, 0.13, 0.09), (SMALL, 0.42, 0.54)], ids=["gold", "small-projects"]
)
@pytest.mark.eval
def test_own_suites_hybrid_is_never_below_lexical_nor_lexical_below_plain_bm25(
    path: Path, correct_bm25: float, correct_hybrid: float
) -> None:
    from jupymem.config import Settings

    report = evaluate.run_suite(evaluate.load_suite(path), encoder=Settings.from_env().encoder)
    assert all(state["dense"] == "on" for state in report["dense"].values()), report["dense"]
    fts, bm25, hybrid = (report["methods"][m] for m in ("fts", "bm25", "hybrid"))
    for metric in ("recall@10", "mrr", "ndcg@10"):
        assert hybrid[metric] >= bm25[metric] >= fts[metric], (metric, report["methods"])
    assert hybrid["hit@1"] >= 0.75  # real matches are found, first
    assert bm25["false_abstain"] <= 0.03 and hybrid["false_abstain"] <= 0.03
    assert bm25["abstain_accuracy"] >= correct_bm25 and hybrid["abstain_accuracy"] >= correct_hybrid


@pytest.mark.eval
def test_the_held_out_suite() -> None:
    """``heldout.gold.jsonl`` was written before any of issue 8's final tuning was looked
    at and is never tuned or fitted on (``fit_answerability.py`` does not read it): 13
    new projects of 1-36 memories. Its figures are what a suite held apart from us should
    find; the bounds are the measured levels."""
    from jupymem.config import Settings

    report = evaluate.run_suite(
        evaluate.load_suite(HELDOUT), encoder=Settings.from_env().encoder, negatives="cross-scope"
    )
    fts, bm25, hybrid = (report["methods"][m] for m in ("fts", "bm25", "hybrid"))
    for metric in ("recall@10", "mrr", "ndcg@10"):
        assert hybrid[metric] >= bm25[metric] >= fts[metric], (metric, report["methods"])
    assert bm25["false_abstain"] <= 0.03 and hybrid["false_abstain"] <= 0.03
    small = report["by_size"]["1-10"]
    assert small["hybrid"]["abstain_accuracy"] >= 0.8  # the target, met on projects of 1-10 memories
    assert small["bm25"]["abstain_accuracy"] >= 0.75  # 0.79 before the leave-one-suite-out margins
    larger = report["by_size"]["11-1000"]  # one project of 36 memories: far from the target
    # 0.25 and 0.22 before the leave-one-suite-out margins (see above)
    assert larger["hybrid"]["abstain_accuracy"] >= 0.11 and larger["bm25"]["abstain_accuracy"] >= 0.11


@pytest.mark.eval
def test_gold_suite_categories() -> None:
    from jupymem.config import Settings

    report = evaluate.run_suite(evaluate.load_suite(GOLD), encoder=Settings.from_env().encoder, methods=("bm25", "hybrid"))
    cats = report["by_category"]
    assert cats["paraphrase"]["hybrid"]["ndcg@10"] > cats["paraphrase"]["bm25"]["ndcg@10"]
    assert cats["typo"]["bm25"]["hit@1"] >= 0.9  # the fuzzy leg is part of the lexical one


@pytest.mark.eval
@pytest.mark.skipif(not SCIFACT.exists(), reason="SciFact evaluation data is not here")
def test_scifact_hybrid_is_not_below_lexical_nor_lexical_below_plain_bm25() -> None:
    """The whole suite (a slice of 100 claims moved by one abstention). Plain FTS5 BM25
    ranks and never abstains; the lexical leg's Recall@10 is above it by 0.0015 only
    (0.8034 / 0.8019), and hybrid's MRR above the lexical leg's by 0.001."""
    out = io.StringIO()
    code = evaluate.run_eval(["--suite", str(SCIFACT), "--json", "--methods", "fts,bm25,hybrid"], stdout=out, stderr=io.StringIO())
    assert code == 0
    report = json.loads(out.getvalue())
    fts, bm25, hybrid = (report["methods"][m] for m in ("fts", "bm25", "hybrid"))
    assert hybrid["ndcg@10"] >= 0.70
    for metric in ("recall@10", "mrr", "ndcg@10"):
        assert hybrid[metric] >= bm25[metric], (metric, report["methods"])
        assert bm25[metric] >= fts[metric], (metric, report["methods"])
    assert bm25["false_abstain"] <= 0.03 and hybrid["false_abstain"] <= 0.03


@pytest.mark.eval
def test_long_memories_keep_their_answers(tmp_path: Path) -> None:
    """Memories of ``DOCUMENT_CHARS`` or more are judged by the model for documents. The
    held-out suite with each memory followed by others of its project until it is that
    long: its answerable questions must still be answered. (A model for documents fitted
    on SciFact alone abstained on 29-40% of such questions in the gold suite.)"""
    from jupymem.config import Settings
    from jupymem.retrieval import answerable

    suite = evaluate.load_suite(HELDOUT)
    for memories in suite.memories.values():
        texts = [m["text"] for m in memories]
        for i, m in enumerate(memories):
            others = texts[i + 1 :] + texts[:i]
            while len(m["text"]) < answerable.DOCUMENT_CHARS + 20 and others:
                m["text"] += " " + others.pop(0)
    assert sum(len(m["text"]) >= answerable.DOCUMENT_CHARS for ms in suite.memories.values() for m in ms) >= 36
    report = evaluate.run_suite(suite, encoder=Settings.from_env().encoder, methods=("bm25", "hybrid"), workdir=tmp_path)
    bm25, hybrid = report["methods"]["bm25"], report["methods"]["hybrid"]
    assert bm25["false_abstain"] <= 0.03 and hybrid["false_abstain"] <= 0.03, report["methods"]
