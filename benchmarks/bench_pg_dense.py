"""Who should answer the team engine's dense leg: pgvector's HNSW, or our in-process index?

    python benchmarks/bench_pg_dense.py --memories 20000 100000 --json

For each size, a project of ``--memories`` notes (``jupymem.measure.bench.corpus``, fixed
seed) is written straight into a pgserver PostgreSQL (16, pgvector 0.6) with the bundled
static model's vectors, beside a second project of the same size (another seed: a team
database holds many projects) and one small project of 1,000 notes. Then, with the same query vectors:

* ``inprocess``: what the team engine does (``PgVectors`` + ``retrieval.index.DenseIndex``):
  ``load_s`` reads every vector of the project (bytes, through row-level security) into the
  in-process copy, once a process; ``query_ms`` one ``nearest`` (k = 40), p50/p95;
* ``pgvector``: the same vectors as ``vector(256)`` with an HNSW index (cosine, default
  m = 16, ef_construction = 64; ef_search 40, the default, and 200): ``build_s``, ``query_ms`` for
  ``ORDER BY embedding <=> q LIMIT 40`` narrowed to the project, and for the small project
  how many of the 40 asked for come back (HNSW walks the whole table's graph and the
  project filter is applied after it);
* ``recall@10`` of each against the exact float32 ranking, and ``top10_same_as_sqlite``:
  how often pgvector's top 10 is the in-process index's (which is SQLite's, exactly).

Run as root, pgserver starts PostgreSQL as a ``pgserver`` user; the data folder is
temporary and removed after.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

K = 40
TOP = 10
EF_SEARCH = (40, 200)


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 3)


def _copy_rows(cur: Any, table: str, columns: str, rows: list[tuple[Any, ...]]) -> None:
    with cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _fill(admin_url: str, project: str, role: str, texts: list[str], vectors: Any, model: str) -> list[int]:
    """Memory rows and their stored vectors for ``project``, written as the administrator."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=False) as conn, conn.cursor() as cur:
        cur.execute("SET search_path = jupymem")
        rows = [(project, f"m-{project[:6]}{i:08d}", "note", t, "unconfirmed", "active", "person",
                 "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z", i + 1, role) for i, t in enumerate(texts)]
        _copy_rows(cur, "memories", "project, id, kind, statement, standing, status, recorder, created_at, valid_from,"
                   " seq, author_role", rows)
        cur.execute("SELECT rid, id FROM memories WHERE project = %s ORDER BY rid", (project,))
        got = cur.fetchall()
        _copy_rows(cur, "memory_vectors", "project, rid, memory_id, model, vector",
                   [(project, rid, mid, model, vectors[i].tobytes()) for i, (rid, mid) in enumerate(got)])
        for key, value in (("vector_model", model), ("vector_dimensions", str(vectors.shape[1])),
                           ("vector_format", "float")):
            cur.execute("INSERT INTO meta (project, key, value) VALUES (%s, %s, %s)", (project, key, value))
        conn.commit()
    return [rid for rid, _ in got]


def _pgvector(admin_url: str, projects: dict[str, tuple[list[int], Any]]) -> float:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("DROP TABLE IF EXISTS bench_pv")
        conn.execute("CREATE TABLE bench_pv (project TEXT NOT NULL, rid BIGINT NOT NULL, embedding vector(256))")
        with conn.cursor() as cur:
            for project, (rids, vecs) in projects.items():
                buf = io.StringIO()
                for rid, v in zip(rids, vecs):
                    buf.write(f"{project}\t{rid}\t[{','.join(f'{x:.7g}' for x in v)}]\n")
                with cur.copy("COPY bench_pv (project, rid, embedding) FROM STDIN") as copy:
                    copy.write(buf.getvalue())
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '512MB'")
        conn.execute("CREATE INDEX bench_pv_hnsw ON bench_pv USING hnsw (embedding vector_cosine_ops)")
        conn.execute("ANALYZE bench_pv")
        return time.perf_counter() - started


def _pg_query(conn: Any, project: str, q: Any) -> list[int]:
    text = "[" + ",".join(f"{x:.7g}" for x in q) + "]"
    rows = conn.execute(
        "SELECT rid FROM bench_pv WHERE project = %s ORDER BY embedding <=> %s::vector LIMIT %s", (project, text, K)
    ).fetchall()
    return [r[0] for r in rows]


