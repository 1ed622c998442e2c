"""Dependencies point one way: faces -> core, and the core stays light (STYLE 2 and 5).

The faces are the modules that talk to a front end (IPython, the Jupyter server,
the command line, assistants). Everything else in ``jupymem/`` is core: it must
not import a front-end library or a heavy optional dependency when it is
imported, and it must never import a face. ``__init__`` may import a face
lazily, inside the entry-point functions IPython and Jupyter call.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jupymem"

# evaluate (`jupymem eval`) and bench are command-line faces with parsers of their own;
# jupyter_ai_persona and mcp_tools are what Jupyter AI and its MCP entry point load.
FACES = frozenset({"magics", "server", "handlers", "cli", "__main__", "browse", "ask", "jupyter_ai_persona",
                   "mcp_tools", "evaluate", "bench"})
FRONT_END_LIBRARIES = frozenset({"IPython", "ipywidgets", "ipykernel", "tornado", "jupyter_server", "argparse",
                                 "litellm", "jupyter_ai", "jupyter_ai_persona_manager"})
HEAVY = ("numpy", "model2vec", "sqlite_vec", "litellm", "IPython", "tornado", "jupyter_server", "rapidfuzz")

CORE = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in FACES)


def _imports(node: ast.AST, module: str) -> list[tuple[str, int]]:
    """Absolute module names imported by ``node`` (relative ones resolved within jupymem)."""
    out = []
    if isinstance(node, ast.Import):
        out += [(alias.name, node.lineno) for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = "jupymem" if module != "__init__" or node.level == 1 else ""
            target = f"{base}.{node.module}" if node.module else base
            if node.module is None:  # from . import a, b
                out += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
            else:
                out.append((target, node.lineno))
        else:
            out.append((node.module or "", node.lineno))
    return out


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


def _parse(name: str) -> ast.Module:
    return ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))


def test_the_lists_are_real() -> None:
    assert {"core", "store", "block", "render", "registry", "capture"} <= set(CORE)
    assert (PACKAGE / "cli.py").exists() and "cli" not in CORE


@pytest.mark.parametrize("name", CORE)
def test_core_imports_no_front_end_library_at_import_time(name: str) -> None:
    bad = [
        (mod, line)
        for node in _module_level(_parse(name))
        for mod, line in _imports(node, name)
        if mod.split(".")[0] in FRONT_END_LIBRARIES
    ]
    assert bad == [], f"jupymem/{name}.py imports front-end libraries at module level: {bad}"


@pytest.mark.parametrize("name", CORE)
def test_core_never_imports_a_face(name: str) -> None:
    tree = _parse(name)
    nodes = _module_level(tree) if name == "__init__" else list(ast.walk(tree))
    bad = [
        (mod, line)
        for node in nodes
        for mod, line in _imports(node, name)
        if mod.startswith("jupymem.") and mod.split(".")[1] in FACES
    ]
    assert bad == [], f"jupymem/{name}.py imports a face: {bad}"


def _loaded_after(code: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    return set(out.stdout.split())


def test_import_jupymem_is_light() -> None:
    loaded = _loaded_after("import jupymem")
    assert not loaded & {"numpy", "model2vec", "sqlite_vec", "litellm", "IPython"}, loaded & set(HEAVY)


def test_the_core_and_the_cli_stay_light_when_imported() -> None:
    loaded = _loaded_after("import jupymem.core, jupymem.render, jupymem.cli, jupymem.overview")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
