"""The lexical and fuzzy legs, abstention and the full record, through Project.search.

The dense leg is off here (conftest sets JUPYMEM_ENCODER=none); tests/test_dense.py
covers it. Every project is a real database in a temporary JUPYMEM_HOME.
"""

from __future__ import annotations

import pytest

from jupymem.retrieval import answerable, fuzzy, lexical, retrieve
from jupymem.config import Settings
from jupymem.core.project import Project
from jupymem.core.opening import init_project

MEMORIES = [
    ("Join the subscriptions table to events on customer_id and account_region.", "constraint"),
    ("Merging df_sales with df_customers duplicated rows; aggregate df_sales by invoice first.", "failure"),
    ("Run 01_load.ipynb before 02_features.ipynb; each writes to data/interim.", "procedure"),
    ("The events parquet dataset is partitioned by event_date and region.", "fact"),
    ("Plots use the team palette and always label the y axis with units.", "preference"),
    ("We evaluate the churn model with PR-AUC because only four percent of customers churn.", "decision"),
    ("The warehouse stores every timestamp in UTC; the app export uses local device time.", "fact"),
    ("Book the two shared A10 GPUs in the calendar before any run longer than an hour.", "constraint"),
    ("The customerId field in the mobile payload is the same key as customer_id in the warehouse.", "fact"),
]


@pytest.fixture
def project(repo, settings: Settings) -> Project:
    proj = init_project(repo, settings)
    proj.remember_many({"statement": s, "kind": k} for s, k in MEMORIES)
    return proj


def _ids(result) -> list[str]:
    return [h.memory.statement for h in result.hits]


# -- any text is a query ------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "", "   ", "AND OR NOT", '"unbalanced quote', "NEAR(a b, 3)", "col:value", "*", "a* OR b*",
        "(((", "^start", "-- DROP TABLE memories;", "\x00\x01 binary", "émoji 🎉 ünïcödé", "日本語のクエリ",
        "x" * 30_000, "customer_id" * 500, "{}[]<>!@#$%&", "0.5e10 3.14",
    ],
)
def test_any_text_is_a_valid_query(project: Project, query: str) -> None:
    for mode in retrieve.MODES:
        result = project.search(query, mode=mode)
        assert result.status in ("ok", "abstained")
        if result.abstained:
            assert result.reason


def test_a_non_string_query_abstains_instead_of_raising(project: Project) -> None:
    assert project.search(None).abstained  # type: ignore[arg-type]


def test_an_unknown_mode_is_a_clear_error(project: Project) -> None:
    from jupymem.errors import InvalidStatement

    with pytest.raises(InvalidStatement, match="mode"):
        project.search("events", mode="semantic")


def test_every_word_memory_holds_is_searched(project: Project) -> None:
    # A whole prompt is a query: no cap on its terms, none dropped for being common.
    prompt = " ".join(f"word{i}" for i in range(40)) + " events parquet partitioned region timestamp customers"
    plan = lexical.plan(project.conn, prompt, 9)
    held = {t.key for t in plan.terms if plan.df.get(t.key, 0) > 0}
    assert {t.key for t in plan.selected} == held
    assert {lexical.stem(w) for w in ("events", "parquet", "partitioned", "region", "timestamp", "customers")} <= held
    assert plan.match.count(" OR ") == len(plan.selected) - 1


def test_common_words_are_kept_on_large_projects(repo, settings: Settings) -> None:
    # Over 5,000 memories, "table" is in all of them and "cohort" in more than 5%: both used
    # to be dropped, which left "churn" alone, and short churn notes outranked the decision.
    proj = init_project(repo, settings)
    proj.remember_many(
        {"statement": f"Notebook cell {i} reads table {i}" + (" for the cohort" if i % 15 == 0 else ""), "kind": "note"}
        for i in range(5000)
    )
    proj.remember_many({"statement": f"Churn report {i}", "kind": "note"} for i in range(40))
    proj.remember("The churn cohort table uses snapshot Sundays", kind="decision")
    plan = lexical.plan(proj.conn, "which table does the churn cohort use", proj.count())
    assert {"churn", "cohort", "table"} == {t.key for t in plan.selected}
    first = proj.search("which table does the churn cohort use", mode="lexical").hits[0].memory
    assert first.statement.startswith("The churn cohort table")


# -- better lexical matching ---------------------------------------------------------


def test_stems_match_other_inflections(project: Project) -> None:
    assert "partitioned by event_date" in _ids(project.search("how are the events partitions laid out"))[0]
    assert "Merging df_sales" in _ids(project.search("merged sales duplicates"))[0]


def test_the_fts_mode_is_plain_bm25_without_stems(project: Project) -> None:
    assert project.search("partitions", mode="fts").abstained
    assert not project.search("partitions", mode="lexical").abstained


def test_stem_is_light_and_never_empty() -> None:
    assert lexical.stem("partitions") == "partition"
    assert lexical.stem("partitioned") == "partition"
    assert lexical.stem("joining") == "join"
    assert lexical.stem("queries") == "quer"
    assert lexical.stem("properties") == "propert"
    assert lexical.stem("class") == "class"
    assert lexical.stem("id") == "id"
    assert lexical.stem("12345") == "12345"


