"""A model2vec model folder read without model2vec: the token table, the tokenizer, the mean.

``embed.Model2VecEmbedder`` needs four things of a static model: its token table, its
tokenizer, its settings and ``encode``. ``model2vec.StaticModel.from_pretrained`` gives them
at the price of importing huggingface_hub, httpx, anyio, yaml, joblib and tqdm, for hub
downloads, model cards, training and progress bars that a kernel never uses: ~35 MB of a
kernel's resident memory, a quarter of what the dense tiers may cost it. So a folder in
model2vec's own layout (``config.json``, ``model.safetensors``, ``tokenizer.json``) is read
here with safetensors and tokenizers, which model2vec itself uses, and anything else (a
sentence-transformers layout) still goes through model2vec.

``encode`` is model2vec 0.10's ``StaticModel.encode`` step for step (cut each text at
``max_length`` x the median token's length in characters, tokenize without special tokens
truncated at ``max_length`` tokens, drop the unknown token, average the rows of each text
with rows of one length averaged together, normalize in float32) so the vectors are the
same to the bit: a test compares them with model2vec's on the bundled model, so stored
vectors stay valid whichever loader made them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import arrays

DEFAULT_MAX_LENGTH = 512  # model2vec's, when config.json names none
BATCH = 1024  # model2vec's encode batch: results do not depend on it, memory does

__all__ = ["StaticTable", "load_static", "mean_rows"]


def load_static(folder: Path) -> Any:
    """The model in ``folder``: a ``StaticTable`` for model2vec's own layout, else model2vec's
    ``StaticModel`` (which knows the other layouts)."""
    if all((folder / name).is_file() for name in ("config.json", "model.safetensors", "tokenizer.json")):
        try:
            return StaticTable(folder)
        except _OtherLayout:
            pass
    from model2vec import StaticModel

    return StaticModel.from_pretrained(str(folder))


class _OtherLayout(Exception):
    """The folder's tensors are not named as model2vec's own layout names them."""


class StaticTable:
    """The parts of ``model2vec.StaticModel`` that jupymem reads, with the same names."""

    def __init__(self, folder: Path):
        from safetensors import safe_open
        from tokenizers import Tokenizer

        np = arrays.np()
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        with safe_open(str(folder / "model.safetensors"), framework="numpy") as tensors:
            names = set(tensors.keys())
            if "embeddings" not in names:
                raise _OtherLayout(folder)
            self.embedding = tensors.get_tensor("embeddings")
            self.weights = tensors.get_tensor("weights") if "weights" in names else None
            self.token_mapping = tensors.get_tensor("mapping") if "mapping" in names else None
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        vocab = self.tokenizer.get_vocab()
        if self.token_mapping is None and len(vocab) != len(self.embedding):
            raise ValueError(f"{len(vocab)} tokens but {len(self.embedding)} vectors")
        padding = self.tokenizer.padding
        if padding is not None:  # keep the pad token, pad nothing (model2vec's _disable_padding)
            self.tokenizer.enable_padding(
                pad_id=padding["pad_id"], pad_token=padding["pad_token"], pad_type_id=padding["pad_type_id"], length=0
            )
        self.unk_token_id = _unk_id(self.tokenizer)
        self.median_token_length = int(np.median([len(token) for token in vocab]))
        self.normalize = bool(config.get("normalize", False))
        self.max_length: int | None = config.get("max_length", DEFAULT_MAX_LENGTH)
        if self.max_length is None:
            self.tokenizer.no_truncation()
        else:
            self.tokenizer.enable_truncation(self.max_length)

    @property
    def dim(self) -> int:
        return int(self.embedding.shape[1])

    def encode(self, sentences: Sequence[str], **_: Any) -> Any:
        np = arrays.np()

        texts = list(sentences)
        if self.max_length is not None:
            cut = self.max_length * self.median_token_length
            texts = [text[:cut] for text in texts]
        parts = [self._encode_batch(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def _encode_batch(self, texts: Sequence[str]) -> Any:
        np = arrays.np()

        unk = self.unk_token_id
        ids = [enc.ids for enc in self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)]
        if unk is not None:
            ids = [[t for t in row if t != unk] for row in ids]
        dtype = np.dtype(np.float32) if self.embedding.dtype == np.int8 else self.embedding.dtype
        out = np.zeros((len(ids), self.dim), dtype=dtype)
        if self.token_mapping is None and self.weights is None:
            mean_rows(self.embedding, ids, out)
        else:
            for i, row in enumerate(ids):
                if row:
                    rows = self.embedding[row if self.token_mapping is None else self.token_mapping[row]]
                    if self.weights is not None:
                        rows = rows * self.weights[row][:, None]
                    out[i] = rows.mean(axis=0)
        if self.normalize:
            out32 = out.astype(np.float32)
            return (out32 / (np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32)).astype(out.dtype)
        return out


def mean_rows(table: Any, ids: Sequence[Sequence[int]], out: Any) -> None:
    """``out[i]`` = the mean of ``table``'s rows ``ids[i]`` (left as it is for no ids), texts
    of one length averaged together in one gather, as model2vec's ``_encode_batch`` does (the
    same bits: a row's mean does not depend on the others in its bucket)."""
    np = arrays.np()

    buckets: dict[int, list[int]] = {}
    for i, row in enumerate(ids):
        if row:
            buckets.setdefault(len(row), []).append(i)
    for indices in buckets.values():
        out[indices] = table[np.array([ids[i] for i in indices], dtype=np.int64)].mean(axis=1)


def _unk_id(tokenizer: Any) -> int | None:
    """The unknown token's id (model2vec's _get_unk_token_id)."""
    model = tokenizer.model
    if hasattr(model, "unk_token"):  # WordPiece, BPE, WordLevel
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    return json.loads(tokenizer.to_str())["model"].get("unk_id")  # Unigram
