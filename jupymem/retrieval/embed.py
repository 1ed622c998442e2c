"""Text -> vectors for the dense leg: the Embedder protocol, the model2vec encoder, background loading.

Why it is shaped so:

- **One narrow protocol.** An embedder is a ``name``, a ``dimensions`` count and one batch
  method (llm's ``EmbeddingModel.embed_batch``). ``embed_batch`` returns a float32 numpy
  array of shape ``(len(texts), dimensions)`` with L2-normalized rows, because that is what
  every caller wants next: a dot product is the cosine, and ``row.tobytes()`` is exactly the
  float32 blob sqlite-vec stores. A text with no usable token gets a row of zeros (cosine 0
  with everything), never NaN. ``name`` identifies the vectors: when it changes, vectors
  stored under the old name must be recomputed.
- **Heavy imports happen in functions.** numpy takes ~100 ms and model2vec several hundred to
  import; ``%load_ext jupymem`` and the CLI must not pay that, and most requests never need
  the dense leg. Importing this module imports only the standard library (a test checks).
- **The default model ships in the wheel** (``jupymem/data/encoder``, built by
  ``scripts/build_model.py``), so semantic search works offline on every install.
  ``JUPYMEM_ENCODER`` may name another model2vec model: a local folder, or a hub name such as
  ``minishlab/potion-base-8M``. A hub name is loaded from the local Hugging Face cache only
  (``local_files_only=True``), so nothing touches the network from a notebook unless the
  caller passes ``allow_download=True``; to use a hub model offline, download it once where
  you are online (``python -c "from model2vec import StaticModel;
  StaticModel.from_pretrained('minishlab/potion-base-8M')"``).
- **Loading never blocks a request.** ``BackgroundEncoder`` loads in a daemon thread; until it
  is ready (or when it cannot be), callers see ``embedder is None`` and answer with the
  lexical leg alone, and ``state``/``reason`` say why for ``status``.
- **A fake is a real small implementation.** ``HashEmbedder`` hashes words and character
  trigrams into a few dimensions, deterministically, for tests that need exact control.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import JupymemError, MissingDependency, warn
from . import arrays

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vectors = NDArray[np.float32]

__all__ = [
    "BUNDLED_NAME",
    "BackgroundEncoder",
    "Embedder",
    "HashEmbedder",
    "Model2VecEmbedder",
    "bundled_model_path",
    "resolve_encoder",
]


# Names the bundled model's vectors. Change it whenever scripts/build_model.py builds a
# different model, so that vectors stored with the old one are recomputed.
BUNDLED_NAME = "jupymem/all-MiniLM-L6-v2-m2v-wordnet-256d-int8"

INSTALL_HINT = "model2vec is not installed: pip install model2vec"

# Files a model2vec model needs; the only ones fetched when downloading is allowed.
_MODEL_FILES = ["config.json", "*.safetensors", "tokenizer.json", "README.md"]


@runtime_checkable
class Embedder(Protocol):
    """What the dense leg needs from an encoder."""

    name: str
    dimensions: int

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Return float32 vectors of shape ``(len(texts), dimensions)``, rows L2-normalized
        (a text with nothing to encode gets a row of zeros)."""
        ...


def bundled_model_path() -> Path:
    """The folder of the model shipped inside the jupymem package."""
    from importlib.resources import files

    resource = files("jupymem") / "data" / "encoder"  # joinpath takes one part on 3.10
    # model2vec needs a real folder; an installed wheel (never zip-imported) gives one.
    return resource if isinstance(resource, Path) else Path(__file__).parent / "data" / "encoder"


def _normalize_rows(vectors: object) -> Vectors:
    np = arrays.np()

    out = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return np.ascontiguousarray(out)


