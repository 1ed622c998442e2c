"""Dependencies point one way, room by room, and everything below the faces stays light
(STYLE 2 and 5); modules stay small, and ``Project`` a thin facade (STYLE 10).

The package is a stack of rooms, each a folder with one job (``ROOMS``, lowest first):
the shared vocabulary (``errors``, ``config``, ``models``, loose beside the rooms),
``intake``, ``storage``, ``sharing`` and ``retrieval`` side by side, ``core``,
``assistants`` and ``measure`` side by side, ``faces``, and on top the entry points
(``jupymem/__init__.py``, the public API and what IPython and Jupyter call, and
``__main__``). A module may import its own room and any lower one, at import time or
lazily inside a function, never a higher room nor a sibling on its level: an import
hidden in a function is still a dependency.

The older rule, kept: the faces (the modules that talk to a front end: IPython,
the Jupyter server, the command line, Jupyter AI) live in ``jupymem/faces/``, and no
module outside that folder imports one, except ``jupymem/__init__.py``'s entry
points (``load_ipython_extension``, ``_jupyter_server_extension_points``), lazily,
inside the functions IPython and Jupyter call, and ``jupymem/__main__.py``
(``python -m jupymem``), which is the command line. Outside ``faces/`` nothing imports a
front-end library or a heavy optional dependency when it is imported.

``measure/`` (``evaluate`` and ``bench``: ``jupymem eval``/``bench``) holds measuring
tools with parsers of their own; they may import argparse.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jupymem"
FACES_DIR = PACKAGE / "faces"

# argparse is allowed in the measuring tools only.
MEASURING = frozenset({"jupymem.measure.evaluate", "jupymem.measure.bench", "jupymem.__main__"})
FRONT_END_LIBRARIES = frozenset({"IPython", "ipywidgets", "ipykernel", "tornado", "jupyter_server", "argparse",
                                 "litellm", "jupyter_ai", "jupyter_ai_persona_manager"})
HEAVY = ("numpy", "model2vec", "sqlite_vec", "litellm", "IPython", "tornado", "jupyter_server", "rapidfuzz",
         "onnxruntime", "tokenizers")


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_dotted(p): p for p in sorted(PACKAGE.rglob("*.py"))}
FACES = sorted(m for m, p in MODULES.items() if FACES_DIR in p.parents or p.parent == FACES_DIR)
OUTSIDE_FACES = sorted(m for m in MODULES if m not in FACES)

# The rooms, lowest first; rooms on one level are siblings and import neither each other.
ROOMS: list[tuple[str, ...]] = [
    ("vocabulary",),  # the loose modules every room shares: errors, config, models, reports
    ("intake",),  # what enters memory: statements, evidence, pairing, language, secrets, text, time
    ("storage",),  # the database, its event log, and everything that repairs it
    ("sharing", "retrieval"),  # the shared log in the repository; a query -> ranked memories
    ("core",),  # Project, opening, overview, the block
    ("assistants", "measure"),  # what a model is told and may do; eval and bench
    ("faces",),  # the front ends
    ("entry",),  # jupymem/__init__ (public API, entry points) and __main__
]
LOOSE = {
    "jupymem.errors": "vocabulary",
    "jupymem.config": "vocabulary",
    "jupymem.models": "vocabulary",
    "jupymem.reports": "vocabulary",
    "jupymem": "entry",
    "jupymem.__main__": "entry",
}
MAX_LOOSE = 8  # the shared vocabulary and the entry points; everything else lives in a room
LEVEL = {room: level for level, rooms in enumerate(ROOMS) for room in rooms}


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _imports(node: ast.AST, module: str) -> list[tuple[str, int]]:
    """Absolute module names imported by ``node``, relative ones resolved."""
    if isinstance(node, ast.Import):
        return [(alias.name, node.lineno) for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if not node.level:
        return [(node.module or "", node.lineno)]
    parts = module.split(".")
    base_parts = parts if _is_package(module) else parts[:-1]
    base = ".".join(base_parts[: len(base_parts) - (node.level - 1)])
    if node.module:
        target = f"{base}.{node.module}"
        # ``from .faces import magics`` imports jupymem.faces.magics
        return [(target, node.lineno)] + [(f"{target}.{a.name}", node.lineno) for a in node.names]
    return [(f"{base}.{alias.name}", node.lineno) for alias in node.names]


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """Statements run at import: module body, class bodies, if/try/with blocks; not function
    bodies and not ``if TYPE_CHECKING:`` blocks."""
    todo, out = list(tree.body), []
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        out.append(node)
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, field, []) or [])
    return out


@functools.cache  # a dozen tests walk every module: each is parsed once (callers only read the trees)
def _parse(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"))


def test_the_folders_are_real() -> None:
    assert {"jupymem.faces.magics", "jupymem.faces.cli", "jupymem.faces.server", "jupymem.faces.render"} <= set(FACES)
    assert {"jupymem.core.project", "jupymem.storage.eventlog", "jupymem.retrieval.retrieve",
            "jupymem.core.opening"} <= set(OUTSIDE_FACES)
    # the entry points named in pyproject live in faces/
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"jupymem.faces.cli:main"' in text and "jupymem.faces.mcp_tools:TOOLS" in text


@pytest.mark.parametrize("module", OUTSIDE_FACES)
def test_core_imports_no_front_end_library_at_import_time(module: str) -> None:
    allowed = {"argparse"} if module in MEASURING else set()
    bad = [
        (mod, line)
        for node in _module_level(_parse(module))
        for mod, line in _imports(node, module)
        if mod.split(".")[0] in FRONT_END_LIBRARIES - allowed
    ]
    assert bad == [], f"{module} imports front-end libraries at module level: {bad}"


@pytest.mark.parametrize("module", [m for m in OUTSIDE_FACES if m != "jupymem.__main__"])
def test_nothing_outside_faces_imports_a_face(module: str) -> None:
    tree = _parse(module)
    # jupymem/__init__ may import a face inside its entry-point functions only
    nodes = _module_level(tree) if module == "jupymem" else list(ast.walk(tree))
    bad = [
        (mod, line)
        for node in nodes
        for mod, line in _imports(node, module)
        if mod == "jupymem.faces" or mod.startswith("jupymem.faces.")
    ]
    assert bad == [], f"{module} imports a face: {bad}"


def test_the_rule_sees_a_face_import() -> None:
    # The walker resolves relative imports from a module and from a sub-package's module.
    top = ast.parse("from .faces import render\nfrom . import faces\n")
    got = [m for node in ast.walk(top) for m, _ in _imports(node, "jupymem.models")]
    assert "jupymem.faces.render" in got and "jupymem.faces" in got
    sub = ast.parse("from ..faces.cli import main\nfrom .lexical import fold\n")
    got = [m for node in ast.walk(sub) for m, _ in _imports(node, "jupymem.retrieval.retrieve")]
    assert "jupymem.faces.cli" in got and "jupymem.retrieval.lexical" in got


def _loaded_after(code: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    return set(out.stdout.split())


def test_import_jupymem_is_light() -> None:
    loaded = _loaded_after("import jupymem")
    assert not loaded & {"numpy", "model2vec", "sqlite_vec", "litellm", "IPython"}, loaded & set(HEAVY)


def test_the_core_and_the_cli_stay_light_when_imported() -> None:
    loaded = _loaded_after(
        "import jupymem.core, jupymem.core.opening, jupymem.retrieval.retrieve, jupymem.faces.render, "
        "jupymem.faces.cli, jupymem.core.overview, jupymem.intake, jupymem.storage, jupymem.sharing, "
        "jupymem.assistants, jupymem.measure"
    )
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def _graph() -> dict[str, set[str]]:
    """Module -> the jupymem modules it imports anywhere, inside functions too. The
    package itself (``jupymem``: the public API and entry points) is left out: every
    face may call ``jupymem.init``, and its entry points import the faces lazily."""
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        deps = set()
        for node in ast.walk(_parse(module)):
            for name, _ in _imports(node, module):
                while name and name not in MODULES:
                    name = name.rpartition(".")[0]
                if name and name not in (module, "jupymem"):
                    deps.add(name)
        graph[module] = deps
    return graph


def test_no_import_circles_even_lazy_ones() -> None:
    # e.g. `ask` and `magics` once imported each other inside functions; both now
    # import `kernel` (the kernel's state) and neither imports the other back.
    graph = _graph()
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        seen[module] = 1
        for dep in sorted(graph[module]):
            if seen.get(dep) == 1:
                raise AssertionError(" -> ".join(path[path.index(dep):] + [module, dep]))
            if dep not in seen:
                visit(dep, path + [module])
        seen[module] = 2

    for module in sorted(graph):
        if module not in seen:
            visit(module, [])
    assert "jupymem.faces.magics" not in graph["jupymem.faces.ask"]


# -- the rooms ---------------------------------------------------------------------------


def room_of(module: str) -> str | None:
    """The room ``module`` lives in: its folder under ``jupymem/``, or ``LOOSE``'s word for
    a module beside the folders. None: a loose module no one has placed."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and module not in LOOSE and parts[1] in LEVEL):
        return parts[1]
    return LOOSE.get(module)


