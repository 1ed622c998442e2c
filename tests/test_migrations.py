"""A released migration is never edited, in either engine.

A database that ran migration N never runs it again, so an edit to N's SQL reaches only
new databases: two users of one version would hold different schemas. Each migration's
text is pinned by its hash. A new migration appends a hash here; a changed hash means an
edit, and the change belongs in a new migration instead. Parts of the SQL are written by
helpers (``database.MEMORY_COLUMNS_DDL``, ``postgres.schema._copy_privacy``) so that the two
engines cannot drift; these hashes hold those helpers to the bytes that were released.
"""

from __future__ import annotations

import hashlib

import pytest

from jupymem.storage import database
from jupymem.storage.postgres import schema

SQLITE = (
    "79eabe7db966776ff22769f7f6700dd1197418c803c6280ca207e2195ba17934",
    "a1cb8e4cbf4f268d30bc305d02e427c2dc54b301461812518990002713d5f80b",
    "3d54b127e97383c8d1caa8a5142c1c6cab711f126774411758e635ed64f9c818",
    "3633a5d00494e7d88f3c87530bcb52e95349c3c83c71d717b1ee7af5fe7c1bbc",
    "14567b6777da8e1abcb1ac811ab7797048912ca11cec7627cd4bc4ec92111244",
)
POSTGRES = (
    "3892cfdd34bd28ca6b8a5781288b45bb047a6f87d5451f752742c503417d82f3",
    "76185e80e4d7dab411e700cba7afaf1a4c42c67aafbdbe44e54778b85023c285",
    "eb6ab5b14bb4209070d169a38ffdb1dd00f99d4764a6b308b794b762d1e5cac0",
    "a5a95a4ed0bba5c111169fff77e78531e6c3c0904f26439e095aa68a983e812e",
    "888ff0b7ebc89072708bd4ad74c87a251178920f286f85828326d8d0cac91bb3",
    "1c0c77fe1a5a80cd13e9d2199073ddb892ae13c4145e11a2c5fe86adba6c766c",
    "1431dc67f13fae6da2c8659a0560efb32ef0e7752194a8c67c557fac2c63c7ea",
    "071c72849a1a89d33f563af282b422c310a44c64a4640975f034726b64fe348d",
    "f929bb1a362ac032f8f215136a32fd49b20eb549308e85780d925e2bb0b00143",
)


@pytest.mark.parametrize(("engine", "migrations", "released"), [
    ("sqlite", database.MIGRATIONS, SQLITE),
    ("postgres", schema.MIGRATIONS, POSTGRES),
])
def test_released_migrations_are_never_edited(engine: str, migrations: tuple[str, ...],
                                              released: tuple[str, ...]) -> None:
    hashes = tuple(hashlib.sha256(sql.encode()).hexdigest() for sql in migrations)
    assert len(hashes) >= len(released), f"{engine}: a released migration was removed"
    for number, (now, then) in enumerate(zip(hashes, released, strict=False), start=1):
        assert now == then, f"{engine} migration {number} was edited: put the change in a new migration"
    assert hashes[len(released):] == (), (
        f"{engine}: migrations {len(released) + 1}-{len(hashes)} are new: append their hashes to this file"
    )


def test_the_memory_row_has_the_same_columns_in_both_engines() -> None:
    first_sqlite, first_postgres = database.MIGRATIONS[0], schema.MIGRATIONS[0]
    assert database.MEMORY_COLUMNS_DDL in first_sqlite
    assert database.MEMORY_COLUMNS_DDL in first_postgres
