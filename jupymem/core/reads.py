"""Reading memories from the projection for ``Project``: by id or prefix, pages in block order, counts, history.

Every memory a read hands out has its ``replacements`` set where two people superseded
the same memory differently (the disputes, computed once per revision).
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable
from typing import Any

from ..errors import UnknownMemory
from ..models import ACTIVE, KINDS, HistoryEntry, Memory, SearchResult, kind_rank
from ..storage import database
from ..storage.projection import MEMORY_COLUMNS, disputes, history_from_row, memory_from_row

# Block order in SQL, derived from KINDS as models.kind_rank is (a fixed tuple, not user input).
_KIND_ORDER = "CASE kind " + " ".join(f"WHEN '{k}' THEN {kind_rank(k)}" for k in KINDS) + f" ELSE {len(KINDS)} END"


class Reads:
    """The reads of one project's memories; ``revision`` is the project's."""

    def __init__(self, conn: database.Connection, name: str, revision: Callable[[], int]):
        self.conn = conn
        self.name = name
        self.revision = revision
        self._disputes_cache: tuple[int, dict[str, tuple[str, ...]]] | None = None

    def get(self, memory_id: str) -> Memory:
        """A memory by id or by a unique prefix of it (``m-`` optional); ``UnknownMemory``."""
        key = (memory_id or "").strip().lower()
        if not key:
            raise UnknownMemory("Give a memory id, e.g. m-3f9a2c1d4e5f.")
        if not key.startswith("m-"):
            key = "m-" + key
        if not key.isascii() or not key.isprintable():  # ids are hex: a pasted byte or a stray character
            raise UnknownMemory(f"No memory {memory_id!r} in {self.name}: ids are m- and hex digits.")
        row = self.conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (key,)).fetchone()
        if row is not None:
            return self.disputed(memory_from_row(row))
        # A prefix: a range on the unique index. (``id = ? OR id LIKE ?`` scanned the whole
        # table, and every remember() ends with a get(): 3 ms per record at 10,000.)
        rows = self.conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT 2",
            (key, key + "\U0010ffff"),
        ).fetchall()
        if len(rows) == 1 and len(key) >= 5:
            return self.disputed(memory_from_row(rows[0]))
        if len(rows) == 1:
            raise UnknownMemory(f"{memory_id!r} is too short to name a memory; give at least 3 characters of the id.")
        if rows:
            raise UnknownMemory(f"{memory_id!r} matches several memories; give more of the id.")
        raise UnknownMemory(f"No memory {memory_id!r} in {self.name}. `%memory list` shows the ids.")

    def list(self, kind: str | None, include_inactive: bool, limit: int | None, offset: int) -> list[Memory]:
        """Memories in block order (kind, then time, then id), paged in SQL: a page of 200
        out of 10,000 builds 200 records, not 10,000."""
        where, params = self._filter(kind, include_inactive)
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories{where} ORDER BY {_KIND_ORDER}, created_at, id"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [max(0, int(limit)), max(0, int(offset))]
        return [self.disputed(memory_from_row(r)) for r in self.conn.execute(sql, params).fetchall()]

    def count(self, kind: str | None, include_inactive: bool) -> int:
        """How many memories ``list`` would return without a limit."""
        where, params = self._filter(kind, include_inactive)
        return self.conn.execute(f"SELECT count(*) FROM memories{where}", params).fetchone()[0]

    def _filter(self, kind: str | None, include_inactive: bool) -> tuple[str, builtins.list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        if not include_inactive:
            where.append("status = ?")
            params.append(ACTIVE)
        if kind:
            from ..storage import validate  # only a filtered read asks for it

            validate.check_kind(kind)
            where.append("kind = ?")
            params.append(kind)
        return (" WHERE " + " AND ".join(where) if where else ""), params

    def counts(self) -> dict[str, int]:
        """Active memories per kind, every kind named."""
        rows = self.conn.execute("SELECT kind, count(*) FROM memories WHERE status = ? GROUP BY kind", (ACTIVE,))
        got = dict(rows.fetchall())
        return {k: got.get(k, 0) for k in KINDS}

    def history(self, memory_id: str) -> builtins.list[HistoryEntry]:
        """What happened to a memory, oldest first."""
        m = self.get(memory_id)
        rows = self.conn.execute(
            "SELECT memory_id, seq, at, action, detail FROM history WHERE memory_id = ? ORDER BY seq", (m.id,)
        ).fetchall()
        return [history_from_row(r) for r in rows]

    def disputed(self, m: Memory) -> Memory:
        """``m`` with ``replacements`` set when two people superseded the same memory differently."""
        if m.supersedes is None and m.superseded_by is None:
            return m  # neither a replacement nor replaced: nothing to look up (most memories)
        found_all = self._disputes()
        key = m.supersedes if m.supersedes in found_all and m.active else m.id
        found = found_all.get(key or "")
        return dataclasses.replace(m, replacements=found) if found else m

    def disputed_result(self, result: SearchResult) -> SearchResult:
        """``result`` with every hit ``disputed``."""
        if not any(h.memory.supersedes or h.memory.superseded_by for h in result.hits):
            return result  # no hit can be one of two replacements
        return dataclasses.replace(
            result,
            hits=tuple(dataclasses.replace(h, memory=self.disputed(h.memory)) for h in result.hits),
            full=self.disputed(result.full) if result.full is not None else None,
        )

    def _disputes(self) -> dict[str, tuple[str, ...]]:
        """Replaced memory id -> its active replacements, where there is more than one."""
        rev = self.revision()
        cached = self._disputes_cache
        if cached and cached[0] == rev:
            return cached[1]
        got = disputes(self.conn)
        self._disputes_cache = (rev, got)
        return got

    def reset(self) -> None:
        """Forget the disputes (after a rebuild)."""
        self._disputes_cache = None
