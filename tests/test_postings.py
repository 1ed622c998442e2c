"""The in-memory BM25 index (retrieval/postings.py) against FTS5's own bm25(), on real databases.

The index is only worth having if it is FTS5's ranking: every comparison here is with
``bm25(memories_fts, 1.0, 0.4, 0.8)`` over the whole table, on generated corpora with
many random queries (exact words and prefixes), as memory grows by a few rows (the
tail), by many (a rebuild) and shrinks (gc). The tokenizer the index uses is checked
against FTS5's on characters Python folds differently.
"""

from __future__ import annotations

import random
import sqlite3

import pytest

from jupymem.config import Settings
from jupymem.core.opening import init_project
from jupymem.core.project import Project
from jupymem.retrieval import retrieve, verdict
from jupymem.retrieval.lexical import Term
from jupymem.retrieval.postings import Postings
from jupymem.retrieval.tokenize import fold, tokens

# Words drawn with Zipf weights: a few in most memories, most rare; some share prefixes
# (so prefix terms merge several words per memory), some are not ASCII.
WORDS = (
    "cell cells cellular cellulose celery data dataset datasets date dated table tables tablet join joins "
    "joined joining customer customers custom region regions report reports reporting churn model models "
    "modelling straße café naïve µm x² ½ ǆungla Ærø über uber 2024 q3 id ids idea"
).split() + [f"w{i}" for i in range(250)]
TOPICS = ["joins", "time zones", "data leakage", "café reports", "cells"]
SPANISH = {
    "La tabla de clientes se actualiza cada lunes por la mañana y nunca los domingos": (
        "The customers table is refreshed every Monday morning and never on Sundays"
    ),
    "Las regiones del informe trimestral vienen del modelo de datos antiguo del equipo": (
        "The quarterly report regions come from the team's old data model"
    ),
}


@pytest.fixture
def project(repo, jupymem_home) -> Project:
    # Word soup is no language; stored as written.
    return init_project(repo, Settings(home=jupymem_home, encoder="none", language="source"))


def _zipf(rng: random.Random, k: int) -> list[str]:
    weights = [1.0 / (r + 1) for r in range(len(WORDS))]
    return rng.choices(WORDS, weights=weights, k=k)


def _corpus(project: Project, seed: int, n: int, *, topics: bool) -> None:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        item = {"statement": " ".join(_zipf(rng, rng.randint(1, 30))) + f" n{seed}x{i}", "kind": "note"}
        if topics and rng.random() < 0.3:
            item["topic"] = rng.choice(TOPICS)
        items.append(item)
    project.remember_many(items)


def _reference(conn: sqlite3.Connection, terms: list[Term], k: int) -> list[tuple[int, float]]:
    """Full scoring: bm25() of every matching row, then the best k (ties by rid)."""
    match = " OR ".join(t.fts for t in terms)
    rows = conn.execute(
        f"SELECT rowid, -{retrieve._BM25} FROM memories_fts WHERE memories_fts MATCH ?", (match,)
    ).fetchall()
    return sorted(rows, key=lambda r: (-r[1], r[0]))[:k]


def _random_terms(rng: random.Random, known: list[str]) -> list[Term]:
    out: dict[str, Term] = {}
    for w in rng.sample(known, rng.randint(1, 8)):
        if rng.random() < 0.4 and len(w) > 2:
            key = w[: rng.randint(2, len(w))]
            out.setdefault(key, Term(w, key, True))
        else:
            out.setdefault(w, Term(w, w, False))
    if rng.random() < 0.2:
        out.setdefault("nowhere", Term("nowhere", "nowhere", False))  # a word no memory holds
    return list(out.values())


def _assert_same_top(got: list[tuple[int, float]], ref: list[tuple[int, float]], *, exact: bool) -> None:
    assert len(got) == len(ref)
    if exact:  # the same operations in the same order: the same doubles
        assert got == ref
        return
    for (rid, score), (ref_rid, ref_score) in zip(got, ref):
        assert score == pytest.approx(ref_score, rel=1e-12)
        if rid != ref_rid:  # only a tie may come out in another order
            assert ref_score == pytest.approx(dict(got).get(ref_rid, float("nan")), rel=1e-12)


def _vocabulary(conn: sqlite3.Connection) -> list[str]:
    return sorted(t for (t,) in conn.execute("SELECT term FROM memories_vocab"))