class Model2VecEmbedder:
    """A model2vec ``StaticModel``, loaded on construction from a folder or a hub name.

    ``source`` is a local folder (``~`` expanded) or a hub name (``owner/model``). A hub name
    is read from the local Hugging Face cache only, unless ``allow_download`` is true.
    Raises ``MissingDependency`` without model2vec and ``JupymemError`` when the model cannot
    be found or read. ``embed_batch`` may be called from several threads at once (the index
    backfills while searches encode queries); no lock makes a query wait for a batch.
    """

    def __init__(self, source: str | Path, *, name: str | None = None, allow_download: bool = False):
        from .static_table import load_static

        folder = _locate(str(source), allow_download=allow_download)
        try:
            self._model = load_static(folder)
        except ImportError as err:
            raise MissingDependency(INSTALL_HINT) from err
        except Exception as err:  # model2vec, safetensors and tokenizers raise many kinds
            raise JupymemError(
                f"could not read the model2vec model in {folder}: {err}. Rebuild or re-download it, "
                "point JUPYMEM_ENCODER at another model, or set JUPYMEM_ENCODER=none"
            ) from err
        self.name = name or str(source)
        self.dimensions = int(self._model.embedding.shape[1])
        self.source = folder
        self._specificity: dict[str, float] = {}
        self._norms: Any = None
        self._vocab: dict[str, int] | None = None
        self._norm_list: list[float] | None = None

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            np = arrays.np()

            return np.zeros((0, self.dimensions), dtype=np.float32)
        # No worker processes: this runs inside kernels and servers, and a static model is
        # fast enough on one core (thousands of texts a second).
        vectors = self._model.encode(list(texts), use_multiprocessing=False)
        return _normalize_rows(vectors)

    def embed_words(self, words: Sequence[str]) -> Vectors:
        """``embed_batch`` for single words, the same vectors to the bit, tokenized once for
        the vectors and ``specificity`` alike (which it fills). A lowercase ASCII word that
        is a whole token of the vocabulary is that one token: WordPiece's normalizer and
        pre-tokenizer leave it as it is and its longest match is the word itself, so it skips
        the tokenizer (6 µs a word). A model with token weights or a token mapping takes the
        general path."""
        np = arrays.np()
        from .static_table import mean_rows

        model = self._model
        if not words or model.weights is not None or model.token_mapping is not None:
            vectors = self.embed_batch(words)
            self.specificity(words)
            return vectors
        vocab = self._whole_word_vocab()
        raw: list[list[int] | None] = [
            [vocab[w]] if w.isascii() and w.isalnum() and w.islower() and w in vocab else None for w in words
        ]
        rest = [i for i, ids in enumerate(raw) if ids is None]
        if rest:
            for i, enc in zip(rest, model.tokenizer.encode_batch_fast([words[i] for i in rest], add_special_tokens=False)):
                raw[i] = list(enc.ids)
        unk = model.unk_token_id
        ids = [[t for t in r or () if unk is None or t != unk] for r in raw]  # every row is filled by now
        out = np.zeros((len(words), model.dim), dtype=np.float32)
        mean_rows(model.embedding, ids, out)  # as encode does, to the bit
        if model.normalize:
            out = (out / (np.linalg.norm(out, axis=1, keepdims=True) + 1e-32)).astype(np.float32)
        self._fill_specificity(words, raw)
        return _normalize_rows(out)

    def _whole_word_vocab(self) -> dict[str, int]:
        """The vocabulary, when the tokenizer is WordPiece behind BERT's (or a whitespace)
        pre-tokenizer, so that a vocabulary word is its own one token; else empty (BPE or
        unigram vocabularies hold pieces that a word's tokenization would not use)."""
        if self._vocab is None:
            import json

            vocab: dict[str, int] = {}
            try:
                spec = json.loads(self._model.tokenizer.to_str())
                pre = (spec.get("pre_tokenizer") or {}).get("type")
                if (spec.get("model") or {}).get("type") == "WordPiece" and pre in (
                    "BertPreTokenizer", "Whitespace", "WhitespaceSplit"
                ):
                    vocab = dict(self._model.tokenizer.get_vocab())
            except (ValueError, AttributeError):
                pass
            self._vocab = vocab
        return self._vocab

    def _token_norms(self) -> Any:
        """Every token's weight over the median token's (once)."""
        np = arrays.np()

        if self._norms is None:
            # By slices: the whole int8 table as float32 is 30 MB at once, which glibc keeps
            # on its free lists after it is freed (a kernel's resident memory, for good).
            table = self._model.embedding
            norms = np.empty(len(table), dtype=np.float32)
            for i in range(0, len(table), 4096):
                norms[i : i + 4096] = np.linalg.norm(np.asarray(table[i : i + 4096], dtype=np.float32), axis=1)
            self._norms = norms / (float(np.median(norms)) or 1.0)
        return self._norms

    def _fill_specificity(self, words: Sequence[str], token_ids: Sequence[Sequence[int] | None]) -> None:
        if self._norm_list is None:  # a word has a token or two: plain floats beat numpy there
            self._norm_list = self._token_norms().tolist()
        norms = self._norm_list
        if len(self._specificity) > 50_000:
            self._specificity.clear()
        for word, got in zip(words, token_ids):
            self._specificity[word] = max((norms[i] for i in got or () if 0 <= i < len(norms)), default=0.0)

    def specificity(self, words: Sequence[str]) -> list[float]:
        """How specific each word is, by the model's own token weights: model2vec scales
        a token's vector by its rarity (SIF), so "the" or "come" sit near the origin and
        "laptop" or "toxicity" far from it. A word's largest token norm over the median
        token's: about 0.4 for the commonest words, above 1 for rare ones. Cached."""
        missing = [w for w in dict.fromkeys(words) if w not in self._specificity]
        if missing:
            encodings = self._model.tokenizer.encode_batch(missing, add_special_tokens=False)
            self._fill_specificity(missing, [enc.ids for enc in encodings])
        return [self._specificity[w] for w in words]

    def __repr__(self) -> str:
        return f"Model2VecEmbedder(name={self.name!r}, dimensions={self.dimensions})"


