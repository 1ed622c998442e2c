"""Lexical search (SPEC 5): any text is a query, abstention, folding, full records, big projects."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import jupymem
from jupymem.retrieval import lexical

STATEMENTS = [
    ("Use customer_id as the join key between orders and customers, never the email", "decision"),
    ("Timestamps in sales.parquet are UTC; convert to Europe/Madrid before grouping by day", "constraint"),
    ("The churn model overfits when trained on fewer than three months of history", "failure"),
    ("Revenue figures are reported net of refunds and VAT", "fact"),
    ("Prefer polars over pandas for joins larger than ten million rows", "preference"),
    ("Refresh the inventory extract before running the weekly forecast notebook", "procedure"),
    ("The café branch codes start with CF and are not stores", "correction"),
]


@pytest.fixture
def proj(repo: Path):
    p = jupymem.init(repo)
    for text, kind in STATEMENTS:
        p.remember(text, kind=kind)
    return p


WEIRD = [
    '"',
    '"unbalanced quote',
    "a AND b OR NOT c",
    "AND",
    "OR OR OR",
    "NOT",
    "NEAR(customer join, 3)",
    "join*",
    "*",
    "statement:customer",
    "customer:",
    "^customer",
    "-customer",
    "(customer",
    "customer)",
    "{statement topic}: join",
    "'; DROP TABLE memories; --",
    "\U0001f600\U0001f525 join key \U0001f680",
    "customer\x00_id\x00",
    "\x00",
    "",
    "   \n\t",
    "日本語のクエリ",
    "ümlaut ÅNGSTRÖM",
    "\ud800 lone surrogate",
    "+++ --- ***",
    "col1 col2 col3 " * 50,
]


@pytest.mark.parametrize("query", WEIRD)
def test_any_text_is_a_valid_query(proj, query: str) -> None:
    result = proj.search(query)
    assert result.status in ("ok", "abstained")
    assert (result.status == "abstained") == (not result.hits)


@pytest.mark.usefixtures("transformer_encoder")
def test_any_text_is_a_valid_query_with_both_encoders_too(proj) -> None:
    # Each encoder's tokenizer refuses a lone surrogate (a command line's undecodable byte,
    # a JSON "\udcff" escape): search, explain, lessons and near-duplicates raised a
    # TypeError once the dense leg was loaded. Every entrance to ranking takes the text as
    # valid text now, the lone surrogate as U+FFFD.
    assert proj.prepare_dense(timeout=600).tier == "transformer"
    for query in WEIRD + ["customer_id join key \udcff", "\ud800"]:
        result = proj.search(query)
        assert result.status in ("ok", "abstained"), query
        result.query.encode("utf-8")  # what a face prints or sends back is valid text
        proj.explain(query, count=3)
        proj.applicable(query)
        proj.similar(query)
        assert jupymem.context(query, proj.root).startswith("<project_memory")
    assert proj.search("customer_id join key \udcff").hits[0].memory.kind == "decision"


def test_huge_and_binary_queries(proj) -> None:
    big = ("customer_id join key " + "lorem ipsum dolor sit amet " * 40_000)[: 1 << 20]
    assert proj.search(big).status in ("ok", "abstained")
    assert proj.search("join key \x00\x00 customer_id").hits[0].memory.kind == "decision"
    assert proj.search(b"\xff\xfe not text").status == "abstained"  # type: ignore[arg-type]
    assert proj.search(None).status == "abstained"  # type: ignore[arg-type]


def test_fts_syntax_in_queries_is_just_words(proj) -> None:
    result = proj.search('customer_id AND "join key" OR NEAR(orders)')
    assert result.status == "ok" and result.hits[0].memory.kind == "decision"


@pytest.mark.parametrize(
    "query",
    [
        "what is the weather in Paris tomorrow",
        "recipe for chocolate cake with raspberries",
        "how do I configure my bluetooth headphones",
        "the",
        "please help",
    ],
)
def test_off_topic_queries_abstain(proj, query: str) -> None:
    result = proj.search(query)
    assert result.status == "abstained" and result.hits == () and result.full is None and result.reason


def test_diacritics_are_folded_both_ways(proj) -> None:
    hit = proj.search("cafe branch codes").hits[0].memory
    assert hit.kind == "correction"
    proj.remember("Resume the naive deduplication after the export", kind="note")
    assert proj.search("résumé naïve déduplication").hits[0].memory.kind == "note"
    assert proj.search("CAFÉ BRANCH").hits[0].memory.kind == "correction"


def test_a_clear_winner_comes_back_whole(proj) -> None:
    result = proj.search("which join key for orders and customers")
    assert result.status == "ok"
    assert result.full is not None and result.full == result.hits[0].memory
    assert result.full.statement == STATEMENTS[0][0]


def test_a_prompt_length_question_finds_the_memory(proj) -> None:
    prompt = (
        "I am writing a notebook cell that loads sales.parquet and groups the rows by day to plot daily "
        "revenue for the Madrid stores, but the totals look shifted; should I convert the timestamps first, "
        "and to which timezone exactly?"
    )
    assert len(prompt.split()) >= 35
    result = proj.search(prompt)
    assert result.status == "ok" and result.hits[0].memory.kind == "constraint"


def test_a_memory_retired_by_another_process_leaves_this_ones_search(proj, repo: Path) -> None:
    """Searches admit candidates against the project's inactive rows, kept per revision:
    a retirement written through another connection must be seen at the next search."""
    hit = proj.search("polars pandas joins").hits[0].memory  # the inactive rows are now known here
    done = subprocess.run(
        [sys.executable, "-m", "jupymem.faces.cli", "retire", hit.id, "--reason", "replaced"],
        cwd=repo, capture_output=True, env={**os.environ, "PYTHONPATH": str(Path(jupymem.__file__).parents[1])},
    )
    assert done.returncode == 0, done.stderr
    assert hit.id not in {h.memory.id for h in proj.search("polars pandas joins").hits}
    assert proj.search("polars pandas joins", include_inactive=True).hits[0].memory.id == hit.id


def test_kind_filter_limit_and_inactive(proj) -> None:
    assert proj.search("customer join key", kinds=["fact"]).status == "abstained"
    assert all(h.memory.kind == "decision" for h in proj.search("customer join key", kinds=["decision"]).hits)
    proj.remember_many({"statement": f"join key rule number {i} for table t{i}"} for i in range(30))
    assert len(proj.search("join key rule", limit=5).hits) == 5
    m = proj.search("polars pandas joins").hits[0].memory
    proj.retire(m.id)
    assert m.id not in {h.memory.id for h in proj.search("polars pandas joins").hits}
    assert proj.search("polars pandas joins", include_inactive=True).hits[0].memory.id == m.id
    with pytest.raises(jupymem.JupymemError, match="Unknown kind"):
        proj.search("x", kinds=["gossip"])


def _key(term: object) -> str:
    return getattr(term, "key", term)  # a plain term, or a term object with its index key


def test_every_term_is_searched_on_a_large_project(repo: Path) -> None:
    settings = jupymem.Settings.from_env().with_(language="source")
    proj = jupymem.init(repo, settings=settings)
    # 5,200 memories that all mention "dataframe"; each has a rare identifier of its own.
    proj.remember_many(
        {"statement": f"The dataframe for report r{i:05d} uses column c{i % 97} and table t{i % 13}"}
        for i in range(5200)
    )
    n = proj.count()
    assert n == 5200
    plan = lexical.plan(proj.conn, "dataframe report r01234", n)
    assert {"dataframe", "r01234"} <= {_key(t) for t in plan.selected}  # common words are kept
    words = " ".join(f"r{i:05d}" for i in range(0, 30 * 7, 7))  # 30 rare, present terms
    plan = lexical.plan(proj.conn, words, n)
    assert len(plan.terms) == 30 and len(plan.selected) == 30  # and no cap on their number
    result = proj.search("which dataframe does report r01234 use")
    assert result.status == "ok" and "r01234" in result.hits[0].memory.statement
    assert result.full is not None and "r01234" in result.full.statement
    only_common = lexical.plan(proj.conn, "dataframe table column uses", n)
    assert len(only_common.selected) == 4
