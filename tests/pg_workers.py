"""What the team engine's concurrency and restart tests run in processes of their own
(``pool``). Apart from ``pg_server.py`` so that those processes import jupymem, not
pytest."""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
from pathlib import Path
from typing import Any

# What every writer imports, imported once in the server process its writers fork from.
PRELOAD = ["pg_workers", "psycopg", "jupymem.config", "jupymem.core.opening", "jupymem.errors",
           "jupymem.sharing.journal", "jupymem.storage.database", "jupymem.storage.postgres",
           "jupymem.storage.projection"]


def pool(processes: int) -> multiprocessing.pool.Pool:
    """``processes`` writers, each a process of its own that makes its own connection,
    forked from a server process (``forkserver``) that has done the imports above once and
    never connects: a fresh Python apiece (``spawn``) cost half a second of CPU each."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx.Pool(processes)


def append_worker(url: str, project: str, worker: int, count: int) -> list[str]:
    """Record ``count`` memories in ``project``, one write transaction each, as a process of
    its own with its own connection; returns the event ids it wrote."""
    from jupymem.sharing.journal import Journal
    from jupymem.storage import database, projection
    from jupymem.storage.postgres import connect

    conn = connect(url, project)
    written: list[str] = []
    try:
        for i in range(count):
            memory: dict[str, Any] = {
                "id": f"m-{worker:03d}{i:05d}", "kind": "note", "statement": f"worker {worker} note {i}",
                "standing": "unconfirmed", "provenance": {"recorder": "person"},
            }
            with database.transaction(conn):
                event = Journal(conn, None, f"worker {worker}").append("record", {"memory": memory})
                projection.apply(conn, event)
            written.append(event.uid)
    finally:
        conn.close()
    return written


def remember_worker(url: str, repo: str, home: str, count: int, acks: str, deadline: float = 60.0) -> dict[str, Any]:
    """Record ``count`` statements through ``Project.remember`` as a person's process does,
    retrying a statement after a ``StorageError`` (the server is down) until it is told the
    statement was recorded; each acknowledged memory id is written to ``acks`` as it comes,
    so the test sees progress. Returns the ids, the retries and the first messages read."""
    import time

    from jupymem.config import Settings
    from jupymem.core.opening import require_project
    from jupymem.errors import StorageError

    proj = require_project(repo, Settings(home=Path(home), database_url=url, encoder="none", interactive=False))
    ids: list[str] = []
    retries, give_up = 0, time.monotonic() + deadline
    said: list[str] = []
    with open(acks, "a", encoding="utf-8") as out:
        for i in range(count):
            statement = f"The nightly load number {i} of the sales mart runs after the billing export."
            while True:
                try:
                    ids.append(proj.remember(statement).id)
                    break
                except StorageError as exc:
                    retries += 1
                    if len(said) < 3:
                        said.append(str(exc))
                    if time.monotonic() > give_up:
                        raise
                    time.sleep(0.05)
            out.write(ids[-1] + "\n")
            out.flush()
    return {"ids": ids, "retries": retries, "said": said}
