"""The REST face against a real jupyter_server (pytest-jupyter's ``jp_fetch``).

Every route is exercised, with the refusals that matter at an HTTP boundary:
no token, paths that escape the server root, bad JSON, oversized bodies,
unknown ids and handles, secrets, and reads that must leave no trace.
"""

from __future__ import annotations

import json
import subprocess
import os
from pathlib import Path
from typing import Any

import pytest

import jupymem
from jupymem.models import Evidence
from jupymem.faces.server import resolve_path, to_json
from jupymem.retrieval.transformer import TRANSFORMER_NAME

from conftest import make_repo

pytest_plugins = ["pytest_jupyter.jupyter_server"]

API = ("jupymem", "api")


@pytest.fixture
def root(jp_root_dir: Path) -> Path:
    return Path(jp_root_dir).resolve()


@pytest.fixture
def served_repo(root: Path) -> Path:
    """A git repository inside the server root, with a notebook in a subfolder."""
    repo = make_repo(root / "proj")
    (repo / "nb").mkdir()
    (repo / "nb" / "analysis.ipynb").write_text("{}")
    return repo


@pytest.fixture
def fetch(jp_fetch: Any) -> Any:
    """jp_fetch that returns (status, json) instead of raising on 4xx."""

    async def call(*route: str, method: str = "GET", body: Any = None, raw: bytes | None = None, **kw: Any):
        if method == "POST" and raw is None:
            raw = json.dumps(body if body is not None else {}).encode()
        resp = await jp_fetch(*API, *route, method=method, body=raw, raise_error=False, **kw)
        text = resp.body.decode() if resp.body else ""
        data = json.loads(text) if text and resp.headers.get("Content-Type", "").startswith("application/json") else text
        return resp.code, data

    return call


def home_files(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob("*")) if home.exists() else []


def stage(project: jupymem.Project, handle: str = "ev-0123abcd", notebook: str = "nb/analysis.ipynb") -> Evidence:
    ev = Evidence(
        handle=handle,
        session="sess-1",
        ename="KeyError",
        evalue="'customer_id'",
        diagnosis=("KeyError: 'customer_id'",),
        excerpt="df['customer_id']",
        created_at="2025-01-01T00:00:00.000000Z",
        cell_id="cell-42",
        execution_count=7,
        notebook=notebook,
    )
    project.stage_failure(ev)
    return ev


# -- pure helpers -------------------------------------------------------------


def test_resolve_path_refuses_escapes(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", root / "link")
    assert resolve_path(root, "a") == (root / "a").resolve()
    assert resolve_path(root, "") == root.resolve()
    for bad in ("../outside", "a/../../outside", "/etc", str(tmp_path / "outside"), "link", "link/x", "C:\\x"):
        with pytest.raises(jupymem.JupymemError) as info:
            resolve_path(root, bad)
        assert info.value.code == "path_outside_root", bad
    with pytest.raises(jupymem.JupymemError) as info:
        resolve_path(root, "missing.ipynb")
    assert info.value.code == "path_not_found"


def test_to_json_is_to_dict(repo: Path, settings: jupymem.Settings) -> None:
    proj = jupymem.init(repo, settings=settings)
    stage(proj)
    m = proj.remember("Customer ids are strings", kind="fact", evidence=["ev-0123abcd"])
    assert to_json(m) == m.to_dict()
    assert to_json(proj.list()) == [x.to_dict() for x in proj.list()]
    assert to_json(proj.history(m.id)) == [h.to_dict() for h in proj.history(m.id)]
    assert to_json(proj.search("customer ids")) == proj.search("customer ids").to_dict()
    assert to_json(proj.block()) == proj.block().to_dict()


# -- auth ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "method"),
    [
        (("status",), "GET"),
        (("init",), "POST"),
        (("memories",), "GET"),
        (("memories",), "POST"),
        (("memories", "m-abc"), "GET"),
        (("memories", "m-abc", "confirm"), "POST"),
        (("memories", "m-abc", "supersede"), "POST"),
        (("memories", "m-abc", "retire"), "POST"),
        (("evidence",), "GET"),
        (("evidence", "ev-0123abcd", "keep"), "POST"),
        (("block",), "GET"),
        (("share",), "POST"),
    ],
)
async def test_every_route_needs_a_token(fetch: Any, served_repo: Path, jupymem_home: Path, route, method) -> None:
    body = {"path": "proj", "statement": "Use UTC everywhere"} if method == "POST" else None
    params = {"path": "proj"} if method == "GET" else None
    code, _ = await fetch(*route, method=method, body=body, params=params, headers={"Authorization": ""})
    assert code == 403
    assert home_files(jupymem_home) == []


