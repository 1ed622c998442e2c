"""Characters that people cannot see: the one rule for every field that can reach the block.

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
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_INVISIBLE", "hidden", "strip_hidden"]

MAX_INVISIBLE = 16

# Never legitimate in a statement: tag characters, bidi embeddings, overrides and
# isolates, the variation selectors supplement, interlinear annotation marks.
_BANNED = re.compile(
    "[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\U000e0100-\U000e01ef\ufff9-\ufffb]"
)
# Renders as nothing: format characters (Cf), variation selectors, fillers.
_INVISIBLE_EXTRA = frozenset("\u115f\u1160\u3164\uffa0\u180e") | frozenset(chr(c) for c in range(0xFE00, 0xFE10))
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


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
