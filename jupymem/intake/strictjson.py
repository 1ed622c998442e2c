"""JSON from outside this process, read strictly: every line of ``.jupymem/``, every import.

``json.loads`` accepts more than jupymem ever writes, and some of it is a weapon in a
file that arrives with a pull: 200 KB of ``[`` raises ``RecursionError`` (not
``ValueError``, so it escaped every handler and stopped every command), ``2**64``
overflows SQLite's integers when it is stored, ``NaN`` and ``Infinity`` make the REST
API send JSON a browser cannot parse, and a duplicate key lets a reviewer read one
value while another is applied. ``loads`` refuses all of them before anything else
looks at the value, and bounds the work first: the size before the parse, the nesting
before the recursive decoder. What it returns is plain JSON data that jupymem could
have written itself.

Stdlib only; it runs once per line read, so the common case (a few brackets, no
escapes) costs one ``json.loads`` and a ``bytes.count``.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from operator import sub
from typing import Any

__all__ = ["MAX_DEPTH", "INT_MAX", "INT_MIN", "StrictJSONError", "loads", "depth"]

MAX_DEPTH = 16  # jupymem's deepest event is 6 levels; the REST API allows 16 too
INT_MAX, INT_MIN = 2**63 - 1, -(2**63)  # what SQLite stores as an INTEGER


class StrictJSONError(ValueError):
    """Why a text is not JSON jupymem accepts; ``str()`` is a phrase ("nests 40 levels deep")."""


# Strings are skipped when nesting is measured: a statement may quote code full of brackets.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


def depth(raw: bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (0 for a scalar)."""
    opening = raw.count(b"[") + raw.count(b"{")
    if opening <= 1:
        return opening
    brackets = (_STRING.sub(b'""', raw) if b'"' in raw else raw).translate(None, _NOT_BRACKET)
    # The level after each bracket, in C (a pulled line may hold 100,000 of them): an
    # opening bracket steps 2 and a closing one 0, and the running sum loses 1 a bracket.
    levels = map(sub, accumulate(brackets.translate(_STEP)), range(1, len(brackets) + 1))
    return max(0, max(levels, default=0))


# A key is quoted in a message only when it could be a field of jupymem's own. Any other
# key is whatever the file's author made it (a secret, say), and messages are kept and shown.
_FIELD = re.compile(r"[a-z][a-z_]{0,31}")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        key = f"the key {dup!r}" if _FIELD.fullmatch(dup) else "a key"
        raise StrictJSONError(f"repeats {key} (a reader would see one value, jupymem apply another)")
    return out


def _int(text: str) -> int:
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise StrictJSONError(f"holds the number {text[:24]}{'…' if len(text) > 24 else ''}, beyond a 64-bit integer")
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"holds the number {text[:24]}, which is not finite")
    return value


def _constant(name: str) -> Any:
    raise StrictJSONError(f"holds {name}, which is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int, parse_float=_float, parse_constant=_constant)


def loads(raw: bytes | str, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> Any:
    """The value of one JSON text, or ``StrictJSONError`` saying why it is refused.

    Refused: more than ``max_bytes``, not UTF-8, nesting deeper than ``max_depth``,
    duplicate keys, ``NaN``/``Infinity`` (and numbers too big to be finite), integers
    outside SQLite's 64-bit range, and anything ``json`` itself refuses.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) > max_bytes:
        raise StrictJSONError(f"is {len(data):,} bytes, more than the {max_bytes:,} allowed")
    # Nesting cannot exceed the number of brackets: only a line with many is measured.
    if data.count(b"[") + data.count(b"{") > max_depth:
        deepest = depth(data)
        if deepest > max_depth:
            raise StrictJSONError(f"is nested too deeply ({deepest} levels; at most {max_depth} are allowed)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJSONError(f"is not UTF-8 (a bad byte at offset {exc.start})") from None
    try:
        return _DECODER.decode(text)
    except StrictJSONError:
        raise
    except RecursionError:  # depth() bounds this; kept so no decoder limit ever escapes
        raise StrictJSONError("nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and int() past Python's digit limit
        raise StrictJSONError(f"is not JSON ({str(exc).split(':')[0]})") from None
