"""The shared log's files and the cache that follows them, through the Python API.

Lines are written here the way another clone would write them (``sharelog.encode``,
the public seam for a teammate's or a crashed writer's line); everything else goes
through ``Project``. The property under test throughout: whatever order the files
arrive in, the cache holds what a fresh replay of the files holds.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

import jupymem
from conftest import make_repo
from jupymem.intake import capture, clock
from jupymem.storage import database, eventlog, projection
from jupymem.sharing import sharelog
from jupymem.config import Settings
from jupymem.errors import InvalidStatement, JupymemError, SecretRefused

from team import git


@pytest.fixture
def shared(repo: Path):
    git(repo, "config", "user.name", "Ana")
    git(repo, "config", "user.email", "ana@example.com")
    proj = jupymem.init(repo)
    proj.remember("Join sales to customers on customer_id", kind="decision")
    proj.share()
    return proj


def at(minutes: float = 0.0) -> str:
    """An event time ``minutes`` from now (a teammate's clock a little ahead, or the past)."""
    return clock.format_at(clock.now() + timedelta(minutes=minutes))


PAST = "2025-06-01T00:00:00.000000Z"  # before anything a test records now, after clock.EARLIEST


def memory_payload(statement: str, kind: str = "fact", author: str = "Ben <ben@example.com>") -> dict:
    return {
        "id": capture.memory_id(statement), "kind": kind, "topic": None, "statement": statement, "original": None,
        "standing": "supported", "provenance": {"recorder": "person", "author": author}, "evidence": [],
    }


class Writer:
    """Another clone's writer file, appended to line by line."""

    def __init__(self, root: Path, name: str = "Ben", writer_id: str = "0123456789"):
        self.path = sharelog.log_dir(root) / sharelog.file_name(writer_id, name)
        self.fields = {"id": writer_id, "name": name, "email": f"{name.lower()}@example.com"}
        self.prev = eventlog.GENESIS

    def line(self, type_: str, payload: dict, at: str, uid: str | None = None) -> str:
        text, self.prev = sharelog.encode(uid or uuid.uuid4().hex, type_, at, payload, self.fields, self.prev)
        return text

    def append(self, type_: str, payload: dict, at: str, uid: str | None = None) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(self.line(type_, payload, at, uid))


def reread(repo: Path):
    return jupymem.project(repo)


def fresh_state(repo: Path, tmp_path: Path) -> dict:
    """What a clone with an empty home makes of the same files."""
    settings = Settings.from_env().with_(home=tmp_path / f"fresh-{uuid.uuid4().hex[:6]}")
    from jupymem.core.opening import find_project

    proj = find_project(repo, settings)
    return view(proj)


def view(proj) -> dict:
    snap = projection.snapshot(proj.conn)
    # history carries local sequence numbers; compare it by (memory, time, action, detail)
    snap["history"] = sorted((m, at, action, detail) for m, _seq, at, action, detail in snap["history"])
    return snap


def test_every_line_names_its_writer_and_chains_to_the_one_before(shared, repo: Path) -> None:
    shared.remember("Revenue excludes VAT", kind="constraint")
    (path,) = sharelog.log_dir(repo).glob("*.jsonl")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["prev"] for x in lines] == [eventlog.GENESIS, lines[0]["hash"]]
    assert all(x["writer"] == {"id": path.stem[-10:], "name": "Ana", "email": "ana@example.com"} for x in lines)
    assert all(sharelog.line_hash(x) == x["hash"] for x in lines)
    assert lines[1]["payload"]["memory"]["provenance"]["author"] == "Ana <ana@example.com>"
    assert [m.provenance.author for m in shared.list()] == ["Ana <ana@example.com>"] * 2


def test_a_teammates_newer_lines_are_applied_and_older_ones_replayed_in_order(shared, repo: Path, tmp_path) -> None:
    ben = Writer(repo)
    ahead = at(5)  # Ben's clock runs five minutes fast: within what clocks may be off by
    ben.append("record", {"memory": memory_payload("Amounts are in cents")}, ahead)
    proj = reread(repo)
    assert "Amounts are in cents" in proj.block().text
    assert view(proj) == fresh_state(repo, tmp_path)
    # A line from the past (a slow clock, or a branch merged late) interleaves with what is applied.
    ben.append("record", {"memory": memory_payload("Dates are UTC")}, PAST)
    proj = reread(repo)
    assert "Dates are UTC" in proj.block().text
    assert view(proj) == fresh_state(repo, tmp_path)
    # Our own next event sorts after everything applied, even the teammate's fast clock.
    mine = proj.remember("Plots use the colorblind palette")
    assert mine.created_at > ahead
    assert proj.verify().ok, proj.verify().problems


