"""Things defined once: the kind order, the numpy import, the JSON serializer.

Each is read from its one source and checked where copies or uses live, so that a
second definition creeping back in fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupymem
from jupymem.core.block import build_block
from jupymem.faces import render
from jupymem.models import KINDS, kind_rank, to_json

ROOT = Path(__file__).resolve().parents[1]


def test_the_sidebar_copy_of_the_kinds_is_models_kinds() -> None:
    source = (ROOT / "labextension" / "src" / "tokens.ts").read_text(encoding="utf-8")
    body = re.search(r"export const KINDS = \[(.*?)\] as const;", source, re.S)
    assert body is not None, "labextension/src/tokens.ts no longer declares KINDS"
    assert tuple(re.findall(r"'([a-z]+)'", body.group(1))) == KINDS


def test_every_ordering_by_kind_follows_models_kinds(repo: Path) -> None:
    proj = jupymem.init(repo)
    for kind in reversed(KINDS):  # recorded in the opposite order
        proj.remember(f"A {kind} about something else entirely, number {kind_rank(kind)}.", kind=kind)
    assert [m.kind for m in proj.list()] == list(KINDS)  # SQL
    lines = [line for line in proj.block().text.splitlines() if line.startswith("- ")]
    assert [line[2:].split(":")[0] for line in lines] == list(KINDS)  # the block
    assert build_block(list(reversed(proj.list())), 4000).text == proj.block().text
    text = render.memories_text(list(reversed(proj.list())))  # notebook and terminal lists
    assert [line.split(" (")[0] for line in text.splitlines() if not line.startswith(" ")] == list(KINDS)
    assert kind_rank("a-kind-from-a-newer-version") == len(KINDS)


def _runtime_imports(path: Path) -> list[str]:
    """Modules imported when the code runs (not under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for child in node.body for n in ast.walk(child))
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
    return out


def test_numpy_is_imported_in_one_place() -> None:
    importers = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "jupymem").rglob("*.py")
        if any(m == "numpy" or m.startswith("numpy.") for m in _runtime_imports(p))
    )
    assert importers == ["jupymem/retrieval/arrays.py"]


def test_one_serializer_answers_for_every_record(repo: Path) -> None:
    proj = jupymem.init(repo)
    m = proj.remember("Customer ids are strings.", kind="fact")
    for value in (m, proj.list(), proj.history(m.id), proj.search("customer ids"), proj.block(), proj.verify(),
                  proj.gc(dry_run=True)):
        data = to_json(value)
        assert data == (value.to_dict() if hasattr(value, "to_dict") else data)
    assert to_json(proj.verify()) == {
        "ok": True, "events": 1, "memories": 1, "problems": [], "shared_lines": 0, "log_ok": True,
    }
    assert not hasattr(render, "memory_json") and not hasattr(render, "search_json")
