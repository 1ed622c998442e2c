"""Text -> the tokens FTS5's ``unicode61 remove_diacritics 2`` tokenizer makes of it, exactly.

Both the query side and the in-memory BM25 index (``postings.py``) must cut text where
the FTS5 index cuts it and fold letters as it folds them: a query word that folds
differently matches nothing, and an index that counts different tokens ranks
differently from FTS5. Python's own notions do not agree with unicode61 on thousands of
characters (``ß`` stays ``ß``, ``²`` stays ``²``, ``¼`` is one token character, ``ǆ`` is
not ``dz``), so we do not imitate the tokenizer: we ask it.

unicode61 works one character at a time: each is a separator or a token character that
folds to at most one character (checked over every code point). ASCII is decided here
(letters and digits are token characters, lower-cased; everything else separates). A
non-ASCII character is looked up once per process by tokenizing ``q<c>z`` in an
in-memory FTS5 table (``storage/fts.py``) and remembered, so a text is one ``str.translate`` and a split.
unicode61's tables are frozen (an index built by one SQLite must stay readable by the
next), so any SQLite gives the answer the project's database would.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from typing import Any

from ..storage import fts

log = logging.getLogger(__name__)

_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Code point -> " " (a separator) or its folded form ("" for a mark that vanishes).
_SPLIT: dict[int, str] = {c: (chr(c).lower() if chr(c).isalnum() else " ") for c in range(128)}
# Code point -> folded form, token characters only (``fold`` keeps separators as they are).
_FOLD: dict[int, str] = {c: chr(c).lower() for c in range(128) if chr(c).isalnum()}
_lock = threading.Lock()


def tokens(text: str) -> list[str]:
    """The index's tokens of ``text``, in order."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    _learn(text)
    return text.translate(_SPLIT).split()


def encodable(text: Any) -> Any:
    """``text`` with each lone surrogate replaced by U+FFFD, so that every encoder and
    SQLite can take it. A query may hold them (bytes a command line decoded with
    ``surrogateescape``, a JSON ``"\\udcff"`` escape) and must still be answered, not raise
    from the tokenizer; statements never do (``validate`` refuses them)."""
    if not isinstance(text, str) or text.isascii():  # not text: each entrance answers it as before
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


def fold(text: str) -> str:
    """``text`` with every token character folded as the index folds it; separators kept."""
    if text.isascii():
        return text.lower()
    _learn(text)
    return text.translate(_FOLD)


def _learn(text: str) -> None:
    missing = [c for c in set(text) if ord(c) not in _SPLIT]
    for c in [c for c in missing if 0xD800 <= ord(c) < 0xE000]:  # a lone surrogate: SQLite cannot take it
        _SPLIT[ord(c)] = " "
        missing.remove(c)
    if missing:
        with _lock:
            missing = [c for c in missing if ord(c) not in _SPLIT]
            if missing:
                for c, folded in _ask(missing).items():
                    _SPLIT[ord(c)] = " " if folded is None else folded
                    if folded is not None:
                        _FOLD[ord(c)] = folded


def _ask(chars: list[str]) -> dict[str, str | None]:
    """What unicode61 makes of each character: None for a separator, else its folded form."""
    try:
        found = fts.unicode61_tokens([f"q{c}z" for c in chars])
    except fts.Unavailable as err:  # a Python whose SQLite lacks FTS5: approximate, and say so once
        log.warning("jupymem: cannot ask SQLite how it tokenizes (%s); approximating", err)
        return {c: _approximate(c) for c in chars}
    out: dict[str, str | None] = {}
    for c, got in zip(chars, found):
        out[c] = got[0][1:-1] if len(got) == 1 else None
    return out


def _approximate(c: str) -> str | None:
    if not (c.isalnum() or unicodedata.category(c) in ("Mn", "Co")):
        return None
    base = unicodedata.normalize("NFD", c)[0]
    return "" if unicodedata.combining(c) else base.lower()[:1]
