"""Characters that people cannot see: the one rule for every field that can reach the block,
and the control characters that no text of ours holds.

A memory is read by two audiences at once: a person (in the sidebar, a pull request,
``jupymem show``) and an assistant (in the block). Text that one of them sees and the
other does not is how instructions get smuggled to a model: Unicode tag characters
(U+E0000-E007F) spell ASCII that renders as nothing and that models read ("ASCII
smuggling"), variation selectors can carry a byte each, bidi overrides show text in
another order than it is read (Trojan Source), and runs of zero-width characters
encode bits between visible letters.

``hidden`` finds such text; every entrance refuses it (``capture.check_statement``
for what a person records, ``validate`` for every field of every event, whichever
door it came through), and ``strip_hidden`` removes it where refusing is not an
option (a failed cell's excerpt, the block as a last line of defence).

What stays allowed is what ordinary text uses: a zero-width joiner or a variation
selector inside an emoji (``❤️‍🔥`` is U+2764 U+FE0F U+200D U+1F525), a soft hyphen,
a bidi mark in a right-to-left quote. Those are bounded: never more than two
invisible characters in a row, never more than ``MAX_INVISIBLE`` in one field.

Control characters (Unicode category Cc: C0, DEL and C1) have one rule too, with three
reaches (``control``): text that may span lines keeps tab and newline, a one-line text
keeps none, and a name (an identifier) holds no space or invisible character either.
Entrances refuse them (``control``); where refusing is not an option they are dropped or
turned into spaces (``strip_control``), line endings are made ``\\n`` (``unify_newlines``),
and the block puts each text on one line (``one_line``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

__all__ = [
    "CONTROL", "LINE_CONTROL", "MAX_INVISIBLE", "NAME_CONTROL", "control", "hidden", "one_line", "strip_control",
    "strip_hidden", "unify_newlines",
]

MAX_INVISIBLE = 16

# Never legitimate in a statement: tag characters, bidi embeddings, overrides and
# isolates, the variation selectors supplement, interlinear annotation marks.
_BANNED = re.compile(
    "[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\U000e0100-\U000e01ef\ufff9-\ufffb]"
)
# Renders as nothing: format characters (Cf), variation selectors, fillers.
_INVISIBLE_EXTRA = frozenset("\u115f\u1160\u3164\uffa0\u180e") | frozenset(chr(c) for c in range(0xFE00, 0xFE10))
_NON_ASCII = re.compile(r"[^\x00-\x7f]")

# Unicode category Cc but tab and newline, for text that may span lines (a test checks
# this class against ``unicodedata`` for every code point); every Cc, for one-line text;
# and for names (identifiers) also spaces and the invisible characters that reorder or
# hide text (bidi marks, controls and isolates, zero widths, the BOM).
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
LINE_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
NAME_CONTROL = re.compile(r"[\x00-\x20\x7f-\xa0\u061c\u1680\u2000-\u200f\u2028-\u202f\u205f-\u2069\u3000\ufeff]")
_REACH = {"text": CONTROL, "line": LINE_CONTROL, "name": NAME_CONTROL}
# Everything Python's str.splitlines() treats as a line break, plus tabs.
_BREAKS = re.compile(r"[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029\t]+")
# Every Cc, and the bidi controls that make text display in another order than it is
# read (Trojan Source).
_OUT_OF_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _invisible(c: str) -> bool:
    return c in _INVISIBLE_EXTRA or unicodedata.category(c) == "Cf"


def _describe(c: str, at: int) -> str:
    name = unicodedata.name(c, "")
    if 0xE0000 <= ord(c) <= 0xE007F:
        name = "a Unicode tag character"
    elif name:
        name = name.lower()
    return f"U+{ord(c):04X}{f' ({name})' if name else ''} at character {at}"


def hidden(text: str) -> str | None:
    """Why ``text`` hides something from a reader, or None. Pure ASCII costs one check."""
    if text.isascii():
        return None
    banned = _BANNED.search(text)
    if banned:
        return f"holds an invisible character, {_describe(banned.group(), banned.start())}"
    total = run = 0
    last = -2
    for m in _NON_ASCII.finditer(text):
        c = m.group()
        if not _invisible(c):
            continue
        total += 1
        run = run + 1 if m.start() == last + 1 else 1
        last = m.start()
        if run > 2:
            return f"holds a run of invisible characters ({_describe(c, m.start())})"
    if total > MAX_INVISIBLE:
        return f"holds {total} invisible characters (at most {MAX_INVISIBLE} are allowed)"
    return None


def strip_hidden(text: str) -> str:
    """``text`` as ``hidden`` would accept it: the banned characters removed, and the
    invisible ones past two in a row or ``MAX_INVISIBLE`` in all."""
    if text.isascii():
        return text
    text = _BANNED.sub("", text)
    out, run, total = [], 0, 0
    for c in text:
        if ord(c) > 0x7F and _invisible(c):
            run += 1
            if run > 2 or total >= MAX_INVISIBLE:
                continue
            total += 1
        else:
            run = 0
        out.append(c)
    return "".join(out)


def control(text: str, reach: Literal["text", "line", "name"] = "text") -> re.Match[str] | None:
    """The first control character ``text`` may not hold, or None: for ``"text"`` every
    Cc but tab and newline, for ``"line"`` every Cc, for ``"name"`` also spaces and the
    invisible characters of ``NAME_CONTROL``."""
    return _REACH[reach].search(text)


def strip_control(text: str, into: str = "") -> str:
    """``text`` with each control character but tab and newline replaced by ``into``:
    dropped, or ``" "`` where the words on either side must stay apart."""
    return CONTROL.sub(into, text)


def unify_newlines(text: str) -> str:
    """Line endings as ``\\n``: ``\\r\\n`` and a lone ``\\r`` both."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def one_line(text: str) -> str:
    """``text`` on one line, as the block shows it: every line break and tab a space,
    every other control character and bidi control dropped, and ``strip_hidden``."""
    return strip_hidden(_OUT_OF_LINE.sub("", _BREAKS.sub(" ", text)))
