"""How the magics read their options line (``%%remember``, ``%%ask``)."""

from __future__ import annotations

import shlex
from typing import Any

from IPython.core.error import UsageError


def options(magic: Any, line: str) -> Any:
    """A magic's options line, read as a shell reads it: quotes are taken off (`--kind
    'decision'`) and an unbalanced one is a usage error, not a traceback."""
    try:
        words = shlex.split(line, posix=True)
    except ValueError as err:
        raise UsageError(f"could not read the options {line.strip()!r}: {err}") from None
    return magic.parser.parse_args(words)
