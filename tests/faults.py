"""Helpers for the fault-injection tests (``test_faults_*.py``): the real CLI as a
subprocess, forged exports re-hashed into a valid chain, byte-level damage to real
database files, a really read-only home, and checks over every byte under
``JUPYMEM_HOME``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import cli_run
from jupymem.storage import eventlog

ROOT = Path(__file__).resolve().parents[1]
CLOSE = "</project_memory>"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


# -- the real command line ---------------------------------------------------------------


def jm(*args: str, cwd: Path, input: bytes | None = None) -> subprocess.CompletedProcess:
    """``jupymem ARGS`` (``cli_run.jm``), with this test's JUPYMEM_HOME."""
    return cli_run.jm(*args, cwd=cwd, input=input)


def refused(proc: subprocess.CompletedProcess, code: int) -> str:
    """The one-line message of a refusal: the exit code, no traceback, ``jupymem: ...``."""
    err = proc.stderr.decode()
    assert proc.returncode == code, (proc.returncode, err, proc.stdout.decode()[:500])
    assert "Traceback" not in err and "Traceback" not in proc.stdout.decode()
    assert err.startswith("jupymem: ") and err.count("\n") == 1, err
    return err


def ok(proc: subprocess.CompletedProcess) -> Any:
    out = proc.stdout.decode()
    assert proc.returncode == 0, (proc.returncode, proc.stderr.decode(), out[:500])
    assert "Traceback" not in proc.stderr.decode()
    try:
        return json.loads(out)
    except ValueError:
        return out


# -- forged exports -----------------------------------------------------------------------


def export_events(proj: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    buf = io.StringIO()
    proj.export(buf)
    # split on "\n" only: a statement may hold U+2028, which splitlines() also breaks on
    header, *events = (json.loads(line) for line in buf.getvalue().split("\n") if line)
    return header, events


def rechain(header: dict[str, Any], events: list[dict[str, Any]]) -> str:
    """An export whose chain verifies after ``events`` were edited: what an attacker
    who knows the format writes. Every payload hash, link and hash is recomputed."""
    prev = eventlog.GENESIS
    lines = [json.dumps(header)]
    for seq, ev in enumerate(events, 1):
        payload = ev["payload"]
        payload_hash = ev["payload_hash"] if payload is None else eventlog.sha256(eventlog.canonical(payload))
        h = eventlog.event_hash(ev["uid"], ev["type"], ev["at"], payload_hash, prev)
        lines.append(json.dumps({**ev, "seq": seq, "payload_hash": payload_hash, "prev": prev, "hash": h},
                                ensure_ascii=False))
        prev = h
    return "\n".join(lines) + "\n"


def forge(proj: Any, edit: Callable[[list[dict[str, Any]]], None]) -> str:
    header, events = export_events(proj)
    edit(events)
    return rechain(header, events)


# -- bytes on disk ---------------------------------------------------------------------


def home_files(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob("*") if p.is_file())


def assert_nowhere(home: Path, secrets: list[str]) -> None:
    """No secret, in UTF-8 or as JSON would escape it, in any file under ``home``:
    databases, their WAL and shared memory, the registry, anything set aside."""
    files = home_files(home)
    assert files, "nothing to look at"
    for path in files:
        data = path.read_bytes()
        for secret in secrets:
            for form in {secret.encode(), json.dumps(secret)[1:-1].encode()}:
                assert form not in data, (path, secret[:12])


def block_is_whole(text: str) -> None:
    """One block: one opening tag, one closing tag at the end, no other markup, no bidi."""
    assert text.startswith('<project_memory trust="untrusted" revision="')
    assert text.count(CLOSE) == 1 and text.endswith(CLOSE)
    body = text[text.index(">") + 1 : -len(CLOSE)]
    assert "<" not in body and ">" not in body
    assert not any(c in text for c in BIDI)


def quiesce() -> None:
    """Close every connection of this process, so SQLite checkpoints and removes its WAL:
    what a byte edit then changes is the whole database."""
    from jupymem.core.opening import close_all

    close_all()


def page_size(db: Path) -> int:
    return int.from_bytes(db.read_bytes()[16:18], "big")


def root_page(db: Path, table: str) -> int:
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as raw:
        return raw.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]


def overwrite(db: Path, offset: int, data: bytes) -> None:
    with open(db, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


# -- a read-only home, for real -------------------------------------------------------------


@contextlib.contextmanager
def read_only(home: Path) -> Iterator[str]:
    """Make ``home`` and everything under it unwritable for this process, for real.

    File modes do not stop root, and tests may run as root: then the files get the
    ext4 *immutable* attribute (``chattr +i``), which refuses writes, new files and
    renames to every user, root included. Otherwise ``chmod a-w``. Either way the
    mechanism is proven before the test relies on it (creating a file must fail);
    when neither works here the test is skipped, saying why. Yields the mechanism.
    """
    paths = [home, *sorted(home.rglob("*"))]
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None:
            pytest.skip("running as root and chattr is not installed: no way to make a home read-only")
        done = subprocess.run([chattr, "+i", *map(str, paths)], capture_output=True)
        mechanism = "chattr +i"

        def undo() -> None:
            subprocess.run([chattr, "-i", *map(str, paths)], capture_output=True)
    else:
        modes = {p: p.stat().st_mode for p in paths}
        for p in reversed(paths):
            p.chmod(0o555 if p.is_dir() else 0o444)
        done = subprocess.CompletedProcess([], 0)
        mechanism = "chmod a-w"

        def undo() -> None:
            for p, mode in modes.items():
                p.chmod(mode)

    try:
        probe = home / "probe"
        try:
            probe.write_text("x")
        except OSError:
            pass
        else:
            probe.unlink()
            pytest.skip(f"{mechanism} did not make {home} read-only here ({done.stderr!r})")
        yield mechanism
    finally:
        undo()


def spawn(code: str, *args: str, **kw: Any) -> subprocess.Popen:
    """A real second process running ``code`` on this checkout (text pipes for its output)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)


# Another process recording in a loop, for tests that read while it writes: argv is the
# repository, a statement prefix and the pause between records in seconds.
WRITING_LOOP = """
import sys, time, jupymem
proj = jupymem.project(sys.argv[1])
# What the first write imports (the write path is imported on first use): loaded before
# "ready", so that the writer writes while the test reads, not after.
from jupymem.intake import capture, language
from jupymem.sharing import share
from jupymem.storage import validate
print("ready", flush=True)
i = 0
while True:
    proj.remember(f"{sys.argv[2]} number {i} about table t{i % 11}", kind="note")
    i += 1
    time.sleep(float(sys.argv[3]))
"""
