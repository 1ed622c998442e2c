"""Memory shared through git, end to end: a bare remote, clones, two people (Ana, Ben),
each with their own JUPYMEM_HOME and git identity, driving the real command line.

What is checked is what a team would see: Ben reads Ana's memories after a pull with no
other step; concurrent records merge with no git conflict and no duplicate; a supersede
travels; a hand-edited committed line is named by ``verify`` and reaches no face; a
branch checkout switches memory and switching back restores it; the database is a cache
that a read rebuilds; private memories and secrets never reach the files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from team import Clone, make_team


@pytest.fixture
def team(tmp_path: Path) -> tuple[Clone, Clone]:
    ana, ben = make_team(tmp_path, ("Ana", "ana@example.com"), ("Ben", "ben@example.com"))
    return ana, ben


def ids(listed: list[dict]) -> list[str]:
    return sorted(m["id"] for m in listed)


def state(listed: list[dict]) -> list[tuple]:
    """What two clones must agree on, memory by memory."""
    return sorted(
        (m["id"], m["statement"], m["status"], m["standing"], m["superseded_by"], m["created_at"],
         tuple(m["replacements"]))
        for m in listed
    )


def shared_start(ana: Clone, ben: Clone) -> dict:
    """Ana records, shares and pushes; Ben pulls. Returns Ana's first memory."""
    first = ana.remember("Join sales to customers on customer_id, never on email", "--kind", "decision")
    out = ana.ok("share")
    assert "Sharing is on" in out and "git add .jupymem" in out
    ana.commit("share memory")
    ana.push()
    ben.pull()
    return first


def test_ben_reads_anas_memories_after_a_pull_and_concurrent_records_merge(team) -> None:
    ana, ben = team
    private = ana.remember("My own scratch note about the VPN", "--private")
    first = ana.remember("Join sales to customers on customer_id, never on email", "--kind", "decision")
    out = ana.ok("share")
    for made in (".jupymem/README.md", ".jupymem/.gitattributes", ".jupymem/config.json", ".jupymem/log/ana-"):
        assert made in out, out
    assert "Wrote 1 events" in out  # the history, without the private memory
    (log,) = ana.log_files()
    assert re.fullmatch(r"ana-[0-9a-f]{10}\.jsonl", log.name)
    assert "customer_id" in log.read_text() and "VPN" not in ana.shared_text()
    ana.commit("share memory")
    ana.push()

    # Ben pulls: his first read builds the cache; nothing else to run.
    ben.pull()
    got = {m["id"]: m for m in ben.listed()}
    assert set(got) == {first["id"]}
    assert got[first["id"]]["provenance"]["author"] == "Ana <ana@example.com>"
    assert "(Ana)" in ben.ok("list")  # who recorded it, in the plain list too
    assert "Ana <ana@example.com>" in ben.ok("show", first["id"])

    # Both record at once, one statement in common (spelled a little differently).
    a1 = ana.remember("Weekly revenue is reported in EUR", "--kind", "constraint")
    ana.remember("The churn model needs three months of history", "--kind", "fact")
    b1 = ben.remember("Timestamps in sales.parquet are UTC", "--kind", "constraint")
    ben.remember("The churn model needs three months of history.", "--kind", "fact")
    ben.commit("ben's memories")
    ana.commit("ana's memories")
    ana.push()
    ben.pull()  # asserts: no conflict
    ben.push()
    ana.pull()

    on_ana, on_ben = ana.listed(), ben.listed()
    assert len(ids(on_ana)) == len(set(ids(on_ana)))  # no duplicates
    assert [m for m in on_ana if m["id"] != private["id"]] and private["id"] in ids(on_ana)
    assert state([m for m in on_ana if m["id"] != private["id"]]) == state(on_ben)
    assert {a1["id"], b1["id"], first["id"]} <= set(ids(on_ben))
    assert sum("churn model" in m["statement"] for m in on_ben) == 1
    assert private["id"] not in ids(on_ben) and "VPN" not in ben.shared_text()
    by_ben = next(m for m in on_ana if m["id"] == b1["id"])
    assert by_ben["provenance"]["author"] == "Ben <ben@example.com>"
    # Each person appended only to their own file.
    assert sorted(p.name.split("-")[0] for p in ana.log_files()) == ["ana", "ben"]
    # A third clone, starting from nothing, holds the same memory as both.
    (carl,) = make_team_clone(ana, "Carl", "carl@example.com")
    assert state(carl.listed()) == state(on_ben)
    assert ana.ok("verify").startswith("verify: ok") and ben.ok("verify").startswith("verify: ok")


def make_team_clone(like: Clone, name: str, email: str) -> list[Clone]:
    from team import git

    base = like.path.parent
    path = base / name.lower()
    git(base, "clone", "-q", str(base / "remote.git"), str(path))
    git(path, "config", "user.name", name)
    git(path, "config", "user.email", email)
    return [Clone(path.resolve(), base / f"home-{name.lower()}", name, email)]


