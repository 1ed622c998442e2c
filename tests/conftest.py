"""Shared fixtures: every test gets its own JUPYMEM_HOME and real git repositories, and
a real IPython shell with the extension loaded (``shell``, ``loaded_shell``)."""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupymem.config import Settings

# Helper modules whose asserts fail tests: pytest rewrites them for detail as it does test files.
pytest.register_assert_rewrite("lab_fixture")

# The tests' temporary folders (thousands of git repositories, homes and databases) in
# memory where the machine has a tmpfs to spare: creating and deleting them on a disk
# (pytest deletes old runs' folders as a run ends) was a fifth of the quick loop. Nothing
# here depends on the disk: the full-disk tests mount a tmpfs of their own, and the
# read-only ones prove their mechanism (chattr +i works on tmpfs too) before relying on it.
def _in_memory_temproot() -> None:
    shm = "/dev/shm"
    try:
        usable = os.statvfs(shm)
    except OSError:
        return
    if usable.f_bavail * usable.f_frsize > 4 * 2**30 and os.access(shm, os.W_OK):
        os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", shm)


_in_memory_temproot()

# jsonschema imports rfc3987_syntax when it is installed (jupyter_server's event schemas
# pull it in), which compiles 39 Earley grammars: two seconds of CPU in every test process.
# Without it jsonschema leaves the "iri" format unchecked, which no test here relies on; a
# Jupyter server the tests start in a process of its own (the browser tests) keeps it.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]

# The team engine's PostgreSQL and its people (tests/pg_server.py), registered here once: a
# session fixture that each module imported into its own namespace was a fixture of that
# module's, and each of eight modules started (initdb) a server of its own.
from pg_server import pg_admin, team  # noqa: E402, F401

# Read once at import: the autouse fixture below clears JUPYMEM_* for each test.
TEST_MODEL = os.environ.get("JUPYMEM_TEST_MODEL")  # None: the bundled model

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


_REPO_TEMPLATES: dict[bool, tuple[Path, str]] = {}


def _repo_template(staged: bool) -> tuple[Path, str]:
    """A repository made once per process by ``git init`` (with a README staged, if
    ``staged``), that ``make_repo`` copies, and the id of its staged tree (git writes it):
    hundreds of tests make a repository, and three git processes for each were most of
    what it cost."""
    if staged not in _REPO_TEMPLATES:
        import tempfile

        env = {**os.environ, **GIT_ENV}
        made = Path(tempfile.mkdtemp(prefix="jupymem-repo-template-")) / "repo"
        subprocess.run(["git", "init", "-q", "-b", "main", str(made)], check=True, env=env)
        tree = ""
        if staged:
            (made / "README.md").write_text("# a test repository\n")
            subprocess.run(["git", "-C", str(made), "add", "README.md"], check=True, env=env)
            tree = subprocess.run(["git", "-C", str(made), "write-tree"], check=True, env=env, capture_output=True,
                                  text=True).stdout.strip()
        atexit.register(shutil.rmtree, made.parent, True)
        _REPO_TEMPLATES[staged] = made, tree
    return _REPO_TEMPLATES[staged]


def _first_commit(repo: Path, tree: str, message: str) -> None:
    """What ``git commit`` writes for a first commit of ``tree`` (staged already), written
    here: a loose commit object and the branch pointing at it. A git process, and the
    maintenance process each commit starts, cost more than the rest of a small test;
    ``tests/test_fixtures.py`` holds the result to what git itself reads and checks."""
    import hashlib
    import time
    import zlib

    who = f"{GIT_ENV['GIT_AUTHOR_NAME']} <{GIT_ENV['GIT_AUTHOR_EMAIL']}> {int(time.time())} +0000"
    body = f"tree {tree}\nauthor {who}\ncommitter {who}\n\n{message}\n".encode()
    raw = b"commit %d\0" % len(body) + body
    sha = hashlib.sha1(raw).hexdigest()
    objects = repo / ".git" / "objects" / sha[:2]
    objects.mkdir(exist_ok=True)
    (objects / sha[2:]).write_bytes(zlib.compress(raw))
    (repo / ".git" / "refs" / "heads" / "main").write_text(sha + "\n")


