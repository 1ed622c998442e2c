"""A transformer sentence encoder: all-MiniLM-L6-v2 as int8 ONNX, run by onnxruntime.

The tier above the bundled model2vec encoder (``embed.py``): the real six-layer transformer
instead of a static token table, closer to what sentence-transformers' all-MiniLM-L6-v2 gives
(the numbers are in ``jupymem/data/transformer/README.md``), at the price of ~23 MB on disk,
a few hundred ms to load and a few ms per query instead of microseconds.

Why it is shaped so:

- **The pooling is inside the graph.** ``scripts/build_transformer.py`` exports BERT together
  with sentence-transformers' mean pooling (over the attention mask) and L2 normalisation, so
  the model's one output is the sentence embedding. What runs here is a tokenizer, a padded
  batch and one ``InferenceSession.run``; there is no pooling code to get subtly wrong.
- **onnxruntime + tokenizers by hand, not fastembed.** fastembed does the same on top of
  onnxruntime, but it fetches its models from a hub (we ship ours in the wheel and never touch
  the network), brings dependencies jupymem does not otherwise need (pillow, requests, loguru,
  mmh3, py-rust-stemmer, huggingface-hub), and loading a local model still goes through its
  model registry. With the pooling in the graph, what fastembed would add is ~30 lines.
- **No torch at run time.** torch is used only to build the file.
- **Heavy imports happen in functions.** numpy, onnxruntime and tokenizers are imported by the
  constructor and ``embed_batch``, never at module import: importing this module imports only
  the standard library and jupymem's own light modules (a test checks).
- **Batches sorted by length.** Texts are tokenized (truncated at 256 tokens, the limit the
  model was trained with), sorted by token count and run in batches of ``batch_size``, each
  padded only to its own longest text, so a short query never pays for a long memory's
  padding; rows come back in the caller's order.
- **Nothing to encode -> zeros.** The model gives "" (just ``[CLS] [SEP]``) a perfectly
  ordinary unit vector, and every text made only of characters the vocabulary lacks
  (``[UNK]``) the same one. Those vectors would make all empty or emoji-only texts identical
  and somewhat similar to everything; the Embedder protocol says such a text gets a row of
  zeros (cosine 0 with everything), so a text whose tokens are all ``[UNK]`` or that has none
  (empty, whitespace, control characters) gets zeros. Punctuation is content: "?!" is encoded.
- **Thread-safe without a lock.** ``InferenceSession.run`` and ``Tokenizer.encode_batch`` may
  be called from several threads at once (both are documented so; the tokenizer is never
  mutated after the constructor), so a query does not wait for a backfill batch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import JupymemError, MissingDependency
from . import arrays

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vectors = NDArray[np.float32]

__all__ = ["TRANSFORMER_NAME", "TransformerEmbedder", "bundled_transformer_path"]

# Names the vectors the bundled ONNX model gives. Change it whenever
# scripts/build_transformer.py builds a different model (another quantization, export or
# base model), so that vectors stored with the old one are recomputed.
TRANSFORMER_NAME = "jupymem/all-MiniLM-L6-v2-onnx-int8"

INSTALL_HINT = "onnxruntime and tokenizers are not installed: pip install onnxruntime tokenizers"

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length (it was trained on 128-token pieces)
BATCH_SIZE = 64
# At most this many (text x token x token) cells of attention a batch: 4 texts of 256
# tokens, 64 of 64 (``TransformerEmbedder._batches``).
ATTENTION_BUDGET = 262_144


def bundled_transformer_path() -> Path:
    """The folder of the ONNX model shipped inside the jupymem package."""
    from importlib.resources import files

    resource = files("jupymem") / "data" / "transformer"  # joinpath takes one part on 3.10
    # onnxruntime needs a real file; an installed wheel (never zip-imported) gives one.
    return resource if isinstance(resource, Path) else Path(__file__).parent.parent / "data" / "transformer"


def _default_threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))


class TransformerEmbedder:
    """A sentence encoder from an ONNX file whose output is the pooled, normalized embedding.

    ``folder`` holds ``model.onnx``, ``tokenizer.json`` and ``config.json`` (default: the
    bundled model). ``threads`` is onnxruntime's intra-op thread count (default: 2, or 1 on a
    one-core machine); inter-op parallelism is off. Raises ``MissingDependency`` without
    onnxruntime or tokenizers and ``JupymemError`` when a file is missing, unreadable or not a
    model of the expected shape.
    """

    def __init__(
        self,
        folder: str | Path | None = None,
        *,
        name: str | None = None,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_tokens: int | None = None,
    ):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as err:
            raise MissingDependency(INSTALL_HINT) from err

        self.source = Path(folder).expanduser() if folder is not None else bundled_transformer_path()
        config = self._read_config(self.source / "config.json")
        self.name = name or (TRANSFORMER_NAME if folder is None else str(config.get("name") or self.source))
        self.dimensions = int(config.get("dims", 384))
        self.max_tokens = int(max_tokens or config.get("max_tokens", MAX_TOKENS))
        self.batch_size = max(1, int(batch_size))
        self.threads = max(1, int(threads)) if threads else _default_threads()

        model = self.source / "model.onnx"
        if not model.is_file():
            raise JupymemError(f"no ONNX model at {model}; reinstall jupymem or rebuild it with scripts/build_transformer.py")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # No arena: onnxruntime's CPU arena keeps the largest batch's activations for the life
        # of the session (600 MB after a batch of 32 abstracts, measured), in a kernel that
        # must stay light; without it a batch's memory goes back to the allocator.
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        # Worker threads sleep between operators instead of spin-waiting: a kernel or a server
        # shares its cores, and on a busy machine spinning made 2 threads 4x slower than 1
        # (11 ms a query instead of 2.5; README of the bundle). Without spinning 2 threads are
        # as fast as 1 for a query and faster for batches, and idle ones burn no CPU.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: no warnings on the notebook's stderr
        try:
            self._session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as err:  # onnxruntime raises its own Fail/InvalidProtobuf/... kinds
            raise JupymemError(
                f"could not load the ONNX model {model}: {_one_line(err)}. Reinstall jupymem or rebuild it "
                "with scripts/build_transformer.py"
            ) from err
        inputs = {i.name for i in self._session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= inputs:
            raise JupymemError(f"{model} is not a sentence encoder: its inputs are {sorted(inputs)}")
        self._inputs = inputs
        self._output = self._session.get_outputs()[0].name

        try:
            tokenizer = Tokenizer.from_file(str(self.source / "tokenizer.json"))
        except Exception as err:
            raise JupymemError(f"could not read {self.source / 'tokenizer.json'}: {_one_line(err)}") from err
        tokenizer.no_padding()  # padding is done per batch below
        tokenizer.enable_truncation(self.max_tokens)
        self._tokenizer = tokenizer
        self._unk = tokenizer.token_to_id("[UNK]")
        self._specials = {tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]")} - {None}

    @staticmethod
    def _read_config(path: Path) -> dict[str, Any]:
        if not path.is_file():
            return {}
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as err:
            raise JupymemError(f"could not read {path}: {_one_line(err)}") from err
        if not isinstance(value, dict):
            raise JupymemError(f"{path} is not a JSON object")
        return value

    def _has_content(self, ids: Sequence[int]) -> bool:
        return any(i != self._unk and i not in self._specials for i in ids)

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Float32 ``(len(texts), dimensions)``, rows L2-normalized, zeros for a text with
        nothing to encode; rows in the order of ``texts``."""
        np = arrays.np()

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch([t if isinstance(t, str) else str(t) for t in texts])
        ids = [e.ids for e in encodings]
        rows = [i for i, x in enumerate(ids) if self._has_content(x)]
        rows.sort(key=lambda i: len(ids[i]))
        for chunk in self._batches(rows, [len(x) for x in ids]):
            width = max(len(ids[i]) for i in chunk)
            input_ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for r, i in enumerate(chunk):
                input_ids[r, : len(ids[i])] = ids[i]
                mask[r, : len(ids[i])] = 1
            feed = {"input_ids": input_ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(input_ids)
            (vectors,) = self._session.run([self._output], feed)
            out[chunk] = vectors
        # The graph already normalizes; this guards against a non-finite row (then zeros) and
        # makes the unit norm exact in float32 whatever the graph did.
        np.nan_to_num(out, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _batches(self, rows: Sequence[int], lengths: Sequence[int]) -> list[list[int]]:
        """``rows`` (sorted by length) cut into batches of at most ``batch_size`` texts whose
        count times their width squared stays within ``ATTENTION_BUDGET``: attention holds
        a (heads, width, width) matrix per text, so 32 abstracts of 256 tokens would take
        100 MB at once while 32 short notes take 2."""
        out: list[list[int]] = []
        start = 0
        while start < len(rows):
            end = start + 1
            while (
                end < len(rows) and end - start < self.batch_size
                and (end - start + 1) * lengths[rows[end]] ** 2 <= ATTENTION_BUDGET
            ):
                end += 1
            out.append(list(rows[start:end]))
            start = end
        return out

    def release(self) -> None:
        """Hand memory freed by finished batches back to the system (glibc keeps it
        otherwise); the index calls it when a backfill ends."""
        release_memory()

    def __repr__(self) -> str:
        return f"TransformerEmbedder(name={self.name!r}, dimensions={self.dimensions}, threads={self.threads})"


def release_memory() -> None:
    """``malloc_trim(0)`` where the C library is glibc: freed arenas go back to the system
    (after a backfill, 100 MB and more of a kernel's resident memory)."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl)
        return
    trim(0)


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return (text[:300] + "...") if len(text) > 300 else text or type(err).__name__