def test_bens_supersede_reaches_anas_block(team) -> None:
    ana, ben = team
    first = shared_start(ana, ben)
    new = ben.json("supersede", first["id"], "Join sales to customers on customer_id after trimming whitespace")
    ben.commit("supersede")
    ben.push()
    ana.pull()
    block = ana.ok("block")
    assert "after trimming whitespace" in block and "never on email" not in block
    old = ana.json("show", first["id"])
    assert old["status"] == "superseded" and old["superseded_by"] == new["id"]


def test_two_replacements_are_marked_until_someone_settles_it(team) -> None:
    ana, ben = team
    first = shared_start(ana, ben)
    a = ana.json("supersede", first["id"], "Join on customer_id after lower-casing it")
    b = ben.json("supersede", first["id"], "Join on customer_id after trimming it")
    ben.commit("ben replaces")
    ana.commit("ana replaces")
    ana.push()
    ben.pull()
    ben.push()
    ana.pull()
    for clone in (ana, ben):
        block = clone.ok("block")
        assert "lower-casing" in block and "trimming" in block  # both take effect
        shown = clone.json("show", first["id"])
        assert shown["replacements"] == sorted([a["id"], b["id"]])
        text = clone.ok("show", first["id"])
        assert "replaced 2 ways" in text and "two people replaced it differently" in text
        assert "(1 of 2 replacements)" in clone.ok("show", a["id"])
    ana.ok("retire", b["id"], "--reason", "we agreed on lower-casing")
    assert ana.json("show", first["id"])["replacements"] == []
    assert "replaced 2 ways" not in ana.ok("show", first["id"])
    ana.commit("settled")
    ana.push()
    ben.pull()
    assert ben.json("show", a["id"])["replacements"] == []


def test_a_hand_edited_line_fails_verify_and_reaches_no_face_her_words_do(team) -> None:
    ana, ben = team
    shared_start(ana, ben)
    ana.remember("The weekly export runs on Mondays", "--kind", "procedure")
    ana.remember("Refunds are negative amounts", "--kind", "fact")
    ana.commit("more")
    ana.push()
    ben.pull()
    assert "Mondays" in ben.ok("block")

    # Someone edits Ana's second line by hand and commits it.
    (log,) = ana.log_files()
    lines = log.read_text().splitlines(keepends=True)
    assert "Mondays" in lines[1]
    lines[1] = lines[1].replace("on Mondays", "on Fridays")
    log.write_text("".join(lines))
    ana.commit("hand edit")
    ana.push()
    ben.pull()

    for clone in (ana, ben):
        proc = clone.jm("verify")
        assert proc.returncode == 1
        out = proc.stdout.decode()
        assert f".jupymem/log/{log.name} line 2: fails its hash" in out, out
        # git's history holds the line as Ana wrote it: that is what memory keeps, and the
        # line after it in her chain follows it.
        assert "1 committed line taken out by commit" in out, out
        for args in (["list", "--all"], ["block"], ["search", "which day does the export run", "--all"],
                     ["search", "refunds negative amounts"]):
            text = clone.ok(*args)
            assert "Fridays" not in text, (args, text)
        assert "Mondays" in clone.ok("block") and "Refunds" in clone.ok("block")
        status = clone.json("status")
        assert status["sharing"]["problems"] and "line 2" in status["sharing"]["problems"][0]
        assert "not applied" in clone.ok("status")
    # Her chain is whole again through the line history kept, so her next memory follows it.
    ana.remember("Use the fiscal calendar for quarters", "--kind", "decision")
    assert len(ana.log_files()) == 1
    ana.commit("after the edit")
    ana.push()
    ben.pull()
    assert "fiscal calendar" in ben.ok("block")