# -- reading never initializes -------------------------------------------------


async def test_reads_on_a_repository_without_memory_create_nothing(
    fetch: Any, served_repo: Path, jupymem_home: Path
) -> None:
    code, status = await fetch("status", params={"path": "proj/nb/analysis.ipynb"})
    assert code == 200
    assert status["git"] is True and status["memory"] is False
    assert status["name"] == "proj"
    assert status["root_path"] == "proj" and status["path"] == "proj/nb/analysis.ipynb"
    for route in (("memories",), ("evidence",), ("block",), ("memories", "m-abc")):
        code, err = await fetch(*route, params={"path": "proj", "q": "anything"})
        assert code == 404, route
        assert err["error"] == "no_memory"
        assert "no memory" in err["message"]
    assert home_files(jupymem_home) == []
    assert jupymem.project(served_repo) is None


async def test_outside_git(fetch: Any, root: Path, jupymem_home: Path) -> None:
    (root / "plain").mkdir()
    code, status = await fetch("status", params={"path": "plain"})
    assert code == 200 and status["git"] is False and status["memory"] is False
    code, err = await fetch("init", method="POST", body={"path": "plain"})
    assert code == 400 and err["error"] == "not_a_git_repository"
    code, err = await fetch("memories", method="POST", body={"path": "plain", "statement": "Nothing to see"})
    assert code == 400 and err["error"] == "not_a_git_repository"
    code, err = await fetch("memories", params={"path": "plain"})
    assert code == 400 and err["error"] == "not_a_git_repository"
    assert home_files(jupymem_home) == []


# -- path escapes ---------------------------------------------------------------


async def test_paths_outside_the_root_are_refused(fetch: Any, root: Path, tmp_path: Path, jupymem_home: Path) -> None:
    outside = make_repo(tmp_path / "elsewhere")
    jupymem.init(outside).remember("A secret plan lives here", kind="decision")
    os.symlink(outside, root / "sneaky")
    cases = ["../elsewhere", "proj/../../elsewhere", str(outside), "/elsewhere", "sneaky", "sneaky/README.md"]
    for bad in cases:
        code, err = await fetch("status", params={"path": bad})
        assert code == 403, bad
        assert err["error"] == "path_outside_root"
        code, err = await fetch("memories", params={"path": bad})
        assert code == 403 and err["error"] == "path_outside_root"
        code, err = await fetch("memories", method="POST", body={"path": bad, "statement": "Injected"})
        assert code == 403 and err["error"] == "path_outside_root"
    assert [m.statement for m in jupymem.project(outside).list()] == ["A secret plan lives here"]
    code, err = await fetch("status", params={"path": "no/such/notebook.ipynb"})
    assert code == 404 and err["error"] == "path_not_found"


# -- bodies ----------------------------------------------------------------------


