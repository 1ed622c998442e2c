"""Fault injection at the REST edges, against a real Jupyter server (``jp_fetch``):
fields of the wrong type, unknown fields, cell ids that are tokens, huge or binary,
paths longer than any file system takes, JSON nested without end, and damaged, lost
and read-only stores. Every answer is JSON with a code; none is a 500 from a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import jupymem
from conftest import make_repo
from faults import assert_nowhere, overwrite, quiesce, read_only
from secret_shapes import SHAPES

pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture
def served(jp_root_dir: Path) -> Path:
    repo = make_repo(Path(jp_root_dir) / "proj")
    jupymem.init(repo).remember("Timestamps are UTC.", kind="constraint")
    return repo


@pytest.fixture
def call(jp_fetch: Any) -> Any:
    async def fetch(route: str, method: str = "GET", body: Any = None, raw: bytes | None = None, **params: str):
        if method == "POST" and raw is None:
            raw = json.dumps(body).encode()
        resp = await jp_fetch("jupymem", "api", *route.split("/"), method=method, body=raw, params=params or None,
                              raise_error=False)
        assert resp.headers.get("Content-Type", "").startswith("application/json"), (resp.code, resp.body[:200])
        return resp.code, json.loads(resp.body)

    return fetch


async def _error(call: Any, route: str, body: Any = None, raw: bytes | None = None, **params: str) -> tuple[int, str, str]:
    code, data = await call(route, "POST" if (body is not None or raw is not None) else "GET", body, raw, **params)
    return code, data.get("error", ""), data.get("message", "")


# -- fields -----------------------------------------------------------------------------------


@pytest.mark.parametrize("evidence", [{}, 0, False, "", "ev-0123abcd", [1], [None], ["ev-0123abcd"] * 65, ["x" * 65]])
async def test_evidence_of_the_wrong_type_is_a_400(call, served, evidence):
    code, error, message = await _error(call, "memories", {"path": "proj", "statement": "A fine statement.",
                                                            "evidence": evidence})
    assert (code, error) == (400, "bad_request") and "evidence" in message
    assert len(jupymem.project(served).list()) == 1


WRONG_TYPES = [
    ("memories", "statement", 5), ("memories", "statement", None), ("memories", "kind", ["note"]),
    ("memories", "topic", {"a": 1}), ("memories", "supersedes", 1), ("memories", "recorder", 2),
    ("memories", "quote", []), ("memories", "cell_id", 3), ("memories", "path", 7), ("init", "path", ["proj"]),
    ("evidence/ev-0123abcd/keep", "statement", True),
]


@pytest.mark.parametrize(("route", "field", "value"), WRONG_TYPES)
async def test_every_field_is_type_checked(call, served, route, field, value):
    body = {"path": "proj", field: value} if route == "init" else {"path": "proj", "statement": "A fine statement.",
                                                                    field: value}
    code, error, message = await _error(call, route, body)
    assert (code, error) == (400, "bad_request") and repr(field) in message, message


@pytest.mark.parametrize("action", ["confirm", "retire", "supersede"])
async def test_curation_fields_are_type_checked_and_unknown_fields_refused(call, served, action):
    mid = jupymem.project(served).list()[0].id
    body = {"path": "proj", "statement": "Timestamps are UTC everywhere.", "reason": 1} if action == "retire" else {
        "path": "proj", "statement": "Timestamps are UTC everywhere.", "admin": True}
    if action == "confirm":
        body = {"path": "proj", "statement": "not taken here"}
    code, error, message = await _error(call, f"memories/{mid}/{action}", body)
    assert (code, error) == (400, "bad_request"), message
    assert jupymem.project(served).list()[0].status == "active"


async def test_an_unknown_field_is_named(call, served):
    code, error, message = await _error(call, "memories", {"path": "proj", "statment": "typo in the field name"})
    assert (code, error) == (400, "bad_request") and "'statment' is not a field" in message


@pytest.mark.parametrize(
    ("cell_id", "error"),
    [
        (SHAPES["github-pat"][1], "secret_refused"),
        ("c" * 60_000, "invalid_field"),
        ("cell\x00id", "invalid_field"),
        ("cell\x1b[2Jid", "invalid_field"),
        ("cell id with spaces", "invalid_field"),
        ("cell\u202eid", "invalid_field"),
    ],
)
async def test_a_cell_id_is_validated(call, served, jupymem_home, cell_id, error):
    code, got, message = await _error(call, "memories", {"path": "proj", "statement": "A fine statement.",
                                                          "cell_id": cell_id})
    assert (code, got) == (400, error) and "cell_id" in message
    assert len(jupymem.project(served).list()) == 1
    quiesce()
    assert_nowhere(jupymem_home, [cell_id])


# -- paths and bodies ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["a" * 5000, "proj/" + "b" * 300, "/".join(["c" * 200] * 30)])
async def test_an_over_long_path_is_a_400_not_a_500(call, served, path):
    for code, error, _ in (
        await _error(call, "status", path=path),
        await _error(call, "memories", path=path),
        await _error(call, "memories", {"path": path, "statement": "A fine statement."}),
    ):
        assert (code, error) == (400, "path_too_long")


@pytest.mark.parametrize("depth", [17, 1000, 30_000])  # 30,000 levels: 60 KB, under the body limit
async def test_json_nested_without_end_is_a_400(call, served, depth):
    raw = ('{"path": "proj", "statement": "s", "topic": ' + "[" * depth + "]" * depth + "}").encode()
    code, error, message = await _error(call, "memories", raw=raw)
    assert (code, error) == (400, "bad_json") and "nested too deeply" in message


async def test_json_nested_within_bounds_is_judged_on_its_fields(call, served):
    raw = ('{"path": "proj", "statement": "s", "topic": ' + "[" * 3 + "]" * 3 + "}").encode()
    code, error, _ = await _error(call, "memories", raw=raw)
    assert (code, error) == (400, "bad_request")  # a topic is text, not a list


# -- damaged, lost and read-only stores -------------------------------------------------------------


async def test_a_malformed_database_is_a_json_503_with_a_code(call, served):
    db = jupymem.project(served).database
    quiesce()
    overwrite(db, 0, b"\x00" * 100)
    for route in ("memories", "block", "evidence", "memories/m-0"):
        code, error, message = await _error(call, route, path="proj")
        assert (code, error) == (503, "database_damaged") and "jupymem doctor" in message
    code, error, _ = await _error(call, "memories", {"path": "proj", "statement": "A fine statement."})
    assert (code, error) == (503, "database_damaged")
    code, status = await call("status", path="proj")
    assert code == 200 and status["damage"] == "database_damaged" and "jupymem doctor" in status["message"]


async def test_a_lost_database_is_a_json_503_and_nothing_is_recreated(call, served):
    db = jupymem.project(served).database
    quiesce()
    db.unlink()
    code, error, message = await _error(call, "memories", path="proj")
    assert (code, error) == (503, "database_lost") and "is missing" in message
    code, error, _ = await _error(call, "memories", {"path": "proj", "statement": "A fine statement."})
    assert (code, error) == (503, "database_lost")
    assert not db.exists()


async def test_a_read_only_home_answers_reads_and_refuses_writes(call, served, jupymem_home):
    quiesce()
    with read_only(jupymem_home):
        code, listed = await call("memories", path="proj")
        assert code == 200 and listed["total"] == 1
        code, block = await call("block", path="proj")
        assert code == 200 and block["text"].endswith("</project_memory>")
        code, found = await call("memories", path="proj", q="timestamps UTC")
        assert code == 200 and found["status"] == "ok"
        code, error, message = await _error(call, "memories", {"path": "proj", "statement": "A new statement."})
        assert (code, error) == (503, "read_only_home") and "read-only" in message
        mid = listed["memories"][0]["id"]
        code, error, _ = await _error(call, f"memories/{mid}/retire", {"path": "proj"})
        assert (code, error) == (503, "read_only_home")
        quiesce()
    assert len(jupymem.project(served).list()) == 1
