"""The `jupymem` command line, run for real: subprocesses, real git repositories, real files."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cli_run
import jupymem
from conftest import make_repo
from jupymem.intake import capture
from jupymem.models import Provenance

ROOT = Path(__file__).resolve().parents[1]


def jm(*args: str, cwd: Path, input: bytes | None = None, home: Path | None = None, module: str | None = None):
    return cli_run.jm(*args, cwd=cwd, input=input, env={"JUPYMEM_HOME": str(home)} if home else None, module=module)


def ok_json(proc: subprocess.CompletedProcess) -> object:
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def one_error_line(proc: subprocess.CompletedProcess, code: int = 2) -> str:
    err = proc.stderr.decode()
    assert proc.returncode == code, (proc.returncode, err, proc.stdout)
    assert "Traceback" not in err
    assert err.startswith("jupymem: ") and err.count("\n") == 1, err
    return err


@pytest.fixture
def filled(repo: Path) -> Path:
    for text, kind in [
        ("Use customer_id as the join key, never the email column", "decision"),
        ("Timestamps in sales.parquet are UTC; convert before grouping by day", "constraint"),
        ("The churn model overfits when trained on fewer than 3 months", "failure"),
    ]:
        assert jm("remember", text, "--kind", kind, cwd=repo).returncode == 0
    return repo


def test_reading_commands_never_create_anything(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    proc = jm("status", cwd=repo, home=home)
    assert proc.returncode == 0
    assert "no memory" in proc.stdout.decode()
    status = ok_json(jm("status", "--json", cwd=repo, home=home))
    assert status["memory"] is False and status["git"] is True
    for args in (["search", "join key"], ["block"], ["list"], ["show", "m-1234"], ["history", "m-1234"],
                 ["evidence"], ["verify"], ["gc"], ["export"], ["search", "x", "--json"], ["list", "--json"]):
        err = one_error_line(jm(*args, cwd=repo, home=home))
        assert "no memory" in err, args
    assert not home.exists()


def test_search_answers_the_issue_examples_as_the_command_runs_them(repo: Path) -> None:
    """The one-shot command has no dense leg: "ages" must still reach "age" in a small project,
    and an attribute memory never states must abstain however the name is typed."""
    assert jm("remember", "Impute age with the median of its cohort; dropping rows biases churn low.", cwd=repo).returncode == 0
    assert jm("remember", "Lena Park reviews every change to the pricing model.", cwd=repo).returncode == 0
    found = ok_json(jm("--json", "search", "what do we do about missing ages?", cwd=repo))
    assert found["status"] == "ok" and found["hits"][0]["memory"]["statement"].startswith("Impute age")
    assert "dense" not in found["legs"]
    assert ok_json(jm("--json", "search", "what is Lena Park's email?", cwd=repo))["status"] == "abstained"


def test_remember_list_search_show_status_json(filled: Path) -> None:
    listed = ok_json(jm("list", "--json", cwd=filled))
    assert [m["kind"] for m in listed] == ["constraint", "decision", "failure"]  # block order
    for m in listed:
        assert {"id", "kind", "statement", "standing"} <= set(m) and m["standing"] == "supported"
        assert m["provenance"]["recorder"] == "person" and m["provenance"].get("notebook") is None
    result = ok_json(jm("--json", "search", "which join key for customers?", cwd=filled))
    assert result["status"] == "ok"
    assert "lexical" in result["legs"] and "dense" not in result["legs"]  # one-shot: says it stayed lexical
    # The REST API's shape: one serializer for every face.
    assert {"memory", "score", "legs", "confidence"} <= set(result["hits"][0])
    assert 0.5 <= result["hits"][0]["confidence"] <= 1
    hit = result["hits"][0]["memory"]
    assert {"id", "kind", "statement", "standing", "topic", "status"} <= set(hit)
    assert hit["statement"].startswith("Use customer_id")
    assert result["full"]["id"] == hit["id"]
    shown = ok_json(jm("show", hit["id"][:8], "--json", cwd=filled))
    assert shown["statement"] == hit["statement"] and shown["status"] == "active"
    status = ok_json(jm("status", "--json", cwd=filled))
    assert status["memory"] is True and status["total"] == 3 and status["counts"]["decision"] == 1
    text = jm("show", hit["id"], cwd=filled).stdout.decode()
    assert "Use customer_id as the join key" in text and "recorded by person" in text


def test_search_abstains_with_exit_zero_and_odd_queries_are_fine(filled: Path) -> None:
    result = ok_json(jm("search", "--json", "recipe for a chocolate cake with raspberries", cwd=filled))
    assert result["status"] == "abstained" and result["hits"] == [] and result["reason"]
    for query in ['"unbalanced', "a AND (b OR", "NEAR(x y)", "col:*", "^-*", "\U0001f600"]:
        proc = jm("search", "--json", query, cwd=filled)
        assert proc.returncode == 0 and json.loads(proc.stdout)["status"] in ("ok", "abstained")
    text = jm("search", "recipe for a chocolate cake", cwd=filled).stdout.decode()
    assert text.startswith("No match (abstained)")
    text = jm("search", "which join key for customers?", cwd=filled).stdout.decode()
    assert "words only" in text and re.search(r"(strong|likely) [01]\.\d\d", text), text
    piped = ok_json(jm("search", "-", "--json", cwd=filled, input=b"timestamps UTC grouping by day"))
    assert piped["hits"][0]["memory"]["kind"] == "constraint"


def test_block_prints_exactly_what_assistants_receive(filled: Path) -> None:
    proc = jm("block", cwd=filled)
    assert proc.returncode == 0
    expected = jupymem.project(filled).block().text
    assert proc.stdout == expected.encode("utf-8")  # no decoration, no newline when piped
    assert proc.stdout.endswith(b"</project_memory>")
    data = ok_json(jm("block", "--json", cwd=filled))
    assert data["text"] == expected and data["bytes"] == len(expected.encode())
    small = ok_json(jm("block", "--cap", "600", "--json", cwd=filled))
    assert small["cap"] == 600 and small["bytes"] <= 600
    one_error_line(jm("block", "--cap", "10", cwd=filled))


def test_remember_from_stdin_and_invalid_utf8(repo: Path, jupymem_home: Path) -> None:
    data = ok_json(jm("remember", "-", "--kind", "procedure", "--json", cwd=repo,
                      input="Refresh the café extract before Monday's report\n".encode()))
    assert data["statement"] == "Refresh the café extract before Monday's report" and data["kind"] == "procedure"
    err = one_error_line(jm("remember", "-", cwd=repo, input=b"bad \xff\xfe bytes"))
    assert "UTF-8" in err
    err = one_error_line(jm("remember", "-", cwd=repo, input=b"   \n"))
    assert "empty" in err
    assert len(jupymem.project(repo).list()) == 1


def test_dedup_reports_already_remembered(repo: Path) -> None:
    first = jm("remember", "Drop rows where amount is negative", cwd=repo)
    again = jm("remember", "  drop rows where AMOUNT is negative.  ", cwd=repo)
    assert first.stdout.decode().startswith("Remembered m-")
    assert again.stdout.decode().startswith("Already remembered m-")
    assert len(jupymem.project(repo).list()) == 1


def test_refused_secret_and_outside_git_create_nothing(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    err = one_error_line(jm("remember", "connect with password = 'Hunter22xyz'", cwd=repo, home=home))
    assert "a password" in err and "Hunter22xyz" not in err
    err = one_error_line(jm("remember", "key AKIAIOSFODNN7EXAMPLE", cwd=repo, home=home))
    assert "AWS access key" in err
    outside = tmp_path / "plain"
    outside.mkdir()
    err = one_error_line(jm("remember", "anything at all", cwd=outside, home=home))
    assert "not inside a git repository" in err
    err = one_error_line(jm("init", cwd=outside, home=home))
    status = jm("status", "--json", cwd=outside, home=home)
    assert status.returncode == 2 and json.loads(status.stdout)["git"] is False
    err = one_error_line(jm("remember", "Esta columna contiene las fechas de alta de los clientes", cwd=repo, home=home))
    assert "JUPYMEM_LANGUAGE=source" in err
    assert not home.exists()


def test_usage_errors_exit_2(filled: Path) -> None:
    assert jm("frobnicate", cwd=filled).returncode == 2
    assert jm("remember", cwd=filled).returncode == 2
    assert jm("list", "--kind", "gossip", cwd=filled).returncode == 2
    assert "No memory" in one_error_line(jm("show", "m-000000000000", cwd=filled))
    one_error_line(jm("retire", "nonexistent", cwd=filled))
    one_error_line(jm("--path", str(filled / "no" / "such" / "dir"), "list", cwd=filled))


def test_supersede_retire_confirm_history(filled: Path) -> None:
    proj = jupymem.project(filled)
    old = proj.list(kind="decision")[0]
    new = ok_json(jm("supersede", old.id, "Join on customer_id after trimming whitespace", "--json", cwd=filled))
    assert new["supersedes"] == old.id and new["kind"] == "decision"
    assert ok_json(jm("show", old.id, "--json", cwd=filled))["superseded_by"] == new["id"]
    retired = ok_json(jm("retire", new["id"], "--reason", "the CRM export changed", "--json", cwd=filled))
    assert retired["status"] == "retired" and retired["retire_reason"] == "the CRM export changed"
    assert "retired" in one_error_line(jm("retire", new["id"], cwd=filled))
    history = ok_json(jm("history", new["id"], "--json", cwd=filled))
    assert [h["action"] for h in history] == ["recorded", "retired"]
    assert new["id"] not in {m["id"] for m in ok_json(jm("list", "--json", cwd=filled))}
    assert new["id"] in {m["id"] for m in ok_json(jm("list", "--all", "--json", cwd=filled))}
    assistant = proj.remember("Sales spike every December", kind="fact", provenance=Provenance(recorder="assistant"))
    assert assistant.standing == "unconfirmed"
    assert "(unconfirmed)" in jm("list", cwd=filled).stdout.decode()
    confirmed = ok_json(jm("confirm", assistant.id, "--json", cwd=filled))
    assert confirmed["standing"] == "supported" and confirmed["confirmed_at"]
    via_flag = ok_json(jm("remember", "Sales spike every December and in July", "--supersedes", assistant.id,
                          "--json", cwd=filled))
    assert via_flag["kind"] == "fact" and via_flag["supersedes"] == assistant.id
    text = jm("history", old.id, cwd=filled).stdout.decode()
    assert "recorded" in text and "superseded" in text


def test_evidence_listed_and_cited(filled: Path) -> None:
    proj = jupymem.project(filled)
    try:
        {"a": 1}["customer_id"]
    except KeyError as exc:
        ev = capture.evidence_from_exception(exc, session="s1", source="df['customer_id']", cell_id="c9",
                                             execution_count=7)
    proj.stage_failure(ev)
    staged = ok_json(jm("evidence", "--json", cwd=filled))
    assert staged[0]["handle"] == ev.handle and staged[0]["ename"] == "KeyError"
    assert "KeyError: 'customer_id'" in jm("evidence", cwd=filled).stdout.decode()
    m = ok_json(jm("remember", "customer_id is missing from the raw extract; use cust_id", "--kind", "correction",
                   "--evidence", ev.handle, "--json", cwd=filled))
    assert m["evidence"][0]["handle"] == ev.handle
    shown = jm("show", m["id"], cwd=filled).stdout.decode()
    assert ev.handle in shown and "KeyError: 'customer_id'" in shown
    assert "ev-00000000" in one_error_line(jm("remember", "x y z", "--evidence", "ev-00000000", cwd=filled))


def test_verify_rebuild_gc_exit_codes(filled: Path) -> None:
    assert ok_json(jm("verify", "--json", cwd=filled))["ok"] is True
    db = Path(jupymem.status(filled).database)
    import sqlite3

    with sqlite3.connect(db) as raw:
        raw.execute("DELETE FROM memories WHERE kind = 'failure'")
    proc = jm("verify", "--json", cwd=filled)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["ok"] is False and any("memories" in p for p in report["problems"])
    assert "problem" in jm("verify", cwd=filled).stdout.decode()
    rebuilt = ok_json(jm("rebuild", "--json", cwd=filled))
    assert rebuilt["verify"]["ok"] is True and rebuilt["events"] == 3
    assert len(ok_json(jm("list", "--json", cwd=filled))) == 3
    gc = ok_json(jm("gc", "--dry-run", "--json", cwd=filled))
    assert gc == {"forgotten": [], "purged_events": 0, "evidence_dropped": 0, "dry_run": True, "kept_for_team": 0}
    assert jm("gc", cwd=filled).returncode == 0


def test_export_import_into_another_repository(filled: Path, tmp_path: Path) -> None:
    out = tmp_path / "memory.jsonl"
    assert jm("export", "--out", str(out), cwd=filled).returncode == 0
    assert jm("export", cwd=filled).stdout == out.read_bytes()
    other = make_repo(tmp_path / "other")
    report = ok_json(jm("import", str(out), "--other-project", "--json", cwd=other))  # initializes the other repository
    assert report == {"events": 3, "added": 3, "skipped": 0}
    ids = lambda where: sorted(m["id"] for m in ok_json(jm("list", "--json", cwd=where)))  # noqa: E731
    assert ids(other) == ids(filled)
    assert ok_json(jm("import", str(out), "--other-project", "--json", cwd=other))["added"] == 0
    assert ok_json(jm("import", str(out), "--json", cwd=filled))["added"] == 0
    assert ok_json(jm("import", "-", "--other-project", "--json", cwd=other, input=out.read_bytes()))["added"] == 0
    assert len(ids(other)) == 3
    assert ok_json(jm("verify", "--json", cwd=other))["ok"] is True


def test_invalid_import_files_create_nothing(filled: Path, tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    fresh = make_repo(tmp_path / "fresh")
    good = jm("export", cwd=filled).stdout
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_bytes(b"{not json\n")
    not_utf8 = tmp_path / "bin.jsonl"
    not_utf8.write_bytes(b"\xff\xfe\x00binary")
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_bytes(good.replace(b"never the email", b"always the email"))
    for f, needle in [(bad_json, "not JSON"), (not_utf8, "UTF-8"), (tampered, "altered"),
                      (tmp_path / "missing.jsonl", "cannot read")]:
        err = one_error_line(jm("import", str(f), cwd=fresh, home=home))
        assert needle in err, err
    assert not home.exists()
    before = jupymem.project(filled).revision()
    one_error_line(jm("import", str(tampered), cwd=filled))
    assert jupymem.project(filled).revision() == before


def test_doctor_repairs_a_corrupted_registry(filled: Path, jupymem_home: Path) -> None:
    pid = ok_json(jm("status", "--json", cwd=filled))["project_id"]
    reg = jupymem_home / "registry.json"
    data = bytearray(reg.read_bytes())
    i = data.index(b"project_id") + 2
    data[i] ^= 0x01  # one flipped bit: still JSON, fails its checksum
    reg.write_bytes(bytes(data))
    proc = jm("status", "--json", cwd=filled)
    assert proc.returncode == 1
    status = json.loads(proc.stdout)
    assert status["registry"] == "corrupt" and "jupymem doctor" in status["message"]
    assert "jupymem doctor" in jm("status", cwd=filled).stdout.decode()
    assert "jupymem doctor" in one_error_line(jm("list", cwd=filled))
    assert "jupymem doctor" in one_error_line(jm("remember", "a new statement", cwd=filled))
    doctor = ok_json(jm("doctor", "--json", cwd=filled))
    assert doctor["registry"] == "corrupt" and doctor["repaired"] is True and doctor["bindings"] == 1
    after = ok_json(jm("status", "--json", cwd=filled))
    assert after["registry"] == "ok" and after["project_id"] == pid and after["total"] == 3
    assert ok_json(jm("doctor", "--json", cwd=filled)) == {"registry": "ok", "projects": 1, "bindings": 1}


def test_init_adopts_a_moved_checkout(filled: Path, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    subprocess.run(["cp", "-a", str(filled), str(moved)], check=True)
    before = ok_json(jm("status", "--json", cwd=moved))
    assert before["memory"] is False and before["matches"]["roots"] == [str(filled)]
    assert "adopt" in jm("init", cwd=moved).stdout.decode()
    assert len(ok_json(jm("list", "--json", cwd=moved))) == 3
    assert "already has memory" in jm("init", cwd=moved).stdout.decode()


def test_path_option_python_dash_m_and_help(filled: Path, tmp_path: Path) -> None:
    notebook = filled / "analysis" / "explore.ipynb"
    notebook.parent.mkdir()
    notebook.write_text("{}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listed = ok_json(jm("list", "--json", "--path", str(notebook), cwd=elsewhere))
    assert len(listed) == 3
    assert len(ok_json(jm("--path", str(filled), "--json", "list", module="jupymem", cwd=elsewhere))) == 3
    helped = jm("--help", cwd=elsewhere)
    assert helped.returncode == 0 and b"remember" in helped.stdout and b"doctor" in helped.stdout


def test_doctor_without_a_home_creates_nothing(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "never"
    assert ok_json(jm("doctor", "--json", cwd=repo, home=home))["registry"] == "none"
    assert not home.exists()
    shutil.rmtree(tmp_path / "never", ignore_errors=True)


def test_eval_and_bench_are_subcommands(tmp_path: Path) -> None:
    suite = tmp_path / "suite.jsonl"
    suite.write_text("\n".join(json.dumps(x) for x in [
        {"type": "memory", "id": "m1", "text": "Join orders to customers on customer_id.", "scope": "a"},
        {"type": "memory", "id": "m2", "text": "Plots label the y axis with units.", "scope": "a"},
        {"type": "query", "id": "q1", "query": "join key for orders", "relevant": ["m1"], "scope": "a"},
    ]) + "\n")
    report = ok_json(jm("eval", "--suite", str(suite), "--json", cwd=tmp_path))
    assert report and "bm25" in json.dumps(report)
    assert "cannot read the suite" in one_error_line(jm("eval", "--suite", str(tmp_path / "nope"), cwd=tmp_path))
    bench = ok_json(jm("bench", "--documents", "60", "--queries", "2", "--json", cwd=tmp_path))
    assert bench


def test_remember_names_a_near_duplicate_and_how_to_supersede_it(filled: Path) -> None:
    old = [m for m in jupymem.project(filled).list() if m.kind == "decision"][0]
    proc = jm("remember", "Always use customer_id as the join key and never the email column", "--kind", "decision",
              cwd=filled)
    line = proc.stdout.decode()
    assert proc.returncode == 0 and line.count("\n") == 1, line
    assert f"similar to {old.id}; supersede it with --supersedes {old.id}" in line
    data = ok_json(jm("remember", "Always use customer_id as the join key and never the email column", "--json",
                      cwd=filled))
    assert [s["id"] for s in data["similar"]] == [old.id] and data["statement"].startswith("Always use")
    replaced = ok_json(jm("remember", "Always use customer_id as the join key and never the email column",
                          "--supersedes", old.id, "--json", cwd=filled))
    assert replaced["id"] == data["id"] and replaced["supersedes"] == old.id and replaced["similar"] == []
    assert jupymem.project(filled).get(old.id).superseded_by == data["id"]
    # Unquoted words are one statement, as in the magic.
    words = ok_json(jm("remember", "Plots", "use", "viridis", "--json", cwd=filled))
    assert words["statement"] == "Plots use viridis"


# -- what a command imports ------------------------------------------------------

# Runs one command in a fresh interpreter and lists the jupymem modules it imported.
_PROBE = """
import contextlib, io, json, sys
from jupymem.faces.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(m for m in sys.modules if m.startswith("jupymem"))}))
"""
# What reading an unshared repository's status or block never needs: search (retrieval's
# lexical leg and answerability), the write path's checks (the secret scan's compiled
# patterns, language tables, validation), maintenance and recovery, the measuring tools.
_NOT_FOR_READING = {
    "jupymem.retrieval.retrieve", "jupymem.retrieval.answerable", "jupymem.retrieval.lexical",
    "jupymem.intake.capture", "jupymem.intake.secrets_scan", "jupymem.intake.secret_rules", "jupymem.intake.secret_generic",
    "jupymem.intake.secret_calls", "jupymem.intake.secret_commands",
    "jupymem.intake.language", "jupymem.storage.validate", "jupymem.storage.maintenance",
    "jupymem.storage.recovery", "jupymem.measure.evaluate", "jupymem.measure.bench",
    "jupymem.faces.render_html",  # a terminal is shown text
    # `jupymem mcp` and `jupymem instructions` (the MCP SDK is imported by mcp_server alone)
    "jupymem.faces.mcp_server", "jupymem.assistants.served", "jupymem.assistants.instructions",
    "jupymem.assistants.instruction_files", "jupymem.assistants.instruction_rules",
}


def imported_by(*args: str, cwd: Path) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=cwd, capture_output=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert out["code"] == 0, out
    return set(out["modules"])


def test_status_and_block_import_only_what_reading_needs(repo: Path) -> None:
    jupymem.init(repo).remember_many({"statement": f"Table t{i} keeps its raw files under data/raw/t{i}."}
                                     for i in range(40))
    status = imported_by("status", cwd=repo)
    assert "jupymem.core.overview" in status  # the probe sees what the command ran
    assert status & _NOT_FOR_READING == set()
    block = imported_by("block", cwd=repo)
    assert "jupymem.core.block" in block
    assert block & _NOT_FOR_READING == set()
    # an unshared repository: the block neither follows files nor ranks anything
    assert {m for m in block if m.startswith(("jupymem.sharing", "jupymem.retrieval"))} == set()
    assert "jupymem.reports" in status and "jupymem.reports" not in block  # status records: status only
    # never shared: status reads sharing from the tables, not the folder's readers and writers
    assert {"jupymem.sharing.seen", "jupymem.sharing.identity"} <= status
    assert "subprocess" not in status | block  # git's identity was kept in the home by the first status
    assert status & {"jupymem.sharing.share", "jupymem.sharing.journal", "jupymem.sharing.sharelog"} == set()
    # and the commands that need them still get them
    assert {"jupymem.retrieval.retrieve", "jupymem.retrieval.answerable"} <= imported_by("search", "raw files", cwd=repo)
    assert {"jupymem.intake.capture", "jupymem.intake.secret_rules", "jupymem.storage.validate"} <= imported_by(
        "remember", "Table t99 is rebuilt nightly from the warehouse.", cwd=repo)


def test_block_in_a_shared_repository_follows_its_files(repo: Path) -> None:
    proj = jupymem.init(repo)
    proj.remember("Dates in the orders table are UTC.")
    proj.share()
    assert "jupymem.sharing.share" in imported_by("block", cwd=repo)


def test_ids_that_cannot_be_ids_and_a_console_that_cannot_write_emoji_give_no_traceback(repo: Path) -> None:
    """Found by an insider round on 6 December: a byte that is not UTF-8 in an id reached
    SQLite and ended `show`/`retire`/`confirm`/`history` with UnicodeEncodeError; a memory
    holding an emoji ended `list` and `--json list` on a cp1252 console (a Windows redirect)."""
    assert jm("remember", "Use the 😀 column for sentiment\u200b scores.", "--kind", "note", cwd=repo).returncode == 0
    for command in ("show", "retire", "confirm", "history"):
        err = one_error_line(jm(command, "m-caf\udce9", cwd=repo))
        assert "ids are m- and hex digits" in err
    (memory,) = ok_json(jm("--json", "list", cwd=repo))
    err = one_error_line(jm("show", memory["id"][:4], cwd=repo))  # "m-" and two characters
    assert "too short" in err
    legacy = cli_run.jm("--json", "list", cwd=repo, env={"PYTHONIOENCODING": "cp1252"}, process=True)
    assert legacy.returncode == 0 and b"Traceback" not in legacy.stderr, legacy.stderr
    (read,) = json.loads(legacy.stdout.decode("cp1252"))
    assert read["statement"] == "Use the 😀 column for sentiment\u200b scores."
    shown = cli_run.jm("list", cwd=repo, env={"PYTHONIOENCODING": "cp1252"}, process=True)
    assert shown.returncode == 0 and b"\\U0001f600" in shown.stdout, shown.stderr


def test_one_kind_as_a_string_a_statement_alone_and_full_width_letters_are_understood(repo: Path) -> None:
    """Found by an insider round on 6 December: `search(kinds="constraint")` said "Unknown
    kind 'c'", `remember_many(["..."])` raised a bare ValueError, and a query typed in
    full-width letters abstained where the same word found its memory."""
    proj = jupymem.init(repo)
    proj.remember_many(["Revenue is reported in EUR.", {"statement": "Dates are stored in UTC.", "kind": "constraint"}])
    (hit,) = proj.search("dates UTC", kinds="constraint").hits
    assert hit.memory.statement == "Dates are stored in UTC."
    with pytest.raises(jupymem.JupymemError, match="statements or dicts"):
        proj.remember_many([42])
    wide = proj.search("ｒｅｖｅｎｕｅ")
    assert wide.status == "ok" and wide.hits[0].memory.statement == "Revenue is reported in EUR."