async def test_bad_json_and_oversized_bodies(fetch: Any, served_repo: Path, jupymem_home: Path) -> None:
    for raw in (b"{not json", b"[1, 2]", b"\xff\xfe", b'"just a string"'):
        code, err = await fetch("memories", method="POST", raw=raw)
        assert code == 400, raw
        assert err["error"] == "bad_json"
    big = json.dumps({"path": "proj", "statement": "x" * (70 * 1024)}).encode()
    code, err = await fetch("memories", method="POST", raw=big)
    assert code == 413 and err["error"] == "body_too_large"
    code, err = await fetch("memories", method="POST", body={"path": "proj", "statement": 42})
    assert code == 400 and err["error"] == "bad_request"
    code, err = await fetch("memories", method="POST", body={"path": "proj"})
    assert code == 400 and err["error"] == "bad_request"
    code, err = await fetch("memories", method="POST", body={"path": "proj", "statement": "ok", "evidence": "ev-1"})
    assert code == 400 and err["error"] == "bad_request"
    code, err = await fetch("memories", method="POST", body={"path": "proj", "statement": "   "})
    assert code == 400 and err["error"] == "invalid_statement"
    assert jupymem.project(served_repo) is None


async def test_secrets_are_refused(fetch: Any, served_repo: Path) -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
    code, err = await fetch("memories", method="POST", body={"path": "proj", "statement": f"Use the key {key} for the API"})
    assert code == 400
    assert err["error"] == "secret_refused"
    assert key not in err["message"]
    spanish = "Los ingresos se reportan siempre en euros y nunca en dólares estadounidenses"
    code, err = await fetch("memories", method="POST", body={"path": "proj", "statement": spanish})
    assert code == 400 and err["error"] == "language_refused" and "JUPYMEM_MODEL" in err["message"]
    # A refused first record leaves no memory behind: refused for its topic too.
    code, err = await fetch("memories", method="POST", body={"path": "proj", "statement": "Use the EU region",
                                                            "topic": "x" * 500})
    assert code == 400 and err["error"] == "invalid_statement" and "topic" in err["message"]
    assert jupymem.project(served_repo) is None


# -- the full round trip ------------------------------------------------------------