def _check(project: Project, index: Postings, seed: int, queries: int, *, exact: bool) -> None:
    conn = project.conn
    assert index.refresh(conn, project.count(include_inactive=True))
    known = _vocabulary(conn) + ["nowhere"]
    rng = random.Random(seed)
    for _ in range(queries):
        terms = _random_terms(rng, known)
        k = rng.choice([1, 3, 10, 40, 100])
        _assert_same_top(index.top(terms, k), _reference(conn, terms, k), exact=exact)
        df = index.frequencies(terms)
        for t in terms:  # the document counts bm25() derives its IDF from
            count = conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (t.fts,)).fetchone()[0]
            assert df[t.key] == count


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_top_k_equals_full_bm25_on_generated_corpora(project: Project, seed: int) -> None:
    _corpus(project, seed, 400, topics=False)
    _check(project, Postings(after_searches=0), seed, 150, exact=True)


def test_topic_and_original_columns_weigh_as_in_bm25(repo, settings: Settings) -> None:
    project = init_project(repo, settings)  # statements must be English: others are translated
    project.translator = lambda text: SPANISH.get(text, text)  # a stand-in for the model; originals are kept
    for text in SPANISH:
        project.remember(text, kind="fact", topic="reports")
    _corpus(project, 7, 300, topics=True)
    assert project.conn.execute("SELECT count(*) FROM memories WHERE original IS NOT NULL").fetchone()[0] >= 2
    index = Postings(after_searches=0)
    _check(project, index, 7, 150, exact=False)
    top = index.top([Term("manana", "manana", False)], 5)  # "mañana" is only in an original
    assert [r for r, _ in top] == [r for r, _ in _reference(project.conn, [Term("manana", "manana", False)], 5)]
    assert len(top) == 1


def test_the_index_follows_memory_as_it_grows_and_shrinks(project: Project) -> None:
    _corpus(project, 11, 300, topics=True)
    index = Postings(inline_rows=100, after_searches=0)
    assert index.refresh(project.conn, project.count()) is False  # a first build runs in the background
    index.wait(30)
    _check(project, index, 11, 40, exact=False)
    # A few new rows join a tail, new words and new words under known prefixes included.
    project.remember_many(
        [{"statement": "cellophane tables joinery w3 zebra", "kind": "note"},
         {"statement": "celery celery cells zebra crossing", "kind": "note", "topic": "cells"}]
    )
    _check(project, index, 12, 60, exact=False)
    assert index.top([Term("zebra", "zebra", False)], 5)
    # Many new rows at once: rebuilt in the background; meanwhile the caller asks FTS5.
    _corpus(project, 13, 150, topics=False)
    assert index.refresh(project.conn, project.count()) is False
    index.wait(30)
    _check(project, index, 13, 40, exact=False)
    # Rows that leave (gc) make the index start over.
    gone = project.search("zebra", mode="lexical").hits[0].memory
    project.retire(gone.id, reason="test")
    project.gc(closed_days=-1)  # retired "more than -1 days ago": now
    assert project.count(include_inactive=True) == 300 + 2 + 150 - 1
    assert index.refresh(project.conn, 300 + 2 + 150 - 1) is False  # built afresh, in the background
    index.wait(30)
    _check(project, index, 14, 40, exact=False)
    assert gone.id not in {h.memory.id for h in project.search("zebra", mode="lexical", include_inactive=True).hits}


def test_search_ranks_the_same_with_and_without_the_index(project: Project) -> None:
    _corpus(project, 21, 300, topics=True)
    rng = random.Random(21)
    index = Postings(after_searches=0)
    n = project.count(include_inactive=True)
    for _ in range(60):
        query = " ".join(rng.choices(WORDS[:60], k=rng.randint(1, 12)))
        with_index = verdict.search(project.conn, query, n_docs=n, mode="lexical", postings=index, limit=40)
        without = verdict.search(project.conn, query, n_docs=n, mode="lexical", postings=None, limit=40)
        assert (with_index.status, [h.memory.id for h in with_index.hits]) == (
            without.status, [h.memory.id for h in without.hits])
        assert [h.score for h in with_index.hits] == pytest.approx([h.score for h in without.hits], rel=1e-12)


def test_a_process_that_searches_once_builds_nothing(project: Project) -> None:
    _corpus(project, 31, 50, topics=False)
    index = Postings()  # the default: the first search is FTS5's
    n = project.count(include_inactive=True)
    assert index.refresh(project.conn, n) is False and index.size == 0
    assert index.refresh(project.conn, n) is True and index.size == n  # a second search: built inline