@pytest.mark.parametrize(
    "word",
    ["properties", "queries", "studies", "planned", "joining", "activities", "classes", "analyses", "customers",
     "partitioned", "organizational", "statements", "hopefulness", "status", "glass", "running", "applied"],
)
def test_a_stem_finds_its_own_word(word: str) -> None:
    # The stem is searched as a prefix: it must be one of the word it came from.
    assert word.startswith(lexical.stem(word))


def test_properties_finds_properties(repo, settings: Settings) -> None:
    proj = init_project(repo, settings)
    proj.remember_many(
        [{"statement": "Customer properties live in the crm_profiles table.", "kind": "fact"},
         {"statement": "Each property listing has a postcode and a price.", "kind": "fact"},
         {"statement": "Weekly churn report goes to finance.", "kind": "fact"}]
    )
    # "properties" once searched "property*", which finds property but not properties.
    found = _ids(proj.search("properties", mode="lexical"))
    assert "Customer properties live in the crm_profiles table." in found
    assert "Each property listing has a postcode and a price." in found


def test_identifiers_are_split_only_when_memory_does_not_know_them(repo, settings: Settings) -> None:
    proj = init_project(repo, settings)
    proj.remember_many(
        [{"statement": "The customer id is unique per account region.", "kind": "fact"},
         {"statement": "Orders carry an invoiceNumber from billing.", "kind": "fact"}]
    )
    n = proj.count()
    # customerId is no word of memory: its parts are searched instead.
    assert [t.word for t in lexical.plan(proj.conn, "customerId", n).terms] == ["customer", "id"]
    assert _ids(proj.search("customerId", mode="lexical"))[0].startswith("The customer id")
    # invoiceNumber is one: it is searched whole, not as invoice and number.
    assert [t.word for t in lexical.plan(proj.conn, "invoiceNumber", n).terms] == ["invoicenumber"]
    # Nor is a name split whose parts memory does not hold.
    assert [t.word for t in lexical.plan(proj.conn, "accountWidget", n).terms] == ["accountwidget"]


@pytest.mark.parametrize("name", ["mRNAs", "Ly6C", "iPSC", "ompF", "mTORC1", "IgG1", "pH"])
def test_names_that_are_not_code_identifiers_stay_whole(name: str) -> None:
    assert lexical.identifier_parts(f"the {name} level") == {}


def test_code_identifiers_are_split_at_their_humps() -> None:
    assert lexical.identifier_parts("the customerId and HTTPServer and snake_case getJSON") == {
        "customerid": ["customer", "id"], "httpserver": ["http", "server"], "getjson": ["get", "json"],
    }


def test_camel_case_queries_find_snake_case_memory(project: Project) -> None:
    statements = _ids(project.search("accountRegion"))
    assert statements and "account_region" in statements[0]


# -- fuzzy identifiers ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("typo", "expected"),
    [
        ("custmer_id", "customer_id"),
        ("df_slaes", "Merging df_sales"),
        ("01_lod.ipynb", "01_load.ipynb"),
        ("what does 01_lod.ipynb write", "01_load.ipynb"),
        ("evnts partitoned", "partitioned by event_date"),
    ],
)
def test_mistyped_identifiers_find_the_right_memory(project: Project, typo: str, expected: str) -> None:
    result = project.search(typo)
    assert not result.abstained, typo
    assert expected in result.hits[0].memory.statement
    assert "fuzzy" in result.hits[0].legs


def test_plain_bm25_does_not_find_them(project: Project) -> None:
    """Plain FTS5 BM25 never abstains; it reaches customer_id through "id" alone, unfixed
    and weakly, where the lexical leg fixes the typo (above)."""
    result = project.search("custmer_id", mode="fts")
    assert all(h.legs == ("lexical",) and h.confidence < answerable.ANSWER_AT for h in result.hits)


def test_identifier_extraction() -> None:
    found = fuzzy.identifiers("Join df_sales on customer_id in 01_load.ipynb; userId, utf8, 3.14 and e.g. plain words")
    assert found == ["df_sales", "customer_id", "01_load.ipynb", "userid"]


def test_the_vocabulary_grows_with_memory(project: Project) -> None:
    vocab = fuzzy.Vocabulary()
    vocab.refresh(project.conn)
    assert vocab.correct_identifier("df_revnue") is None
    project.remember("df_revenue holds net revenue per invoice line", kind="fact")
    vocab.refresh(project.conn)
    assert vocab.correct_identifier("df_revnue") == "df_revenue"
    assert vocab.correct_identifier("df_revenue") is None  # known names are not corrected


def test_short_or_unrelated_words_are_not_corrected(project: Project) -> None:
    vocab = fuzzy.Vocabulary()
    vocab.refresh(project.conn)
    assert vocab.correct_word("lod") is None
    assert fuzzy.corrections(vocab, "kubernetes namespace", {"kubernetes", "namespace"}) == {}