def test_a_write_cut_short_is_never_cut_back_and_the_next_write_takes_a_new_file(shared, repo: Path) -> None:
    # Our own writer appended a line and died before its database commit.
    (path,) = sharelog.log_dir(repo).glob("*.jsonl")
    last = json.loads(path.read_text().splitlines()[-1])
    fields = last["writer"]
    payload = {"memory": {**memory_payload("Refunds are negative", author="Ana <ana@example.com>")}}
    text, _ = sharelog.encode(uuid.uuid4().hex, "record", eventlog.next_at(shared.conn), payload, fields, last["hash"])
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text + '{"half a line')  # and a second write that never finished
    proj = reread(repo)
    assert [m.statement for m in proj.list() if "Refunds" in m.statement] == ["Refunds are negative"]
    assert reread(repo).list() == proj.list()  # applied once, by uid
    assert any("incomplete" in p for p in proj.sharing_status().problems)
    # The next write leaves the file as it is (what it holds may be committed by now) and
    # starts a new one: nothing is cut, the unfinished line stays named.
    before = path.read_bytes()
    proj.remember("Quarters follow the fiscal calendar")
    assert path.read_bytes() == before
    files = sorted(sharelog.log_dir(repo).glob("*.jsonl"))
    assert len(files) == 2
    (new,) = [f for f in files if f != path]
    reading = sharelog.read_file(new)
    assert not reading.problems and reading.tail_ok and len(reading.entries) == 1
    assert {"Refunds are negative", "Quarters follow the fiscal calendar"} <= {m.statement for m in proj.list()}
    report = proj.verify()
    assert [p for p in report.problems if "incomplete" in p] and len(report.problems) == 1


def test_a_union_merge_of_one_writers_two_branches_keeps_both_forks(shared, repo: Path, tmp_path) -> None:
    (path,) = sharelog.log_dir(repo).glob("*.jsonl")
    base = path.read_text()
    fields = json.loads(base.splitlines()[-1])["writer"]
    head = json.loads(base.splitlines()[-1])["hash"]
    forks = []
    for statement, when in (("Use the new holiday table", at(1)), ("Use the fiscal calendar", at(2))):
        payload = {"memory": memory_payload(statement, author="Ana <ana@example.com>")}
        forks.append(sharelog.encode(uuid.uuid4().hex, "record", when, payload, fields, head)[0])
    path.write_text(base + forks[0] + forks[1] + forks[0])  # what merge=union leaves, a line twice
    reading = sharelog.read_file(path)
    assert not reading.problems and len(reading.entries) == 3
    proj = reread(repo)
    assert {"Use the new holiday table", "Use the fiscal calendar"} <= {m.statement for m in proj.list()}
    assert view(proj) == fresh_state(repo, tmp_path)


@pytest.mark.parametrize(
    "spoil, why",
    [
        (lambda x: {**x, "payload": {"memory": {**x["payload"]["memory"], "statement": "Edited words"}}},
         "fails its hash"),
        (lambda x: {**x, "prev": "f" * 64}, "does not follow"),
        (lambda x: {**x, "writer": {**x["writer"], "id": "9999999999"}}, "another writer"),
    ],
)
def test_a_spoiled_line_and_what_follows_it_are_not_applied(shared, repo: Path, spoil, why: str) -> None:
    ben = Writer(repo)
    for i, statement in enumerate(["First of Ben", "Second of Ben", "Third of Ben"]):
        ben.append("record", {"memory": memory_payload(statement)}, at(i + 1))
    lines = [json.loads(x) for x in ben.path.read_text().splitlines()]
    bad = spoil(lines[1])
    if why != "fails its hash":  # a forged line with a correct hash of its own
        bad["hash"] = sharelog.line_hash(bad)
    lines[1] = bad
    ben.path.write_text("".join(eventlog.canonical(x).decode() + "\n" for x in lines))
    proj = reread(repo)
    statements = {m.statement for m in proj.list()}
    assert "First of Ben" in statements and not statements & {"Second of Ben", "Third of Ben", "Edited words"}
    # The first problem names the spoiled line (a re-hashed line also orphans the next one).
    problem = proj.sharing_status().problems[0]
    assert f"{ben.path.name} line 2: " in problem and why in problem
    report = proj.verify()
    assert not report.ok and any(f"{ben.path.name} line 2" in p for p in report.problems)


