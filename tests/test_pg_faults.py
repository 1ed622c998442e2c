"""The team engine when its PostgreSQL goes away: a restart in the middle of a writer's work.

A server of this module's own (``pgserver``, its own data folder), since it is stopped and
started again and the session's server serves other tests meanwhile. A writer in another
process records through ``Project.remember``, retrying a statement whenever it is told the
database cannot be reached, as a person (or a script) would. While the server is down the
command line and a kernel that was using it each say so in one line, never a traceback,
and the kernel's own cells keep working. Once it is back: everything the writer was told
was recorded is there, nothing twice, and ``verify`` passes.

Both ways a server goes away: ``fast`` (a clean restart: every session is terminated) and
``immediate`` (a crash: no shutdown checkpoint, recovery from the write-ahead log on start).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_run import jm
from conftest import shell_in
from jupymem.config import Settings
from jupymem.core.opening import close_all, require_project
from jupymem.storage import eventlog, registry
from jupymem.storage.postgres import admin
from pg_server import user_url
import pg_workers
from pg_workers import remember_worker

pytestmark = pytest.mark.postgres

COUNT = 150  # records by the writer; the server goes away after the first AFTER of them
AFTER = 30


class Restartable:
    """pgserver's PostgreSQL, stopped and started by the test."""

    def __init__(self, folder: Path) -> None:
        import pgserver

        self.pg = pgserver.get_server(str(folder), cleanup_mode="stop")
        self.admin_url: str = self.pg.get_uri()

    def stop(self, mode: str) -> None:
        from pgserver._commands import pg_ctl

        pg_ctl(["-m", mode, "-w", "stop"], pgdata=self.pg.pgdata, user=self.pg.system_user)

    def start(self) -> None:
        self.pg.ensure_postgres_running()  # pgserver's own start: the same socket and options


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Restartable]:
    pytest.importorskip("pgserver", reason="pgserver is not installed: pip install -e '.[test]'")
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[team]'")
    srv = Restartable(tmp_path_factory.mktemp("pgdata-faults"))
    try:
        admin.create_schema(srv.admin_url)
        yield srv
    finally:
        srv.pg.cleanup()


def _acked(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _one_line(said: str) -> None:
    assert "cannot be reached" in said and "Traceback" not in said, said
    assert said.strip().count("\n") == 0, said


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_restart_while_a_writer_records_loses_nothing_and_doubles_nothing(
    server: Restartable, repo: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from IPython.core.error import UsageError

    role = f"writer_{mode}"
    admin.create_user(server.admin_url, role, password=f"pw-{role}")
    admin.add_member(server.admin_url, registry.root_commit(repo) or "", role)
    url = user_url(server.admin_url, role, f"pw-{role}")
    acks = tmp_path / "acks.txt"
    monkeypatch.setenv("JUPYMEM_DATABASE_URL", url)

    with pg_workers.pool(1) as pool:  # a process of its own, with its own connection
        job = pool.apply_async(remember_worker, (url, str(repo), str(tmp_path / "writer-home"), COUNT, str(acks)))
        for ip in shell_in(repo, monkeypatch):  # a kernel that was using the database
            assert ip.run_cell("%memory remember The churn dashboard uses UTC.").success
            give_up = time.monotonic() + 20
            while _acked(acks) < AFTER and time.monotonic() < give_up and not job.ready():
                time.sleep(0.02)
            assert _acked(acks) >= AFTER and not job.ready(), "the writer was not under way when the server went"
            server.stop(mode)
            try:
                # The command line, a process of its own: one line, an exit code, no traceback.
                for args in (("remember", "Invoices are monthly."), ("search", "churn")):
                    done = jm(*args, cwd=repo, env={"JUPYMEM_DATABASE_URL": url}, process=True)
                    assert done.returncode != 0, args
                    _one_line(done.stderr.decode())
                # The kernel: our commands say so in one line, the user's cells run as ever.
                capsys.readouterr()
                search = ip.run_cell("%memory search churn")
                assert isinstance(search.error_in_exec, UsageError)
                _one_line(str(search.error_in_exec))
                assert ip.run_cell("x = 1 + 1").success and ip.user_ns["x"] == 2
                assert isinstance(ip.run_cell("{}['region']").error_in_exec, KeyError)
                out = capsys.readouterr().out  # the user's own traceback, and nothing of ours
                assert out.count("Traceback") == 1 and "StorageError" not in out and "psycopg" not in out, out
            finally:
                server.start()
            # Back: the kernel's next command reconnects on its own.
            capsys.readouterr()
            assert ip.run_cell("%memory search churn dashboard").success
            assert "UTC" in capsys.readouterr().out
        got: dict[str, Any] = job.get(timeout=90)

    assert got["retries"] > 0, "the writer never met the restart"
    assert all("cannot be reached" in s and "Traceback" not in s for s in got["said"]), got["said"]
    told = got["ids"]
    assert len(told) == len(set(told)) == COUNT and acks.read_text().split() == told

    close_all()
    proj = require_project(repo, Settings(home=tmp_path / "check-home", database_url=url, encoder="none",
                                          interactive=False))
    active = {r[0] for r in proj.conn.execute("SELECT id FROM memories WHERE status = 'active'").fetchall()}
    assert set(told) <= active  # nothing the writer was told was recorded is lost
    events = list(eventlog.events(proj.conn))
    records = Counter(e.payload["memory"]["id"] for e in events if e.type == "record")
    assert max(records.values()) == 1 and len(events) == COUNT + 1  # nothing twice; the kernel's one memory
    assert proj.verify().ok
    close_all()
