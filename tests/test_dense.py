"""The dense leg: vectors in sqlite-vec kept in step with memory, background loading,
both SQLite routes, the dense-only gate, and hybrid search through Project.search.

Real model, real sqlite-vec: the bundled model (JUPYMEM_ENCODER unset). A
``TableEmbedder`` (a real Embedder that looks vectors up in a table) gives exact
cosines where a test needs them; ``HashEmbedder`` is embed.py's small deterministic one.
Set JUPYMEM_TEST_MODEL to a model2vec folder to run these with another model.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from jupymem.storage import database
from jupymem.retrieval import index
from jupymem.config import Settings
from jupymem.retrieval.embed import BackgroundEncoder, HashEmbedder
from jupymem.core.project import Project
from jupymem.core.opening import init_project

from conftest import make_repo


STATEMENTS = [
    "Join subscriptions to events on customer_id and account_region; customer_id alone repeats across tenants.",
    "Never use cancellation_reason as a feature: it is filled in after the customer left and leaks the label.",
    "The events parquet dataset is partitioned by event_date and region; filter on event_date to prune files.",
    "Plots use the team palette from plotting/style.py and always label the y axis with units.",
    "We evaluate the churn model with PR-AUC because only four percent of customers churn in a month.",
    "The warehouse stores timestamps in UTC; the app export is in local device time without an offset.",
    "Book the two shared A10 GPUs in the team calendar before any run longer than an hour.",
    "Missing usage values are imputed with zero because a missing row means no usage that day.",
    "The retention campaign may reach at most 5,000 customers a week, the call centre's capacity.",
    "Model cards in docs/model_cards list the training window, features and metrics by segment.",
    "Never upsample churners with SMOTE; use class weights instead.",
    "Negative invoice amounts are credit notes; exclude them from average revenue per user.",
]


@pytest.fixture
def dense_settings(real_encoder: str | None) -> Settings:
    # A small block, so that a dozen memories outgrow it and the encoder is wanted.
    return Settings.from_env().with_(block_cap=600)


@pytest.fixture
def project(repo: Path, dense_settings: Settings) -> Project:
    proj = init_project(repo, dense_settings)
    proj.remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS)
    return proj


def _vector_rows(proj: Project) -> dict[int, tuple[str, str]]:
    rows = proj.conn.execute(f"SELECT rid, memory_id, model FROM {index.MAP_TABLE}").fetchall()
    return {rid: (mid, model) for rid, mid, model in rows}


def _rids(proj: Project) -> dict[str, int]:
    return {mid: rid for rid, mid in proj.conn.execute("SELECT rid, id FROM memories").fetchall()}


class TableEmbedder:
    """An Embedder whose vectors come from a table (unknown texts get the last axis)."""

    def __init__(self, table: dict[str, Sequence[float]], dimensions: int, name: str = "table"):
        self.table, self.dimensions, self.name = table, dimensions, name

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, t in enumerate(texts):
            v = np.asarray(self.table.get(t, [0.0] * (self.dimensions - 1) + [1.0]), dtype=np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


def _unit(angle_cos: float, axis: int, dims: int = 4) -> list[float]:
    """A unit vector whose cosine with e0 is ``angle_cos``, leaning towards ``axis``."""
    v = [0.0] * dims
    v[0] = angle_cos
    v[axis] = (1 - angle_cos**2) ** 0.5
    return v


# -- the route to sqlite-vec -----------------------------------------------------------


def test_sqlean_route_loads_sqlite_vec(tmp_path: Path) -> None:
    conn = database.open_database(tmp_path / "m.db", create=True, driver_name="sqlean")
    ok, why = index.vec_route(conn)
    assert ok, why
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")


def test_stdlib_route_degrades_to_lexical_with_a_reason(repo: Path, dense_settings: Settings) -> None:
    if database.can_load_extensions(database.driver("sqlite3")):
        pytest.skip("this Python's sqlite3 can load extensions; the subprocess test covers that route")
    init_project(repo, dense_settings).remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS)
    from jupymem.storage.registry import database_path, read_registry

    pid = read_registry(dense_settings.home).project_for_root(repo)
    conn = database.open_database(database_path(dense_settings.home, pid), create=False, driver_name="sqlite3")
    proj = Project(dense_settings, pid, repo, conn)
    status = proj.prepare_dense(timeout=60)
    assert status.dense == "off" and status.driver == "sqlite3"
    assert "cannot load SQLite extensions" in status.reason and "sqlean" in status.reason
    result = proj.search("which metric evaluates the churn model")  # lexical answers alone
    assert not result.abstained and "PR-AUC" in result.hits[0].memory.statement
    assert all(h.legs == ("lexical",) for h in result.hits)
    conn.close()


SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/usr/local/bin")


@pytest.mark.skipif(SYSTEM_PYTHON is None, reason="no system python3")
def test_stdlib_route_where_sqlite3_can_load_extensions(tmp_path: Path) -> None:
    """A Python whose own sqlite3 loads extensions (Debian's) uses it directly."""
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import sqlite3,sys; sys.exit(0 if hasattr(sqlite3.Connection, 'enable_load_extension') else 3)"],
        capture_output=True,
    )
    if probe.returncode != 0:
        pytest.skip("the system python3's sqlite3 cannot load extensions either")
    import sqlite_vec

    site = str(Path(sqlite_vec.__file__).resolve().parents[1])
    root = str(Path(__file__).resolve().parents[1])
    code = """
import sys, struct
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from pathlib import Path
from jupymem.storage import database
from jupymem.retrieval import index
assert database.driver().__name__ == "sqlite3", database.driver()
conn = database.open_database(Path(sys.argv[3]), create=True)
ok, why = index.vec_route(conn)
assert ok, why
conn.execute("CREATE VIRTUAL TABLE v USING vec0(embedding float[2])")
conn.execute("INSERT INTO v (rowid, embedding) VALUES (1, ?)", (struct.pack("2f", 1.0, 0.0),))
print(conn.execute("SELECT rowid FROM v WHERE embedding MATCH ? AND k = 1", (struct.pack("2f", 1.0, 0.1),)).fetchone()[0])
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [SYSTEM_PYTHON, "-c", code, root, site, str(tmp_path / "s.db")], capture_output=True, text=True, env=env
    )
    if out.returncode != 0 and ("No module named" in out.stderr or "ImportError" in out.stderr):
        pytest.skip(f"the system python3 cannot import jupymem's dependencies: {out.stderr.strip().splitlines()[-1]}")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


# -- loading: only when memory outgrows the block, and never waited for -----------------


def test_an_interactive_search_loads_the_encoder_at_any_size(repo: Path, jupymem_home: Path) -> None:
    """A kernel or a server: the first search starts loading and answers lexically; once the
    encoder is ready, a one-memory project (embedded inline) has the dense leg."""
    settings = Settings(home=jupymem_home, encoder="interactive-test")
    release = threading.Event()
    enc = BackgroundEncoder(loader=lambda: release.wait(30) and HashEmbedder(32, name="hash-interactive"))
    index.register_encoder(settings.encoder, enc)
    try:
        proj = init_project(repo, settings)
        proj.remember("Plots always label the y axis with units.", kind="preference")
        assert proj.block().omitted == 0  # it all fits the block: no reason but the search
        first = proj.search("plot axis units")
        assert enc.state == "loading" and "dense" not in first.legs and not first.abstained
        release.set()
        assert enc.wait(10)
        second = proj.search("plot axis units")
        assert "dense" in second.legs and proj.dense_status().dense == "on"
    finally:
        release.set()
        index.forget_encoder(settings.encoder)


def test_a_one_shot_command_never_loads_the_encoder(repo: Path, jupymem_home: Path) -> None:
    settings = Settings(home=jupymem_home, encoder="one-shot-test", block_cap=600, interactive=False)
    enc = BackgroundEncoder(loader=lambda: HashEmbedder(32, name="hash-one-shot"))
    index.register_encoder(settings.encoder, enc)
    try:
        proj = init_project(repo, settings)
        proj.remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS)
        assert proj.block().omitted > 0  # memory outgrew the block, and still
        result = proj.search("which metric evaluates the churn model")
        assert enc.state == "off" and result.legs == ("lexical", "fuzzy")
        assert "one-shot" in proj.dense_status().reason
    finally:
        index.forget_encoder(settings.encoder)


def test_search_never_waits_for_a_slow_encoder(repo: Path, jupymem_home: Path) -> None:
    settings = Settings(home=jupymem_home, encoder="slow-test-encoder", block_cap=600)
    release = threading.Event()

    def slow_loader():
        release.wait(30)
        return HashEmbedder(64, name="hash-slow")

    enc = BackgroundEncoder(loader=slow_loader)
    index.register_encoder(settings.encoder, enc)
    try:
        proj = init_project(repo, settings)
        proj.remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS)
        result = proj.search("which metric evaluates the churn model")
        # The loader is still blocked on `release`: had the search waited for it, the
        # encoder would be ready by now (the wait times out after 30 s) and the dense leg in.
        assert enc.state == "loading"
        assert not result.abstained and all("dense" not in h.legs for h in result.hits)
        status = proj.dense_status()
        assert status.dense == "off" and status.encoder == "loading"
        release.set()
        enc.wait(10)
        proj.prepare_dense(timeout=30)
        assert proj.dense_status().dense == "on"
        assert any("dense" in h.legs for h in proj.search("which metric evaluates the churn model").hits)
    finally:
        release.set()
        index.forget_encoder(settings.encoder)


def test_a_failed_encoder_leaves_lexical_search_and_says_why(repo: Path, jupymem_home: Path) -> None:
    settings = Settings(home=jupymem_home, encoder=str(repo / "no-such-model"), block_cap=600)
    proj = init_project(repo, settings)
    proj.remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS)
    status = proj.prepare_dense(timeout=30)
    assert status.dense == "off" and status.encoder == "failed"
    assert "no model2vec model" in status.reason
    assert not proj.search("PR-AUC churn metric").abstained


def test_encoder_none_turns_the_dense_leg_off(repo: Path, jupymem_home: Path) -> None:
    proj = init_project(repo, Settings(home=jupymem_home, encoder="none", block_cap=600))
    proj.remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS)
    proj.search("churn metric")
    assert proj.dense_status().reason == "turned off (JUPYMEM_ENCODER=none)"


# -- vectors kept in step ----------------------------------------------------------------


def test_vectors_are_written_for_every_memory(project: Project) -> None:
    status = project.prepare_dense(timeout=60)
    assert status.dense == "on", status
    rows = _vector_rows(project)
    rids = _rids(project)
    assert set(rows) == set(rids.values())
    assert {model for _, model in rows.values()} == {status.model}
    n = project.conn.execute(f"SELECT count(*) FROM {index.VEC_TABLE}").fetchone()[0]
    assert n == len(STATEMENTS) and status.vectors == len(STATEMENTS)


def test_remember_does_not_embed_the_next_search_does(project: Project) -> None:
    project.prepare_dense(timeout=60)
    m = project.remember("Dashboards round percentages to one decimal place.", kind="preference")
    rid = _rids(project)[m.id]
    assert rid not in _vector_rows(project)  # remember wrote no vector
    result = project.search("how many decimals for percentages on dashboards")
    assert rid in _vector_rows(project)
    assert result.hits[0].memory.id == m.id


def test_supersede_and_retire_keep_the_dense_leg_in_step(project: Project) -> None:
    project.prepare_dense(timeout=60)
    gpu = next(m for m in project.list() if "A10" in m.statement)
    new = project.supersede(gpu.id, "Book the four shared L4 GPUs in the team calendar before any long run.")
    result = project.search("reserve graphics cards before a long training job")
    ids = [h.memory.id for h in result.hits]
    assert gpu.id not in ids
    assert new.id in ids
    assert _rids(project)[new.id] in _vector_rows(project)
    project.retire(new.id, reason="no more GPUs")
    assert new.id not in [h.memory.id for h in project.search("reserve graphics cards before a long training job").hits]
    near = project.tiers.static_index().nearest(
        index.shared_encoder(project.settings.encoder).embedder.embed_batch(["L4 GPUs calendar"])[0], 5, revision=project.revision(), include_inactive=True
    )
    assert _rids(project)[new.id] in [rid for rid, _ in near]  # still there for history searches


def test_import_and_rebuild_are_embedded(project: Project, tmp_path: Path, dense_settings: Settings) -> None:
    import io

    project.prepare_dense(timeout=60)
    other = init_project(make_repo(tmp_path / "other"), dense_settings)
    other.remember("The fx_rates table carries Friday's rate over the weekend.", kind="fact")
    buf = io.StringIO()
    other.export(buf)
    buf.seek(0)
    project.import_(buf, other_project=True)
    project.search("exchange rate on Saturday")
    fx = next(m for m in project.list() if "fx_rates" in m.statement)
    assert _rids(project)[fx.id] in _vector_rows(project)

    project.rebuild()
    assert project.dense_status().dense == "off"  # the copy was reset: rows may have moved
    project.prepare_dense(timeout=60)
    rows, rids = _vector_rows(project), _rids(project)
    assert {rows[rid][0] for rid in rids.values()} == set(rids)  # every row, under its own memory id


def test_a_vec_less_writer_leaves_rows_for_backfill(repo: Path, dense_settings: Settings) -> None:
    from jupymem.storage.registry import database_path, read_registry

    first = init_project(repo, dense_settings)
    first.remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS[:6])
    first.prepare_dense(timeout=60)
    pid = read_registry(dense_settings.home).project_for_root(repo)
    # Another process without extensions records more: stdlib sqlite3 never touches vec0.
    conn = database.open_database(database_path(dense_settings.home, pid), create=False, driver_name="sqlite3")
    writer = Project(dense_settings, pid, repo, conn)
    writer.remember_many({"statement": s, "kind": "fact"} for s in STATEMENTS[6:])
    assert writer.verify().ok
    conn.close()
    assert len(_vector_rows(first)) == 6
    first.search("credit notes and negative invoices")
    first.tiers.wait(30)
    first.search("credit notes and negative invoices")
    assert len(_vector_rows(first)) == len(STATEMENTS)


def test_a_model_change_re_embeds_everything(project: Project) -> None:
    dense = index.DenseIndex(project.conn)
    assert index.vec_route(project.conn)[0]
    assert dense.sync(HashEmbedder(32, name="hash-a")) == len(STATEMENTS)
    assert dense.sync(HashEmbedder(32, name="hash-a")) == 0
    assert dense.sync(HashEmbedder(48, name="hash-b")) == len(STATEMENTS)
    assert {model for _, model in _vector_rows(project).values()} == {"hash-b"}
    assert index.vector_counts(project.conn) == ("hash-b", len(STATEMENTS))


def test_large_projects_rescore_only_the_hamming_nearest(project: Project) -> None:
    dense = index.DenseIndex(project.conn)
    index.vec_route(project.conn)
    emb = HashEmbedder(64, name="hash-ham")
    dense.sync(emb)
    q = emb.embed_batch([STATEMENTS[4]])[0]
    exact = dense.nearest(q, 3, revision=0, include_inactive=True)
    dense.exact_max, dense.rescore = 2, 5  # the large-project path, on a few rows
    approx = dense.nearest(q, 3, revision=0, include_inactive=True)
    assert approx[0] == exact[0] and approx[0][1] == pytest.approx(1.0, abs=1e-3)


# -- fusion and the gate --------------------------------------------------------------


def _table_project(repo: Path, jupymem_home: Path, table: dict[str, list[float]], statements: list[str]) -> Project:
    settings = Settings(home=jupymem_home, encoder="table-test", block_cap=512)
    enc = BackgroundEncoder(loader=lambda: TableEmbedder(table, 4))
    index.register_encoder(settings.encoder, enc)
    proj = init_project(repo, settings)
    proj.remember_many({"statement": s, "kind": "fact"} for s in statements)
    assert proj.prepare_dense(timeout=30).dense == "on"
    return proj


def test_a_close_and_clear_dense_only_match_enters(repo: Path, jupymem_home: Path) -> None:
    statements = ["Alpha memory about quotas.", "Beta memory about palettes.", "Gamma memory about joins."]
    query = "completely different words"
    table = {query: [1, 0, 0, 0], statements[0]: _unit(0.9, 1), statements[1]: _unit(0.1, 2), statements[2]: _unit(0.05, 3)}
    try:
        proj = _table_project(repo, jupymem_home, table, statements)
        result = proj.search(query)
        assert not result.abstained
        assert result.hits[0].memory.statement == statements[0] and result.hits[0].legs == ("dense",)
        assert proj.search(query, mode="lexical").abstained
    finally:
        index.forget_encoder("table-test")


def test_a_dense_only_candidate_must_stand_above_the_background(repo: Path, jupymem_home: Path) -> None:
    """The query's background (its median cosine to generic notes) is 0 for TableEmbedder,
    which maps every text it does not know to the last axis. Past a small project, a memory
    only the dense leg finds enters only above it."""
    statements = [f"Memory number {i} about topic {i}." for i in range(12)]
    query = "completely different words"
    table = {query: [1, 0, 0, 0], statements[0]: _unit(0.7, 1)}
    table.update({s: _unit(-0.3, 2 + i % 2) for i, s in enumerate(statements[1:])})
    try:
        proj = _table_project(repo, jupymem_home, table, statements)
        ranking = proj.explain(query, 3)
        assert ranking.side.background == pytest.approx(0.0, abs=1e-6)
        assert [c.memory.statement for c in ranking.candidates] == [statements[0]]
        assert ranking.candidates[0].legs == ("dense",)
    finally:
        index.forget_encoder("table-test")


def test_in_a_small_project_every_memory_is_judged_but_only_confident_ones_show(repo: Path, jupymem_home: Path) -> None:
    statements = ["Alpha memory about quotas.", "Beta memory about palettes.", "Gamma memory about joins."]
    query = "completely different words"
    table = {query: [1, 0, 0, 0], statements[0]: _unit(0.7, 1), statements[1]: _unit(-0.3, 2),
             statements[2]: _unit(-0.1, 3)}
    try:
        proj = _table_project(repo, jupymem_home, table, statements)
        ranking = proj.explain(query, 3)
        scores = {c.memory.statement: c.score for c in ranking.candidates}
        assert set(scores) == set(statements)  # all three are candidates
        assert scores[statements[0]] > 0 and scores[statements[1]] == scores[statements[2]] == 0
        result = proj.search(query)
        assert result.hits[0].memory.statement == statements[0]
        # A memory no leg scored is shown only when answerability is confident about it.
        assert all(h.confidence >= 0.5 for h in result.hits if h.score == 0)
    finally:
        index.forget_encoder("table-test")


def test_hybrid_finds_paraphrases_and_keeps_lexical_hits(project: Project) -> None:
    project.prepare_dense(timeout=60)
    lexical = project.search("which metric do we use to evaluate the churn model", mode="lexical")
    hybrid = project.search("which metric do we use to evaluate the churn model")
    assert "PR-AUC" in hybrid.hits[0].memory.statement
    assert lexical.hits[0].memory.id == hybrid.hits[0].memory.id
    assert "dense" in hybrid.hits[0].legs and "lexical" in hybrid.hits[0].legs
    assert project.search("What is the Kubernetes namespace of the serving deployment?").abstained


def test_status_reports_the_dense_leg(project: Project) -> None:
    from jupymem.core.overview import status

    # In a long-lived process whose encoders already loaded (an earlier test's), status asks
    # the dense leg as a search would (overview.dense_now), and a small project embeds at once.
    started = project.settings.interactive and project.engine.tiers.static_encoder().state != "off"
    before = status(project.root, project.settings)
    assert before.retrieval.dense == ("on" if started else "off"), (started, before.retrieval)
    project.prepare_dense(timeout=60)
    after = status(project.root, project.settings)
    assert after.retrieval.dense == "on" and after.retrieval.vectors == len(STATEMENTS)
    json.dumps(after.to_dict())  # plain data, for every face


def test_status_says_whether_the_index_and_the_typo_names_are_ready(project: Project) -> None:
    from jupymem.faces import render
    from jupymem.core.overview import status

    before = status(project.root, project.settings)
    assert (before.retrieval.index, before.retrieval.typos) == ("not built", "not read")
    assert "index not built; typo names not read" in render.status_text(before)
    assert project.prepare_lexical(timeout=60)
    after = status(project.root, project.settings)
    assert (after.retrieval.index, after.retrieval.typos) == ("ready", "ready")
    assert "index ready; typo names ready" in render.status_text(after)


def test_the_hamming_cut_keeps_every_row_argpartition_could_pick() -> None:
    """The rows rescored are all those at or under the count-th nearest distance: whatever
    ties argpartition would break, its choice is inside; a crowded distance falls back."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(7)
    distance = rng.integers(0, 257, size=20_000).astype(np.uint16)
    for count in (50, 768):
        rows = index._nearest_rows(distance, count)
        cut = np.sort(distance)[count - 1]
        assert set(rows.tolist()) == set(np.flatnonzero(distance <= cut).tolist())
        assert set(np.argpartition(distance, count)[:count].tolist()) <= set(rows.tolist())
    flat = np.full(1000, 9, dtype=np.uint16)  # every row ties: only argpartition's count
    assert len(index._nearest_rows(flat, 10)) == 10
    assert len(index._nearest_rows(flat[:5], 10)) == 5


def test_float16_rows_read_through_the_table_are_what_astype_gives() -> None:
    np = pytest.importorskip("numpy")
    every = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256)
    assert np.array_equal(index._as_float32(every), every.astype(np.float32), equal_nan=True)
    assert index._as_float32(every[3:7]).dtype == np.float32