# -- abstention and the full record ------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "What is the Kubernetes namespace of the serving deployment?",
        "Who approves vacation requests in December?",
        "How do I configure the office VPN from home?",
    ],
)
def test_unrelated_questions_abstain(project: Project, query: str) -> None:
    result = project.search(query)
    assert result.abstained and not result.hits and result.reason


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("which metric do we use for the churn model", "PR-AUC"),
        ("timestamp time zone in the warehouse", "UTC"),
        ("GPU booking", "A10 GPUs"),
    ],
)
def test_real_matches_do_not_abstain(project: Project, query: str, expected: str) -> None:
    result = project.search(query)
    assert not result.abstained
    assert expected in result.hits[0].memory.statement


def test_a_clear_winner_comes_back_whole(project: Project) -> None:
    result = project.search("team palette y axis units")
    assert result.full is not None and "team palette" in result.full.statement


def test_no_full_record_when_two_memories_tie(repo, settings: Settings) -> None:
    proj = init_project(repo, settings)
    proj.remember_many(
        [{"statement": "The weekly churn export goes to the CRM bucket", "kind": "fact"},
         {"statement": "The weekly churn export goes to the finance bucket", "kind": "fact"}]
    )
    result = proj.search("weekly churn export bucket")
    assert len(result.hits) == 2 and result.full is None


def test_retired_and_superseded_memories_leave_results_unless_asked(project: Project) -> None:
    old = project.search("GPU booking").hits[0].memory
    project.retire(old.id, reason="quota changed")
    assert all(h.memory.id != old.id for h in project.search("GPU booking A10").hits)
    assert project.search("GPU booking A10", include_inactive=True).hits[0].memory.id == old.id


def test_kinds_filter(project: Project) -> None:
    result = project.search("customer_id", kinds=["fact"])
    assert result.hits and all(h.memory.kind == "fact" for h in result.hits)


def test_a_large_first_build_runs_in_the_background(project: Project) -> None:
    vocab = fuzzy.Vocabulary(background_rows=3)  # the project has more new rows than that
    assert vocab.refresh(project.conn) is False  # answers at once; searches skip typo fixes
    vocab.wait(10)
    assert vocab.refresh(project.conn) is True
    assert vocab.correct_identifier("custmer_id") == "customer_id"
    project.remember("df_margin holds the gross margin per order", kind="fact")
    assert vocab.refresh(project.conn) is True  # a few new rows: read inline
    assert vocab.correct_identifier("df_margn") == "df_margin"


# -- lexical against plain BM25, where the old heuristics lost ------------------------


def _where_old_heuristics_lost() -> list[dict]:
    """A suite over 5,000+ memories whose answers hang on what the old lexical leg dropped:
    a word in more than 5% of memory, a query word beyond the twelve rarest of a prompt,
    an inflection the stemmer sent elsewhere ("properties" searched "property*")."""
    lines = [{"type": "memory", "id": f"f{i}", "text": f"Notebook cell {i} reads table {i}"
              + (" for the cohort" if i % 15 == 0 else "") + (f" zq{i}" if i < 15 else "")}
             for i in range(5000)]
    lines += [{"type": "memory", "id": f"c{i}", "text": f"Churn report {i}"} for i in range(40)]
    lines += [{"type": "memory", "id": f"r{i}", "text": f"Refunds {i} arrive late."} for i in range(4)]
    lines += [
        {"type": "memory", "id": "cohort", "text": "The churn cohort table uses snapshot Sundays"},
        {"type": "memory", "id": "refunds", "text": "Refunds are netted against the invoice month, not the payment month."},
        {"type": "memory", "id": "props", "text": "Each listing stores its properties: postcode, size and price."},
        {"type": "memory", "id": "prop", "text": "A property is listed once per agent."},
    ]
    junk = " ".join(f"zq{i}" for i in range(15))  # fifteen words rarer than any that matters
    lines += [
        {"type": "query", "id": "q1", "query": "which table does the churn cohort use", "relevant": ["cohort"]},
        {"type": "query", "id": "q2", "query": f"{junk} refunds netted invoice payment month", "relevant": ["refunds"]},
        {"type": "query", "id": "q3", "query": "how often is each property listed per agent", "relevant": ["prop"]},
        {"type": "query", "id": "q4", "query": "which properties does a listing store", "relevant": ["props"]},
    ]
    return lines


def test_lexical_is_at_least_plain_bm25_where_the_old_heuristics_lost(tmp_path) -> None:
    import json

    from jupymem.measure import evaluate

    path = tmp_path / "suite.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in _where_old_heuristics_lost()) + "\n", encoding="utf-8")
    details: list[dict] = []
    report = evaluate.run_suite(evaluate.load_suite(path), methods=("fts", "bm25"), encoder="none", details=details)
    fts, lexical = report["methods"]["fts"], report["methods"]["bm25"]
    for metric in ("ndcg@10", "recall@10", "mrr"):
        assert lexical[metric] >= fts[metric], metric
    firsts = {d["query"]: d["ranked"][:1] == d["relevant"] for d in details if d["method"] == "bm25"}
    assert firsts == {"q1": True, "q2": True, "q3": True, "q4": True}