def make_repo(path: Path, *, commit: bool = True) -> Path:
    """A real git repository at ``path`` (with one commit, so it has a root commit)."""
    path.mkdir(parents=True, exist_ok=True)
    template, tree = _repo_template(commit)
    shutil.copytree(template, path, symlinks=True, dirs_exist_ok=True)
    if commit:
        # The path makes the root commit unique: two repositories made in the same second
        # with the same content would share it, and so be taken for one moved repository.
        _first_commit(path, tree, f"first: a test repository at {path}")
    return path.resolve()


def pytest_configure(config: pytest.Config) -> None:
    """Every git repository the tests make (thousands, ours and the code's own ``git
    init``/``clone``) starts from an empty template: git's sample hooks are fourteen
    files per repository, written and later deleted for nothing."""
    import tempfile

    empty = Path(tempfile.mkdtemp(prefix="jupymem-git-template-"))
    os.environ.setdefault("GIT_TEMPLATE_DIR", str(empty))
    # Nor does any of them need git's housekeeping, which a commit, a push or a pull starts in
    # a process of its own (800 processes a run): repositories that live for one test.
    if "GIT_CONFIG_COUNT" not in os.environ:
        for i, (key, value) in enumerate((("maintenance.auto", "false"), ("gc.auto", "0"), ("receive.autogc", "false"))):
            os.environ[f"GIT_CONFIG_KEY_{i}"], os.environ[f"GIT_CONFIG_VALUE_{i}"] = key, value
        os.environ["GIT_CONFIG_COUNT"] = "3"


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (thousands of modules: Jupyter, IPython, numpy) lives until
    the process ends: frozen, the collector stops walking it at every full collection."""
    import gc

    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``server`` by what a test uses, so that a new test is marked without being told: every
    pytest-jupyter server (``jp_fetch`` rests on ``jp_serverapp``). Tests that start a kernel,
    a browser or score a whole suite carry their mark themselves (pyproject.toml lists them)."""
    for item in items:
        if "jp_serverapp" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.server)