async def test_record_read_and_curate(fetch: Any, served_repo: Path, jupymem_home: Path) -> None:
    nb = "proj/nb/analysis.ipynb"
    code, status = await fetch("init", method="POST", body={"path": nb})
    assert code == 200 and status["memory"] is True and status["revision"] == 0
    proj = jupymem.project(served_repo)
    assert proj is not None

    code, m = await fetch(
        "memories",
        method="POST",
        body={"path": nb, "statement": "Revenue is reported in EUR, never USD", "kind": "constraint", "cell_id": "c1"},
    )
    assert code == 201
    assert m["kind"] == "constraint" and m["standing"] == "supported"
    assert m["provenance"]["notebook"] == "nb/analysis.ipynb" and m["provenance"]["cell_id"] == "c1"
    assert proj.get(m["id"]).statement == "Revenue is reported in EUR, never USD"

    code, a = await fetch(
        "memories",
        method="POST",
        body={"path": nb, "statement": "Fiscal years start in April", "kind": "fact", "recorder": "assistant"},
    )
    assert code == 201 and a["standing"] == "unconfirmed"

    code, listing = await fetch("memories", params={"path": nb})
    assert code == 200
    assert [x["kind"] for x in listing["memories"]] == ["constraint", "fact"]
    assert listing["total"] == 2 and listing["revision"] == proj.revision()
    code, page = await fetch("memories", params={"path": nb, "limit": "1", "offset": "1"})
    assert [x["id"] for x in page["memories"]] == [a["id"]] and page["total"] == 2 and page["offset"] == 1
    code, err = await fetch("memories", params={"path": nb, "limit": "many"})
    assert code == 400 and err["error"] == "bad_request"
    code, only = await fetch("memories", params={"path": nb, "kind": "fact"})
    assert [x["id"] for x in only["memories"]] == [a["id"]]
    code, err = await fetch("memories", params={"path": nb, "kind": "gossip"})
    assert code == 400

    # Every kind's count and first rows at once (the sidebar's list): per_kind rows of each.
    code, first = await fetch("memories", params={"path": nb, "per_kind": "1"})
    assert code == 200 and first["kinds"] == {"constraint": 1, "fact": 1} and first["total"] == 2
    assert [x["kind"] for x in first["memories"]] == ["constraint", "fact"]
    code, first = await fetch("memories", params={"path": nb, "per_kind": "5", "kind": "fact"})
    assert first["kinds"] == {"fact": 1} and [x["id"] for x in first["memories"]] == [a["id"]]

    code, found = await fetch("memories", params={"path": nb, "q": "revenue reported in EUR"})
    assert code == 200 and found["status"] == "ok"
    # What the search ran with, and what JUPYMEM_ENCODER asks for ("none" in these tests).
    assert found["retrieval"]["legs"] == ["lexical", "fuzzy"] and found["retrieval"]["encoders"] == "none"
    assert found["hits"][0]["memory"]["id"] == m["id"]
    assert 0.5 <= found["hits"][0]["confidence"] <= 1 and "lexical" in found["legs"]  # the sidebar's JSON
    # Each hit carries the word the text and HTML output print for its confidence.
    from jupymem.faces.render import confidence_word

    assert [h["level"] for h in found["hits"]] == [confidence_word(h["confidence"]) for h in found["hits"]]
    code, none = await fetch("memories", params={"path": nb, "q": "kubernetes ingress annotations"})
    assert code == 200 and none["status"] == "abstained" and none["hits"] == []

    code, err = await fetch("memories", "m-doesnotexist", params={"path": nb})
    assert code == 404 and err["error"] == "unknown_memory"

    code, done = await fetch("memories", a["id"], "confirm", method="POST", body={"path": nb})
    assert code == 200 and done["standing"] == "supported"
    assert proj.get(a["id"]).standing == "supported"

    code, new = await fetch(
        "memories", m["id"], "supersede", method="POST", body={"path": nb, "statement": "Revenue is reported in EUR"}
    )
    assert code == 201 and new["supersedes"] == m["id"] and new["kind"] == "constraint"
    assert proj.get(m["id"]).status == "superseded"

    code, err = await fetch("memories", m["id"], "retire", method="POST", body={"path": nb, "reason": "old"})
    assert code == 409 and err["error"] == "invalid_transition"
    code, gone = await fetch("memories", a["id"], "retire", method="POST", body={"path": nb, "reason": "fiscal year changed"})
    assert code == 200 and gone["status"] == "retired" and gone["retire_reason"] == "fiscal year changed"
    assert proj.get(a["id"]).status == "retired"

    code, detail = await fetch("memories", a["id"], params={"path": nb})
    assert code == 200
    assert detail["memory"]["id"] == a["id"]
    assert [h["action"] for h in detail["history"]] == ["recorded", "confirmed", "retired"]
    code, everything = await fetch("memories", params={"path": nb, "all": "1"})
    assert {x["status"] for x in everything["memories"]} == {"active", "superseded", "retired"}

    code, block = await fetch("block", params={"path": nb})
    assert code == 200
    assert block == proj.block().to_dict()
    assert "Revenue is reported in EUR" in block["text"] and "Fiscal" not in block["text"]
    code, small = await fetch("block", params={"path": nb, "cap": "600"})
    assert small["cap"] == 600

    code, status = await fetch("status", params={"path": nb})
    assert status["revision"] == proj.revision() and status["counts"]["constraint"] == 1


async def test_keep_a_failure_as_a_lesson(fetch: Any, served_repo: Path) -> None:
    proj = jupymem.init(served_repo)
    ev = stage(proj)
    code, listing = await fetch("evidence", params={"path": "proj"})
    assert code == 200
    assert [e["handle"] for e in listing["evidence"]] == [ev.handle]
    assert listing["evidence"][0]["diagnosis"] == ["KeyError: 'customer_id'"]
    assert listing["evidence"][0]["kept_by"] is None

    code, err = await fetch("evidence", "ev-ffffffff", "keep", method="POST", body={"path": "proj", "statement": "x"})
    assert code == 404 and err["error"] == "unknown_evidence"

    code, m = await fetch(
        "evidence",
        ev.handle,
        "keep",
        method="POST",
        body={"path": "proj", "statement": "The sales table calls it cust_id, not customer_id", "kind": "correction"},
    )
    assert code == 201
    assert m["kind"] == "correction" and m["standing"] == "supported"
    assert [e["handle"] for e in m["evidence"]] == [ev.handle]
    assert m["provenance"]["notebook"] == "nb/analysis.ipynb" and m["provenance"]["cell_id"] == "cell-42"
    stored = proj.get(m["id"])
    assert stored.evidence[0].handle == ev.handle
    # The failure says it was kept, whichever memories a client lists (a kind filter may hide the lesson).
    code, listing = await fetch("evidence", params={"path": "proj"})
    assert [(e["handle"], e["kept_by"]) for e in listing["evidence"]] == [(ev.handle, m["id"])]


