"""``jupymem bench``: a deterministic corpus and a report with every measurement."""

from __future__ import annotations

import io
import json

import pytest

from jupymem.measure import bench


pytestmark = pytest.mark.usefixtures("transformer_encoder")  # the default: both tiers


def test_the_corpus_is_deterministic_and_distinct() -> None:
    a, b = bench.corpus(500), bench.corpus(500)
    assert a == b and len(set(a)) == 500
    assert bench.corpus(500, seed=7) != a
    assert any("_" in s and ".ipynb" in s for s in a)  # names, not only prose


def test_prompts_are_prompt_length() -> None:
    short, prompts = bench.queries(20)
    assert len(short) == len(prompts) == 20
    assert all(len(p.split()) >= 40 for p in prompts)
    assert all(len(s.split()) <= 6 for s in short)


@pytest.mark.eval  # runs the benchmark: both encoders loaded, hundreds of memories measured
def test_bench_reports_every_measurement() -> None:
    out = io.StringIO()
    assert bench.run_bench_cli(["--documents", "400", "--queries", "5", "--json"], stdout=out) == 0
    r = json.loads(out.getvalue())
    assert r["documents"] == 400
    assert r["ingest_batched"]["per_second"] > 0
    assert r["ingest_batched_with_embeddings"]["per_second"] > 0
    assert r["ingest_one_at_a_time"]["count"] == 200 and r["ingest_one_at_a_time"]["p50_ms"] > 0
    assert r["block_build"]["p50_ms"] > 0 and r["block_build"]["omitted"] > 0
    assert r["db_bytes_per_memory"]["with_vectors"] > r["db_bytes_per_memory"]["lexical"] > 0
    assert r["encoder"]["state"] == "ready" and r["encoder"]["load_seconds"] > 0
    assert r["encoder"]["cold_load_seconds"] is not None and r["encoder"]["tier"] == "transformer"
    for tier in ("static", "transformer"):  # each tier alone: load, throughput, a query's encoding
        enc = r["encoders"][tier]
        assert enc["state"] == "ready" and enc["cold_load_seconds"] is not None and enc["embed_per_second"] > 0
        assert enc["query_encoding"]["p50_ms"] > 0
    names = ("fts", "lexical", "static", "transformer")
    for name in (f"{n}_{length}" for n in names for length in ("short", "prompt")):
        assert r["search"][name]["p95_ms"] >= r["search"][name]["p50_ms"] > 0
    assert (r["dense"]["dense"], r["dense"]["tier"]) == ("on", "transformer")


@pytest.mark.eval  # runs the benchmark, with both encoders
def test_bench_text_report() -> None:
    out = io.StringIO()
    assert bench.run_bench_cli(["--documents", "50", "--queries", "2"], stdout=out) == 0
    assert "search lexical_prompt" in out.getvalue() and "memories/s" in out.getvalue()
    assert "transformer encoder: ready" in out.getvalue() and "search transformer_short" in out.getvalue()


def test_bench_refuses_bad_arguments() -> None:
    err = io.StringIO()
    assert bench.bench_command(bench.build_parser().parse_args(["--documents", "0"]), stdout=io.StringIO(), stderr=err) == 2