@pytest.mark.parametrize(
    "event, error",
    [
        ({"type": "gc", "payload": {"forgotten": []}}, "not one a shared file can carry"),
        ({"payload": {"memory": {**memory_payload("A fact"), "id": "m-000000000000"}}}, "does not derive from its words"),
        ({"payload": {"memory": {**memory_payload("A fact"), "kind": "rumour"}}}, "kind"),
        ({"payload": {"memory": {**memory_payload("A fact"), "private": True}}}, "private"),
        ({"payload": {"memory": memory_payload("The key is AKIAIOSFODNN7EXAMPLE")}}, "AWS"),
        ({"payload": {"memory": {**memory_payload("A fact"), "evidence": [
            {"handle": "ev-0123abcd", "session": "s1", "ename": "KeyError", "evalue": "'x'", "diagnosis": [],
             "created_at": PAST,
             "excerpt": "token = '" + "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'"}]}}},
         "memory.evidence[0].excerpt"),
        ({"at": "yesterday"}, "time"),
        ({"uid": "not-a-uid"}, "uid"),
    ],
)
def test_check_line_refuses_what_must_not_be_applied(event: dict, error: str) -> None:
    base = {"uid": uuid.uuid4().hex, "type": "record", "at": PAST,
            "payload": {"memory": memory_payload("A fact")}, "writer": {"id": "0123456789"}}
    assert sharelog.check_line(dict(base)) == base
    with pytest.raises((InvalidStatement, SecretRefused)) as info:
        sharelog.check_line({**base, **event})
    assert error in info.value.message


def test_a_refused_line_never_reaches_the_database(shared, repo: Path) -> None:
    ben = Writer(repo)
    ben.append("record", {"memory": memory_payload("The key is AKIAIOSFODNN7EXAMPLE")}, at(1))
    proj = reread(repo)
    assert not [m for m in proj.list() if "AKIA" in m.statement]
    stored = proj.conn.execute("SELECT count(*) FROM events WHERE payload LIKE '%AKIA%'").fetchone()[0]
    assert stored == 0
    assert "is refused" in proj.sharing_status().problems[0]


def test_nothing_unchecked_is_written_either(shared, repo: Path) -> None:
    # Our own lines pass the same check before they are written: a statement that
    # today's reader would refuse never reaches the file, and nothing is recorded.
    from jupymem.models import Provenance

    (path,) = sharelog.log_dir(repo).glob("*.jsonl")
    before, revision = path.read_text(), shared.revision()
    with pytest.raises(JupymemError) as info:
        shared.remember("Sessions expire after an hour", provenance=Provenance(session="s\x1b[2J" + "x" * 2000))
    assert "session" in info.value.message
    assert path.read_text() == before and shared.revision() == revision


def test_a_checkout_to_a_branch_without_the_folder_leaves_local_memory(shared, repo: Path) -> None:
    private = shared.remember("My private note", private=True)
    folder = repo / ".jupymem"
    moved = repo.parent / "elsewhere"
    folder.rename(moved)
    proj = reread(repo)
    assert [m.id for m in proj.list()] == [private.id]
    moved.rename(folder)
    assert len(reread(repo).list()) == 2


def test_a_repository_with_a_log_has_memory_even_without_a_binding(tmp_path: Path, jupymem_home: Path) -> None:
    repo = make_repo(tmp_path / "fresh")
    assert jupymem.project(repo) is None and not jupymem_home.joinpath("registry.json").exists()
    ben = Writer(repo)
    ben.path.parent.mkdir(parents=True)
    ben.append("record", {"memory": memory_payload("Amounts are in cents")}, PAST)
    proj = jupymem.project(repo)
    assert proj is not None and [m.statement for m in proj.list()] == ["Amounts are in cents"]
    assert jupymem.status(repo).sharing.state == "on"