def test_an_empty_project_and_unknown_words(project: Project) -> None:
    index = Postings(after_searches=0)
    assert index.refresh(project.conn, 0)
    assert index.top([Term("anything", "anything", False)], 10) == []
    project.remember("one memory about churn", kind="note")
    assert index.refresh(project.conn, 1)
    assert index.top([Term("nothing", "nothing", False)], 10) == []
    assert index.frequencies([Term("churn", "churn", False), Term("chu", "chu", True)]) == {"churn": 1, "chu": 1}


# -- the tokenizer ---------------------------------------------------------------------

TRICKY = [
    "Straße ß ẞ", "x² and H₂O", "¼ cup, ½ hour", "ǆungla ǅ Ǆ", "ĳssel ŀl", "café naïve Ærø",
    "e\u0301te\u0301 combining", "日本語のテキスト", "emoji 🎉 party", "ﬁnance ligature", "µm and μm",
    "İstanbul ıi", "Ωmega ᾧ", "tab\tnew\nline\x00nul", "snake_case and kebab-case", "٣٤ arabic digits",
]


def test_tokens_are_the_tokens_fts5_makes() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")
    conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", list(enumerate(TRICKY)))
    found: dict[int, list[str]] = {}
    for term, doc in conn.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
        found.setdefault(doc, []).append(term)
    for i, text in enumerate(TRICKY):
        assert tokens(text) == found.get(i, []), text


def test_fold_keeps_separators_and_folds_words() -> None:
    assert fold("Straße_ID-Ærø") == "straße_id-ærø"
    assert tokens("Customer_ID") == ["customer", "id"]
    assert tokens("\ud800 lone surrogate") == ["lone", "surrogate"]


def test_a_query_word_with_python_only_folding_still_matches(project: Project) -> None:
    project.remember("Die Straße nach Ærø ist gesperrt", kind="note")
    assert project.search("straße", mode="fts").hits  # ß is not "ss" to the index
    assert project.search("STRASSE", mode="fts").abstained


def test_a_rebuild_in_another_process_reaches_this_ones_index(project: Project) -> None:
    """Row ids are not identities: another process's gc and rebuild can give them to other
    memories with the count and the highest id as they were. This process must not answer
    from the index it built over the old rows (the replay's generation mark says so)."""
    from jupymem.storage import database

    for statement in ("Alpha: prices are stored in cents", "Beta: weeks start on Monday",
                      "Gamma: revenue excludes VAT"):
        project.remember(statement, kind="note")
    for _ in range(3):  # from here on the in-memory index answers
        assert project.search("weeks start on Monday", mode="lexical").hits[0].memory.statement.startswith("Beta")
    other = Project(project.settings, project.id, project.root, database.open_database(project.database, create=False))
    try:
        alpha = next(m for m in other.list() if m.statement.startswith("Alpha"))
        other.retire(alpha.id, reason="moved to a config file")
        assert alpha.id in other.gc(closed_days=0).forgotten  # Alpha's row and its payload are gone
        other.rebuild()  # Beta and Gamma take rows 1 and 2
        other.remember("Delta: the fiscal year starts in April", kind="note")  # three rows again, top 3
    finally:
        other.conn.close()
    hit = project.search("weeks start on Monday", mode="lexical").hits[0]
    assert hit.memory.statement.startswith("Beta"), hit.memory.statement
    assert project.search("fiscal year starts in April", mode="lexical").hits[0].memory.statement.startswith("Delta")
def test_word_frequencies_are_fts5s_document_counts(project: Project) -> None:
    """What judging a memory weighs its words by: the in-memory index counts exactly what
    fts5vocab counts, for words in the built base and in the tail added since."""
    from jupymem.retrieval import lexical

    _corpus(project, 41, 300, topics=True)
    index = Postings(after_searches=0)
    assert index.refresh(project.conn, project.count(include_inactive=True))
    project.remember("A late note about customers, cells and refunds.", kind="note")  # into the tail
    assert index.refresh(project.conn, project.count(include_inactive=True))
    words = _vocabulary(project.conn) + ["refunds", "nowhere"]
    expected = lexical.document_frequencies(project.conn, words)
    assert index.word_frequencies(words) == expected
    assert expected["refunds"] == 1 and "nowhere" not in expected