def run(sizes: list[int], n_queries: int) -> dict[str, Any]:
    import numpy as np
    import pgserver
    import psycopg

    from jupymem.measure.bench import corpus, queries
    from jupymem.retrieval import index
    from jupymem.storage.postgres import admin, connect

    enc = index.shared_encoder(None).start()
    enc.wait()
    embedder = enc.embedder
    assert embedder is not None
    short, long_ = queries(n_queries)
    qtexts = (short + long_)[:n_queries]
    qvecs = np.asarray(embedder.embed_batch(qtexts), dtype=np.float32)
    out: dict[str, Any] = {"model": embedder.name, "dimensions": embedder.dimensions, "queries": len(qtexts),
                           "k": K, "sizes": {}}
    folder = Path(tempfile.mkdtemp(prefix="jupymem-pgbench-"))
    server = pgserver.get_server(str(folder), cleanup_mode="delete")
    try:
        admin_url = server.get_uri()
        admin.create_schema(admin_url)
        role = "bench_person"
        admin.create_user(admin_url, role, password="bench")
        for n in sizes:
            texts = corpus(n)
            t0 = time.perf_counter()
            vecs = np.asarray(embedder.embed_batch([index.embed_text(t, None) for t in texts]), dtype=np.float32)
            embed_s = time.perf_counter() - t0
            small_texts = corpus(1000, seed=n + 7)
            small_vecs = np.asarray(embedder.embed_batch(small_texts), dtype=np.float32)
            other_texts = corpus(n, seed=n + 3)
            other_vecs = np.asarray(embedder.embed_batch(other_texts), dtype=np.float32)
            projects = {f"bench-{n}": (texts, vecs), f"other-{n}": (other_texts, other_vecs),
                        f"small-{n}": (small_texts, small_vecs)}
            filled: dict[str, tuple[list[int], Any]] = {}
            for project, (t, v) in projects.items():
                admin.add_member(admin_url, project, role)
                filled[project] = (_fill(admin_url, project, role, t, v, embedder.name), v)
            user_url = psycopg.conninfo.make_conninfo(admin_url, user=role, password="bench")
            conn = connect(user_url, f"bench-{n}")
            row: dict[str, Any] = {"embed_s": round(embed_s, 1)}
            try:
                dense = index.DenseIndex(conn.store, index.STATIC)
                t0 = time.perf_counter()
                dense.sync(embedder, full=True)
                row["inprocess"] = {"load_s": round(time.perf_counter() - t0, 2), "size": dense.size}
                rids = np.array(filled[f"bench-{n}"][0])
                exact = [set(rids[np.argsort(-(vecs @ q), kind="stable")[:TOP]].tolist()) for q in qvecs]
                times, ours = [], []
                for q in qvecs:
                    t0 = time.perf_counter()
                    got = dense.nearest(q, K, revision=1, include_inactive=False)
                    times.append(time.perf_counter() - t0)
                    ours.append([rid for rid, _ in got])
                row["inprocess"].update(
                    query_ms_p50=_pct(times, 0.5), query_ms_p95=_pct(times, 0.95),
                    recall_at_10=round(statistics.mean(len(set(o[:TOP]) & e) / TOP for o, e in zip(ours, exact)), 4),
                )
            finally:
                conn.close()
            build_s = _pgvector(admin_url, filled)
            row["pgvector"] = {"build_s": round(build_s, 1)}
            with psycopg.connect(admin_url, autocommit=True) as pg:
                for q in qvecs[:5]:
                    _pg_query(pg, f"bench-{n}", q)  # warm the index's pages
                row["pgvector"]["index_mb"] = round(float(pg.execute(
                    "SELECT pg_relation_size('bench_pv_hnsw') / 1e6").fetchone()[0]), 1)
                for ef in EF_SEARCH:  # pgvector's default (40), and wider searches for more recall
                    pg.execute(f"SET hnsw.ef_search = {ef}")
                    times, theirs = [], []
                    for q in qvecs:
                        t0 = time.perf_counter()
                        theirs.append(_pg_query(pg, f"bench-{n}", q))
                        times.append(time.perf_counter() - t0)
                    small_returned = [len(_pg_query(pg, f"small-{n}", q)) for q in qvecs]
                    row["pgvector"][f"ef_search_{ef}"] = {
                        "query_ms_p50": _pct(times, 0.5), "query_ms_p95": _pct(times, 0.95),
                        "recall_at_10": round(statistics.mean(len(set(t[:TOP]) & e) / TOP
                                                              for t, e in zip(theirs, exact)), 4),
                        "top10_same_as_sqlite": round(statistics.mean(t[:TOP] == o[:TOP]
                                                                      for t, o in zip(theirs, ours)), 4),
                        "small_project_rows_returned_of_40": {"min": min(small_returned),
                                                              "median": statistics.median(small_returned)},
                    }
            out["sizes"][str(n)] = row
            print(json.dumps({n: row}), file=sys.stderr, flush=True)
    finally:
        server.cleanup()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--memories", type=int, nargs="+", default=[20000])
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    report = run(args.memories, args.queries)
    print(json.dumps(report, indent=2 if not args.json else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
