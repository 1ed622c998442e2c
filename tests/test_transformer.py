"""The bundled transformer encoder (jupymem/data/transformer): the real int8 ONNX model run by
the real onnxruntime, checked against the float teacher's vectors saved by the build."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

import numpy as np

from jupymem.errors import JupymemError, MissingDependency
from jupymem.retrieval.embed import Embedder
from jupymem.retrieval.transformer import (
    TRANSFORMER_NAME,
    TransformerEmbedder,
    bundled_transformer_path,
)

REFERENCE = Path(__file__).parent / "data" / "transformer_reference.json"

LINNET = "The goal of Project Linnet is to summarize weekly safety inspections."
LINNET_QUESTION = "Which project exists to condense the hazard walkthroughs done every seven days?"
CHURN = "Ana Ruiz owns the churn model"


@pytest.fixture(scope="module")
def embedder() -> TransformerEmbedder:
    return TransformerEmbedder()


def test_bundle_is_complete():
    folder = bundled_transformer_path()
    for name in ("model.onnx", "tokenizer.json", "config.json", "LICENSE", "NOTICE", "README.md"):
        assert (folder / name).is_file(), name
    config = json.loads((folder / "config.json").read_text())
    assert config["name"] == TRANSFORMER_NAME
    assert config["dims"] == 384 and config["max_tokens"] == 256
    assert sum(p.stat().st_size for p in folder.iterdir()) < 25_000_000


def test_protocol_shapes_and_norms(embedder):
    assert isinstance(embedder, Embedder)
    assert embedder.name == TRANSFORMER_NAME
    assert embedder.dimensions == 384
    vectors = embedder.embed_batch(["one memory", "another, somewhat longer memory about joins", "x"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(vectors).all()


def test_empty_list(embedder):
    vectors = embedder.embed_batch([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_nothing_to_encode_gives_zeros(embedder):
    # The model would give [CLS][SEP] (and [CLS][UNK][SEP]) an ordinary unit vector; the
    # protocol asks for zeros when a text has nothing to encode. Punctuation is content.
    vectors = embedder.embed_batch(["", "   ", "\n\t", "\u200b", "a real sentence", "?!"])
    assert not vectors[:4].any()
    assert np.allclose(np.linalg.norm(vectors[4:], axis=1), 1.0, atol=1e-5)
    assert np.isfinite(vectors).all()


def test_order_is_kept_when_batches_are_sorted_by_length():
    small = TransformerEmbedder(batch_size=2)
    texts = [
        "a long memory " * 20,
        "short",
        "",
        "a medium length memory about the churn model",
        "tiny",
        "another fairly long memory that says which notebook scores churn every Monday morning",
        "mid sized note on joins",
    ]
    together = small.embed_batch(texts)
    one_by_one = np.vstack([small.embed_batch([t]) for t in texts])
    # Dynamic int8 quantization scales a batch's activations together, so a text's vector
    # moves a little with its batch-mates (cosine 0.985-0.997 here); a row put back in the
    # wrong place would have cosine ~0.1-0.5 with its own text's vector.
    cos = one_by_one @ together.T
    for row in (0, 1, 3, 4, 5, 6):
        assert cos[row, row] > 0.97, (row, cos[row, row])
        assert cos[row, row] == max(cos[row]), row
    assert not together[2].any()


def test_truncates_long_texts(embedder):
    long = "the churn model is retrained every quarter " * 200  # ~1,600 tokens
    vectors = embedder.embed_batch([long, long + " and then some more words at the very end"])
    assert vectors.shape == (2, 384)
    assert float(vectors[0] @ vectors[1]) > 0.999  # the tail past 256 tokens is cut


def test_paraphrase_is_closer_than_unrelated(embedder):
    a, b, c = embedder.embed_batch([LINNET, LINNET_QUESTION, CHURN])
    assert float(a @ b) > float(a @ c) + 0.1
    assert float(a @ b) > float(b @ c) + 0.1


def test_agrees_with_the_float_teacher(embedder):
    reference = json.loads(REFERENCE.read_text())
    vectors = embedder.embed_batch(reference["texts"])
    expected = np.asarray(reference["vectors"], dtype=np.float32)
    cos = np.sum(vectors * expected, axis=1) / np.linalg.norm(expected, axis=1)
    assert (cos > 0.98).all(), cos


def test_concurrent_calls_agree(embedder):
    texts = [f"memory number {i}: the {w} table is joined on customer_id" for i, w in
             enumerate(["orders", "events", "sessions", "returns", "inventory", "customers"] * 6)]
    expected = embedder.embed_batch(texts)
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for _ in range(3):
                got = embedder.embed_batch(texts[n:] + texts[:n])
                results[n] = np.roll(got, n, axis=0)
        except Exception as err:  # noqa: BLE001 - any failure in a thread is reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 6
    for got in results.values():
        # the same texts in other batches: equal up to int8 activation scaling (see above)
        assert (np.sum(got * expected, axis=1) > 0.97).all()
    # and the same call from several threads at once gives bit-identical rows
    same: list[np.ndarray] = []
    runners = [threading.Thread(target=lambda: same.append(embedder.embed_batch(texts))) for _ in range(4)]
    for t in runners:
        t.start()
    for t in runners:
        t.join()
    assert all(np.array_equal(s, expected) for s in same)


def test_threads_argument(embedder):
    one = TransformerEmbedder(threads=1)
    assert one.threads == 1
    vectors = one.embed_batch([LINNET, CHURN])
    # the same batch: int8 products are exact, only float sums may be ordered otherwise
    assert np.allclose(vectors, embedder.embed_batch([LINNET, CHURN]), atol=1e-4)


def _copy_bundle(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(bundled_transformer_path(), folder)
    return folder


def test_truncated_model_file_is_a_clear_error(tmp_path):
    folder = _copy_bundle(tmp_path)
    model = folder / "model.onnx"
    data = model.read_bytes()
    model.write_bytes(data[: len(data) // 3])
    with pytest.raises(JupymemError) as info:
        TransformerEmbedder(folder)
    message = info.value.message if hasattr(info.value, "message") else str(info.value)
    assert "model.onnx" in message and "\n" not in message


def test_garbage_and_missing_model_files(tmp_path):
    folder = _copy_bundle(tmp_path)
    (folder / "model.onnx").write_bytes(b"not a model at all")
    with pytest.raises(JupymemError):
        TransformerEmbedder(folder)
    (folder / "model.onnx").unlink()
    with pytest.raises(JupymemError, match="no ONNX model"):
        TransformerEmbedder(folder)


def test_missing_onnxruntime_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes `import onnxruntime` fail
    with pytest.raises(MissingDependency, match="pip install onnxruntime"):
        TransformerEmbedder()


def test_import_is_light():
    code = (
        "import sys, jupymem.retrieval.transformer as t; "
        "heavy = [m for m in ('numpy', 'onnxruntime', 'tokenizers', 'torch') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parent.parent)
    assert out.stdout.strip() == "[]"
