"""Frozen settings. Only the faces read the environment (``Settings.from_env``);
the core takes a ``Settings`` so tests and servers can hold several at once."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from .models import _Record

DEFAULT_BLOCK_CAP = 4000
# Retention (SPEC 8), in days, unless ``gc`` is told otherwise: closed memories, assistant
# memories nobody confirmed, staged failures nothing cites.
CLOSED_DAYS, UNCONFIRMED_DAYS, EVIDENCE_DAYS = 90, 180, 14


@dataclass(frozen=True, eq=False, repr=False)
class Settings(_Record):
    """What every face reads: the memory home, the block's cap, the encoder, the team database."""

    home: Path
    block_cap: int = DEFAULT_BLOCK_CAP
    # None: the bundled model; "none": dense leg off; else a path or hub name.
    encoder: str | None = None
    # litellm model name used by %%ask and for translation; None: not configured.
    model: str | None = None
    # "english": translate non-English statements; "source": store as written.
    language: str = "english"
    # A long-lived process (kernel, server): the first search starts loading the encoder in
    # the background, so later searches have the dense leg at any project size. A one-shot
    # command (the CLI) sets it False and searches lexically, saying so in the result's legs.
    interactive: bool = True
    # True: a failed cell is staged without the one-line notice naming its handle.
    quiet: bool = False
    # The team engine: a PostgreSQL URL (``JUPYMEM_DATABASE_URL``, or the Jupyter server's
    # ``JupymemApp.database_url``) holds every repository's memory; None: each repository's
    # own SQLite file, or the database ``jupymem init --database`` bound it to.
    database_url: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        home = _home(env.get("JUPYMEM_HOME"))
        cap = env.get("JUPYMEM_BLOCK_CAP")
        return cls(
            home=home,
            block_cap=_positive_int(cap, "JUPYMEM_BLOCK_CAP") if cap else DEFAULT_BLOCK_CAP,
            encoder=env.get("JUPYMEM_ENCODER") or None,
            model=env.get("JUPYMEM_MODEL") or None,
            language="source" if env.get("JUPYMEM_LANGUAGE", "").lower() == "source" else "english",
            quiet=env.get("JUPYMEM_QUIET", "").strip().lower() in ("1", "true", "yes", "on"),
            database_url=env.get("JUPYMEM_DATABASE_URL", "").strip() or None,
        )

    def with_(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def _home(raw: str | None) -> Path:
    """``JUPYMEM_HOME`` (``~`` expanded), else ``~/.jupymem``; a ``~user`` that names no user,
    or a process without a home, is a clear error, not a traceback."""
    from .errors import JupymemError

    try:
        return Path(raw).expanduser() if raw else Path.home() / ".jupymem"
    except RuntimeError:  # pathlib: "Could not determine home directory."
        where = f"JUPYMEM_HOME={raw!r}" if raw else "this process's home directory"
        raise JupymemError(f"{where} cannot be found; set JUPYMEM_HOME to a folder jupymem may write to") from None


def _positive_int(raw: str, name: str) -> int:
    from .errors import JupymemError

    try:
        value = int(raw)
    except ValueError:
        raise JupymemError(f"{name}={raw!r} is not a whole number of bytes") from None
    if value < 512:
        raise JupymemError(f"{name}={value} is too small; the block needs at least 512 bytes")
    return value