def _looks_like_hub_name(spec: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", spec) is not None and not spec.startswith(".")


def _locate(spec: str, *, allow_download: bool) -> Path:
    """Turn an encoder spec into a local folder, or say clearly why it cannot be had."""
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise JupymemError(
                f"{path} is not a model2vec model (no config.json); point JUPYMEM_ENCODER at the "
                "folder that holds config.json, model.safetensors and tokenizer.json"
            )
        return path
    if path.exists() or not _looks_like_hub_name(spec):
        raise JupymemError(
            f"no model2vec model at {path}; set JUPYMEM_ENCODER to a model folder, a hub name "
            "such as minishlab/potion-base-8M, or none (unset it for the bundled model)"
        )
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError as err:  # model2vec depends on it, so this is a broken install
        raise MissingDependency(f"huggingface_hub is missing: pip install model2vec ({err})") from err
    try:
        return Path(snapshot_download(spec, local_files_only=not allow_download, allow_patterns=_MODEL_FILES))
    except LocalEntryNotFoundError as err:
        raise JupymemError(
            f"{spec} is not in the local Hugging Face cache, and jupymem does not download models "
            "by itself. Where you are online, run: python -c \"from model2vec import StaticModel; "
            f"StaticModel.from_pretrained('{spec}')\"; or set JUPYMEM_ENCODER to a local folder, "
            "or unset it for the bundled model"
        ) from err
    except Exception as err:  # network, authorization, unknown repository ...
        raise JupymemError(f"could not get {spec} from the Hugging Face hub: {err}") from err


def resolve_encoder(spec: str | None, *, allow_download: bool = False) -> Embedder | None:
    """The embedder a ``JUPYMEM_ENCODER`` value names.

    ``None``, ``""`` or ``"static"``: the bundled static model. ``"transformer"``: the
    bundled transformer (``transformer.TransformerEmbedder``). ``"none"``: no embedder, the
    dense leg is off. Anything else: a model2vec folder or hub name (``Model2VecEmbedder``).
    ``JUPYMEM_ENCODER`` itself is read by ``tiers.plan``, which runs two of these.
    """
    low = spec.strip().lower() if spec is not None else ""
    if low == "none":
        return None
    if low == "transformer":
        from .transformer import TransformerEmbedder

        return TransformerEmbedder()
    if not low or low == "static":
        path = bundled_model_path()
        if not (path / "model.safetensors").is_file():
            raise JupymemError(
                f"the bundled model is missing from {path}; reinstall jupymem, or set "
                "JUPYMEM_ENCODER to a model2vec model or to none"
            )
        return Model2VecEmbedder(path, name=BUNDLED_NAME)
    return Model2VecEmbedder(low if spec is None else spec.strip(), allow_download=allow_download)


def _describe(spec: str | None) -> str:
    low = spec.strip().lower() if spec is not None else ""
    if low == "transformer":
        return "the bundled transformer"
    return "the bundled model" if not low or low == "static" else spec.strip()  # type: ignore[union-attr]


class BackgroundEncoder:
    """Loads an embedder in a daemon thread; callers never wait for it.

    ``state`` is ``"off"`` (not started, or ``JUPYMEM_ENCODER=none``), ``"loading"``,
    ``"ready"`` or ``"failed"``; ``reason`` says why in words fit for ``status``.
    ``embedder`` is None until the state is ``"ready"``. ``loader`` replaces
    ``resolve_encoder(spec)``, e.g. to run the same machinery with a ``HashEmbedder``.
    """

    def __init__(
        self,
        spec: str | None = None,
        *,
        allow_download: bool = False,
        loader: Callable[[], Embedder | None] | None = None,
    ):
        self.spec = spec
        self._loader = loader or (lambda: resolve_encoder(spec, allow_download=allow_download))
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._embedder: Embedder | None = None
        self.load_seconds: float | None = None
        if loader is None and spec is not None and spec.strip().lower() == "none":
            self._state, self._reason = "off", "JUPYMEM_ENCODER=none"
            self._done.set()
        else:
            self._state, self._reason = "off", "not started yet"

    @property
    def state(self) -> str:
        return self._state

    @property
    def reason(self) -> str:
        return self._reason

    @property
    def ready(self) -> bool:
        return self._state == "ready"

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder if self._state == "ready" else None

    def start(self) -> BackgroundEncoder:
        """Begin loading (once); returns at once. Calling it again does nothing."""
        with self._lock:
            if self._thread is not None or self._done.is_set():
                return self
            self._state, self._reason = "loading", f"loading {_describe(self.spec)}"
            from .quitting import started

            self._thread = started(self._load, name="jupymem-encoder")
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until loading ended (for tests and benchmarks); True when ready."""
        self._done.wait(timeout)
        return self.ready

    def _load(self) -> None:
        started = time.perf_counter()
        try:
            embedder = self._loader()
        except JupymemError as err:
            self._finish("failed", err.message, None, started)
        except Exception as err:  # the thread must report, not die silently
            warn("jupymem: the encoder failed to load: %s: %s", type(err).__name__, err)
            self._finish("failed", f"{type(err).__name__}: {err}", None, started)
        else:
            if embedder is None:
                self._finish("off", "JUPYMEM_ENCODER=none", None, started)
            else:
                seconds = time.perf_counter() - started
                self._finish(
                    "ready",
                    f"{embedder.name} ({embedder.dimensions} dimensions, loaded in {seconds:.2f} s)",
                    embedder,
                    started,
                )

    def _finish(self, state: str, reason: str, embedder: Embedder | None, started: float) -> None:
        with self._lock:
            self.load_seconds = time.perf_counter() - started
            self._embedder = embedder
            self._reason = reason
            self._state = state  # last: readers check the state, then take the embedder
        self._done.set()

    def __repr__(self) -> str:
        return f"BackgroundEncoder(state={self._state!r}, reason={self._reason!r})"


_WORD = re.compile(r"\w+")


class HashEmbedder:
    """A small deterministic embedder for tests: words and character trigrams hashed into
    ``dimensions`` signed buckets, then L2-normalized.

    Texts that share words or spellings get close vectors, the same text always gets the
    same vector (in every process: blake2b, not ``hash()``), and a text without letters or
    digits gets zeros.
    """

    def __init__(self, dimensions: int = 64, name: str | None = None):
        if dimensions < 2:
            raise ValueError("dimensions must be at least 2")
        self.dimensions = dimensions
        self.name = name or f"hash-{dimensions}"

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        grams = [f"#{w}#"[i : i + 3] for w in words for i in range(len(w))]
        return words + words + grams  # whole words count double: they carry more meaning

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        np = arrays.np()

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dimensions] += 1.0 if value >> 63 else -1.0
        return _normalize_rows(out) if len(texts) else out