async def test_a_clone_in_the_root_does_not_adopt_a_checkout_outside_it(
    fetch: Any, root: Path, tmp_path: Path
) -> None:
    """A checkout with the same first commit placed in the root (a clone, an uploaded .git)
    must not reach the memory of the repository's checkout outside the root."""
    outside = make_repo(tmp_path / "outside" / "private-work")
    secret = jupymem.init(outside).remember("I am interviewing at a competitor next week", private=True)
    subprocess.run(["git", "clone", "-q", str(outside), str(root / "upload")], check=True, capture_output=True)
    code, status = await fetch("status", params={"path": "upload"})
    assert code == 200 and str(tmp_path / "outside") not in json.dumps(status), status
    # Said as the server's init will act: no match to adopt (the sidebar would promise one), a new memory.
    assert status["matches"] is None and "outside this server's root" in status["message"], status
    assert "initializing here starts a new one" in status["message"], status
    code, status = await fetch("init", method="POST", body={"path": "upload"})
    assert code == 200, status
    code, page = await fetch("memories", params={"path": "upload", "all": "1"})
    assert code == 200 and page["memories"] == [], page
    assert jupymem.project(root / "upload").id != jupymem.project(outside).id
    assert jupymem.project(outside).get(secret.id).private
    # A checkout moved into the root (nothing left outside) still adopts its memory.
    moved = make_repo(tmp_path / "outside" / "moved")
    kept = jupymem.init(moved).remember("Revenue is reported in EUR", kind="constraint")
    moved.rename(root / "moved")
    code, status = await fetch("status", params={"path": "moved"})
    assert code == 200 and status["matches"]["roots"] == [] and "adopts that memory" in status["message"], status
    assert str(tmp_path / "outside") not in json.dumps(status), status
    code, status = await fetch("init", method="POST", body={"path": "moved"})
    code, page = await fetch("memories", params={"path": "moved"})
    assert [m["id"] for m in page["memories"]] == [kept.id], page


async def test_repository_enclosing_the_server_root(jp_fetch: Any, tmp_path: Path) -> None:
    """The server root is a folder inside a repository: memory is the repository's."""
    # jp_root_dir is tmp_path/root_dir; make tmp_path itself the repository.
    repo = make_repo(tmp_path)
    jupymem.init(repo).remember("Notebooks live under root_dir", kind="fact")
    resp = await jp_fetch(*API, "status", params={"path": ""})
    status = json.loads(resp.body)
    assert status["memory"] is True
    assert status["root_path"] is None and status["server_root_in_repo"] == "root_dir"


# -- near-duplicates ----------------------------------------------------------


