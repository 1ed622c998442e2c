"""The encoder: the real bundled model (no download), background loading, the test embedder."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from jupymem.retrieval.embed import (
    BUNDLED_NAME,
    BackgroundEncoder,
    Embedder,
    HashEmbedder,
    Model2VecEmbedder,
    bundled_model_path,
    resolve_encoder,
)
from jupymem.errors import JupymemError, MissingDependency

ROOT = Path(__file__).resolve().parent.parent


def run_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def bundled() -> Model2VecEmbedder:
    embedder = resolve_encoder(None)
    assert isinstance(embedder, Model2VecEmbedder)
    return embedder


def cosine(embedder: Embedder, a: str, b: str) -> float:
    va, vb = embedder.embed_batch([a, b])
    return float(va @ vb)


def test_importing_embed_loads_neither_numpy_nor_model2vec():
    heavy = run_python(
        "import json, sys, jupymem.retrieval.embed; "
        "print(json.dumps([m for m in ('numpy', 'model2vec', 'huggingface_hub', 'tokenizers') if m in sys.modules]))"
    )
    assert json.loads(heavy) == []


def test_the_static_table_gives_model2vecs_vectors_to_the_bit():
    # Stored vectors stay valid whichever loader made them: the same texts, the same bits,
    # on what a memory can hold (empty, emoji only, control bytes, past 512 tokens, scripts).
    from model2vec import StaticModel

    from jupymem.retrieval.static_table import StaticTable

    import random

    rng = random.Random(7)
    words = ["revenue", "customer_id", "Ünïcödé", "客户", "the", "joins", "😀", "\x00", "EUR", "deprecated"]
    texts = ["", " ", "😀😀", "\x00\x01\x7f", "x" * 5000, "Revenue is reported in USD"]
    texts += [" ".join(rng.choice(words) for _ in range(rng.randint(1, 900))) for _ in range(300)]
    reference = StaticModel.from_pretrained(str(bundled_model_path())).encode(texts, use_multiprocessing=False)
    ours = StaticTable(bundled_model_path()).encode(texts)
    assert ours.dtype == reference.dtype and np.array_equal(ours, reference)


def test_a_search_with_the_static_tier_imports_no_hub_client():
    # model2vec's loader brings huggingface_hub, httpx, yaml, joblib and tqdm: ~35 MB of a
    # kernel's memory for downloads and progress bars a local folder never needs.
    heavy = run_python(
        "import json, sys\n"
        "from jupymem.retrieval.embed import resolve_encoder\n"
        "resolve_encoder(None).embed_batch(['which table holds revenue?'])\n"
        "print(json.dumps([m for m in ('model2vec', 'huggingface_hub', 'httpx', 'joblib', 'tqdm', 'yaml') if m in sys.modules]))"
    )
    assert json.loads(heavy) == []


def test_bundled_model_ships_with_its_licence_and_stays_small():
    folder = bundled_model_path()
    names = {p.name for p in folder.iterdir()}
    assert {"model.safetensors", "tokenizer.json", "config.json", "LICENSE", "NOTICE"} <= names
    assert "Apache License" in (folder / "LICENSE").read_text()
    notice = (folder / "NOTICE").read_text()
    assert "all-MiniLM-L6-v2" in notice
    # The vectors were fitted on WordNet 3.0, whose licence asks for its notice on copies.
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in notice
    assert hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest() in notice
    assert sum(p.stat().st_size for p in folder.iterdir()) < 10_000_000  # the wheel's budget


def test_bundled_model_loads_and_encodes_normalized_float32(bundled):
    config = json.loads((bundled_model_path() / "config.json").read_text())
    assert bundled.name == BUNDLED_NAME
    assert bundled.dimensions == config["hidden_dim"] == 256
    assert isinstance(bundled, Embedder)

    vectors = bundled.embed_batch(["df_sales has duplicate customer_id rows", "plot revenue per week"])
    assert vectors.shape == (2, bundled.dimensions)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    # The same text always gets the same vector.
    np.testing.assert_array_equal(bundled.embed_batch(["plot revenue per week"])[0], vectors[1])


def test_paraphrases_are_closer_than_unrelated_sentences(bundled):
    join = "join the sales table on customer_id"
    merge = "merge sales with the customer key"
    plot = "the plot uses a log scale"
    log_axis = "use a logarithmic axis for the chart"
    assert cosine(bundled, join, merge) > cosine(bundled, join, plot) + 0.1
    assert cosine(bundled, join, merge) > cosine(bundled, merge, plot) + 0.1
    assert cosine(bundled, plot, log_axis) > cosine(bundled, plot, join) + 0.1
    assert cosine(bundled, plot, log_axis) > cosine(bundled, log_axis, merge) + 0.1


def test_single_words_embed_as_embed_batch_does_to_the_bit_and_weigh_as_their_tokens(bundled):
    """``embed_words`` takes a shortcut for whole vocabulary tokens and tokenizes the rest
    once for vectors and specificity: neither may change a value."""
    vocab = bundled._model.tokenizer.get_vocab()
    words = sorted(w for w in vocab if w.isascii() and w.isalnum())[::7]  # whole tokens, shortcut
    words += ["customers", "preprocessing", "Ly6C", "mrnas", "café", "naïve", "日本語", "x" * 150, "123",
              "co-op", "__init__", "", "\x00", "##ing", "[UNK]", "ΑΒΓ", "straße"]
    expected = bundled.embed_batch(words)
    got = bundled.embed_words(words)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    norms = np.linalg.norm(np.asarray(bundled._model.embedding, dtype=np.float32), axis=1)
    norms = norms / float(np.median(norms))
    encodings = bundled._model.tokenizer.encode_batch(words, add_special_tokens=False)
    assert bundled.specificity(words) == [
        float(norms[list(e.ids)].max()) if e.ids else 0.0 for e in encodings
    ]


def test_empty_inputs_give_empty_or_zero_rows_never_nan(bundled):
    assert bundled.embed_batch([]).shape == (0, bundled.dimensions)
    vectors = bundled.embed_batch(["", "customer_id"])
    assert not np.isnan(vectors).any()
    assert not vectors[0].any()
    assert vectors[1].any()


def test_background_encoder_goes_from_loading_to_ready():
    gate = threading.Event()

    def slow_loader() -> Embedder:
        gate.wait(10)
        return HashEmbedder(32)

    encoder = BackgroundEncoder(loader=slow_loader)
    assert (encoder.state, encoder.reason) == ("off", "not started yet")
    encoder.start()
    assert encoder.state == "loading"
    assert encoder.embedder is None and not encoder.ready
    assert not encoder.wait(0.05)
    gate.set()
    assert encoder.wait(10)
    assert encoder.state == "ready" and encoder.embedder is not None
    assert encoder.embedder.dimensions == 32
    assert encoder.load_seconds is not None and encoder.load_seconds > 0


def test_background_encoder_loads_the_bundled_model():
    encoder = BackgroundEncoder(None).start()
    assert encoder.state in {"loading", "ready"}
    assert encoder.wait(60), encoder.reason
    assert encoder.embedder is not None and encoder.embedder.name == BUNDLED_NAME
    assert BUNDLED_NAME in encoder.reason
    assert encoder.load_seconds > 0  # how long: jupymem bench
    assert encoder.start() is encoder and encoder.state == "ready"  # starting again does nothing


def test_background_encoder_reports_a_bad_path(tmp_path):
    encoder = BackgroundEncoder(str(tmp_path / "no-such-model")).start()
    assert not encoder.wait(30)
    assert encoder.state == "failed"
    assert encoder.embedder is None
    assert "no model2vec model at" in encoder.reason and "no-such-model" in encoder.reason


def test_a_folder_that_is_not_a_model_is_refused(tmp_path):
    with pytest.raises(JupymemError, match="not a model2vec model"):
        resolve_encoder(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"not a tensor file")
    with pytest.raises(JupymemError, match="could not read the model2vec model"):
        resolve_encoder(str(tmp_path))


def test_a_hub_name_is_only_read_from_the_local_cache():
    # local_files_only: an uncached name fails at once, without asking the network.
    with pytest.raises(JupymemError, match="not in the local Hugging Face cache"):
        resolve_encoder("jupymem-tests/no-such-model")


def test_none_turns_the_dense_leg_off():
    assert resolve_encoder("none") is None
    assert resolve_encoder(" None ") is None
    encoder = BackgroundEncoder("none").start()
    assert (encoder.state, encoder.reason) == ("off", "JUPYMEM_ENCODER=none")
    assert not encoder.wait(0) and encoder.embedder is None


def test_missing_model2vec_names_the_pip_command():
    # A None entry in sys.modules makes the import fail, as on an install without model2vec
    # (safetensors comes with it; the bundled model is read without model2vec itself).
    out = run_python(
        "import json, sys; sys.modules['model2vec'] = None; sys.modules['safetensors'] = None\n"
        "from jupymem.retrieval.embed import BackgroundEncoder, resolve_encoder\n"
        "from jupymem.errors import MissingDependency\n"
        "try:\n    resolve_encoder(None)\nexcept MissingDependency as e:\n    raised = e.message\n"
        "b = BackgroundEncoder().start(); b.wait(30)\n"
        "print(json.dumps([raised, b.state, b.reason]))"
    )
    raised, state, reason = json.loads(out)
    assert "pip install model2vec" in raised
    assert state == "failed" and "pip install model2vec" in reason
    assert MissingDependency.code == "missing_dependency"


def test_hash_embedder_is_deterministic_and_follows_the_protocol():
    texts = ["customer_id is unique", "custmer_id is unique", "the plot uses a log scale"]
    first = HashEmbedder(64).embed_batch(texts)
    again = HashEmbedder(64).embed_batch(texts)
    np.testing.assert_array_equal(first, again)
    assert isinstance(HashEmbedder(), Embedder)
    assert first.shape == (3, 64) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, rtol=1e-5)
    assert first[0] @ first[1] > first[0] @ first[2]  # shared spelling brings vectors close
    # Stable across processes too (blake2b, not the salted built-in hash).
    other = run_python(
        "import json; from jupymem.retrieval.embed import HashEmbedder; "
        "print(json.dumps(HashEmbedder(64).embed_batch(['customer_id is unique'])[0].tolist()))"
    )
    np.testing.assert_array_equal(np.array(json.loads(other), dtype=np.float32), first[0])
    assert not HashEmbedder(8).embed_batch(["?!"]).any()
    assert HashEmbedder(8).embed_batch([]).shape == (0, 8)


def test_concurrent_batches_give_the_same_vectors(bundled):
    # The index backfills in a thread while searches encode queries: no lock serializes them.
    texts = [f"join df_sales on customer_id, then drop duplicates ({i})" for i in range(1500)]
    expected = bundled.embed_batch(texts)
    results: list[object] = []

    def encode() -> None:
        try:
            results.extend(np.array_equal(bundled.embed_batch(texts), expected) for _ in range(3))
        except Exception as err:  # collected and asserted below: a thread cannot fail the test
            results.append(err)

    threads = [threading.Thread(target=encode) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results == [True] * 12


def test_a_folder_whose_tensors_are_named_otherwise_goes_through_model2vec(tmp_path):
    # The same files with the table under another name: not our layout, so model2vec reads it
    # (and says what it cannot read), never a KeyError of ours.
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "other"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (folder / name).write_bytes((bundled_model_path() / name).read_bytes())
    table = load_file(str(bundled_model_path() / "model.safetensors"))["embeddings"]
    save_file({"embedding.weight": table}, str(folder / "model.safetensors"))
    with pytest.raises(JupymemError, match="could not read the model2vec model"):
        Model2VecEmbedder(folder)