# Under -n, the tests of a group run in one worker: what they share is then made once. One
# group: the modules that import litellm in the test process (seconds of CPU per process)
# and those on the session's PostgreSQL (tests/pg_server.py, which each worker would start
# for itself); one module (test_pg_working_set.py) needs both.
XDIST_GROUPS = dict.fromkeys((
    "test_assistant_flow.py", "test_assistant_wire.py", "test_jupyter_ai.py", "test_language_policy.py",
    "test_pairing_faces.py",
    "test_pg_admin.py", "test_pg_engine.py", "test_pg_faces.py", "test_pg_faults.py", "test_pg_migrate.py",
    "test_pg_quality.py", "test_pg_server.py", "test_pg_vectors.py", "test_pg_working_set.py",
), "litellm and postgres")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``-n``'s default distribution (``load``), a module's tests go to one worker
    together, and the modules of ``XDIST_GROUPS`` in one unit per group: a module's fixtures
    are made once, and the controller hands out some eighty units, not 3,500 single tests (a
    message each way per test was some 8% of the quick loop's CPU). The units with the most
    tests are handed out first, so the group starts at once and small modules fill in.
    (pytest-xdist's own ``loadgroup`` cannot mark a test under pytest 9.) An explicit
    ``--dist`` is obeyed."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupedScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
            return XDIST_GROUPS.get(module, module)

    return GroupedScheduling(config, log)


_FOLDERS = itertools.count()


def fresh_folder(factory: pytest.TempPathFactory, name: str) -> Path:
    """A new, empty folder of this process's temporary base, named ``name`` and a number:
    what ``factory.mktemp(name)`` makes, without its listing of every folder made before to
    find the next number (2-3 ms a call once a worker has made a few thousand)."""
    path = factory.getbasetemp() / f"{name}{next(_FOLDERS)}"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest's ``tmp_path`` (a new folder per test, named after it, kept after the run as
    pytest keeps its own), made by ``fresh_folder``."""
    return fresh_folder(tmp_path_factory, re.sub(r"\W", "_", request.node.name)[:30])


@pytest.fixture(autouse=True)
def jupymem_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = fresh_folder(tmp_path_factory, "jupymem-home")
    for key in list(os.environ):
        if key.startswith("JUPYMEM_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("JUPYMEM_HOME", str(home))
    # The dense leg is exercised by its own tests; elsewhere lexical answers alone.
    monkeypatch.setenv("JUPYMEM_ENCODER", "none")
    yield home
    from jupymem.core.opening import close_all

    close_all()


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    """A pytest-jupyter server (``jp_serverapp``, ``jp_fetch``) runs jupymem's extension and
    no other: jupyter_server links its terminals by default, which no test here uses."""
    return {"ServerApp": {"jpserver_extensions": {"jupymem": True, "jupyter_server_terminals": False}}}


@pytest.fixture
def real_encoder(jupymem_home: Path, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Turn the dense leg back on with the static tier: the bundled model2vec model, or
    JUPYMEM_TEST_MODEL's folder (``transformer_encoder`` is the default two-tier setting)."""
    monkeypatch.setenv("JUPYMEM_ENCODER", TEST_MODEL or "static")
    return TEST_MODEL


@pytest.fixture
def transformer_encoder(jupymem_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JUPYMEM_ENCODER unset: the default, static first and the bundled transformer after."""
    monkeypatch.delenv("JUPYMEM_ENCODER", raising=False)


@pytest.fixture
def settings(jupymem_home: Path) -> Settings:
    return Settings.from_env()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@contextlib.contextmanager
def loaded_shell() -> Iterator[Any]:
    """A real IPython ``InteractiveShell`` with ``%load_ext jupymem``, in the current
    directory; unloaded and cleared after, so that the next one starts afresh."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.user_ns.pop("__session__", None)
    # Plain tracebacks: the default (Context) looks each frame's module up by scanning every
    # module loaded, tens of milliseconds a failed cell in a test process holding thousands.
    # jupymem reads the exception, never the shown text; the kernel tests keep the default.
    ip.InteractiveTB.set_mode("Plain")
    ip.run_line_magic("load_ext", "jupymem")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "jupymem")
        # Each shell registers an exit cleanup whose reset runs a full garbage collection
        # over the whole test process: with dozens of shells, pytest sat a minute or two
        # after its summary line. Its history is closed here instead, the rest is moot.
        atexit.unregister(ip.atexit_operations)
        if ip.history_manager is not None:
            ip.history_manager.end_session()
            ip.history_manager.close()
        InteractiveShell.clear_instance()


def in_fresh_shell(repo: Path, code: str) -> str:
    """``code`` run in a new Python after ``%load_ext jupymem`` in a real shell (``ip``),
    in ``repo`` with a home of its own; its stdout. For what loading imports: nothing else
    has been imported in that process."""
    preamble = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\n"
        "ip.run_line_magic('load_ext', 'jupymem')\n"
    )
    env = {**os.environ, "JUPYMEM_HOME": str(repo / ".home")}
    argv = [sys.executable, "-c", preamble + code]
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, check=True).stdout


def shell_in(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The ``shell`` fixture, for a module whose shell needs a step before it starts:
    ``yield from shell_in(repo, monkeypatch)`` after the step."""
    monkeypatch.chdir(repo)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    with loaded_shell() as ip:
        yield ip


@pytest.fixture
def shell(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A real IPython ``InteractiveShell`` in ``repo`` with ``%load_ext jupymem``."""
    yield from shell_in(repo, monkeypatch)