def test_a_branch_checkout_switches_memory_and_switching_back_restores_it(team) -> None:
    ana, _ = team
    ana.remember("Revenue excludes VAT", "--kind", "constraint")
    ana.ok("share")
    ana.commit("share")
    ana.git("checkout", "-q", "-b", "feature")
    feature = ana.remember("On this branch, forecasts use the new holiday table", "--kind", "decision")
    ana.commit("feature memory")
    assert feature["id"] in ids(ana.listed())

    ana.git("checkout", "-q", "main")
    assert feature["id"] not in ids(ana.listed())
    assert "holiday table" not in ana.ok("block") and "Revenue excludes VAT" in ana.ok("block")

    # Main moves on too, in the same writer's file: the merge is a union, not a conflict.
    on_main = ana.remember("Quarterly reports use the fiscal calendar", "--kind", "decision")
    ana.commit("main memory")
    ana.git("checkout", "-q", "feature")
    listed = ids(ana.listed())
    assert feature["id"] in listed and on_main["id"] not in listed
    ana.git("checkout", "-q", "main")
    proc = ana.git("merge", "-q", "--no-edit", "feature", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {feature["id"], on_main["id"]} <= set(ids(ana.listed()))
    assert ana.ok("verify").startswith("verify: ok")


def test_the_database_is_a_cache_that_a_read_rebuilds(team) -> None:
    ana, ben = team
    shared_start(ana, ben)
    ben.remember("Amounts are in cents", "--kind", "fact")
    before = state(ben.listed())
    for db in ben.home.glob("projects/*/memory.sqlite*"):
        db.unlink()
    assert state(ben.listed()) == before
    # The whole home, too.
    import shutil

    shutil.rmtree(ben.home)
    assert state(ben.listed()) == before
    assert ben.ok("verify").startswith("verify: ok")
    # `rebuild` in a shared repository rebuilds the cache from the files.
    assert "verify: ok" in ben.ok("rebuild")
    assert state(ben.listed()) == before


def test_private_memories_and_secrets_never_reach_the_files(team) -> None:
    ana, ben = team
    shared_start(ana, ben)
    before = ana.shared_text()
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    proc = ana.jm("remember", f"The CI token is {secret}")
    assert proc.returncode == 2 and b"GitHub token" in proc.stderr
    kept = ana.remember("I still doubt the churn definition", "--private")
    assert kept["private"] is True
    assert ana.shared_text() == before
    assert "(private)" in ana.ok("list")
    # What touches a private memory stays private too.
    ana.ok("retire", kept["id"])
    replaced = ana.remember("Another private doubt", "--private")
    ana.ok("supersede", replaced["id"], "A private doubt, restated")
    assert ana.shared_text() == before
    # Said again without --private, it is shared.
    ana.remember("I still doubt the churn definition")
    assert "churn definition" in ana.shared_text()
    assert "private" in ana.ok("status")


def test_share_off_stops_writing_and_keeps_reading(team) -> None:
    ana, ben = team
    shared_start(ana, ben)
    out = ben.ok("share", "--off")
    assert "Sharing is off" in out and ".jupymem/config.json" in out
    before = ben.shared_text()
    local = ben.remember("Ben keeps this one on his machine for now")
    assert json.loads((ben.path / ".jupymem" / "config.json").read_text())["sharing"] == "off"
    assert ben.shared_text() == before
    assert "sharing     off" in ben.ok("status")
    # Files still flow in while it is off.
    ana.remember("Dashboards refresh at 06:00 UTC", "--kind", "decision")
    ana.commit("more")
    ana.push()
    ben.git("checkout", "-q", "--", ".jupymem/config.json")  # Ben keeps the team's setting
    ben.pull()
    assert "06:00 UTC" in ben.ok("block")
    # Turning it on writes what was recorded meanwhile.
    out = ben.ok("share")
    assert "Wrote 1 events" in out
    assert "Ben keeps this one" in ben.shared_text() and local["id"] in ids(ben.listed())


def test_an_export_of_a_shared_repository_round_trips(team, tmp_path: Path) -> None:
    ana, ben = team
    first = shared_start(ana, ben)
    ana.json("supersede", first["id"], "Join on customer_id after trimming it")
    gone = ana.remember("Drop the test accounts", "--kind", "procedure")
    ana.ok("retire", gone["id"], "--reason", "they were removed upstream")
    ana.remember("A private thought", "--private")
    out = tmp_path / "export.jsonl"
    assert ana.jm("export", "--out", str(out)).returncode == 0
    assert "private thought" not in out.read_text()
    assert json.loads(out.read_text().splitlines()[0])["private_left_out"] == 1

    # Into a repository that does not share: the same memory.
    (other,) = make_team(tmp_path / "elsewhere", ("Dora", "dora@example.com"))
    other.ok("import", str(out), "--other-project")  # another repository: merged on purpose
    shared = [m for m in ana.listed() if not m["private"]]
    assert state(other.listed()) == state(shared)
    # Into a shared one: the events go to the importer's file, and teammates get them.
    ben.ok("share")
    report = ben.json("import", str(out))
    assert report["added"] > 0
    assert state(ben.listed()) == state(shared)
    assert "after trimming it" in ben.shared_text()
    # And back into Ana's: nothing new.
    assert ana.json("import", str(out))["added"] == 0


def test_a_repository_that_never_shared_has_the_status_the_sharing_room_would_give(repo: Path) -> None:
    import jupymem
    from jupymem.sharing import seen, switch
    from jupymem.sharing.share import Sharing

    proj = jupymem.init(repo)
    proj.remember("Churn is measured over 90 days.")
    proj.remember("My own scratch note on churn.", private=True)
    quick = proj.sharing_status()  # never shared: from the tables alone
    full = switch.status(Sharing(proj.conn, proj.root, on_rebuild=lambda: None))
    assert quick == full and quick.state == seen.NONE and quick.private_memories == 1
    assert quick.identity  # git's identity, as a shared repository shows it
    proj.share()
    assert proj.sharing_status().state == "on"  # a folder now: the sharing room answers