def _edges() -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every import of a jupymem module, anywhere in a
    module: at import time, inside functions, under ``TYPE_CHECKING``."""
    edges = []
    for module in MODULES:
        for node in ast.walk(_parse(module)):
            for name, line in _imports(node, module):
                if not (name == "jupymem" or name.startswith("jupymem.")):
                    continue
                while name not in MODULES:  # ``from .storage import eventlog`` names a module;
                    name = name.rpartition(".")[0]  # ``from .errors import X`` names a thing in one
                if name != module:
                    edges.append((module, name, line))
    return edges


def against_the_order(edges: list[tuple[str, str, int]]) -> list[str]:
    """The imports that go up the stack of rooms or sideways to a sibling room."""
    bad = []
    for importer, imported, line in edges:
        a, b = room_of(importer), room_of(imported)
        if a is None or b is None:
            bad.append(f"{importer}:{line} -> {imported}: {importer if a is None else imported} is in no room")
        elif a != b and LEVEL[b] >= LEVEL[a]:
            where = "a sibling room" if LEVEL[b] == LEVEL[a] else "a higher room"
            bad.append(f"{importer}:{line} ({a}) imports {imported} ({b}), {where}")
    return bad


def test_every_module_is_in_a_room() -> None:
    homeless = [m for m in MODULES if room_of(m) is None]
    assert homeless == [], f"add these to a room (a folder) or, if they are shared vocabulary, to LOOSE: {homeless}"
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(LEVEL) - {"vocabulary", "entry"}, folders ^ (set(LEVEL) - {"vocabulary", "entry"})
    loose = [p.name for p in PACKAGE.glob("*.py")]
    assert len(loose) <= MAX_LOOSE, loose


def test_imports_follow_the_order_of_the_rooms() -> None:
    bad = against_the_order(_edges())
    assert bad == [], "\n".join(bad)


def test_the_order_rule_fails_on_a_bad_import() -> None:
    # storage may not reach up into sharing, even lazily; core may reach down into it
    planted = ast.parse("def rebuild():\n    from ..sharing.share import Sharing\n")
    edges = [("jupymem.storage.recovery", name, line) for node in ast.walk(planted)
             for name, line in _imports(node, "jupymem.storage.recovery") if name in MODULES]
    assert edges == [("jupymem.storage.recovery", "jupymem.sharing.share", 2)]
    assert against_the_order(edges) == [
        "jupymem.storage.recovery:2 (storage) imports jupymem.sharing.share (sharing), a higher room"]
    assert against_the_order([("jupymem.core.opening", "jupymem.sharing.share", 1)]) == []
    # siblings stay apart, and a loose module no one placed is caught
    assert "a sibling room" in against_the_order([("jupymem.retrieval.index", "jupymem.sharing.share", 1)])[0]
    assert "a sibling room" in against_the_order([("jupymem.measure.bench", "jupymem.assistants.tools", 1)])[0]
    assert "in no room" in against_the_order([("jupymem.helpers", "jupymem.errors", 1)])[0]
    # the faces may not use the public API above them, which imports the faces
    assert "a higher room" in against_the_order([("jupymem.faces.kernel", "jupymem", 1)])[0]
    assert against_the_order([("jupymem", "jupymem.faces.magics", 1)]) == []


# -- SQL stays in storage -----------------------------------------------------------------

STORAGE_DIR = PACKAGE / "storage"
SQL_CALLS = frozenset({"execute", "executemany", "executescript"})
# SQL as this package writes it: upper-case keywords in the shape of a statement.
SQL_TEXT = re.compile(
    r"\bSELECT\b.+\bFROM\b|\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\b(?:CREATE|DROP|ALTER)\s+(?:VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b|\bPRAGMA\s+\w+|\bMATCH\s+\?",
    re.DOTALL,
)
# Modules outside storage/ that still speak SQL, each with why it has not moved yet. The
# next engine plugs in behind storage/'s protocols (``storage/reads.py``); each of these is
# a query it would not see. Remove an entry when its module moves (the test says so).
SQL_NOT_MOVED_YET = {
    "jupymem.core.reads": "Project's reads (get, list, counts, history), moved out of Project as they were; "
                          "next into a store",
    "jupymem.core.staged": "the staged failures' reads and writes, moved out of Project as they were",
    "jupymem.sharing.switch": "share's switch (turning sharing on moves this clone's events into the log), "
                              "moved out of share as it was",
    "jupymem.core.overview": "status counts of staged evidence and the shared files' stat cache",
    "jupymem.sharing.share": "the shared files' table and the events it applies, scopes and compares",
    "jupymem.sharing.seen": "sharing's status counts (moved out of switch as they were, so that a repository "
                            "that never shared reads them without the sharing room)",
}


def _speaks_sql(module: str) -> list[str]:
    found = []
    for node in ast.walk(_parse(module)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS:
            found.append(f"line {node.lineno}: .{node.func.attr}(")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_TEXT.search(node.value):
            found.append(f"line {node.lineno}: {node.value.strip()[:60]!r}")
    return found


OUTSIDE_STORAGE = sorted(m for m, p in MODULES.items() if STORAGE_DIR not in p.parents)


@pytest.mark.parametrize("module", OUTSIDE_STORAGE)
def test_only_storage_speaks_sql(module: str) -> None:
    # Retrieval, the assistants and the faces reach memory through storage's protocols
    # (``Store``, ``MemoryReader``, ``VectorStore``, ``ConversationStore``), so a second
    # engine can serve them: no statements run on a connection and no SQL text outside storage/.
    found = _speaks_sql(module)
    if module in SQL_NOT_MOVED_YET:
        assert found, f"{module} speaks no SQL any more: remove it from SQL_NOT_MOVED_YET"
        return
    assert found == [], f"{module} speaks SQL outside storage/ (move it behind a store): {found}"


def test_the_sql_rule_sees_sql() -> None:
    assert SQL_TEXT.search("SELECT rid FROM memories WHERE rid > ?")
    assert SQL_TEXT.search("INSERT OR REPLACE INTO t (a) VALUES (?)")
    assert SQL_TEXT.search("DELETE FROM conversation WHERE id <= ?")
    assert SQL_TEXT.search("PRAGMA wal_checkpoint(TRUNCATE)")
    assert not SQL_TEXT.search("select the rows from memory, then update the index")
    tree = ast.parse("def f(c):\n    c.executemany(q, rows)\n")
    assert [n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call)] == ["executemany"]


# -- sizes ---------------------------------------------------------------------------------

MAX_MODULE_LINES = 600  # STYLE 10: past this, a module usually holds two ideas
MAX_PROJECT_LINES = 400  # Project is a facade of reads and writes that delegates


def test_no_module_is_over_600_lines() -> None:
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in MODULES.items()}
    long = {m: n for m, n in sizes.items() if n > MAX_MODULE_LINES}
    assert long == {}, f"split these by job (STYLE 10): {long}"


def test_project_stays_a_thin_facade() -> None:
    tree = _parse("jupymem.core.project")
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Project"]
    lines = cls.end_lineno - cls.lineno + 1
    assert lines < MAX_PROJECT_LINES, f"Project is {lines} lines; move the insides to the module whose job they are"
    # every public method says what it does
    bare = [f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not f.name.startswith("_") and ast.get_docstring(f) is None]
    assert bare == [], f"give these a docstring (what, raises, returns): {bare}"
