"""Typo-tolerant identifiers and words: ``custmer_id`` finds ``customer_id``.

Notebook memory is full of names: columns, variables, functions, files. People
mistype them in questions, and BM25 only knows exact tokens, so a query word
that occurs in no memory is looked up here among the names and words memory
does use, with rapidfuzz, and replaced by its closest match when the match is
close enough.

Cheap at 100,000 memories because:

* only query words that occur nowhere in memory are looked up (the lexical
  plan already knows each word's document frequency), at most a few per query;
* the vocabulary is built once per process and grown incrementally by row id
  (memories are never rewritten, so old rows never need a second look);
* candidates are bucketed by length, and rapidfuzz's C scorers with a score
  cutoff skip most of a bucket without computing a full distance.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from pathlib import Path
from typing import Any

from .lexical import STOPWORDS, fold, tokens
from ..storage.reads import MemoryReader, store_for

log = logging.getLogger(__name__)

# Word-ish tokens (linear, no backtracking); is_identifier() then keeps the names.
_CANDIDATE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
MAX_IDENTIFIER = 80
_CAMEL = re.compile(r"[a-z][A-Z]")
# Looked-up words shorter than this are left alone: "lod" could be load, log or lot.
MIN_WORD = 5
_WORDS = re.compile(r"(?<![^\W_])[^\W\d_]{%d,}(?![^\W_])" % (MIN_WORD - 1))  # noqa: UP031 - {} are the regex's
MIN_IDENTIFIER = 5
# Normalized similarity (0..100) needed to accept a correction.
WORD_CUTOFF = 80.0
IDENTIFIER_CUTOFF = 80.0
MAX_LOOKUPS = 4
# The bundled encoder's word list: a word in it is a word of the language, or a place or a
# name ("berlin", "dublin", "champions"), not a slip of the keys ("forcast", "ingird",
# "dashbaord" are not in it). Such a word is left alone however close a word memory uses:
# "When did the *Berlin* office open?" read as "*Merlin*" answered with a note on Merlin
# Okafor's invoice job, and the verdict could not see that no memory mentions Berlin.
DICTIONARY = Path(__file__).resolve().parents[1] / "data" / "encoder" / "tokenizer.json"


@functools.cache
def dictionary() -> frozenset[str]:
    """The whole words of the bundled encoder's vocabulary (no word pieces), or none when
    the file cannot be read: then every unknown word is looked up, as before."""
    try:
        vocab = json.loads(DICTIONARY.read_text(encoding="utf-8"))["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        log.warning("jupymem: the word list for typo fixes is unreadable (%s): every unknown word is looked up", err)
        return frozenset()
    words = vocab if isinstance(vocab, dict) else (w for w, *_ in vocab)
    return frozenset(w for w in words if isinstance(w, str) and len(w) >= MIN_WORD and w.isalpha())


def is_identifier(token: str) -> bool:
    inner = token.strip("._-")
    if "_" in inner or ("." in inner and not inner.replace(".", "").isdigit()):
        return True
    has_alpha = any(c.isalpha() for c in inner)
    has_digit = any(c.isdigit() for c in inner)
    return (has_alpha and has_digit) or bool(_CAMEL.search(inner))


def identifiers(text: str) -> list[str]:
    """Identifier-like names in ``text``, folded, e.g. ``customer_id``, ``01_load.ipynb``."""
    out: dict[str, None] = {}
    for tok in _CANDIDATE.findall(text):
        tok = tok.rstrip("._-")
        if not MIN_IDENTIFIER <= len(tok) <= MAX_IDENTIFIER:
            continue
        if tok.isalpha() and (tok.islower() or tok.isupper() or tok.istitle()):
            continue  # a plain word: the common case, decided without a regex
        if is_identifier(tok):
            out.setdefault(fold(tok), None)
    return list(out)


class Vocabulary:
    """The names and words used in one project's memories, grown by row id.

    The first build reads every statement (about 2.5 s at 100,000 memories), so when more
    than ``background_rows`` rows are new it runs in a daemon thread and ``refresh``
    answers False until it is done: searches skip typo correction meanwhile, never wait.
    """

    def __init__(self, background_rows: int = 5000) -> None:
        self._lock = threading.Lock()
        self._rid = 0
        self._identifiers: dict[int, dict[str, None]] = {}  # by length
        self._words: dict[int, dict[str, None]] = {}
        self._lists: dict[tuple[str, int], list[str]] = {}
        # Closest matches already looked up, until the vocabulary grows (a prompt's
        # unknown words recur from turn to turn; each lookup scans a few length buckets).
        self._memo: dict[tuple[str, str, float], str | None] = {}
        self.background_rows = background_rows
        self._builder: threading.Thread | None = None

    def refresh(self, store: Any) -> bool:
        """Bring the vocabulary up to date with memory (``store``: a ``reads.MemoryReader``,
        or a connection to wrap in one); True when it can answer now."""
        builder = self._builder
        if builder is not None and builder.is_alive():
            return False
        store = store_for(store)
        top = store.top_rid()
        if top <= self._rid:
            return True
        if top - self._rid > self.background_rows:
            self._builder = threading.Thread(
                target=self._build_logged, args=(store, top), name="jupymem-vocabulary", daemon=True
            )
            self._builder.start()
            return False
        self._build(store, top)
        return True

    def state(self) -> str:
        """For people: "ready", "reading" (searches skip typo fixes meanwhile) or "not read"."""
        builder = self._builder
        if builder is not None and builder.is_alive():
            return "reading"
        return "ready" if self._rid else "not read"

    def wait(self, timeout: float | None = None) -> None:
        builder = self._builder
        if builder is not None:
            builder.join(timeout)

    def _build_logged(self, store: MemoryReader, top: int) -> None:
        try:
            self._build(store, top)
        except Exception as err:  # a background thread reports instead of dying silently
            log.warning("jupymem: reading names for typo correction failed: %s: %s", type(err).__name__, err)

    def _build(self, store: MemoryReader, top: int) -> None:
        """Read rows up to ``top`` into copies, then swap them in (readers never wait)."""
        with self._lock:
            ids = {n: dict(d) for n, d in self._identifiers.items()}
            words = {n: dict(d) for n, d in self._words.items()}
            start = self._rid
        last = start
        while last < top:
            rows = store.texts(last, top, 20000)
            if not rows:
                break
            for _, statement, topic, _original in rows:
                text = f"{statement} {topic}" if topic else statement
                for ident in identifiers(text):
                    ids.setdefault(len(ident), {})[ident] = None
                # In the text's order, not a set's: a bucket's order breaks rapidfuzz's ties,
                # and a set's order changes with each process's string hashing.
                for w in dict.fromkeys(_WORDS.findall(fold(text))):
                    words.setdefault(len(w), {})[w] = None
            last = rows[-1][0]
        with self._lock:
            if self._rid == start:  # nobody else moved it meanwhile
                self._identifiers, self._words, self._rid = ids, words, max(last, top)
                self._lists.clear()
                self._memo.clear()

    def _bucket(self, kind: str, length: int) -> list[str]:
        key = (kind, length)
        got = self._lists.get(key)
        if got is None:
            source = self._identifiers if kind == "id" else self._words
            got = self._lists[key] = list(source.get(length, ()))
        return got

    def _best(self, kind: str, text: str, cutoff: float) -> str | None:
        key = (kind, text, cutoff)
        if key in self._memo:
            return self._memo[key]
        if len(self._memo) >= 10_000:
            self._memo.clear()
        found = self._memo[key] = self._closest(kind, text, cutoff)
        return found

    def _closest(self, kind: str, text: str, cutoff: float) -> str | None:
        from rapidfuzz import fuzz, process

        slack = 1 if len(text) < 8 else 2
        best: tuple[float, str] | None = None
        for length in range(len(text) - slack, len(text) + slack + 1):
            choices = self._bucket(kind, length)
            if not choices:
                continue
            hit = process.extractOne(text, choices, scorer=fuzz.ratio, score_cutoff=cutoff)
            if hit and (best is None or hit[1] > best[0] or (hit[1] == best[0] and hit[0] < best[1])):
                best = (hit[1], hit[0])
        return best[1] if best else None

    def correct_identifier(self, ident: str) -> str | None:
        """The closest known identifier to ``ident`` (folded), or None."""
        ident = fold(ident)
        with self._lock:
            if ident in self._identifiers.get(len(ident), {}):
                return None
            return self._best("id", ident, IDENTIFIER_CUTOFF)

    def correct_word(self, word: str) -> str | None:
        if len(word) < MIN_WORD or not word.isalpha() or word in STOPWORDS or word in dictionary():
            return None
        with self._lock:
            if word in self._words.get(len(word), {}):
                return None
            return self._best("word", word, WORD_CUTOFF)

    def __len__(self) -> int:
        return sum(map(len, self._identifiers.values())) + sum(map(len, self._words.values()))


def corrections(vocab: Vocabulary, query: str, unknown: set[str]) -> dict[str, str]:
    """Query words that occur in no memory -> the word memory uses instead.

    ``unknown`` holds the query's folded words with document frequency 0. A mistyped
    identifier is corrected as a whole (``df_slaes`` -> ``df_sales``), so its parts
    map to the parts of the right name; other unknown words are corrected one by one.
    """
    out: dict[str, str] = {}
    lookups = 0
    for ident in identifiers(query):
        parts = tokens(ident)
        if not any(p in unknown for p in parts):
            continue
        if lookups >= MAX_LOOKUPS:
            break
        lookups += 1
        fixed = vocab.correct_identifier(ident)
        if fixed is None:
            continue
        fixed_parts = tokens(fixed)
        if len(fixed_parts) == len(parts):
            out.update({p: f for p, f in zip(parts, fixed_parts) if p != f})
        else:
            for p in parts:
                if p in unknown:
                    near = [f for f in fixed_parts if f not in parts]
                    if near:
                        out[p] = near[0]
    for word in sorted(unknown, key=lambda w: (-len(w), w)):  # longest first; ties by name, not set order
        if word in out or lookups >= MAX_LOOKUPS:
            continue
        lookups += 1
        fixed = vocab.correct_word(word)
        if fixed:
            out[word] = fixed
    return out