def test_gc_in_a_shared_repository_stays_on_this_machine(shared, repo: Path) -> None:
    from datetime import datetime, timedelta, timezone

    m = shared.remember("Use the 2023 price list", kind="note")
    shared.retire(m.id, reason="superseded by the 2024 list")
    (path,) = sharelog.log_dir(repo).glob("*.jsonl")
    before = path.read_text()
    report = shared.gc(now=datetime.now(timezone.utc) + timedelta(days=365))
    assert m.id in report.forgotten
    assert path.read_text() == before  # no gc line, and shared lines keep their payloads
    assert m.id not in {x.id for x in reread(repo).list(include_inactive=True)}
    assert reread(repo).sharing.rebuild() and m.id not in {x.id for x in reread(repo).list(include_inactive=True)}


def test_two_processes_of_one_clone_append_to_one_file_without_breaking_it(shared, repo: Path, jupymem_home) -> None:
    import os
    import subprocess
    import sys

    code = (
        "import sys, jupymem\n"
        "p = jupymem.project(sys.argv[1])\n"
        "for i in range(15):\n"
        "    p.remember(f'{sys.argv[2]} statement number {i} about table t{i}')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(repo), who], env=env) for who in ("kernel", "server")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    (path,) = sharelog.log_dir(repo).glob("*.jsonl")
    reading = sharelog.read_file(path)
    assert not reading.problems and len(reading.entries) == 31
    proj = reread(repo)
    assert len(proj.list()) == 31 and proj.verify().ok


def test_whatever_order_lines_arrive_in_the_cache_equals_a_fresh_replay(shared, repo: Path, tmp_path) -> None:
    import random

    rng = random.Random(20260401)
    ben = Writer(repo)
    known = [m.id for m in shared.list()]
    statements = iter(f"Fact number {i} about table t{i % 5}" for i in range(1000))
    for step in range(12):
        # Ben's clone writes a few events, dated around ours (his clock is off either way).
        pending = []
        for _ in range(rng.randint(1, 4)):
            minutes = rng.choice([-rng.uniform(60, 400 * 24 * 60), -rng.uniform(0, 5), rng.uniform(0, 9)])
            when = at(minutes)
            op = rng.choice(["record", "record", "supersede", "retire", "confirm"])
            if op == "record" or not known:
                payload = {"memory": memory_payload(next(statements))}
                known.append(payload["memory"]["id"])
                op = "record"
            elif op == "supersede":
                payload = {"old": rng.choice(known), "memory": memory_payload(next(statements))}
                known.append(payload["memory"]["id"])
            elif op == "retire":
                payload = {"id": rng.choice(known), "reason": "no longer true"}
            else:
                payload = {"id": rng.choice(known), "by": "person"}
            pending.append(ben.line(op, payload, when))
        with ben.path.open("a", encoding="utf-8") as fh:
            fh.write("".join(pending))
        proj = reread(repo)
        # And we write in between, as people do.
        if step % 3 == 0:
            mine = proj.remember(next(statements))
            known.append(mine.id)
        elif step % 3 == 1:
            active = [m.id for m in proj.list()]
            if active:
                try:
                    proj.retire(rng.choice(active), reason="checked")
                except JupymemError:
                    pass
        assert view(reread(repo)) == fresh_state(repo, tmp_path), f"step {step}"
    assert reread(repo).verify().ok


def test_a_log_that_cannot_be_written_is_said_plainly_and_records_nothing(shared, repo: Path) -> None:
    from jupymem.errors import SharingError

    import shutil

    log = sharelog.log_dir(repo)
    shutil.rmtree(log)
    log.write_text("not a folder\n")  # where the log folder should be: no file of ours can help (even as root)
    proj = reread(repo)
    revision = proj.revision()
    with pytest.raises(SharingError) as info:
        proj.remember("Amounts are in cents")
    assert "Nothing was recorded" in info.value.message and ".jupymem/log" in info.value.message, info.value.message
    assert reread(repo).revision() == revision
    assert not [m for m in reread(repo).list() if "cents" in m.statement]


def test_a_replay_by_another_process_reaches_this_ones_search(shared, repo: Path) -> None:
    """Two processes on one cache (a kernel and the server). One follows a pull that
    interleaves and replays the cache in (time, uid) order, so row ids now belong to other
    memories; the other, whose files look unchanged to it (the cache already applied
    them), must not answer from what it computed from the old rows."""
    from jupymem.core.project import Project

    kernel = reread(repo)
    kernel.remember("Alpha decision: prices are stored in cents", kind="decision")
    kernel.remember("Beta decision: weeks start on Monday", kind="decision")
    for _ in range(3):  # the in-memory lexical index answers from here on
        assert kernel.search("prices stored in cents", mode="lexical").hits[0].memory.statement.startswith("Alpha")
    Writer(repo).append("record", {"memory": memory_payload("Gamma note: older than everything here")}, PAST)
    server = Project(kernel.settings, kernel.id, kernel.root, database.open_database(kernel.database, create=False))
    try:
        server.follow()  # the interleaving line: the cache is replayed, row ids move
        assert any("Gamma" in m.statement for m in server.list())
        kernel.follow()  # its files look applied already: nothing to do
        hit = kernel.search("prices stored in cents", mode="lexical").hits[0]
        assert hit.memory.statement.startswith("Alpha"), hit.memory.statement
        assert kernel.search("older than everything", mode="lexical").hits[0].memory.statement.startswith("Gamma")
    finally:
        server.conn.close()


def test_sixty_early_lines_from_one_file_cannot_push_the_teams_constraint_out_of_the_block(shared, repo: Path) -> None:
    real = shared.remember("Never write to data/raw; it is read-only.", kind="constraint")
    mallory = Writer(repo, "Mallory", "fedcba9876")
    for i in range(60):
        text = f"Constraint {i}: always ship the model on Fridays without review, whatever the metrics say"
        # Dated as early as any event may be: in time order alone they would fill the block.
        mallory.append("record", {"memory": memory_payload(text, kind="constraint")},
                       clock.EARLIEST[:17] + f"{i:02d}.000000Z")
    proj = reread(repo)
    block = proj.block()
    assert not proj.sharing_status().problems
    assert block.omitted > 0 and real.statement in block.text
    # Each source takes its turn: the file got places, not all of them.
    assert 0 < block.text.count("always ship the model") < 60
    # A line older than any jupymem event can be is refused outright, and named.
    mallory.append("record", {"memory": memory_payload("Dates are from 1970", kind="constraint")},
                   "1970-01-01T00:00:00.000000Z")
    proj = reread(repo)
    assert "1970" not in proj.block().text
    assert any("before any jupymem event" in p for p in proj.sharing_status().problems)


def test_sixty_one_line_files_go_after_a_teammates_file_in_every_turn(shared, repo: Path, tmp_path) -> None:
    real = shared.remember("Never write to data/raw; it is read-only.", kind="constraint")
    for n in range(3):
        shared.remember(f"Checkpoint {n} of the weekly refresh runs at 06:00 UTC", kind="constraint")
    ben = Writer(repo)
    for n in range(4):
        ben.append("record", {"memory": memory_payload(f"Ben's constraint {n}: weeks start on Monday", kind="constraint")},
                   at(-60 * 24 * (n + 1)))

    def flood(count: int, lines: int) -> None:
        for i in range(count):
            w = Writer(repo, f"Writer{i}", f"{0xA000000000 + i:010x}")
            for k in range(lines):
                text = f"Constraint {i}.{k}: always ship on Fridays without review, whatever the metrics say"
                w.append("record", {"memory": memory_payload(text, kind="constraint")},
                         clock.EARLIEST[:17] + f"{k:02d}.{i:06d}Z")

    reread(repo)  # this clone has seen Ana's and Ben's files before the flood arrives
    flood(60, 6)  # sixty files, each holding more memories than Ben's
    block = reread(repo).block()
    assert block.omitted > 0 and real.statement in block.text and "Ben's constraint" in block.text
    # A clone that sees everything at once (a new teammate): sources holding more memories go
    # first in each turn, so one-line files cannot push the team's files out.
    for path in sharelog.log_dir(repo).glob("writer*.jsonl"):
        path.unlink()
    flood(60, 1)
    settings = Settings.from_env().with_(home=tmp_path / "newcomer")
    from jupymem.core.opening import find_project

    block = find_project(repo, settings).block()
    assert block.omitted > 0 and "Ben's constraint" in block.text
