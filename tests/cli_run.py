"""``jupymem ARGS`` as the tests run it: the real command line (``faces.cli.main``), in this
process by default, in a child process when the test is about the process itself.

A child Python costs about 0.4 s to start and import; the command itself a few
milliseconds. Hundreds of commands ran in children, which was most of the quick loop's
time. In this process, ``main`` gets what a child would: its own argv, working directory,
environment, stdin, stdout and stderr as bytes; an exception that escapes ``main`` comes
back as a child's would (exit code 1 and the traceback on stderr, which every test
refuses); and it opens projects of its own, apart from any the test holds open (a
child shares no connection, cache or block with the test), closed after as a child's
exit closes them.

``process=True`` (or ``module``) runs a real child: for what only a process shows (what
importing costs, ``python -m jupymem``, a kill).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def jm(
    *args: str, cwd: Path, input: bytes | None = None, env: Mapping[str, str] | None = None,
    module: str | None = None, process: bool = False, timeout: float = 180,
) -> subprocess.CompletedProcess:
    """Run the command line with ``args`` in ``cwd``; ``env`` is laid over this process's
    environment (JUPYMEM_HOME is the test's own unless it says otherwise)."""
    if process or module:
        full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        return subprocess.run([sys.executable, "-m", module or "jupymem.faces.cli", *args], cwd=cwd, input=input,
                              capture_output=True, env=full, timeout=timeout)
    return _in_process(list(args), cwd, input, env or {})


def _in_process(argv: list[str], cwd: Path, input: bytes | None, env: Mapping[str, str]) -> subprocess.CompletedProcess:
    from jupymem.faces.cli import main

    stdin, stdout, stderr = _stream(input or b""), _stream(), _stream()
    with as_a_child(cwd, env), _streams(stdin, stdout, stderr):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: a usage error (2) or --help (0)
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # what a child would print before dying with 1
            traceback.print_exc(file=sys.stderr)
            code = 1
    return subprocess.CompletedProcess(["jupymem", *argv], code, _bytes(stdout), _bytes(stderr))


@contextlib.contextmanager
def as_a_child(cwd: Path, env: Mapping[str, str]) -> Iterator[None]:
    """This process as a child started in ``cwd`` with ``env`` laid over the environment
    would find it: that working directory and environment, and none of the projects the
    test holds open (the child's own are closed after); all put back after."""
    with _environment(env), _working_directory(cwd), _own_projects():
        yield


def _stream(data: bytes = b"") -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape", newline="\n")


def _bytes(stream: io.TextIOWrapper) -> bytes:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue()


@contextlib.contextmanager
def _own_projects() -> Iterator[None]:
    """The projects the test holds open are set aside while the command runs, and the
    command's own are closed after: ``opening`` keeps one open project per repository
    and process, which a child would not share."""
    from jupymem.core import opening

    with opening._open_lock:
        theirs = dict(opening._open)
        opening._open.clear()
    try:
        yield
    finally:
        opening.close_all()
        with opening._open_lock:
            opening._open.update(theirs)


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _working_directory(cwd: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _streams(stdin: io.TextIOWrapper, stdout: io.TextIOWrapper, stderr: io.TextIOWrapper) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdin, sys.stdout, sys.stderr = saved
