"""The PostgreSQL engine: one database holding many projects' memory, for a team.

``connection`` (``PgConnection``, a drop-in for ``database.Connection`` that speaks the
shared SQL through ``dialect``), ``schema`` (numbered migrations, row-level security),
``admin`` (make the schema, people and memberships) and ``store`` (``PgStore``, what
retrieval reads). The event log and its projection are the SQLite engine's own modules
(``eventlog``, ``projection``), unchanged: one SQL, two dialects.

Importing this package imports no driver; psycopg is imported when a connection is made,
so ``%load_ext jupymem`` and SQLite-only use never pay for it (nor need it installed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .connection import PgConnection
    from .store import PgStore

__all__ = ["PgConnection", "PgStore", "connect"]


def connect(url: str, project: str, **kw: Any) -> PgConnection:
    """A connection to ``project``'s memory in the team database at ``url``."""
    from .connection import PgConnection

    return PgConnection(url, project, **kw)


def __getattr__(name: str) -> Any:
    if name == "PgConnection":
        from .connection import PgConnection

        return PgConnection
    if name == "PgStore":
        from .store import PgStore

        return PgStore
    raise AttributeError(name)