async def test_a_record_names_the_active_memories_it_nearly_repeats(fetch: Any, served_repo: Path) -> None:
    code, old = await fetch("memories", method="POST",
                            body={"path": "proj", "statement": "Never write to data/raw; it is read-only.",
                                  "kind": "constraint"})
    assert code == 201 and old["similar"] == []
    code, new = await fetch("memories", method="POST",
                            body={"path": "proj/nb/analysis.ipynb", "kind": "constraint",
                                  "statement": "Never write into data/raw, because it is read-only."})
    assert code == 201 and new["status"] == "active"  # recorded all the same, the memory itself
    assert [(s["id"], s["kind"], s["statement"]) for s in new["similar"]] == \
        [(old["id"], "constraint", "Never write to data/raw; it is read-only.")]
    assert 0.6 <= new["similar"][0]["score"] <= 1.0
    # "Supersede instead": the sidebar sends the new statement to the old memory's supersede.
    code, replaced = await fetch("memories", old["id"], "supersede", method="POST",
                                 body={"path": "proj", "statement": new["statement"], "kind": new["kind"]})
    assert code == 201 and replaced["id"] == new["id"] and replaced["supersedes"] == old["id"]
    assert replaced["similar"] == []
    proj = jupymem.project(served_repo)
    assert proj.get(old["id"]).superseded_by == new["id"] and [m.id for m in proj.list()] == [new["id"]]
    # Superseding keeps the old memory's kind unless told otherwise.
    code, other = await fetch("memories", method="POST",
                              body={"path": "proj", "statement": "Plots use viridis.", "kind": "preference"})
    code, newer = await fetch("memories", method="POST",
                              body={"path": "proj", "statement": "Plots use cividis.", "supersedes": other["id"]})
    assert code == 201 and newer["kind"] == "preference" and newer["supersedes"] == other["id"]


@pytest.mark.usefixtures("transformer_encoder")
async def test_the_server_hands_over_to_the_transformer_and_says_so(fetch: Any, served_repo: Path) -> None:
    """The server is a long-lived process, so it runs the default two tiers: the static
    model answers first and the transformer takes over once every memory has its vector.
    REST says which tier answered, and a paraphrase that shares no word with its memory is
    found first once the transformer answers."""
    import asyncio
    import time

    from test_tiers import STATEMENTS

    nb = "proj/nb/analysis.ipynb"
    await fetch("init", method="POST", body={"path": nb})
    for statement in STATEMENTS:
        code, _ = await fetch("memories", method="POST", body={"path": nb, "statement": statement, "kind": "fact"})
        assert code == 201
    question = "Which project exists to condense the hazard walkthroughs done every seven days?"
    deadline = time.monotonic() + 120
    seen = []
    while True:
        code, found = await fetch("memories", params={"path": nb, "q": question})
        assert code == 200
        _, status = await fetch("status", params={"path": nb})
        seen.append(status["retrieval"]["tier"])
        if seen[-1] == "transformer":
            break
        assert time.monotonic() < deadline, status["retrieval"]
        await asyncio.sleep(0.2)
    assert status["retrieval"]["vectors"] == len(STATEMENTS), status["retrieval"]
    assert status["retrieval"]["model"] == TRANSFORMER_NAME
    code, found = await fetch("memories", params={"path": nb, "q": question})
    assert found["status"] == "ok", found
    assert found["hits"][0]["memory"]["statement"] == STATEMENTS[0]


async def test_any_request_gets_an_answer_in_json_and_never_a_server_error(
    fetch: Any, served_repo: Path, jp_http_port: int, jp_base_url: str, jp_auth_header: dict[str, str]
) -> None:
    """Random requests to every route (a fixed seed): parameters and fields of every type,
    FTS syntax, NULs, invisible characters, secrets, paths out of the root, ids that are not
    ids, bodies that are not JSON or repeat a key, query strings that are not UTF-8. Each
    gets JSON, a refusal (4xx) that says why, never a 500 and its traceback; and the
    project's memory stays whole."""
    import random

    from tornado.httpclient import AsyncHTTPClient

    rng = random.Random(20261207)
    atoms = ['"', "*", "NEAR(", "\x00", "\ufeff", "\u202e", "\U000e0041", "é", "\U0001f642", "\n", " ", "x" * 5000,
             "churn", "../..", "/etc", "proj", "proj/nb/analysis.ipynb", "[m-0123456789ab]", "ghp_" + "a" * 36,
             "%00", "m-", "-1", "1e999", "nan"]

    def text() -> str:
        return "".join(rng.choice(atoms) if rng.random() < 0.4 else rng.choice("abc 12 ")
                       for _ in range(rng.randint(0, 12)))

    def value() -> Any:
        return rng.choice([text(), None, 0, -1, 10**30, 1.5, [], {}, ["a"], True, "note", "fact", "proj",
                           "proj/nb/analysis.ipynb", {"a": 1}])

    await fetch("init", method="POST", body={"path": "proj"})
    ids = []
    for i in range(20):
        code, m = await fetch("memories", method="POST",
                              body={"path": "proj", "statement": f"Table t{i} is partitioned by day.", "kind": "fact"})
        assert code == 201, m
        ids.append(m["id"])
    bad = []
    for _ in range(400):
        op = rng.choice(["list", "search", "record", "get", "act", "block", "status", "evidence", "keep", "share", "raw"])
        mid = rng.choice([*ids, text()]).replace("/", "") or "x"  # a "/" is another route: the server's own 404
        if op == "list":
            params = {k: text() if rng.random() < 0.5 else str(value())
                      for k in rng.sample(["path", "q", "limit", "offset", "kind", "per_kind", "all"], rng.randint(1, 5))}
            params.setdefault("path", "proj")
            code, body = await fetch("memories", params=params)
        elif op == "search":  # a well-formed search of any text
            code, body = await fetch("memories", params={"path": "proj", "q": text() + rng.choice(["", " churn t3"])})
        elif op == "record":
            fields = ["path", "statement", "kind", "topic", "evidence", "recorder", "quote", "cell_id", "private", "x"]
            payload = {k: value() for k in rng.sample(fields, rng.randint(0, 6))}
            payload.setdefault("path", "proj")
            code, body = await fetch("memories", method="POST", body=payload)
        elif op == "get":
            code, body = await fetch("memories", mid, params={"path": rng.choice(["proj", text()])})
        elif op == "act":
            payload = {k: value() for k in rng.sample(["statement", "kind", "topic", "reason", "evidence"], 2)}
            code, body = await fetch("memories", mid, rng.choice(["confirm", "supersede", "retire"]), method="POST",
                                     body={**payload, "path": "proj"})
        elif op == "block":
            code, body = await fetch("block", params={"path": "proj", "cap": str(value())})
        elif op == "status":
            code, body = await fetch("status", params={"path": rng.choice(["proj", text()])})
        elif op == "evidence":
            code, body = await fetch("evidence", params={"path": "proj", "limit": str(value())})
        elif op == "keep":
            code, body = await fetch("evidence", mid, "keep", method="POST",
                                     body={"path": "proj", "statement": value(), "kind": value()})
        elif op == "share":
            code, body = await fetch("share", method="POST", body={"path": "proj", rng.choice(["on", "action"]): value()})
        else:
            raw = rng.choice([b"\xff\xfe", b"{", b"[]", b"null", b'{"path": "proj", "statement": "\\ud800 x"}',
                              b'{"path": "proj", "statement": "a", "statement": "b"}', b'{"path": "proj", "statement": 1e999}'])
            code, body = await fetch("memories", method="POST", raw=raw)
        if code >= 500 or (code >= 400 and not (isinstance(body, dict) and body.get("message"))):
            bad.append((op, code, str(body)[:200]))
    client = AsyncHTTPClient()
    for q in ("%ff%fe", "%ED%A0%80churn", "%C0%80", "churn%00"):  # not UTF-8, a lone surrogate, overlong, a NUL
        for route in ("memories", "status", "block", "evidence"):
            url = f"http://localhost:{jp_http_port}{jp_base_url}jupymem/api/{route}?path=proj&q={q}&kind={q}&limit={q}"
            resp = await client.fetch(url, headers=jp_auth_header, raise_error=False)
            if resp.code >= 500:
                bad.append(("query string", route, q, resp.code))
    assert not bad, bad[:5]
    project = jupymem.project(served_repo)
    assert project is not None and project.verify().ok and project.count() >= len(ids)
